"""Kazma's saved form of a message: one JSON body, the same bytes in every store.

The conversation store (kazma.db) and the step store (snapshots.db) encode a message
with the same function, so a body's digest names the same message in both: a restore
can tell that a step's messages are the conversation's first ones by comparing digests,
without reading either. Fields left at their defaults are not written (a third of a
short message's bytes); reading fills them back in.
"""

from __future__ import annotations

import copy
import operator
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, cast

import orjson
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    BaseMessageChunk,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    message_chunk_to_message,
    message_to_dict,
    messages_from_dict,
)

_TRUSTED_TYPES: dict[str, type[AnyMessage]] = {
    "human": HumanMessage, "ai": AIMessage, "tool": ToolMessage, "system": SystemMessage,
}
_EMPTY: tuple[Any, ...] = (None, {}, [], False)


def message_dict(message: BaseMessage | dict[str, Any]) -> dict[str, Any]:
    """The saved form: {"type", "data"}, without the fields that hold their default."""
    if isinstance(message, dict):
        return message
    if message.type not in _TRUSTED_TYPES or type(message) is not _TRUSTED_TYPES[message.type]:
        return message_to_dict(message)
    data = {k: v for k, v in message.model_dump().items() if k == "content" or (k != "type" and v not in _EMPTY)}
    if data.get("status") == "success":
        del data["status"]
    return {"type": message.type, "data": data}


def rough_bytes(value: Any, budget: int) -> int:
    """About how many bytes `value` takes encoded, counted until past `budget` (then some more than
    it): text and bytes by their length, every value and item by a few bytes more, so that a
    long list is not small either. Its cost is bounded by the budget, whatever the value's size."""
    seen = 0
    todo = [value]
    while todo and seen <= budget:
        v = todo.pop()
        seen += 16
        if isinstance(v, (str, bytes, bytearray)):
            seen += len(v)
        elif isinstance(v, (dict, list, tuple, set, frozenset)):
            seen += 16 * len(v)  # counted before they are looked at: a long one is past the budget at once
            if seen <= budget:
                todo.extend(v.values() if isinstance(v, dict) else v)
        elif isinstance(v, BaseMessage):
            todo.extend((v.content, v.additional_kwargs, v.response_metadata, getattr(v, "tool_calls", None),
                         getattr(v, "artifact", None)))
        elif hasattr(v, "__dict__"):
            todo.append(vars(v))
    return seen


def encode_message(message: BaseMessage | dict[str, Any]) -> bytes:
    return orjson.dumps(message_dict(message))


def _factories(cls: type[AnyMessage]) -> dict[str, Any]:
    return {name: f.default_factory for name, f in cls.model_fields.items() if f.default_factory is not None}


# A field left out of model_construct costs pydantic an inspect.signature of its default
# factory (70 µs a message, 0.7 s for a 10,000-message chat): Kazma fills those fields itself.
_FACTORIES = {cls: _factories(cls) for cls in _TRUSTED_TYPES.values()}


def load_messages(saved: list[dict[str, Any]]) -> list[AnyMessage]:
    """Messages from Kazma's own saved form. They were validated when first made, so they are
    rebuilt without validating again (a tenth of the time at 1,000 messages)."""
    out: list[AnyMessage] = []
    for item in saved:
        cls = _TRUSTED_TYPES.get(item.get("type", ""))
        data = item.get("data") or {}
        if cls is None or "content" not in data:
            out.extend(cast("list[AnyMessage]", messages_from_dict([item])))  # typed as the base class it builds
        else:
            made = {name: make() for name, make in _FACTORIES[cls].items() if name not in data}
            out.append(cls.model_construct(set(data), **made, **data))
    return out


def decode_messages(bodies: list[bytes]) -> list[AnyMessage]:
    return load_messages([orjson.loads(b) for b in bodies])


class MessageList(list):  # type: ignore[type-arg]
    """The conversation as the graph holds it, with the index of its message ids kept beside it.
    An index not given is made when first asked for: a fork of a long chat writes 10,000 messages
    whose index only the fork's next turn needs (2 ms)."""

    __slots__ = ("_ids", "origin", "token", "window")

    def __init__(self, items: Iterable[BaseMessage] = (), ids: dict[str, int] | None = None) -> None:
        super().__init__(items)
        self._ids = ids
        # Which list this one only appended to, and how long that one was: (its token, its length).
        # A token, not the list, so that a chat's lists do not keep every earlier one alive.
        self.token = object()
        self.origin: tuple[object, int] | None = None
        # What agent/context.py found of the model's window in this list's first messages (its own
        # form). A list that only appends to another keeps its window: the messages it is about are
        # the same.
        self.window: tuple[int, ...] | None = None

    def __copy__(self) -> MessageList:
        # A copy is a list of its own (a token of its own): the same messages, its own index.
        made = MessageList(self, None if self._ids is None else dict(self._ids))
        made.window = self.window
        return made

    def __deepcopy__(self, memo: dict[int, Any]) -> MessageList:
        return MessageList(copy.deepcopy(list(self), memo))

    @property
    def ids(self) -> dict[str, int]:
        if self._ids is None:
            self._ids = {m.id: i for i, m in enumerate(self) if m.id}
        return self._ids


