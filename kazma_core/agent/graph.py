"""The supervisor graph: supervisor -> tool worker -> supervisor ... -> the end (an answer).

One graph run is one turn on the chat's LangGraph thread. Gated tools stop at a
LangGraph ``interrupt`` whose resume value is the approval card's decision. A turn closed
from outside the graph (failed, stopped, cut by a crash) is written as the node ``respond``.

The turn's last step is saved by the supervisor, before it hands back its answer: the
answer is shown from the checkpoint written after the node (its transcript row), so a
kill at any instant leaves no answer shown without its step.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.prompt_values import ChatPromptValue
from langchain_core.runnables import Runnable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from kazma_core.agent.activity import TURN_KEY, DeltaStream, content_text, result_state, said_before, tool_block
from kazma_core.agent.context import context_window
from kazma_core.agent.offline_model import FACTS_HEADER
from kazma_core.agent.stops import current_stop
from kazma_core.agent.tools import TOOLS, ToolContext, ToolLimits, run_tool, tool_schemas
from kazma_core.catalogue.errors import ERRORS
from kazma_core.errors import without_paths
from kazma_core.messages import append_messages, load_messages
from kazma_core.stores.cards_sql import CardStore
from kazma_core.stores.memories_sql import MemoryStore
from kazma_core.stores.types import NOTE_KEY

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Kazma, a helpful assistant. Use the tools when they help: remember and forget facts, "
    "calculate, write files in the workspace (the user approves each write), take notes."
)


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], append_messages]
    plan: list[str]
    routing: dict[str, Any]
    cost: dict[str, float]
    scratchpad: dict[str, Any]
    turn_index: int
    questions: list[str]
    iteration: int
    model: str
    gates: list[dict[str, Any]]


@dataclass
class TurnDeps:
    """Run-scoped context of one turn (LangGraph Runtime context; never stored in state)."""

    chat_id: str
    turn_index: int
    memories: MemoryStore
    cards: CardStore
    model: BaseChatModel
    workspace: Path
    max_iterations: int
    context_tokens: int
    approval_ttl: float
    limits: ToolLimits = ToolLimits()
    # Saves the state a turn ends with as its last step, and returns once it is written (or
    # failed, counted): the answer waits for it. None: the turn's steps are not captured.
    keep_last_step: Callable[[dict[str, Any]], Awaitable[object]] | None = None
    # Where the answer's pieces and the tool calls are shown as they happen (agent/activity.py).
    # None: the model is asked for its whole answer at once.
    activity: DeltaStream | None = None


def _add_cost(cost: dict[str, float] | None, message: AIMessage) -> dict[str, float]:
    total = dict(cost or {})
    usage: Mapping[str, Any] = message.usage_metadata or {}
    total["input_tokens"] = total.get("input_tokens", 0) + usage.get("input_tokens", 0)
    total["output_tokens"] = total.get("output_tokens", 0) + usage.get("output_tokens", 0)
    total["model_calls"] = total.get("model_calls", 0) + 1
    return total


async def supervisor(state: AgentState, runtime: Runtime[TurnDeps]) -> dict[str, Any]:
    deps = runtime.context
    iteration = state.get("iteration", -1) + 1
    facts = await deps.memories.facts(deps.chat_id)
    system = SYSTEM_PROMPT
    if facts:
        system += "\n" + FACTS_HEADER + "\n" + "\n".join(f"- {f.text}" for f in facts)
    can_use_tools = iteration < deps.max_iterations
    model = deps.model.bind_tools(tool_schemas()) if can_use_tools else deps.model
    # The conversation as a prompt already: LangChain takes it as it is, without converting and
    # validating every message of a long chat again at each call (they were validated when made).
    window = context_window(state.get("messages", []), deps.context_tokens)
    prompt = ChatPromptValue.model_construct(messages=[SystemMessage(system), *window])
    reply = await _ask(model, prompt, deps.activity)
    calls = reply.tool_calls if can_use_tools else []
    if calls:
        reply.additional_kwargs[TURN_KEY] = deps.turn_index  # the transcript shows its calls with the turn
    update = {
        "messages": [reply],
        "iteration": iteration,
        "cost": _add_cost(state.get("cost"), reply),
        # An answer ends the turn here, in this node's checkpoint: no node runs after it (one
        # checkpoint and one write fewer a turn than a node of its own for the end would cost).
        **({"plan": [c["name"] for c in calls], "routing": {"next": "tools", "tools": [c["name"] for c in calls]}}
           if calls else _finished()),
    }
    if not calls and deps.keep_last_step is not None:
        # The answer is shown once this node's checkpoint is written: its step is saved first,
        # as the turn ends, the reply with the id its checkpoint will hold.
        reply.id = reply.id or str(uuid.uuid4())
        await deps.keep_last_step({**state, **update, "messages": [*state.get("messages", []), reply]})
    return update


async def _ask(model: Runnable[Any, BaseMessage], messages: ChatPromptValue, activity: DeltaStream | None) -> AIMessage:
    """The model's reply; with `activity`, streamed: each piece of its text is shown as it comes.
    A Stop pressed meanwhile ends the reply there: what was said is kept, marked stopped."""
    if activity is None:
        whole = await model.ainvoke(messages)
        return whole if isinstance(whole, AIMessage) else AIMessage(content=str(whole.content))
    stop = current_stop()
    # Merged once at the end: adding each piece to the sum so far builds a new message a piece,
    # each holding the whole text so far (a cost that grows with the square of the answer).
    chunks: list[AIMessageChunk] = []
    # LangChain types astream as an AsyncIterator; it is an async generator, which aclose() ends.
    async with contextlib.aclosing(model.astream(messages)) as pieces:  # type: ignore[type-var]
        async for chunk in pieces:
            if not isinstance(chunk, AIMessageChunk):
                continue
            chunks.append(chunk)
            activity.piece(chunk.text)
            if stop is not None and stop.is_set():
                return _stopped_reply("".join(activity.said), chunks[0] + chunks[1:])
    if not chunks:
        return AIMessage(content="")
    reply = message_chunk_to_message(chunks[0] + chunks[1:])
    return reply if isinstance(reply, AIMessage) else AIMessage(content=reply.text)


def _stopped_reply(said: str, gathered: AIMessageChunk) -> AIMessage:
    """A reply cut by Stop: what was said is its text, marked stopped (its transcript row says so)."""
    reason = ERRORS["turn_stopped"].en
    note = {"role": "stopped", "text": f"{said}\n\n({reason})" if said else reason}  # read back by activity.stopped_words
    return AIMessage(content=said or f"(No answer: {reason})", additional_kwargs={NOTE_KEY: note},
                     usage_metadata=gathered.usage_metadata)


async def tool_worker(state: AgentState, runtime: Runtime[TurnDeps]) -> dict[str, Any]:
    deps = runtime.context
    last = state["messages"][-1]
    if not isinstance(last, AIMessage):
        return {}
    # A copy: tools change it in place (a note is appended to its list), and the state before this
    # step may still be on its way to the checkpointer and the step store. Its lists hold text, which
    # nothing changes: copying the lists is enough (a deep copy of a long chat's notes was ~15 ms a step).
    scratch = {key: list(value) if isinstance(value, list) else copy.deepcopy(value)
               for key, value in (state.get("scratchpad") or {}).items()}
    ctx = ToolContext(deps.chat_id, deps.turn_index, state.get("iteration", 0), deps.memories, deps.workspace, scratch, deps.limits)
    results: list[ToolMessage] = []
    gates = list(state.get("gates") or [])
    for n, call in enumerate(last.tool_calls):
        spec = TOOLS.get(call["name"])
        call_id = call.get("id") or ""
        said = said_before(last, n)
        if deps.activity is not None:
            deps.activity.tool(tool_block(deps.turn_index, call_id, call["name"], "running", dict(call.get("args") or {}), said=said))
        before = len(results)
        await _one_call(deps, ctx, call, spec, call_id, results, gates)
        if deps.activity is not None and len(results) > before:
            done = results[-1]
            deps.activity.tool(tool_block(deps.turn_index, call_id, call["name"], result_state(done),
                                          dict(call.get("args") or {}), content_text(done), said))
    return {"messages": results, "scratchpad": scratch, "gates": gates}


async def _one_call(deps: TurnDeps, ctx: ToolContext, call: Any, spec: Any, call_id: str,
                    results: list[ToolMessage], gates: list[dict[str, Any]]) -> None:
    """Run one tool call of the reply, its result appended to `results`."""
    if spec is None:
        results.append(ToolMessage(f"There is no tool named {call['name']}.", tool_call_id=call_id, status="error"))
        return
    try:
        args = spec.args.model_validate(call["args"])
    except ValidationError as err:
        results.append(ToolMessage(f"Bad arguments for {spec.name}: {err.errors()[0]['msg']}", tool_call_id=call_id, status="error"))
        return
    if spec.gated:
        card = await deps.cards.open_card(
            deps.chat_id, deps.turn_index, call_id, spec.name, args.model_dump(), deps.approval_ttl
        )
        answer = interrupt({"card_id": card.id, "tool": spec.name, "args": args.model_dump()})
        decision = answer.get("decision") if isinstance(answer, dict) else str(answer)
        gates.append({"card_id": card.id, "tool": spec.name, "decision": decision})
        if decision != "approve":
            reason = "it expired" if decision == "expired" else "it was denied"
            results.append(
                ToolMessage(f"Not done: {spec.name} needed approval and {reason}.", tool_call_id=call_id, name=spec.name)
            )
            return
    try:
        text = await run_tool(spec, ctx, args)
    except Exception as err:
        # A broken tool is the tool's answer, not the turn's end: the model sees it and goes on.
        log.exception("tool %s failed in chat %s", spec.name, deps.chat_id)
        results.append(ToolMessage(without_paths(f"{spec.name} failed: {err}"), tool_call_id=call_id, name=spec.name, status="error"))
        return
    extra = {"side_effect": {"kind": spec.side_effect, "tool": spec.name, "args": args.model_dump()}} if spec.side_effect else {}
    results.append(ToolMessage(text, tool_call_id=call_id, name=spec.name, additional_kwargs=extra))


def _finished() -> dict[str, Any]:
    """The fields a turn's end sets."""
    return {"routing": {"next": "done", "tools": []}, "plan": []}


