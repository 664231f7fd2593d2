"""The conversation store: LangGraph's checkpoints and the transcript, in kazma.db (or the schema kazma on PostgreSQL).

Kazma's checkpointer (a LangGraph ``BaseCheckpointSaver``). A checkpoint is kept as its
small fields (one serialised blob without the conversation) plus references to the
chat's message bodies (``stores/bodies.py``, the same body store steps use), so a put
writes only the messages that are new, and a restore or a fork writes references:

- what is new is found by identity: the messages a put shares with the checkpoint it
  follows are the very objects that checkpoint held (LangGraph's reducer appends to the
  list it was given), compared by pointer, never serialised. Without that checkpoint in
  memory (after a restart) the last shared message is compared by digest instead;
- the transcript is derived from the same put, in the same transaction: a new human
  message is a ``user`` row, a new answer (an AI message asking for no tool) an
  ``assistant`` row, a closing note an ``error`` row. A row refers to its message's body,
  so the text is kept once. A kill at any instant leaves the transcript and the agent's
  state agreeing;
- :func:`same_transaction` lets a caller add its own writes (a restore taking later rows
  back, a fork's chat row) to the next put of a chat, so they commit together;
- the newest checkpoint of each chat stays in memory, so a turn does not load its
  conversation again; serialising and hashing run on the database's thread, off the
  event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import operator
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    copy_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from kazma_core.messages import MessageList, appended_to, decode_messages, encode_message, rough_bytes
from kazma_core.replicas import fence
from kazma_core.stores import bodies
from kazma_core.stores.bodies import Runs
from kazma_core.stores.engine import SMALL_BYTES, Conn, Database, Row, marks
from kazma_core.stores.interfaces import Also, ConversationStore, GiveUp, TakenBack
from kazma_core.stores.transcript_sql import PLACE, SHARED_ROWS, add_row, materialize, release, share_of, visible_rows
from kazma_core.stores.types import NOTE_KEY

log = logging.getLogger(__name__)
BODIES = "conv_bodies"
MESSAGES = "messages"
REFS = "kazma-refs"  # the type of a write whose messages are kept as references to bodies
PACKED = "z+"  # a checkpoint blob compressed with zlib
PACK_FROM = 256
WRITES_KEPT = 10  # checkpoints whose task writes Kazma's prune keeps (the newest; older ones are history)
CACHE_ENTRIES = 256
CACHE_BYTES = 64 << 20
GAPS_A_QUERY = 200  # ranges of body numbers one query of _follow_rows asks for



_UNSEEN = object()


@dataclass
class _Held:
    """A checkpoint as the store keeps it in memory: what LangGraph gave or got, and its references."""

    thread_id: str
    checkpoint_ns: str
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_id: str | None
    runs: Runs | None
    msg_bytes: int  # the bytes of its messages' bodies (what it holds in memory, about)
    blob_bytes: int
    _numbers: dict[int, int] | None = None
    _messages: object = _UNSEEN

    @property
    def size(self) -> int:
        return self.msg_bytes + self.blob_bytes

    @property
    def id(self) -> str:
        return self.checkpoint["id"]

    @property
    def messages(self) -> list[Any] | None:
        if self._messages is _UNSEEN:  # looked at once: a put reads it several times
            found = self.checkpoint["channel_values"].get(MESSAGES)
            self._messages = found if _is_messages(found) else None
        return self._messages  # type: ignore[return-value]

    def numbers(self) -> dict[int, int]:
        """Body number by message object (by identity), for the messages this checkpoint holds."""
        if self._numbers is None:
            messages = self.messages
            found = zip(messages, bodies.numbers(self.runs), strict=False) if messages is not None and self.runs is not None else ()
            self._numbers = {id(m): n for m, n in found}
        return self._numbers


@dataclass
class _Bundle:
    thread_id: str
    also: Also | None
    source: _Held | None = None  # a fork: the checkpoint whose messages the new chat starts from
    source_thread: str | None = None  # a fork: the chat whose body space the new chat joins
    derive: bool = True  # False: the caller writes the transcript rows itself (`also`)
    follow: bool = False  # the transcript follows the state back: rows of messages it no longer holds go
    taken_back: TakenBack | None = None  # where they go (deleted unless the caller keeps them)
    last_turn_rows: bool = False  # the state's last turn's shown messages that have no row get one
    done: bool = False


_BUNDLE: contextvars.ContextVar[_Bundle | None] = contextvars.ContextVar("kazma_conversation_bundle", default=None)

Written = dict[int, tuple[int, int, Any, str | None]]  # a message's identity -> (body number, bytes, message, id)
_WriteRows = Callable[[Conn, list[bodies.Interner]], None]


@dataclass
class _Gathered:
    """A run's task writes to its chat's state, held until the transaction of the checkpoint that
    follows them (see SqlConversationStore.gathering)."""

    thread_id: str
    writes: list[tuple[_WriteRows, Written]] = field(default_factory=list)
    # Transactions that took some of them and may outlive whoever awaited them: a run stopped
    # mid-step has LangGraph cancel the write of the stopped task's error, whose transaction carries
    # the finished tasks' writes too (the engine runs it all the same). The run ends once they have.
    committing: list[asyncio.Future[None]] = field(default_factory=list)

    def take(self) -> list[tuple[_WriteRows, Written]]:
        taken, self.writes = self.writes, []
        return taken


_GATHER: contextvars.ContextVar[_Gathered | None] = contextvars.ContextVar("kazma_conversation_gather", default=None)


@dataclass
class _PutJob:
    thread_id: str
    checkpoint_ns: str
    checkpoint: Checkpoint
    metadata: str
    run_id: str | None
    parent_id: str | None
    messages: list[BaseMessage] | None
    base: _Held | None
    also: Also | None
    turn_index: int | None
    derive: bool = True
    joins: str | None = None  # a fork: the chat whose body space it joins
    follow: bool = False
    taken_back: TakenBack | None = None
    last_turn_rows: bool = False
    written: Written = field(default_factory=dict)
    runs: Runs = field(default_factory=list)
    msg_bytes: int = 0
    blob_bytes: int = 0
    space: str = ""


WRITE_COLUMNS = "task_id, channel, type, value, task_path, idx"  # a pending write, as _writes reads it
# A chat's newest checkpoint (of namespace $2) with its pending writes: a row per write, or one of NULLs.
HEAD_WITH_WRITES = (
    f"SELECT h.checkpoint_id, {', '.join(f'w.{c}' for c in WRITE_COLUMNS.split(', '))} FROM"
    " (SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2"
    " ORDER BY checkpoint_id DESC LIMIT 1) h LEFT JOIN writes w"
    " ON w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = h.checkpoint_id"
)
SPACES = "conv_spaces"
DO_NOTHING = "DO NOTHING"
WRITE_ROWS = 100  # a task's writes a statement: within every engine's limit on parameters
SPACE_THREADS = bodies.members(SPACES)


def space_of(conn: Conn, thread_id: str) -> str:
    return bodies.space_of(conn, SPACES, thread_id)


def _is_messages(value: Any, *, removals: bool = True) -> bool:
    """Whether `value` is a list of messages (without `removals`: none of them a RemoveMessage)."""
    if isinstance(value, MessageList) and removals:  # the graph's own list: messages only, by its rule
        return True
    if not isinstance(value, list):
        return False
    # The distinct types, not every item: a long conversation holds four or five.
    kinds = set(map(type, value))
    return all(issubclass(t, BaseMessage) for t in kinds) and (removals or not any(issubclass(t, RemoveMessage) for t in kinds))


def _packed(type_: str, blob: bytes) -> tuple[str, bytes]:
    """A checkpoint's small fields, compressed when that saves something (they hold the
    turn's question and every channel's version)."""
    if len(blob) < PACK_FROM:
        return type_, blob
    packed = zlib.compress(blob, 6)
    return (PACKED + type_, packed) if len(packed) < len(blob) else (type_, blob)


def _unpacked(type_: str, blob: bytes) -> tuple[str, bytes]:
    return (type_[len(PACKED):], zlib.decompress(blob)) if type_.startswith(PACKED) else (type_, blob)


def _spans(refs: bytes | None) -> list[bodies.Interval]:
    """The body numbers a checkpoint's references (runs) or a write's ({"runs": ...}) use."""
    found = orjson.loads(refs) if refs else []
    return bodies.intervals(found["runs"] if isinstance(found, dict) else found)


def _drop_checkpoints(conn: Conn, where: str, args: Sequence[Any]) -> list[bodies.Interval]:
    """Delete the checkpoints `where` selects, with their writes; the body spans they referred to."""
    dropped = [s for (refs,) in conn.execute(f"SELECT msg_refs FROM checkpoints WHERE {where}", args) for s in _spans(refs)]
    conn.execute(f"DELETE FROM checkpoints WHERE {where}", args)
    return dropped + _drop_writes(conn, where, args)


def _drop_writes(conn: Conn, where: str, args: Sequence[Any]) -> list[bodies.Interval]:
    """Delete the writes that match, and say which bodies their messages used (a task's write may
    hold messages no checkpoint took in: a turn cut off, a restore written over it)."""
    spans = [
        s for (refs,) in conn.execute(f"SELECT value FROM writes WHERE {where} AND type = ${len(args) + 1}", (*args, REFS))
        for s in _spans(refs)
    ]
    conn.execute(f"DELETE FROM writes WHERE {where}", args)
    return spans


def _removes_all(message: Any) -> bool:
    # langgraph.graph (the graph's machinery, and the HTTP client of LangGraph's SDK) is imported by the
    # graph's own module: a command that only opens the stores has no need of it for one constant.
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    return isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES


def _put_bytes(checkpoint: Checkpoint, new_versions: ChannelVersions, messages: list[Any] | None, base: _Held | None) -> int | None:
    """About how many bytes a put stores when SMALL_BYTES at most (else None): the fields of the
    checkpoint before it (their size as stored), the channels it changed, and the messages it adds
    to that one's."""
    if base is None:
        return None
    used = base.blob_bytes
    values = checkpoint["channel_values"]
    for channel in new_versions:
        if channel == MESSAGES and messages is not None:
            if base.messages is None:
                return None
            value: Any = messages[_shared_prefix(messages, base.messages):]
        else:
            value = values.get(channel)
        used += rough_bytes(value, SMALL_BYTES - used)
        if used > SMALL_BYTES:
            return None
    return used


