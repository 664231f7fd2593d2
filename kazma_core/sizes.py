"""A number of bytes as a person reads it (B, KB, MB, GB), in English or Arabic: the one rule,
also followed by the pages' Kazma.size."""

from __future__ import annotations

from kazma_core.catalogue import sentence

UNITS = ("size_b", "size_kb", "size_mb", "size_gb")


def human_size(n: int | float, lang: str = "en") -> str:
    """Powers of 1024; one decimal below 10 of a unit ("1.5 MB"), whole above ("133 KB")."""
    value, unit = float(n), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    shown = f"{value:.1f}".removesuffix(".0") if unit and value < 10 else f"{round(value):,}"
    return sentence(f"sizes.{UNITS[unit]}", lang, n=shown)
