"""The agent's tools: their argument schemas (for any model) and what each does.

A tool that changes the world outside the chat (a file, a command, a message) is
``gated``: it waits at an approval card, and its result carries a ``side_effect``
record so a restore can list what it will not undo.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import functools
import logging
import operator
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError

from kazma_core.agent.stops import current_stop
from kazma_core.stores.memories_sql import MemoryStore

log = logging.getLogger(__name__)

DEFAULT_MAX_RESULT_CHARS = 65_536
MAX_NAME_BYTES = 255  # what common file systems allow for one name


@dataclass(frozen=True)
class ToolLimits:
    """What a turn's tools may take: the longest result the model is given, and the owner's room left."""

    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    room: Callable[[], Awaitable[Room]] | None = None
    # Keeps what a write changed, for the chat's steps: (path, content before or None, content after).
    keep_file: Callable[[str, bytes | None, bytes], Awaitable[None]] | None = None


@dataclass(frozen=True)
class Room:
    """The chat owner's storage: used and allowed bytes (setting limits.user_quota_bytes)."""

    used: int
    quota: int

    @property
    def free(self) -> int:
        return max(0, self.quota - self.used)


@dataclass
class ToolContext:
    """What a tool may touch: never a chat-platform id, only Kazma's own chat id."""

    chat_id: str
    turn_index: int
    iteration: int
    memories: MemoryStore  # the facts it remembers and forgets
    workspace: Path  # the chat owner's own folder: nobody else's files are reachable from it
    scratchpad: dict[str, Any]
    limits: ToolLimits = ToolLimits()


class RememberArgs(BaseModel):
    """Remember a fact about the user or the conversation."""

    fact: str = Field(min_length=1, max_length=2000)


class ForgetArgs(BaseModel):
    """Forget a fact remembered earlier."""

    fact: str = Field(min_length=1, max_length=2000)


class CalculatorArgs(BaseModel):
    """Evaluate an arithmetic expression (+ - * / // % ** and parentheses)."""

    expression: str = Field(min_length=1, max_length=500)


class NoteArgs(BaseModel):
    """Write a working note to the scratchpad."""

    text: str = Field(min_length=1, max_length=2000)


def clean_file_name(path: str) -> str:
    """A file's path inside the user's files, written one way (``notes/todo.txt``), or a clear refusal."""

    def refuse(why: str) -> PydanticCustomError:
        return PydanticCustomError("file_name", why + "; give a file name such as notes/todo.txt")

    path = path.strip()
    if any(ord(ch) < 32 or ch == "\\" for ch in path):
        raise refuse("a file name cannot hold control characters or backslashes")
    if path.endswith("/"):
        raise refuse("a file name cannot end with /: that names a folder, not a file")
    if path.startswith(("/", "~")):
        raise refuse("a path starts inside your files, not at / or ~")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise refuse("a path cannot go up with ..")
    if not parts:
        raise refuse("the file needs a name")
    if any(len(p.encode()) > MAX_NAME_BYTES for p in parts):
        raise refuse(f"each part of a path has at most {MAX_NAME_BYTES} bytes")
    return "/".join(parts)


class WriteFileArgs(BaseModel):
    """Write a text file in your files (asks the user for approval first)."""

    path: str = Field(min_length=1, max_length=1024)
    text: str = Field(max_length=1_000_000)

    @field_validator("path")
    @classmethod
    def _file_name(cls, value: str) -> str:
        return clean_file_name(value)


class SleepArgs(BaseModel):
    """Wait a number of seconds (a slow tool)."""

    seconds: float = Field(ge=0, le=3600)


class BigArgs(BaseModel):
    """Return that many kilobytes of text."""

    kb: int = Field(ge=1, le=100_000)


