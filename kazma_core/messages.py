"""Kazma's saved form of a message: one JSON body, the same bytes in every store.

The conversation store (kazma.db) and the step store (snapshots.db) encode a message
with the same function, so a body's digest names the same message in both: a restore
can tell that a step's messages are the conversation's first ones by comparing digests,
without reading either. Fields left at their defaults are not written (a third of a
short message's bytes); reading fills them back in.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
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
from langgraph.graph.message import REMOVE_ALL_MESSAGES

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


def encode_message(message: BaseMessage | dict[str, Any]) -> bytes:
    return orjson.dumps(message_dict(message))


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
            out.append(cls.model_construct(**data))
    return out


def decode_messages(bodies: list[bytes]) -> list[AnyMessage]:
    return load_messages([orjson.loads(b) for b in bodies])


class MessageList(list):  # type: ignore[type-arg]
    """The conversation as the graph holds it, with the index of its message ids kept beside it."""

    __slots__ = ("ids",)

    def __init__(self, items: Iterable[BaseMessage] = (), ids: dict[str, int] | None = None) -> None:
        super().__init__(items)
        self.ids: dict[str, int] = ids if ids is not None else {m.id: i for i, m in enumerate(self) if m.id}


def append_messages(left: Any, right: Any) -> MessageList:
    """LangGraph's ``add_messages`` rule (a message whose id is already there replaces it, a
    RemoveMessage removes one, REMOVE_ALL_MESSAGES starts afresh) at the cost of the new
    messages: the id index travels with the list instead of being rebuilt at every step, so
    a step of a long conversation costs what a step of a short one does."""
    base = left if isinstance(left, MessageList) else MessageList(_as_messages(left or []))
    news = _as_messages(right if isinstance(right, list) else [right])
    for message in news:
        if message.id is None:
            message.id = str(uuid.uuid4())
    cut = max((i for i, m in enumerate(news) if isinstance(m, RemoveMessage) and m.id == REMOVE_ALL_MESSAGES), default=None)
    if cut is not None:
        return MessageList(news[cut + 1 :])
    out = MessageList(base, dict(base.ids))
    removed: set[str] = set()
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
    if removed:
        return MessageList(m for m in out if m.id not in removed)
    return out


def _as_messages(items: list[Any]) -> list[BaseMessage]:
    if all(isinstance(m, BaseMessage) and not isinstance(m, BaseMessageChunk) for m in items):
        return items
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]
