"""Prometheus metrics of capture, rewind and the clean-up's operator alerts (exposed at /metrics)."""

from __future__ import annotations

from prometheus_client import Counter

CAPTURE_TOTAL = Counter(
    "kazma_time_travel_capture",
    "Steps by what happened to them when captured",
    ["result"],
)
REWIND_TOTAL = Counter(
    "kazma_time_travel_rewind",
    "Restores and forks by outcome",
    ["action", "outcome"],
)
ALERTS_TOTAL = Counter(
    "kazma_time_travel_alerts",
    "Operator alerts raised by the clean-up, by kind",
    ["kind"],
)

for _result in ("stored", "truncated", "skipped", "failed"):
    CAPTURE_TOTAL.labels(result=_result)
