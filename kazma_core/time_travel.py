"""Capture: after each supervisor iteration, save the agent's whole state as a step.

Rules, in order: the ``enabled`` switch; the long-turn rule (every step up to the
20th, then every 10th, always the turn's last); the size rule (a step counts what it
adds: the message bodies its chat has not stored yet and its own fields; one adding more
than ``max_snapshot_bytes`` has the long texts of those new bodies cut and marked, and is
flagged truncated, as is every later step that holds a message stored cut);
then the write, which keeps every budget inside its transaction. Only a committed
step is announced; a failed capture is counted and logged and the turn goes on. A
turn's last step is saved before its answer is shown (agent/graph.py), the rest while
the graph goes on.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from kazma_core.agent.tools import TOOLS
from kazma_core.errors import StoreUnavailable
from kazma_core.events import EventBus
from kazma_core.messages import encode_message, rough_bytes
from kazma_core.metrics import CAPTURE_TOTAL
from kazma_core.settings import TimeTravelSettings
from kazma_core.stores.snapshots import Budgets, NewStep, SnapshotStore, StepInfo
from kazma_core.stores.types import NOTE_KEY

log = logging.getLogger(__name__)

KEEP_EVERY_STEP_UP_TO = 20
THEN_KEEP_EVERY = 10
CUT_START = 4096
CUT_FLOOR = 64
CUT_MARK = "… [cut by Kazma: {n} more characters]"

# Fields of the state saved beside its messages.
STATE_FIELDS = ("plan", "routing", "cost", "scratchpad", "turn_index", "questions", "iteration", "model", "gates")


def keeps(iteration: int, last: bool) -> bool:
    """The long-turn rule, for iteration (0-based) of a turn."""
    number = iteration + 1
    return last or number <= KEEP_EVERY_STEP_UP_TO or number % THEN_KEEP_EVERY == 0


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + CUT_MARK.format(n=len(value) - limit)
    if isinstance(value, dict):
        return {k: _cut(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, limit) for v in value]
    return value


def cut_long_texts(bodies: list[bytes], budget: int) -> list[bytes]:
    """Cut long strings, shorter each round, until the bodies fit the budget (or the floor is hit).
    Given only a step's new bodies: what it shares with earlier steps is never read again."""
    parsed = [orjson.loads(b) for b in bodies]
    limit = CUT_START
    while True:
        out = [orjson.dumps(_cut(p, limit)) for p in parsed]
        if sum(len(b) for b in out) <= budget or limit <= CUT_FLOOR:
            return out
        limit //= 2


class MessageIds(Sequence[str]):
    """The ids of a state's messages, read only where the store looks (its length and a tail or two)."""

    def __init__(self, messages: Sequence[BaseMessage | dict[str, Any]]) -> None:
        self._messages = messages

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        message = self._messages[index]
        found = message.get("data", {}).get("id") if isinstance(message, dict) else message.id
        # A message without an id gets one that can never match a stored tail.
        return str(found) if found else f"#{uuid.uuid4().hex}"


