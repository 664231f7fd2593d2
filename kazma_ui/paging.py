"""Pages of a long list of messages: a chat's transcript and a step's messages page the same way.

Without `before` and `limit` a reader gets the whole list, as clients always had; with `limit`
the newest that many, and with `before` those before that place (a transcript row's id, a
step's message position), oldest first within the page, `more` saying older ones remain.
"""

from __future__ import annotations

PAGE = 100  # messages in a page when `before` is given without `limit`
MAX_PAGE = 1000


def window(count: int, before: int | None, limit: int | None) -> tuple[int, int] | None:
    """The positions (start, stop) of a step's page of its `count` messages, or None for all of them."""
    if before is None and limit is None:
        return None
    stop = count if before is None else max(min(before, count), 0)
    return max(stop - (limit or PAGE), 0), stop