async def respond(state: AgentState) -> dict[str, Any]:
    """A turn closed from outside the graph (a failure, a stop, a crash) ends as this node."""
    return _finished()


def closing_messages(messages: list[AnyMessage], reason: str | None = None, role: str = "error") -> list[AnyMessage]:
    """What makes a history a finished turn: a result for every tool call left without one,
    and, given a reason, a note saying the turn has no answer when the history does not end
    with one. The note is marked, so the transcript shows it as an error row."""
    # The calls and results among every message, picked by type first (a long chat's restore or
    # fork writes 10,000 messages back): a conversation holds four or five distinct types.
    kinds = list(map(type, messages))
    tools = {t for t in set(kinds) if issubclass(t, ToolMessage)}
    ais = {t for t in set(kinds) if issubclass(t, AIMessage)}
    results: Iterable[ToolMessage] = compress(messages, [k in tools for k in kinds])  # type: ignore[arg-type]
    answered = {m.tool_call_id for m in results}
    out: list[AnyMessage] = []
    calls: Iterable[AIMessage] = compress(messages, [k in ais for k in kinds])  # type: ignore[arg-type]
    for m in calls:
        if m.tool_calls:
            for call in m.tool_calls:
                if (call_id := call.get("id")) and call_id not in answered:
                    out.append(ToolMessage(ERRORS["note_tool_not_run"].en, tool_call_id=call_id, status="error"))
                    answered.add(call_id)
    ends_answered = bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls
    if reason is not None and (out or not ends_answered):
        note = {NOTE_KEY: {"role": role, "text": reason}}
        out.append(AIMessage(content=ERRORS["note_no_answer"].get("en", reason=reason), additional_kwargs=note))
    return out