class SnapshotRecorder:
    def __init__(self, store: SnapshotStore, settings: TimeTravelSettings, events: EventBus) -> None:
        self.store = store
        self.settings = settings
        self.events = events

    @property
    def budgets(self) -> Budgets:
        s = self.settings
        return Budgets(
            max_snapshots=s.max_snapshots,
            max_global_snapshots=s.max_global_snapshots,
            max_per_turn=s.max_per_turn,
            max_thread_bytes=s.max_thread_bytes,
            max_total_bytes=s.max_total_bytes,
            max_snapshot_bytes=s.max_snapshot_bytes,
        )

    async def capture(self, chat_id: str, state: dict[str, Any], *, last: bool) -> StepInfo | None:
        """Save one step; return what was stored, or None when it was skipped or failed.

        The answer of a turn waits for its last step: a step store that is down fails the
        write (SQLite at once, or after its 10 s busy wait; PostgreSQL once its connection
        attempts run out), and the answer is then given all the same, degraded: without its
        step, counted ``failed``, logged, and never announced."""
        return await self.save(self.prepare(chat_id, state, last=last))

    def prepare(self, chat_id: str, state: dict[str, Any], *, last: bool) -> NewStep | None:
        """The step as the state is now (its small fields copied), or None when the rules skip it.
        Called before the graph goes on: a later node may change the fields in place."""
        iteration = int(state.get("iteration", 0))
        if not self.settings.enabled or not keeps(iteration, last):
            CAPTURE_TOTAL.labels(result="skipped").inc()
            return None
        messages: Sequence[Any] = state.get("messages", [])  # a new list at every step, never changed
        try:
            fields = orjson.loads(orjson.dumps({k: state.get(k) for k in STATE_FIELDS if k in state}))
        except TypeError:
            log.exception("time travel: step %s of chat %s holds a field that is not JSON", iteration, chat_id)
            CAPTURE_TOTAL.labels(result="failed").inc()
            return None
        return NewStep(
            id=uuid.uuid4().hex,
            chat_id=chat_id,
            turn_index=int(state.get("turn_index", 0)),
            iteration=iteration,
            created_at=time.time(),
            model=str(state.get("model", "")),
            questions=list(state.get("questions", [])),
            fields=fields,
            message_ids=MessageIds(messages),
            encode=lambda i: encode_message(messages[i]),
            shrink=cut_long_texts,
            did=step_did(messages),
            rough_bytes=lambda start, budget: rough_bytes(messages[start:], budget),
        )

    async def save(self, step: NewStep | None) -> StepInfo | None:
        """Write a prepared step; only a step whose write committed is announced."""
        if step is None:
            return None
        try:
            result = await self.store.put(step, self.budgets)
        except StoreUnavailable as err:
            # The step store cannot be used (reported by the health check, once): one line, not a traceback a step.
            log.warning("time travel: step %s of chat %s not saved: %s", step.iteration, step.chat_id, err)
            CAPTURE_TOTAL.labels(result="failed").inc()
            return None
        except Exception:
            # Capture must never break or lose the turn: count it, log it, go on.
            log.exception("time travel: could not save step %s of chat %s", step.iteration, step.chat_id)
            CAPTURE_TOTAL.labels(result="failed").inc()
            return None
        info = result.info
        CAPTURE_TOTAL.labels(result="truncated" if info.truncated else "stored").inc()
        self.events.publish(step.chat_id, "snapshot", info.to_dict())
        return info


def step_did(messages: Sequence[Any]) -> dict[str, Any]:
    """What a step did, by its newest messages, in the step words' terms (catalogue steps `did_*`).
    A tool step ends with its tools' results: it asked to approve a gated tool (writing a file:
    with its path) or used its tools; the turn's last step answered, stopped, or ended without
    an answer; any other worked on the question."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    if results:
        calls = {}
        if len(messages) > len(results) and isinstance(messages[-len(results) - 1], AIMessage):
            calls = {c.get("id"): c for c in messages[-len(results) - 1].tool_calls}
        names = [r.name or str(calls.get(r.tool_call_id, {}).get("name", "?")) for r in reversed(results)]
        for result, name in zip(reversed(results), names, strict=True):
            spec = TOOLS.get(name)
            if spec is not None and spec.gated:
                path = (calls.get(result.tool_call_id, {}).get("args") or {}).get("path")
                if name == "write_file" and isinstance(path, str):
                    return {"kind": "approval_write", "path": path[:200]}
                return {"kind": "approval", "tool": name}
        return {"kind": "used", "tools": list(dict.fromkeys(names))[:5]}
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and not last.tool_calls:
        note = last.additional_kwargs.get(NOTE_KEY)
        if isinstance(note, dict):
            return {"kind": "stopped" if note.get("role") == "stopped" else "no_answer"}
        return {"kind": "answered"}
    if isinstance(last, (HumanMessage, AIMessage)):
        return {"kind": "working"}
    return {}


PLATFORM_KEYS = frozenset({"chat_id", "user_id", "message_id"})


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in PLATFORM_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def strip_platform_ids(state: dict[str, Any]) -> dict[str, Any]:
    """Drop chat-platform ids wherever they hide in a saved state: they never belong in it."""
    raw = orjson.dumps(state)
    if not any(f'"{key}"'.encode() in raw for key in PLATFORM_KEYS):
        return state  # the common case, found with one pass over the bytes
    stripped: dict[str, Any] = _strip(state)
    return stripped
