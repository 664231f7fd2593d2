"""Kazma's one retry policy: after each failure in a row, a pause twice the one before,
from a first pause up to a ceiling (`Backoff`). Every loop of ours that tries again uses it:

- a bot that stopped is started again, for ever (`bots/base.py`);
- a message Discord or Telegram failed to take is sent again, a few times (`bots/discord_bot.py`,
  `bots/telegram_bot.py`);
- a turn waiting for a busy chat asks for its lease again, until its wait is over (`kazma_core/replicas/leases.py`);
- the TUI reconnects to the server, for ever (`kazma_ui/tui/app.py`);
- a PostgreSQL transaction refused for a conflict, or whose connection was lost before it ran,
  runs again, a few times and for a few seconds at most (`kazma_core/stores/postgres.py`, in its
  worker thread: `retried`).

The bounded loops run on tenacity (`with_retries`, `ask_until`); the endless ones start counting
again after a success, and ask `Backoff.pause` for each pause. The platform SDKs' own retries
(PTB's rate limiter, slack-sdk's retry handlers) are theirs and stay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    retry_if_result,
    stop_after_attempt,
    stop_after_delay,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    first: float  # seconds before the first retry
    most: float  # the longest pause

    def pause(self, failures: int) -> float:
        """The pause after `failures` failures in a row (1 or more)."""
        return min(self.first * 2.0 ** (failures - 1), self.most)

    def _wait(self, state: RetryCallState) -> float:
        return self.pause(state.attempt_number)


async def with_retries(
    backoff: Backoff, tries: int, call: Callable[[], Awaitable[T]], *,
    again: Callable[[BaseException], bool], note: Callable[[BaseException, float], None],
) -> T:
    """What `call()` gives, in up to `tries` attempts: an error `again` accepts is told to
    `note` (with the pause before the next attempt) and tried again; any other, or the last, is raised."""

    def told(state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome else None
        if err is not None and state.next_action is not None:
            note(err, state.next_action.sleep)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(tries), wait=backoff._wait, retry=retry_if_exception(again), before_sleep=told, reraise=True
    )
    return await retrying(_awaiting(call))


def retried(
    backoff: Backoff, tries: int, within: float, call: Callable[[], T], *,
    again: Callable[[BaseException], bool], note: Callable[[BaseException, float], None],
) -> T:
    """`with_retries` for a blocking call (a worker thread's): also given up once `within` seconds
    have passed, so whoever waits for the answer waits a bounded time."""

    def told(state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome else None
        if err is not None and state.next_action is not None:
            note(err, state.next_action.sleep)

    retrying = Retrying(
        stop=stop_after_attempt(tries) | stop_after_delay(within), wait=backoff._wait, retry=retry_if_exception(again),
        before_sleep=told, reraise=True,
    )
    return retrying(call)


async def ask_until(backoff: Backoff, within: float, ask: Callable[[], Awaitable[bool]]) -> bool:
    """Ask until `ask()` says yes or `within` seconds are over (it is asked at least once); its last answer."""
    if await ask():  # most asks (a turn taking its chat's lease) are answered yes at once: no retrier is built then
        return True
    if within <= 0:
        return False
    asking = AsyncRetrying(
        stop=stop_after_delay(within), wait=backoff._wait, retry=retry_if_result(lambda yes: not yes),
        retry_error_callback=lambda state: False,
    )
    await asyncio.sleep(backoff.pause(1))
    return await asking(_awaiting(ask))


def _awaiting(call: Callable[[], Awaitable[T]]) -> Callable[[], Coroutine[Any, Any, T]]:
    """`call` as a coroutine function: tenacity awaits only what one of those returns, and would
    take the coroutine a lambda or a partial gives for the result itself."""

    async def called() -> T:
        return await call()

    return called