_OPS: dict[type, Callable[..., float | int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def calculate(expression: str) -> float | int:
    """Arithmetic only: no names, no calls, bounded exponents."""

    def walk(node: ast.AST) -> float | int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and (abs(right) > 100 or abs(left) > 1e6):
                raise ValueError("that power is too large")
            return _OPS[type(node.op)](left, right)
        raise ValueError("only numbers and + - * / // % ** ( ) are allowed")

    return walk(ast.parse(expression.replace("^", "**"), mode="eval"))


async def _remember(ctx: ToolContext, args: RememberArgs) -> str:
    if not await ctx.memories.memory_on(ctx.chat_id):
        return "Memory is off in this chat, so I did not remember that."
    await ctx.memories.add_fact(ctx.chat_id, ctx.turn_index, ctx.iteration, args.fact)
    return f"Remembered: {args.fact}"


async def _forget(ctx: ToolContext, args: ForgetArgs) -> str:
    count = await ctx.memories.forget_fact(ctx.chat_id, ctx.turn_index, ctx.iteration, args.fact)
    return f"Forgot: {args.fact}" if count else f"I had nothing remembered as: {args.fact}"


async def _calculator(ctx: ToolContext, args: CalculatorArgs) -> str:
    try:
        value = calculate(args.expression)
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError) as err:
        return f"I cannot calculate {args.expression}: {err}"
    return f"{args.expression} = {value}"


async def _note(ctx: ToolContext, args: NoteArgs) -> str:
    ctx.scratchpad.setdefault("notes", []).append(args.text)
    return f"Noted: {args.text}"


def workspace_path(workspace: Path, relative: str) -> Path:
    target = (workspace / relative).resolve()
    if not target.is_relative_to(workspace.resolve()):
        raise ValueError(f"{relative} is outside your files")
    return target


def _read_before(target: Path) -> bytes | None:
    try:
        return target.read_bytes() if target.is_file() else None
    except OSError:
        return None


def _write(workspace: Path, relative: str, data: bytes) -> str | None:
    """Write the file; a sentence saying why not when it cannot be (never a server path)."""
    target = workspace_path(workspace, relative)
    parent = workspace
    for part in Path(relative).parts[:-1]:
        parent = parent / part
        if parent.exists() and not parent.is_dir():
            return f"{parent.relative_to(workspace)} is a file, so it cannot hold other files"
    if target.is_dir():
        return f"{relative} is a folder; name a file inside it, such as {relative}/notes.txt"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as err:
        return f"the file could not be written ({err.strerror or type(err).__name__})"
    return None


async def _write_file(ctx: ToolContext, args: WriteFileArgs) -> str:
    try:
        target = workspace_path(ctx.workspace, args.path)
    except ValueError as err:
        return f"Not written: {err}."
    data = args.text.encode()
    if ctx.limits.room is not None:
        room = await ctx.limits.room()
        replaced = target.stat().st_size if target.is_file() else 0
        if len(data) - replaced > room.free:
            return (
                f"Not written: your storage is full ({room.used // 1024} KB used of {room.quota // 1024} KB, "
                "setting limits.user_quota_bytes). Delete chats or files you no longer need, "
                "or ask the owner to raise the limit."
            )
    before = await asyncio.to_thread(_read_before, target) if ctx.limits.keep_file is not None else None
    refused = await asyncio.to_thread(_write, ctx.workspace, args.path, data)
    if refused is not None:
        return f"Not written: {refused}."
    if ctx.limits.keep_file is not None:
        try:
            await ctx.limits.keep_file(args.path, before, data)
        except Exception:
            # The file is written; unkept, a restore sees it as changed by something else and leaves it.
            log.exception("the write of a file in chat %s was not kept for its steps", ctx.chat_id)
    return f"Wrote {len(data)} bytes to {args.path}."


async def _sleep(ctx: ToolContext, args: SleepArgs) -> str:
    stop = current_stop()
    if stop is None:
        await asyncio.sleep(args.seconds)
        return f"Slept {args.seconds:g} seconds."
    try:
        await asyncio.wait_for(stop.wait(), args.seconds)
    except TimeoutError:
        return f"Slept {args.seconds:g} seconds."
    return f"Woke before {args.seconds:g} seconds: the turn was stopped."


BIG_PIECE = 57 * 1024  # raw bytes per piece: whole base64 lines (57 bytes each), a millisecond or so of work


def _big_text(kb: int) -> str:
    # Text that compresses about as little as a real large result (a file, a page of data):
    # base64 lines of bytes drawn from a generator seeded with the size, so it is the same each time.
    size = kb * 1024
    rng = random.Random(kb)
    raw = size * 3 // 4 + 3
    pieces = (base64.encodebytes(rng.randbytes(min(BIG_PIECE, raw - at))) for at in range(0, raw, BIG_PIECE))
    return f"Here are {kb} KB: " + b"".join(pieces).decode("ascii")[:size]


async def _big(ctx: ToolContext, args: BigArgs) -> str:
    # Made in a thread, in pieces, and joined there: megabytes made or copied on the event loop would
    # hold every other chat's requests that long (the thread gives the loop its turn between pieces).
    return await asyncio.to_thread(_big_text, args.kb)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args: type[BaseModel]
    run: Callable[[ToolContext, Any], Awaitable[str]]
    gated: bool = False
    side_effect: str | None = None  # what kind of world change it makes, if any

    def schema(self) -> dict[str, Any]:
        from langchain_core.utils.function_calling import convert_to_openai_tool  # see tool_schemas

        tool = convert_to_openai_tool(self.args)
        tool["function"]["name"] = self.name
        return tool


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("remember", RememberArgs, _remember),
        ToolSpec("forget", ForgetArgs, _forget),
        ToolSpec("calculator", CalculatorArgs, _calculator),
        ToolSpec("note", NoteArgs, _note),
        ToolSpec("write_file", WriteFileArgs, _write_file, gated=True, side_effect="file_written"),
        ToolSpec("sleep", SleepArgs, _sleep),
        ToolSpec("big", BigArgs, _big),
    )
}


def cut_result(text: str, limit: int) -> str:
    """A tool result the model may be given: past the limit it is cut, and the model is told so."""
    if len(text) <= limit:
        return text
    # The note comes first, so a model (and a person reading the step) sees it before the text.
    return (
        f"[Cut: this result had {len(text)} characters; only the first {limit} are given "
        f"(setting limits.max_tool_result_chars).]\n{text[:limit]}"
    )


async def run_tool(spec: ToolSpec, ctx: ToolContext, args: BaseModel) -> str:
    """Run one tool with the turn's limits applied to what it returns."""
    return cut_result(await spec.run(ctx, args), ctx.limits.max_result_chars)


# What the model is told of the tools, made once (building it costs milliseconds a call).
@functools.cache
def tool_schemas() -> list[dict[str, Any]]:
    """The tools as the model is given them, made at the first turn: LangChain's converter imports
    langchain_core.tools and LangSmith with it, which the commands and a start's sign-in line (that
    reach this module for Room and ToolLimits) do without."""
    return [spec.schema() for spec in TOOLS.values()]