def _shared_prefix(new: list[BaseMessage], old: list[Any]) -> int:
    """How many leading messages are the very same objects (pointer comparison only)."""
    if new is old or appended_to(new, old):  # a step's list, or made from the one before it: all of that one's
        return len(old)
    if all(map(operator.is_, new, old)):  # the common case, compared in C
        return min(len(new), len(old))
    n = 0
    for a, b in zip(new, old, strict=False):
        if a is not b:
            break
        n += 1
    return n


def _gone_rows(conn: Conn, thread_id: str, runs: Runs) -> tuple[list[int], bool]:
    """The chat's rows (its own, by id, oldest first) whose message body the state with `runs` no
    longer holds, and whether some rows it shares with its source are such too. Rows from before
    the chat's last reset stay: the state forgot them on purpose, the transcript keeps them."""
    shares = share_of(conn, thread_id) is not None
    # A reset's marker has no body: found on the (chat_id, body_n) index.
    markers = "AND t.body_n IS NULL AND t.role = 'system'"
    floor_sql = (
        f"SELECT coalesce(max(k), 0) FROM ({visible_rows('$1', 't.id', markers)}) m" if shares
        else f"SELECT coalesce(max({PLACE}), 0) FROM transcript t WHERE t.chat_id = $1 {markers}"
    )
    (floor,) = conn.execute(floor_sql, (thread_id,)).fetchone()
    # The rows whose body is in a gap between the messages the state holds, found on the
    # (chat_id, body_n) index: a restore reads the rows it takes back, not the whole transcript.
    gaps = bodies.subtract(bodies.ALL, bodies.merge(bodies.intervals(runs)))
    gone: list[tuple[int, int]] = []
    shared = False
    for at in range(0, len(gaps), GAPS_A_QUERY):
        some = gaps[at : at + GAPS_A_QUERY]
        parts = []
        for k in range(3, 3 + 2 * len(some), 2):
            where = f"AND t.body_n BETWEEN ${k} AND ${k + 1} AND {PLACE} > $2"
            parts.append(f"SELECT t.id, {PLACE}, 1 FROM transcript t WHERE t.chat_id = $1 {where}")
            if shares:
                parts.append(f"SELECT t.id, {PLACE}, 0 FROM {SHARED_ROWS.format(chat='$1')} {where}")
        for row_id, place, own in conn.execute(" UNION ALL ".join(parts), [thread_id, floor, *(n for span in some for n in span)]):
            if own:
                gone.append((place, row_id))
            else:
                shared = True
    return [row_id for _, row_id in sorted(gone)], shared