def _route(state: AgentState) -> Literal["tool_worker", "__end__"]:
    return "tool_worker" if state.get("routing", {}).get("next") == "tools" else "__end__"  # END, as the Literal says


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    graph = StateGraph(AgentState, context_schema=TurnDeps)
    graph.add_node("supervisor", supervisor)
    graph.add_node("tool_worker", tool_worker)
    graph.add_node("respond", respond)
    graph.add_edge(START, "supervisor")
    graph.add_conditional_edges("supervisor", _route)
    graph.add_edge("tool_worker", "supervisor")
    graph.add_edge("respond", END)
    return graph.compile(checkpointer=checkpointer)


async def write_finished_turn(
    graph: Any, thread_id: str, state: dict[str, Any], messages: list[AnyMessage] | None = None
) -> None:
    """Make a saved state the thread's newest checkpoint, as a finished turn: no next node,
    no interrupt, no tool call without its result. `messages` given as objects (the
    conversation's own, for a restore by reference) take the place of the state's JSON ones."""
    if messages is None:
        messages = load_messages(state.get("messages") or [])
    values = {
        "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages, *closing_messages(messages)],
        "plan": state.get("plan") or [],
        "routing": state.get("routing") or {},
        "cost": state.get("cost") or {},
        "scratchpad": state.get("scratchpad") or {},
        "turn_index": state.get("turn_index", 0),
        "questions": state.get("questions") or [],
        "iteration": state.get("iteration", 0),
        "model": state.get("model") or "",
        "gates": [],
    }
    await graph.aupdate_state({"configurable": {"thread_id": thread_id}}, values, as_node="respond")
