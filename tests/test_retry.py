"""The one retry policy: pauses that double up to a ceiling; bounded retries that give up
with the last error, and only retry what may pass; asking until yes or the wait is over."""

from __future__ import annotations

import pytest

from kazma_core.retry import Backoff, ask_until, with_retries

NO_PAUSE = Backoff(first=0.0, most=0.0)


class Passing(Exception):
    pass


class Final(Exception):
    pass


def test_pauses_double_from_the_first_up_to_the_ceiling() -> None:
    assert [Backoff(first=0.5, most=2.0).pause(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 2.0, 2.0]


async def test_a_failure_that_may_pass_is_tried_again_and_each_retry_is_told() -> None:
    calls: list[int] = []
    told: list[str] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Passing(f"try {len(calls)}")
        return "done"

    again = lambda err: isinstance(err, Passing)  # noqa: E731
    assert await with_retries(NO_PAUSE, 4, flaky, again=again, note=lambda err, pause: told.append(str(err))) == "done"
    assert told == ["try 1", "try 2"]


async def test_the_last_failure_is_raised_and_a_final_one_at_once() -> None:
    calls: list[type[Exception]] = []

    async def failing(kind: type[Exception]) -> None:
        calls.append(kind)
        raise kind("no")

    again = lambda err: isinstance(err, Passing)  # noqa: E731
    with pytest.raises(Passing):
        await with_retries(NO_PAUSE, 3, lambda: failing(Passing), again=again, note=lambda err, pause: None)
    with pytest.raises(Final):
        await with_retries(NO_PAUSE, 3, lambda: failing(Final), again=again, note=lambda err, pause: None)
    assert calls == [Passing, Passing, Passing, Final]


async def test_asking_until_yes_or_the_wait_is_over() -> None:
    answers = iter([False, False, True])

    async def ask() -> bool:
        return next(answers)

    # As the lease asks: a lambda giving a coroutine, which must be awaited, not taken for a yes.
    assert await ask_until(NO_PAUSE, 10.0, lambda: ask()) is True  # noqa: PLW0108
    assert next(answers, None) is None  # asked three times

    asked: list[int] = []

    async def never() -> bool:
        asked.append(1)
        return False

    assert await ask_until(NO_PAUSE, 0.0, never) is False
    assert asked == [1]  # no wait: asked once
