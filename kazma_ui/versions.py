"""Versions: what an edit of a person's message or a regenerate of an answer makes.

A version is a chat of its own (its thread id, steps, restore, undo, fork), made from the
conversation up to the turn before that message, with the (edited) question sent as its next
turn; the chat it came from is not touched. Where a step of that point is kept, the version
starts from it as a fork does (the whole state: tool calls, plan, scratchpad, memories).
Where none is kept any more, it starts from the conversation's messages as the transcript
shows them since the last reset (the person's and the answers; no tool calls, notes, plan or
scratchpad), with the memories learned up to there.

Versions of one conversation are one entry in the chat lists (`group_chats`), and
`turn_versions` answers, for each turn where they differ, which chats hold its versions.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from kazma_core.agent.graph import write_finished_turn
from kazma_core.agent.runtime import TurnResult
from kazma_core.errors import InvalidInput, NotFound, WrongMessage
from kazma_core.rewind.rows import StepPoint, Version, version_link
from kazma_core.stores.engine import Conn
from kazma_core.stores.types import Chat, TranscriptRow, User
from kazma_core.time_travel import strip_platform_ids
from kazma_ui.message_point import PERSON, RESET, MessagePoint, message_point
from kazma_ui.thread_rewind import READ, RewindService, ends_with_answer

EDIT = "edit"
REGENERATE = "regenerate"


@dataclass(frozen=True)
class Made:
    """A new version and its first turn's outcome."""

    chat_id: str
    version_of: str
    result: TurnResult


@dataclass(frozen=True)
class TurnVersions:
    turn_index: int
    versions: list[str]  # a chat holding each version of this turn, oldest version first
    current: int  # which of them the chat asked about holds


def _rebuilt_writes(
    new_id: str, owner_id: str, title: str, source: str, turn: int, rows: list[TranscriptRow]
) -> Any:
    """A version's chat row with its transcript (the rows' texts, kept in the rows) and the facts
    learned up to the end of turn `turn`, without a step: to commit with its first checkpoint."""
    def write(conn: Conn) -> None:
        conn.execute(
            "INSERT INTO chats (id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step,"
            " forked_from_turn, forked_from_iteration) VALUES ($1, $2, $3, $4, $5, $6, NULL, $5, NULL)",
            (new_id, owner_id, title, time.time(), turn, source),
        )
        for row in rows:
            conn.execute(
                "INSERT INTO transcript (chat_id, turn_index, role, text, created_at, body_n) VALUES ($1, $2, $3, $4, $5, NULL)",
                (new_id, row.turn_index, row.role, row.text, row.created_at),
            )
        conn.execute(
            "INSERT INTO facts (chat_id, turn_index, iteration, text, forgotten_turn, forgotten_iteration, created_at)"
            " SELECT $1, turn_index, iteration, text, forgotten_turn, forgotten_iteration, created_at"
            " FROM facts WHERE chat_id = $2 AND turn_index <= $3 AND (forgotten_turn IS NULL OR forgotten_turn > $3)"
            " ORDER BY id",
            (new_id, source, turn),
        )

    return write


def _messages_of(rows: list[TranscriptRow]) -> list[AnyMessage]:
    """The conversation as the transcript shows it since its last reset: questions and answers."""
    start = max((i + 1 for i, r in enumerate(rows) if r.role == RESET), default=0)
    out: list[AnyMessage] = []
    for row in rows[start:]:
        if row.role == PERSON:
            out.append(HumanMessage(row.text, id=uuid.uuid4().hex))
        elif row.role == "assistant":
            out.append(AIMessage(row.text, id=uuid.uuid4().hex))
    return out


def both(*writes: Any) -> Any:
    def write(conn: Conn) -> None:
        for w in writes:
            w(conn)

    return write