def append_messages(left: Any, right: Any) -> MessageList:
    """LangGraph's ``add_messages`` rule (a message whose id is already there replaces it, a
    RemoveMessage removes one, REMOVE_ALL_MESSAGES starts afresh) at the cost of the new
    messages: the id index travels with the list instead of being rebuilt at every step, so
    a step of a long conversation costs what a step of a short one does."""
    base = left if isinstance(left, MessageList) else MessageList(_as_messages(left or []))
    news = _as_messages(right if isinstance(right, list) else [right])
    removals = list(map(type, news)).count(RemoveMessage)
    if removals:
        # Imported here: the stores read messages without the graph's machinery (langgraph.graph).
        from langgraph.graph.message import REMOVE_ALL_MESSAGES

        # A restore's update: one REMOVE_ALL_MESSAGES first, then the whole conversation.
        if removals == 1 and type(news[0]) is RemoveMessage and news[0].id == REMOVE_ALL_MESSAGES:
            cut: int | None = 0
        else:
            cut = max((i for i, m in enumerate(news) if isinstance(m, RemoveMessage) and m.id == REMOVE_ALL_MESSAGES), default=None)
        if cut is not None:
            return _restarted(base, news[cut + 1 :])
    _give_ids(news)
    out = MessageList(base, dict(base.ids))
    removed: set[str] = set()
    appended = True
    for message in news:
        at = out.ids.get(message.id)  # type: ignore[arg-type]
        if at is None:
            if isinstance(message, RemoveMessage):
                raise ValueError(f"Attempting to delete a message with an ID that doesn't exist ('{message.id}')")
            out.ids[message.id] = len(out)  # type: ignore[index]
            out.append(message)
        elif isinstance(message, RemoveMessage):
            removed.add(message.id)  # type: ignore[arg-type]
        else:
            removed.discard(message.id)
            out[at] = message
            appended = appended and at >= len(base)
    if removed:
        return MessageList(m for m in out if m.id not in removed)
    if appended:
        out.window = base.window
        out.origin = (base.token, len(base))
    return out


def appended_to(new: Sequence[Any], old: Sequence[Any]) -> bool:
    """Whether `new` was made by appending to `old` alone, so that old's messages are its first
    ones, the very objects (known without comparing 10,000 pointers)."""
    origin = getattr(new, "origin", None)
    return origin is not None and origin[0] is getattr(old, "token", None) and origin[1] == len(old)


def _restarted(base: MessageList, kept: list[BaseMessage]) -> MessageList:
    """The list a REMOVE_ALL_MESSAGES starts, as LangGraph's rule makes it (`kept` as it is). A
    restore writes back the conversation's own first messages: their part of the id index is
    the base's, copied, not rebuilt message by message."""
    shared = min(len(kept), len(base))
    if not base or shared < len(base) // 2 or not all(map(operator.is_, kept[:shared], base)):
        _give_ids(kept)
        return MessageList(kept)
    _give_ids(kept[shared:])  # the shared ones are the base's: they have theirs
    ids = dict(base.ids)
    for message in base[shared:]:
        if ids.get(message.id, -1) >= shared:
            del ids[message.id]
    for at in range(shared, len(kept)):
        ids[kept[at].id] = at  # type: ignore[index]
    return MessageList(kept, ids)


def _give_ids(messages: list[BaseMessage]) -> None:
    """An id for each message without one, as LangGraph's rule gives."""
    if None in map(operator.attrgetter("id"), messages):
        for message in messages:
            if message.id is None:
                message.id = str(uuid.uuid4())


def _as_messages(items: list[Any]) -> list[BaseMessage]:
    # The distinct types, not every item: a long conversation holds four or five.
    if all(issubclass(t, BaseMessage) and not issubclass(t, BaseMessageChunk) for t in set(map(type, items))):
        return items
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]
