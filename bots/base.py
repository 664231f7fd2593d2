"""The adapter contract, and the supervisor that keeps each configured bot running.

An adapter connects to its platform and serves until cancelled; when the platform
cannot be reached or rejects the token, `run` raises, the supervisor logs one line and
tries again after the retry policy's pause, and the web server and the other bots go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from kazma_core.retry import Backoff

log = logging.getLogger(__name__)

FIRST_RETRY = 1.0
LAST_RETRY = 60.0


class Adapter(Protocol):
    name: str
    http_path: str | None  # a path the web server forwards to `http` (Slack's HTTP mode), or None
    # True when the platform takes one connection per bot (Telegram polling, Discord's gateway, Slack's
    # Socket Mode): among replicas sharing a database, only the leader runs it.
    exclusive: bool

    async def run(self) -> None:
        """Connect and serve until cancelled; raise when the platform fails."""

    async def close(self) -> None:
        """Let go of connections (called after run ends or is cancelled)."""

    async def http(self, request: Any) -> Any:
        """Answer a platform request the web server received at `http_path` (a Starlette Request)."""


async def supervise(adapter: Adapter, first_retry: float = FIRST_RETRY) -> None:
    """Run an adapter for ever: on failure one log line, then a retry after a growing pause."""
    loop = asyncio.get_running_loop()
    backoff = Backoff(first_retry, LAST_RETRY)
    failures = 0
    while True:
        started = loop.time()
        try:
            await adapter.run()
            failures = 0
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001  (the dispatch loop's one broad except, below)
            # Having run well for a while, it meets a new outage, not the same one.
            failures = 1 if loop.time() - started > LAST_RETRY else failures + 1
            # The dispatch loop's one broad except: a bot's failure must not stop the others.
            log.error(
                "%s bot stopped (%s: %s); retrying in %.0f s", adapter.name, type(err).__name__, err, backoff.pause(failures)
            )
        finally:
            with contextlib.suppress(Exception):
                await adapter.close()
        await asyncio.sleep(backoff.pause(max(failures, 1)))