class Versions:
    def __init__(self, rewind: RewindService) -> None:
        self.rewind = rewind
        self.core = rewind.core

    async def _question(self, chat_id: str, message_id: int, kind: str) -> tuple[TranscriptRow, MessagePoint]:
        """The person's message the version asks anew, and the point before it."""
        point = await message_point(self.core, chat_id, message_id)
        row = point.message
        if kind == EDIT:
            if row.role != PERSON:
                raise WrongMessage(message_id="edit_person_only")
            return row, point
        if row.role in (PERSON, RESET):
            raise WrongMessage(message_id="regenerate_answer_only")
        earlier = await self.core.store.transcript.transcript(chat_id, before=row.id)
        question = next((r for r in reversed(earlier) if r.turn_index == row.turn_index and r.role == PERSON), None)
        if question is None:
            raise WrongMessage(message_id="no_question")
        return question, await message_point(self.core, chat_id, question.id)

    async def make(self, user: User, surface: str, chat_id: str, message_id: int, kind: str, text: str | None = None) -> Made:
        """Edit a person's message (`text`) or regenerate an answer: a new version, its turn run."""
        source = await self.rewind._access(user, chat_id, None, READ)
        question, point = await self._question(chat_id, message_id, kind)
        ask = text if kind == EDIT and text is not None else question.text
        if not ask.strip():
            raise InvalidInput(message_id="empty_message")
        new_id = await self._branch(user, surface, source, question, point, kind)
        result = await self.core.turns.send(new_id, ask)
        return Made(chat_id=new_id, version_of=chat_id, result=result)

    async def _branch(self, user: User, surface: str, source: Chat, question: TranscriptRow, point: MessagePoint, kind: str) -> str:
        """The version's chat, holding the conversation up to the point (as a fork of its step, or
        rebuilt from the transcript when none is kept), with its version row, in one transaction."""
        rewind = self.rewind
        async with rewind.audited.attempt("fork", user, surface, source.id) as attempt:
            await self.core.turns.quota.refuse_when_full(user.id, fresh=True)
            new_id = uuid.uuid4().hex
            attempt.new_chat_id = new_id
            attempt.detail = {"version": kind, "message_id": question.id}
            link = version_link(new_id, source.id, question.turn_index)
            if point.step is not None:
                info = point.step
                attempt.step_id = info.id
                rewind._refuse_truncated(info)
                head = await self.core.snapshots.head(source.id, info.id)
                if head is None:
                    raise NotFound(message_id="step_deleted")
                messages = await rewind._step_messages(source.id, head)
                step_point = StepPoint(info.turn_index, info.iteration, ends_with_answer(messages))
                writes = both(rewind.rows.fork_writes(new_id, user.id, source.title, source.id, info.id, step_point), link)
                async with self.core.conversation.same_transaction(new_id, writes, fork_from=source.id, rewind=True):
                    await write_finished_turn(self.core.turns.graph, new_id, strip_platform_ids(head.fields), messages)
                await self.core.snapshots.copy(source.id, info.id, new_id, uuid.uuid4().hex, self.core.recorder.budgets)
                return new_id
            turn = 0 if point.empty else int(point.turn_index or 0)
            rows = [] if point.empty else await self.core.store.transcript.transcript(source.id, before=question.id)
            writes = both(_rebuilt_writes(new_id, user.id, source.title, source.id, turn, rows), link)
            async with self.core.conversation.same_transaction(new_id, writes, rewind=True):
                await write_finished_turn(self.core.turns.graph, new_id, {"turn_index": turn}, _messages_of(rows))
            return new_id

    # what the lists show ----------------------------------------------------------------------
    async def turn_versions(self, user: User, chat_id: str) -> list[TurnVersions]:
        """For each turn where the versions of this chat's conversation differ: a chat holding each
        version of it (one sharing this chat's earlier turns), and which one this chat is."""
        await self.rewind._access(user, chat_id, None, READ)
        links = {v.chat_id: v for v in await self.rewind.rows.conversation_versions(chat_id)}
        if not links:
            return []
        chats = {c.id: c for c in await self.core.chats.list(user)}
        key = next(iter(links.values())).conversation
        members = [c for c in chats.values() if c.id in links or c.id == key]

        def holder(chat: str, turn: int) -> str:
            """The chat whose own turn this is, in this chat's history."""
            while chat in links and links[chat].turn_index > turn:
                chat = links[chat].version_of
            return chat

        def born(chat: str) -> float:
            return links[chat].created_at if chat in links else chats[chat].created_at if chat in chats else 0.0

        out: list[TurnVersions] = []
        for turn in range(1, max(c.last_turn for c in members) + 1):
            same_before = [c for c in members if c.last_turn >= turn and holder(c.id, turn - 1) == holder(chat_id, turn - 1)]
            kinds: dict[str, list[Chat]] = {}
            for c in same_before:
                kinds.setdefault(holder(c.id, turn), []).append(c)
            if len(kinds) < 2:
                continue
            mine = holder(chat_id, turn)
            order = sorted(kinds, key=born)
            shown = [chat_id if h == mine else max(kinds[h], key=lambda c: c.created_at).id for h in order]
            out.append(TurnVersions(turn_index=turn, versions=shown, current=order.index(mine)))
        return out

    async def conversation_chats(self, user: User, chat_id: str) -> list[tuple[Chat, Version | None]]:
        """The chats of this chat's conversation the person has, oldest first: its first chat (no
        version row) and each version; none when the conversation has no versions."""
        await self.rewind._access(user, chat_id, None, READ)
        links = await self.rewind.rows.conversation_versions(chat_id)
        if not links:
            return []
        chats = {c.id: c for c in await self.core.chats.list(user)}
        key = links[0].conversation
        first: list[tuple[Chat, Version | None]] = [(chats[key], None)] if key in chats else []
        return first + [(chats[v.chat_id], v) for v in links if v.chat_id in chats]

    async def group_chats(self, user: User, chats: list[Chat]) -> list[tuple[Chat, int]]:
        """A person's chats with the versions of one conversation once: the newest of them, and how
        many there are (1 for a chat no edit made). In the order of `chats` (newest first)."""
        conversation = {v.chat_id: v.conversation for v in await self.rewind.rows.versions_of_owner(user.id)}
        counts: dict[str, int] = {}
        for c in chats:
            key = conversation.get(c.id, c.id)
            counts[key] = counts.get(key, 0) + 1
        seen: set[str] = set()
        out: list[tuple[Chat, int]] = []
        for c in chats:
            key = conversation.get(c.id, c.id)
            if key in seen:
                continue
            seen.add(key)
            out.append((c, counts[key]))
        return out