def transcript_role(message: BaseMessage) -> tuple[str, str | None] | None:
    """The transcript row a new message makes: (role, text kept in the row, None when it is
    the message's own body), or None for a message the transcript does not show."""
    if isinstance(message, HumanMessage):
        return "user", None
    if isinstance(message, AIMessage) and not message.tool_calls:
        note = message.additional_kwargs.get(NOTE_KEY)
        if isinstance(note, dict):
            return str(note.get("role", "error")), str(note.get("text", ""))
        return "assistant", None
    return None


class SqlConversationStore(ConversationStore):
    """LangGraph's checkpointer on kazma.db, with the transcript written in the same transactions."""

    def __init__(self, db: Database, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.db = db
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._held_bytes = 0
        # Messages a task's write stored, by identity, until the chat's next checkpoint takes them in.
        self._written: dict[str, Written] = {}

    @staticmethod
    def _space(conn: Conn, thread_id: str, lease: fence.Fence | None) -> str:
        """The chat's body space, read once while its lease is held: only a write of the chat's own
        (a fork's first put, a deletion) changes it, and those run under the lease too."""
        if lease is None:
            return space_of(conn, thread_id)
        found = lease.notes.get(SPACES)
        if found is None:
            found = lease.notes[SPACES] = space_of(conn, thread_id)
        return found

    # the newest checkpoint of each chat, in memory ------------------------------------------
    def _keep(self, held: _Held) -> None:
        """Keep a chat's newest checkpoint; the chats used longest ago go first when the cache is
        over its budget, never the one just kept, however large: a chat whose state outgrew the
        budget (hundreds of long tool results) would otherwise be read and decoded whole at every
        turn (three to four times the CPU of a turn, and the memory that churns)."""
        key = (held.thread_id, held.checkpoint_ns)
        self._drop(key)
        self._held[key] = held
        self._held_bytes += held.size
        while len(self._held) > 1 and (len(self._held) > CACHE_ENTRIES or self._held_bytes > CACHE_BYTES):
            _, dropped = self._held.popitem(last=False)
            self._held_bytes -= dropped.size

    def _drop(self, key: tuple[str, str]) -> None:
        found = self._held.pop(key, None)
        if found is not None:
            self._held_bytes -= found.size

    def _forget(self, thread_id: str) -> None:
        """Nothing of the chat in memory any more (its checkpoints changed under the cache)."""
        self._written.pop(thread_id, None)
        for key in [k for k in self._held if k[0] == thread_id]:
            self._drop(key)

    def _cached(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> _Held | None:
        held = self._held.get((thread_id, checkpoint_ns))
        if held is None or held.id != checkpoint_id:
            return None
        self._held.move_to_end((thread_id, checkpoint_ns))
        return held

    @contextlib.asynccontextmanager
    async def same_transaction(
        self, thread_id: str, also: Also | None = None, *, fork_from: str | None = None, rewind: bool = False,
        taken_back: TakenBack | None = None, last_turn_rows: bool = False,
    ) -> AsyncIterator[None]:
        """Make `also` commit with the next checkpoint put of `thread_id` in this task; with
        `fork_from`, that put may take its messages from that chat's newest checkpoint by
        reference. With `rewind` (a restore, a fork), the put adds no transcript row, and the
        rows of messages the new state no longer holds are taken back with it (given to
        `taken_back` by id, which may keep them, in the same transaction; deleted otherwise). With
        `last_turn_rows` (a restore, a fork: the state is a step's), the shown messages of the state's
        last turn that have no row get one: a step can hold a turn's ending the transcript never
        showed (saved just before a checkpoint a database outage or a lost lease kept from
        committing), and the transcript must then show what the state holds."""
        source = self._held.get((fork_from, "")) if fork_from is not None else None
        bundle = _Bundle(thread_id, also, source, fork_from, derive=not rewind, follow=rewind, taken_back=taken_back,
                         last_turn_rows=last_turn_rows)
        token = _BUNDLE.set(bundle)
        try:
            yield
        finally:
            _BUNDLE.reset(token)
        if not bundle.done:
            raise RuntimeError(f"no checkpoint of chat {thread_id} was written: its bundled writes did not happen")

    @contextlib.asynccontextmanager
    async def gathering(self, thread_id: str) -> AsyncIterator[None]:
        """While a run of the chat's graph goes on in this task: its tasks' writes to the chat's
        state commit with the checkpoint that follows them, in its transaction, not each in one
        of its own (a turn's two or three transactions fewer). Writes LangGraph reads back on
        their own (an interrupt, an error, a resume) and those no checkpoint followed (a run
        stopped or failed mid-step) commit at once, the latter as the run ends. A crash before
        then loses them as it would a moment earlier: the step shows as cut short, as one cut
        mid-task does."""
        gathered = _Gathered(thread_id)
        token = _GATHER.set(gathered)
        try:
            yield
        finally:
            _GATHER.reset(token)
            if gathered.writes:
                await self._write_gathered(thread_id, gathered.take(), None)
            if gathered.committing:
                await asyncio.wait(gathered.committing)
                for job in gathered.committing:
                    if not job.cancelled() and (err := job.exception()) is not None:
                        log.warning("chat %s: the writes of a stopped step's finished tasks were not saved (%s)", thread_id, err)

    @staticmethod
    def _gathered(thread_id: str) -> list[tuple[_WriteRows, Written]]:
        """The writes held for the chat's next transaction (taken: they go with it)."""
        gathered = _GATHER.get()
        return gathered.take() if gathered is not None and gathered.thread_id == thread_id else []

    async def _write_gathered(
        self, thread_id: str, held: list[tuple[_WriteRows, Written]], then: _WriteRows | None, lease: fence.Fence | None = None,
    ) -> None:
        lease = lease or fence.fence_for(thread_id)

        def write(conn: Conn) -> None:
            fence.check(conn, lease, self.db)
            interning: list[bodies.Interner] = []
            for rows, _ in held:
                rows(conn, interning)
            if then is not None:
                then(conn, interning)

        gathered = _GATHER.get()
        if held and gathered is not None and gathered.thread_id == thread_id:
            # Its own task, which whoever asked may stop waiting for: the run's end waits for it (gathering).
            job = asyncio.ensure_future(self.db.tx(write))
            gathered.committing.append(job)
            await asyncio.shield(job)
        else:
            await self.db.tx(write)
        for _, written in held:
            self._written.setdefault(thread_id, {}).update(written)

    async def head(self, thread_id: str) -> tuple[str, list[AnyMessage]] | None:
        """The chat's newest checkpoint id and its messages (the objects LangGraph will reuse)."""
        found = await self.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        if found is None:
            return None
        held = self._cached(thread_id, "", found.checkpoint["id"])
        messages = held.messages if held else found.checkpoint["channel_values"].get(MESSAGES)
        return found.checkpoint["id"], list(messages or [])

    async def body_digest(self, thread_id: str, checkpoint_id: str, index: int) -> bytes | None:
        """The digest of the body of message `index` of a checkpoint (to match a step's tail)."""

        def read(conn: Conn) -> bytes | None:
            row = conn.execute(
                "SELECT msg_refs FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2",
                (thread_id, checkpoint_id),
            ).fetchone()
            n = bodies.runs_at(bodies.decode_runs(row[0]), index) if row else None
            return None if n is None else bodies.digest_of(conn, BODIES, space_of(conn, thread_id), n)

        return await self.db.run(read)

    # reading ------------------------------------------------------------------------------------
    def _tuple(self, held: _Held, writes: list[Any]) -> CheckpointTuple:
        config: RunnableConfig = {
            "configurable": {"thread_id": held.thread_id, "checkpoint_ns": held.checkpoint_ns, "checkpoint_id": held.id}
        }
        parent: RunnableConfig | None = (
            {"configurable": {"thread_id": held.thread_id, "checkpoint_ns": held.checkpoint_ns, "checkpoint_id": held.parent_id}}
            if held.parent_id
            else None
        )
        return CheckpointTuple(config, copy_checkpoint(held.checkpoint), dict(held.metadata), parent, writes)  # type: ignore[arg-type]

    def _load(self, conn: Conn, row: Row, prior: _Held | None = None) -> _Held:
        """A checkpoint from the database. With `prior` (an older checkpoint of the same chat still
        in memory: another replica wrote the ones since), the messages the two share are taken
        from it and only the newer bodies are read."""
        checkpoint = self.serde.loads_typed(_unpacked(row["type"], row["checkpoint"]))
        runs = None
        msg_bytes = 0
        if row["msg_refs"] is not None:
            runs = bodies.decode_runs(row["msg_refs"])
            space = space_of(conn, row["thread_id"])
            kept, kept_bytes = self._still_held(conn, space, runs, prior)
            found = bodies.read(conn, BODIES, space, bodies.runs_extend([], bodies.numbers(runs)[len(kept):]))
            checkpoint["channel_values"][MESSAGES] = kept + decode_messages(found)
            msg_bytes = kept_bytes + sum(len(b) for b in found)
        return _Held(
            row["thread_id"], row["checkpoint_ns"], checkpoint, json.loads(row["metadata"]),
            row["parent_checkpoint_id"], runs, msg_bytes, len(row["checkpoint"]),
        )

    @staticmethod
    def _still_held(conn: Conn, space: str, runs: Runs, prior: _Held | None) -> tuple[list[Any], int]:
        """The leading messages of `prior` that the checkpoint with `runs` holds too, and their bytes.

        The same body number means the same body while that body lives; a number is given again
        only above every number in use, so when the last shared one still has the body it had,
        every one before it does too (the rule _prefix relies on)."""
        if prior is None or prior.runs is None or prior.messages is None:
            return [], 0
        old, new = bodies.numbers(prior.runs), bodies.numbers(runs)
        shared = 0
        for a, b in zip(old, new, strict=False):
            if a != b:
                break
            shared += 1
        if not shared or bodies.digest_of(conn, BODIES, space, new[shared - 1]) != bodies.digest(
            encode_message(prior.messages[shared - 1])
        ):
            return [], 0
        return list(prior.messages[:shared]), prior.msg_bytes * shared // max(len(prior.messages), 1)

    def _writes(
        self, conn: Conn, thread_id: str, checkpoint_ns: str, checkpoint_id: str, rows: Sequence[Sequence[Any]] | None = None,
    ) -> list[Any]:
        """The checkpoint's pending writes, decoded; `rows` (task_id, channel, type, value, task_path,
        idx) when they were read already."""
        if rows is None:
            rows = conn.execute(
                f"SELECT {WRITE_COLUMNS} FROM writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                (thread_id, checkpoint_ns, checkpoint_id),
            ).fetchall()
        plain = [tuple(r) for r in rows if r[2] != REFS]
        out = [
            (task_id, channel, self.serde.loads_typed((type_, value)))
            for task_id, channel, type_, value, task_path, idx in sorted(plain, key=lambda r: writes_sort_key(r[4], r[0], r[5]))
        ]
        if len(plain) == len(rows):
            return out
        # Messages a task wrote are kept as references to their bodies: rebuilt here, in order.
        by_key = {(r[0], r[1], r[5]): r for r in rows}
        loaded = iter(out)
        merged = []
        for task_id, channel, type_, value, _task_path, _idx in sorted(
            (tuple(r) for r in by_key.values()), key=lambda r: writes_sort_key(r[4], r[0], r[5])
        ):
            if type_ == REFS:
                refs = orjson.loads(value)
                found: list[Any] = decode_messages(bodies.read(conn, BODIES, space_of(conn, thread_id), refs["runs"]))
                if refs["remove_all"]:
                    from langgraph.graph.message import REMOVE_ALL_MESSAGES  # as in _removes_all

                    found.insert(0, RemoveMessage(id=REMOVE_ALL_MESSAGES))
                merged.append((task_id, channel, found))
            else:
                merged.append(next(loaded))
        return merged

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        wanted = get_checkpoint_id(config)

        def head(conn: Conn) -> tuple[str, list[Any]] | None:
            if wanted:
                row = conn.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                    (thread_id, checkpoint_ns, wanted),
                ).fetchone()
            else:
                # The newest checkpoint with its pending writes, in one statement (every turn asks).
                rows = conn.execute(HEAD_WITH_WRITES, (thread_id, checkpoint_ns)).fetchall()
                if not rows:
                    return None
                found = [tuple(r)[1:] for r in rows if r[1] is not None]
                return rows[0][0], self._writes(conn, thread_id, checkpoint_ns, rows[0][0], found)
            if row is None:
                return None
            return row[0], self._writes(conn, thread_id, checkpoint_ns, row[0])

        found = await self.db.run(head, small=True)
        if found is None:
            return None
        checkpoint_id, writes = found
        held = self._cached(thread_id, checkpoint_ns, checkpoint_id)
        if held is None:
            prior = self._held.get((thread_id, checkpoint_ns))

            def load(conn: Conn) -> _Held | None:
                row = conn.execute(
                    "SELECT * FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                    (thread_id, checkpoint_ns, checkpoint_id),
                ).fetchone()
                return self._load(conn, row, prior) if row else None

            held = await self.db.run(load)
            if held is None:
                return None
            if not wanted:
                self._keep(held)
        return self._tuple(held, writes)

    def _search_where(
        self, config: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None
    ) -> tuple[str, list[Any]]:
        """The WHERE clause of alist (empty when nothing narrows it) and its parameters: the chat, its
        namespace and checkpoint when the config names them, the metadata's top-level keys that
        `filter` gives a JSON value each, and checkpoints before `before`'s."""
        wheres: list[str] = []
        params: list[Any] = []

        def mark(value: Any) -> str:
            params.append(value)
            return f"${len(params)}"

        if config is not None:
            wheres.append(f"thread_id = {mark(str(config['configurable']['thread_id']))}")
            checkpoint_ns = config["configurable"].get("checkpoint_ns")
            if checkpoint_ns is not None:
                wheres.append(f"checkpoint_ns = {mark(checkpoint_ns)}")
            if checkpoint_id := get_checkpoint_id(config):
                wheres.append(f"checkpoint_id = {mark(checkpoint_id)}")
        for key, value in (filter or {}).items():
            wheres.append(self.db.json_equals("metadata", mark(key), mark(json.dumps(value))))
        if before is not None:
            wheres.append(f"checkpoint_id < {mark(get_checkpoint_id(before))}")
        return ("WHERE " + " AND ".join(wheres) if wheres else ""), params

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        where, params = self._search_where(config, filter, before)
        query = f"SELECT * FROM checkpoints {where} ORDER BY checkpoint_id DESC"
        if limit is not None:
            params.append(limit)
            query += f" LIMIT ${len(params)}"

        def read(conn: Conn) -> list[CheckpointTuple]:
            out = []
            for row in conn.execute(query, tuple(params)).fetchall():
                held = self._load(conn, row)
                out.append(self._tuple(held, self._writes(conn, held.thread_id, held.checkpoint_ns, held.id)))
            return out

        for item in await self.db.run(read):
            yield item

    # writing ------------------------------------------------------------------------------------
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = str(config["configurable"].get("checkpoint_ns", ""))
        parent_id = config["configurable"].get("checkpoint_id")
        values = checkpoint["channel_values"]
        messages = values.get(MESSAGES)
        messages = messages if _is_messages(messages) and checkpoint_ns == "" else None
        bundle = _BUNDLE.get()
        if bundle is not None and bundle.thread_id != thread_id:
            bundle = None
        base = bundle.source if bundle and bundle.source else (self._cached(thread_id, checkpoint_ns, parent_id) if parent_id else None)
        meta = get_checkpoint_metadata(config, metadata)
        turn = values.get("turn_index")
        job = _PutJob(
            thread_id, checkpoint_ns, checkpoint,
            json.dumps(meta, ensure_ascii=False), str(meta["run_id"]) if meta.get("run_id") else None, parent_id,
            messages, base, bundle.also if bundle else None, turn if isinstance(turn, int) else None,
            bundle.derive if bundle else True, bundle.source_thread if bundle else None,
            bundle.follow if bundle else False, bundle.taken_back if bundle else None,
            bundle.last_turn_rows if bundle else False,
        )
        earlier = self._written.pop(thread_id, {}) if messages is not None else {}
        if bundle is not None:
            _BUNDLE.set(None)  # the bundle goes with one put only
        held = fence.fence_for(thread_id)
        stored = _put_bytes(checkpoint, new_versions, messages, base) if bundle is None else None
        small = stored is not None
        run = _GATHER.get()
        if small and base is not None and run is not None and run.thread_id == thread_id and meta.get("source") == "input":
            return self._put_with_next(run, job, meta, held, earlier, base, stored or 0)
        gathered = self._gathered(thread_id)

        def put(conn: Conn) -> None:
            fence.check(conn, held, self.db)
            interning: list[bodies.Interner] = []
            job.written = dict(earlier)
            for rows, written in gathered:
                rows(conn, interning)  # the writes of the tasks this checkpoint follows
                job.written.update(written)
            self._put(conn, job, held, interning[0] if interning else None)

        await self.db.tx(put, small=small)
        if bundle is not None:
            bundle.done = True
        held_checkpoint = copy_checkpoint(checkpoint)
        self._keep(_Held(thread_id, checkpoint_ns, held_checkpoint, meta, parent_id,
                         job.runs if messages is not None else None, job.msg_bytes, job.blob_bytes))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint["id"]}}

    def _put_with_next(
        self, run: _Gathered, job: _PutJob, meta: CheckpointMetadata, lease: fence.Fence | None, earlier: Written,
        base: _Held, stored: int,
    ) -> RunnableConfig:
        """A run's input checkpoint (the turn's message, not yet in the state's messages: those are
        its base's), when small: written in the transaction of the checkpoint that follows it, the
        first step's, a moment later (on PostgreSQL a transaction and two round trips fewer a
        turn). A crash between the two loses it as it would a moment earlier: the chat is as it was
        before the message, in its state and its transcript alike (the message's row comes with the
        first step's checkpoint either way). A run that ends before that checkpoint writes it then
        (gathering)."""
        kept = _Held(job.thread_id, job.checkpoint_ns, copy_checkpoint(job.checkpoint), meta, job.parent_id,
                     None, base.msg_bytes, stored)

        def rows(conn: Conn, interning: list[bodies.Interner]) -> None:
            job.written = dict(earlier)
            self._put(conn, job, lease, interning[0] if interning else None)
            # What the checkpoint after it finds as its base, in the same transaction (this runs first).
            kept.runs = job.runs if job.messages is not None else None
            kept.msg_bytes, kept.blob_bytes, kept._numbers = job.msg_bytes, job.blob_bytes, None

        run.writes.append((rows, {}))
        self._keep(kept)
        return {"configurable": {"thread_id": job.thread_id, "checkpoint_ns": job.checkpoint_ns, "checkpoint_id": job.checkpoint["id"]}}

    def _prefix(self, conn: Conn, job: _PutJob) -> tuple[int, Runs, int]:
        """How many leading messages are stored already, their references, and about how many
        bytes they hold (exact when the whole of the earlier list is shared)."""
        messages = job.messages or []
        base = job.base
        if base is not None and base.runs is not None and base.messages is not None:
            shared = _shared_prefix(messages, base.messages)
            return shared, bodies.runs_prefix(base.runs, shared), base.msg_bytes * shared // max(len(base.messages), 1)
        if not job.parent_id or not messages:
            return 0, [], 0
        row = conn.execute(
            "SELECT msg_refs, msg_count, msg_bytes FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
            (job.thread_id, job.checkpoint_ns, job.parent_id),
        ).fetchone()
        if row is None or row["msg_refs"] is None:
            return 0, [], 0
        runs = bodies.decode_runs(row["msg_refs"])
        shared = min(int(row["msg_count"]), len(messages))
        n = bodies.runs_at(runs, shared - 1) if shared else None
        # Kazma's graph appends, and a rewrite replaces the whole list: when the last message
        # the two share is the same body, the ones before it are the same too.
        if n is None or bodies.digest_of(conn, BODIES, job.space, n) != bodies.digest(encode_message(messages[shared - 1])):
            return 0, [], 0
        return shared, bodies.runs_prefix(runs, shared), int(row["msg_bytes"] or 0) * shared // max(int(row["msg_count"]), 1)

    def _put(self, conn: Conn, job: _PutJob, lease: fence.Fence | None = None, interner: bodies.Interner | None = None) -> None:
        if job.also is not None:
            job.also(conn)
        if job.joins is not None:
            if lease is not None:
                lease.notes.pop(SPACES, None)  # read again once this has committed
            # A fork joins its source's body space: its messages and transcript rows refer to
            # the source's bodies instead of copying them.
            job.space = space_of(conn, job.joins)
            conn.execute(
                "INSERT INTO conv_spaces (thread_id, space) VALUES ($1, $2) ON CONFLICT (thread_id) DO UPDATE SET"
                " space = excluded.space",
                (job.thread_id, job.space),
            )
        else:
            job.space = self._space(conn, job.thread_id, lease)
        values = dict(job.checkpoint["channel_values"])
        refs = count = msg_bytes = None
        if job.messages is not None:
            del values[MESSAGES]
            shared, runs, shared_bytes = self._prefix(conn, job)
            if interner is None or interner.chat_id != job.space:
                interner = bodies.Interner(conn, BODIES, job.space)
            new = job.messages[shared:]
            numbers: list[int] = []
            new_bytes = 0
            adding: dict[int, bytes] = {}  # place in numbers -> a body to add
            for m in new:
                known = job.written.get(id(m))
                # A task's write stored it a moment ago, as it still is (the reducer gives a message
                # without an id one after the write: that message is encoded again, with its id).
                if known is not None and known[2] is m and known[3] == m.id:
                    numbers.append(known[0])
                    new_bytes += known[1]
                    continue
                adding[len(numbers)] = body = encode_message(m)
                numbers.append(0)
                new_bytes += len(body)
            for at, n in zip(adding, interner.add_all([(body, None) for body in adding.values()]), strict=True):
                numbers[at] = n
            job.runs = bodies.runs_extend(runs, numbers)
            refs, count = orjson.dumps(job.runs), len(job.messages)
            msg_bytes = job.msg_bytes = shared_bytes + new_bytes
            if job.checkpoint_ns == "" and job.derive:
                self._derive_rows(conn, job, new, numbers)
            elif job.checkpoint_ns == "" and job.last_turn_rows:
                last = next((i for i in range(len(job.messages) - 1, -1, -1) if isinstance(job.messages[i], HumanMessage)), 0)
                tail = range(last, len(job.messages))
                self._derive_rows(conn, job, [job.messages[i] for i in tail], [bodies.runs_at(job.runs, i) or 0 for i in tail])
            if job.checkpoint_ns == "" and job.follow:
                self._follow_rows(conn, job.thread_id, job.runs, job.taken_back)
        type_, blob = _packed(*self.serde.dumps_typed({**job.checkpoint, "channel_values": values}))
        job.blob_bytes = len(blob)
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id,"
            " type, checkpoint, metadata, msg_refs, msg_count, msg_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
            " ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET"
            " parent_checkpoint_id = excluded.parent_checkpoint_id, run_id = excluded.run_id, type = excluded.type,"
            " checkpoint = excluded.checkpoint, metadata = excluded.metadata, msg_refs = excluded.msg_refs,"
            " msg_count = excluded.msg_count, msg_bytes = excluded.msg_bytes",
            (
                job.thread_id, job.checkpoint_ns, job.checkpoint["id"], job.parent_id, job.run_id,
                type_, blob, job.metadata, refs, count, msg_bytes,
            ),
        )

    @staticmethod
    def _derive_rows(
        conn: Conn, job: _PutJob, new: Sequence[BaseMessage], numbers: list[int]
    ) -> None:
        """The transcript rows of the messages this put added: one row per body at most, so a
        rewrite of messages already shown adds none."""
        showing = [(shown, n) for shown, n in zip(map(transcript_role, new), numbers, strict=True) if shown is not None]
        if not showing:
            return  # the common put: a tool call, a result, a checkpoint with nothing new
        turn = job.turn_index
        if turn is None:
            chat = conn.execute("SELECT last_turn FROM chats WHERE id = $1", (job.thread_id,)).fetchone()
            if chat is None:
                return
            turn = int(chat["last_turn"])
        for (role, text), n in showing:
            if not add_row(conn, job.thread_id, turn, role, text or "", n):
                continue
            if role == "user":
                conn.execute("UPDATE chats SET last_turn = $1 WHERE id = $2 AND last_turn < $3", (turn, job.thread_id, turn))

    @staticmethod
    def _follow_rows(conn: Conn, thread_id: str, runs: Runs, taken_back: TakenBack | None) -> None:
        """Take back the transcript rows of messages the chat's state no longer holds (a restore
        or a fork wrote an earlier state). Rows from before the chat's last reset stay: the
        state forgot them on purpose, the transcript keeps them."""
        gone, shared = _gone_rows(conn, thread_id, runs)
        if shared:  # rows it shares go: they become its own first, then go as its own do
            materialize(conn, thread_id)
            gone, _ = _gone_rows(conn, thread_id, runs)
        if gone:
            release(conn, thread_id, min(gone))  # forks sharing rows that go copy them first
        if taken_back is not None:
            taken_back(conn, gone)
        conn.executemany("DELETE FROM transcript WHERE id = $1", [(row_id,) for row_id in gone])

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = str(config["configurable"].get("checkpoint_ns", ""))
        checkpoint_id = str(config["configurable"]["checkpoint_id"])
        on_conflict = (
            "DO UPDATE SET task_path = excluded.task_path, channel = excluded.channel, type = excluded.type,"
            " value = excluded.value"
            if all(w[0] in WRITES_IDX_MAP for w in writes)
            else DO_NOTHING
        )

        held = self._held.get((thread_id, checkpoint_ns))
        # The next checkpoint takes these messages in: it will know their bodies by identity, once
        # this transaction committed (a run that failed or ran again numbered bodies that are not there).
        written: Written = {}
        lease = fence.fence_for(thread_id)

        def encoded(conn: Conn, interning: list[bodies.Interner], channel: str, value: Any) -> tuple[str, bytes]:
            is_list = channel == MESSAGES and checkpoint_ns == "" and isinstance(value, list)
            messages = value[1:] if is_list and value and _removes_all(value[0]) else value
            if is_list and _is_messages(messages, removals=False):
                # A task's new messages go to the body store now: the checkpoint that takes
                # them in refers to the same bodies, so a large tool result is kept once. The
                # messages the newest checkpoint holds already (a restore writes them back)
                # are known by identity and not serialised again.
                if not interning:  # one a transaction: its space is read once, with the first messages
                    interning.append(bodies.Interner(conn, BODIES, self._space(conn, thread_id, lease)))
                interner = interning[0]
                # A restore writes back the newest checkpoint's first messages: their references
                # are that checkpoint's, found by pointer in C, not message by message.
                prefix, runs = 0, []
                if held is not None and held.runs is not None and held.messages is not None:
                    prefix = _shared_prefix(messages, held.messages)
                    runs = bodies.runs_prefix(held.runs, prefix)
                rest = messages[prefix:]
                known = held.numbers() if held is not None and len(rest) > 1 else {}
                numbers = [known.get(id(m), 0) for m in rest]
                adding = {at: encode_message(m) for at, m in enumerate(rest) if numbers[at] == 0}
                for at, n in zip(adding, interner.add_all([(body, None) for body in adding.values()]), strict=True):
                    numbers[at] = n
                    written[id(rest[at])] = (n, len(adding[at]), rest[at], rest[at].id)
                refs = {"runs": bodies.runs_extend(runs, numbers), "remove_all": messages is not value}
                return REFS, orjson.dumps(refs)
            return self.serde.dumps_typed(value)

        def rows(conn: Conn, interning: list[bodies.Interner]) -> None:
            written.clear()
            # Rows of one statement, one round trip: a key twice would be one row changed twice, which
            # one statement may not do; as one at a time, the first stays (DO NOTHING) or the last does.
            by_key: dict[int, tuple[object, ...]] = {}
            for idx, (channel, value) in enumerate(writes):
                key = WRITES_IDX_MAP.get(channel, idx)
                if key not in by_key or on_conflict != DO_NOTHING:
                    by_key[key] = (key, channel, *encoded(conn, interning, channel, value))
            found = list(by_key.values())
            for at in range(0, len(found), WRITE_ROWS):
                some = found[at : at + WRITE_ROWS]
                values = ", ".join(f"($1, $2, $3, $4, $5, {marks(4, 6 + 4 * i)})" for i in range(len(some)))
                conn.execute(
                    "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)"
                    f" VALUES {values} ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) {on_conflict}",
                    [thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, *(v for row in some for v in row)],
                )

        gathered = _GATHER.get()
        if (
            gathered is not None and gathered.thread_id == thread_id and checkpoint_ns == ""
            and not any(channel in WRITES_IDX_MAP for channel, _ in writes)
        ):
            gathered.writes.append((rows, written))  # they commit with the checkpoint that follows
            return
        await self._write_gathered(thread_id, self._gathered(thread_id), rows, lease)
        self._written.setdefault(thread_id, {}).update(written)

    # deleting, copying, pruning ------------------------------------------------------------------
    def _delete_thread(self, conn: Conn, thread_id: str, also: Also | None = None) -> None:
        """A chat's checkpoints and writes, and the bodies nothing else in its space uses."""
        space = space_of(conn, thread_id)
        conn.execute("DELETE FROM checkpoints WHERE thread_id = $1", (thread_id,))
        conn.execute("DELETE FROM writes WHERE thread_id = $1", (thread_id,))
        if also is not None:
            also(conn)  # the chat's row goes here, and its transcript with it
        conn.execute("DELETE FROM conv_spaces WHERE thread_id = $1", (thread_id,))
        self._collect(conn, space, bodies.ALL)

    async def adelete_thread(self, thread_id: str, also: Also | None = None) -> None:
        """Delete a chat's checkpoints, writes and bodies (with `also` in the same transaction)."""
        await self.db.tx(lambda conn: self._delete_thread(conn, str(thread_id), also))
        self._forget(str(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        if not run_ids:
            return
        ids = [str(r) for r in run_ids]

        def write(conn: Conn) -> set[str]:
            numbered = marks(len(ids))
            doomed = conn.execute(
                f"SELECT thread_id, checkpoint_ns, checkpoint_id, msg_refs FROM checkpoints WHERE run_id IN ({numbered})", ids
            ).fetchall()
            written: dict[str, list[bodies.Interval]] = {}
            for row in doomed:
                written.setdefault(row["thread_id"], []).extend(_drop_writes(
                    conn, "thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                    (row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"]),
                ))
            conn.execute(f"DELETE FROM checkpoints WHERE run_id IN ({numbered})", ids)
            threads = {r["thread_id"] for r in doomed}
            for thread_id in threads:
                dropped = [s for r in doomed if r["thread_id"] == thread_id for s in _spans(r["msg_refs"])]
                self._collect(conn, space_of(conn, thread_id), bodies.merge([*dropped, *written[thread_id]]))
            return threads

        for thread_id in await self.db.tx(write):
            self._forget(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        src, dst = str(source_thread_id), str(target_thread_id)

        def write(conn: Conn) -> None:
            self._delete_thread(conn, dst)
            conn.execute("INSERT INTO conv_spaces (thread_id, space) VALUES ($1, $2)", (dst, space_of(conn, src)))
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type,"
                " checkpoint, metadata, msg_refs, msg_count, msg_bytes) SELECT $1, checkpoint_ns, checkpoint_id,"
                " parent_checkpoint_id, run_id, type, checkpoint, metadata, msg_refs, msg_count, msg_bytes"
                " FROM checkpoints WHERE thread_id = $2",
                (dst, src),
            )
            conn.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)"
                " SELECT $1, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM writes"
                " WHERE thread_id = $2",
                (dst, src),
            )

        await self.db.tx(write)
        self._forget(dst)

    async def drop_after(self, thread_id: str, checkpoint_id: str, also: Also) -> bool:
        """Make `checkpoint_id` the chat's newest again: the root checkpoints after it go, with their
        writes and the bodies nothing else uses, and `also` commits with them. False (and nothing
        changed) when that checkpoint is gone."""

        def write(conn: Conn) -> bool:
            if conn.execute(
                "SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2",
                (thread_id, checkpoint_id),
            ).fetchone() is None:
                return False
            where = "thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id > $2"
            args = (thread_id, checkpoint_id)
            dropped = _drop_checkpoints(conn, where, args)
            also(conn)
            self._collect(conn, space_of(conn, thread_id), bodies.merge(dropped))
            return True

        done = await self.db.tx(write)
        self._forget(thread_id)
        return done

    async def drop_history(self, thread_id: str, give_up: GiveUp) -> bool:
        """The chat's checkpoints up to the one `give_up` names (of every namespace) go with their
        writes, in the transaction of `give_up`'s own writes (an undo given up: its kept-aside
        rows go there), and so do the bodies that no checkpoint, write or row of the space, kept
        aside or not, refers to any more. False, and nothing changed, when `give_up` gave up nothing."""

        def write(conn: Conn) -> str | None:
            # Read before give_up deletes them: the bodies of the rows kept aside lose a reference too.
            kept = [
                (n, n)
                for (n,) in conn.execute(
                    "SELECT body_n FROM kept_transcript WHERE chat_id = $1 AND body_n IS NOT NULL", (thread_id,)
                )
            ]
            upto = give_up(conn)
            if upto is None:
                return None
            where = "thread_id = $1 AND checkpoint_id <= $2"
            args = (thread_id, upto)
            dropped = _drop_checkpoints(conn, where, args)
            self._collect(conn, space_of(conn, thread_id), bodies.merge([*dropped, *kept]), newest_of=thread_id)
            return upto

        upto = await self.db.tx(write)
        held = self._held.get((thread_id, ""))
        if upto and held is not None and held.id <= upto:
            self._forget(thread_id)  # only when its newest went too: a turn then loads it afresh
        return upto is not None

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        for thread_id in thread_ids:
            if strategy == "delete":
                await self.adelete_thread(str(thread_id))
            else:
                await self.trim(str(thread_id), keep=1, per_namespace=True)

    async def trim(self, thread_id: str, keep: int, *, per_namespace: bool = False) -> int:
        """Keep the newest `keep` checkpoints of a chat (of each namespace, or of the root one; for
        the root one, only the newest WRITES_KEPT keep their tasks' writes); bodies no kept
        checkpoint, write or transcript row uses are deleted."""

        def write(conn: Conn) -> int:
            spaces = (
                [r[0] for r in conn.execute("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = $1", (thread_id,))]
                if per_namespace
                else [""]
            )
            removed = 0
            dropped: list[bodies.Interval] = []
            for ns in spaces:
                row = conn.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2"
                    " ORDER BY checkpoint_id DESC LIMIT 1 OFFSET $3",
                    (thread_id, ns, keep - 1),
                ).fetchone()
                if row is None:
                    continue
                where = "thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id < $3"
                args = (thread_id, ns, row[0])
                dropped += [s for r in conn.execute(f"SELECT msg_refs FROM checkpoints WHERE {where}", args) for s in _spans(r[0])]
                removed += conn.execute(f"DELETE FROM checkpoints WHERE {where}", args).rowcount
                dropped += _drop_writes(conn, where, args)
            if not per_namespace:
                # The kept history's older checkpoints keep their state, not their tasks' writes:
                # those were applied, and a write may hold a whole tool result.
                newer = conn.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''"
                    " ORDER BY checkpoint_id DESC LIMIT 1 OFFSET $2",
                    (thread_id, WRITES_KEPT - 1),
                ).fetchone()
                if newer is not None:
                    dropped += _drop_writes(conn, "thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id < $2", (thread_id, newer[0]))
            if dropped:
                self._collect(conn, space_of(conn, thread_id), bodies.merge(dropped), newest_of=thread_id)
            return removed

        return await self.db.tx(write)

    @staticmethod
    def _collect(
        conn: Conn, space: str, dropped: list[bodies.Interval], newest_of: str | None = None
    ) -> None:
        """Delete the bodies of a space in `dropped` (merged) that no checkpoint, write or
        transcript row of any chat in the space uses."""
        if not dropped:
            return
        if newest_of is not None:
            newest = conn.execute(
                "SELECT msg_refs FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                (newest_of,),
            ).fetchone()
            dropped = bodies.subtract(dropped, bodies.merge(_spans(newest[0] if newest else None)))
            if not dropped:
                return  # the common case: an append-only chat's old checkpoints hold a prefix of its newest
        held = conn.execute(
            f"SELECT msg_refs FROM checkpoints WHERE thread_id IN ({SPACE_THREADS}) UNION ALL"
            f" SELECT value FROM writes WHERE type = $2 AND thread_id IN ({SPACE_THREADS})",
            (space, REFS),
        )
        gone = bodies.subtract(dropped, bodies.merge(s for (refs,) in held for s in _spans(refs)))
        for lo, hi in gone:
            conn.execute(
                f"DELETE FROM {BODIES} WHERE chat_id = $1 AND n BETWEEN $2 AND $3 AND n NOT IN"
                f" (SELECT body_n FROM transcript WHERE chat_id IN ({SPACE_THREADS}) AND body_n BETWEEN $2 AND $3)"
                # rows a restore kept aside for its undo refer to their bodies too
                f" AND n NOT IN (SELECT body_n FROM kept_transcript WHERE chat_id IN ({SPACE_THREADS})"
                " AND body_n BETWEEN $2 AND $3)",
                (space, lo, hi),
            )

    async def latest_id(self, thread_id: str) -> str | None:
        """The id of a chat's newest checkpoint, without loading it."""
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''"
                " ORDER BY checkpoint_id DESC LIMIT 1",
                (thread_id,),
            ).fetchone()
        )
        return str(row[0]) if row else None

    async def thread_ids(self) -> set[str]:
        rows = await self.db.run(lambda c: c.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall())
        return {r[0] for r in rows}

    def get_next_version(self, current: int | str | None, channel: None) -> int:
        """Whole numbers (a converted chat's versions were made numbers too): a few bytes a
        channel in every checkpoint, where LangGraph's SQLite saver writes 49."""
        if current is None:
            return 1
        return (int(current.split(".")[0]) if isinstance(current, str) else int(current)) + 1

    # LangGraph's synchronous API: Kazma runs its graph asynchronously only.
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        raise NotImplementedError("Kazma's checkpointer is asynchronous: use aget_tuple.")

    def list(self, config: RunnableConfig | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        raise NotImplementedError("Kazma's checkpointer is asynchronous: use alist.")

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        raise NotImplementedError("Kazma's checkpointer is asynchronous: use aput.")

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        raise NotImplementedError("Kazma's checkpointer is asynchronous: use aput_writes.")


