"""A transcript message as a point to go back to: which saved step is "right after this answer"
or "right before this question".

For an answer or a note (any row but a person's), the point is the end of its turn: the
turn's last saved step. For a person's message, the end of the turn before: the last saved
step of the turn of the row before it. Before the first message (or right after a reset)
the point is an empty conversation, with no step. Where the point's step is no longer kept
(the step budgets keep the newest ones), `resolve_message` answers not_found saying so; the
rewind service, the HTTP routes and the commands of every surface use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kazma_core.core import Core
from kazma_core.errors import NotFound
from kazma_core.stores.snapshots import StepInfo
from kazma_core.stores.types import TranscriptRow

PERSON = "user"
RESET = "system"  # the row a reset leaves: the conversation starts afresh after it


@dataclass(frozen=True)
class MessagePoint:
    """Where the chat stood right after an answer (or right before a person's message)."""

    message: TranscriptRow
    turn_index: int | None  # the turn whose end the point is; None: before any message
    step: StepInfo | None  # that turn's last saved step; None when empty, or no longer kept

    @property
    def empty(self) -> bool:
        """The point is before the first message (or right after a reset): nothing yet."""
        return self.turn_index is None

    @property
    def kept(self) -> bool:
        """The point can be restored to or forked from (a step of it is kept, or it is empty)."""
        return self.empty or self.step is not None


def _turn_of(row: TranscriptRow, before: TranscriptRow | None) -> int | None:
    if row.role != PERSON:
        return row.turn_index
    if before is None or before.role == RESET:
        return None
    return before.turn_index


def _last_steps(steps: list[StepInfo]) -> dict[int, StepInfo]:
    """Each turn's last saved step."""
    last: dict[int, StepInfo] = {}
    for info in steps:
        held = last.get(info.turn_index)
        if held is None or (info.iteration, info.seq) > (held.iteration, held.seq):
            last[info.turn_index] = info
    return last


def points_of(rows: list[TranscriptRow], steps: list[StepInfo]) -> list[MessagePoint]:
    """The point of each of a chat's transcript rows (all of them, oldest first), from its steps."""
    last = _last_steps(steps)
    points = []
    for i, row in enumerate(rows):
        turn = _turn_of(row, rows[i - 1] if i else None)
        points.append(MessagePoint(row, turn, None if turn is None else last.get(turn)))
    return points


async def message_point(core: Core, chat_id: str, message_id: int) -> MessagePoint:
    """The point of one transcript row of this chat (not_found when the chat has no such row);
    its step is None when that step is no longer kept. The caller has checked the chat is theirs."""
    if not isinstance(message_id, int) or isinstance(message_id, bool) or message_id < 1:
        raise NotFound(message_id="message_not_found")
    rows = await core.store.transcript.transcript(chat_id, through=message_id, limit=2)
    if not rows or rows[-1].id != message_id:
        raise NotFound(message_id="message_not_found")
    row = rows[-1]
    turn = _turn_of(row, rows[0] if len(rows) == 2 else None)
    if turn is None:
        return MessagePoint(row, None, None)
    return MessagePoint(row, turn, _last_steps([s for s in await core.snapshots.list_steps(chat_id) if s.turn_index == turn]).get(turn))


async def resolve_message(core: Core, chat_id: str, message_id: int) -> MessagePoint:
    """The point of a transcript row, to restore or fork to: a kept step, or an empty
    conversation (before the first message). not_found, saying so, when the row is not this
    chat's, or its point's step is no longer kept."""
    point = await message_point(core, chat_id, message_id)
    if not point.kept:
        raise NotFound(message_id="message_step_gone", turn=point.turn_index)
    return point
