"""The agent's tools: their argument schemas (for any model) and what each does.

A tool that changes the world outside the chat (a file, a command, a message) is
``gated``: it waits at an approval card, and its result carries a ``side_effect``
record so a restore can list what it will not undo.
"""

from __future__ import annotations

import ast
import asyncio
import operator
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from kazma_core.agent.stops import current_stop
from kazma_core.stores.app_sqlite import AppStore


@dataclass
class ToolContext:
    """What a tool may touch: never a chat-platform id, only Kazma's own chat id."""

    chat_id: str
    turn_index: int
    iteration: int
    store: AppStore
    workspace: Path
    scratchpad: dict[str, Any]


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


class WriteFileArgs(BaseModel):
    """Write a text file in the workspace folder (asks the user for approval first)."""

    path: str = Field(min_length=1, max_length=255)
    text: str = Field(max_length=1_000_000)


class SleepArgs(BaseModel):
    """Wait a number of seconds (a slow tool)."""

    seconds: float = Field(ge=0, le=3600)


class BigArgs(BaseModel):
    """Return that many kilobytes of text."""

    kb: int = Field(ge=1, le=100_000)


_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def calculate(expression: str) -> float | int:
    """Arithmetic only: no names, no calls, bounded exponents."""

    def walk(node: ast.AST) -> float | int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
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
    if not await ctx.store.memory_on(ctx.chat_id):
        return "Memory is off in this chat, so I did not remember that."
    await ctx.store.add_fact(ctx.chat_id, ctx.turn_index, ctx.iteration, args.fact)
    return f"Remembered: {args.fact}"


async def _forget(ctx: ToolContext, args: ForgetArgs) -> str:
    count = await ctx.store.forget_fact(ctx.chat_id, ctx.turn_index, ctx.iteration, args.fact)
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
        raise ValueError(f"{relative} is outside the workspace folder")
    return target


async def _write_file(ctx: ToolContext, args: WriteFileArgs) -> str:
    try:
        target = workspace_path(ctx.workspace, args.path)
    except ValueError as err:
        return f"Not written: {err}."
    target.parent.mkdir(parents=True, exist_ok=True)
    data = args.text.encode()
    await asyncio.to_thread(target.write_bytes, data)
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


async def _big(ctx: ToolContext, args: BigArgs) -> str:
    line = "The quick brown fox jumps over the lazy dog; Kazma keeps every step. "
    text = (line * (args.kb * 1024 // len(line) + 1))[: args.kb * 1024]
    return f"Here are {args.kb} KB: {text}"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args: type[BaseModel]
    run: Callable[[ToolContext, Any], Awaitable[str]]
    gated: bool = False
    side_effect: str | None = None  # what kind of world change it makes, if any

    def schema(self) -> dict[str, Any]:
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
