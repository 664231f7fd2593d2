"""A run's task writes commit with the checkpoint that follows them (SqlConversationStore.gathering),
and nothing a finished task did is lost or done twice when its step does not end: the real
LangGraph graph on the real store, on either engine."""

from __future__ import annotations

import asyncio
import contextlib
import operator
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph

from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.engine import Database
from kazma_core.stores.postgres import PostgresDB
from kazma_core.stores.sqlite import SqliteDB

pytestmark = pytest.mark.engines()


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    done: Annotated[list[str], operator.add]


@pytest.fixture
async def db(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    made: Database
    if engine == "postgresql":
        made = PostgresDB(request.getfixturevalue("pg_url"), "kazma", MIGRATIONS)
    else:
        made = SqliteDB(tmp_path / "kazma.db", MIGRATIONS)
    yield made
    await made.close()


Task = Callable[[State], Awaitable[dict[str, object]]]


def one_step_of(store: SqlConversationStore, *tasks: Task) -> CompiledStateGraph[State, None, State, State]:
    """A graph whose one step runs the tasks side by side, each a node named as its function."""
    builder = StateGraph(State)
    for task in tasks:
        builder.add_node(task.__name__, task)
        builder.add_edge(START, task.__name__)
    return builder.compile(checkpointer=store)


async def test_a_step_that_fails_keeps_what_its_finished_task_did_and_does_not_do_it_again(db: Database) -> None:
    """Two tasks in one step: the tool finishes, the other fails. Its writes were held for the
    step's checkpoint, which never comes: they commit with the failure, so resuming the run does
    only the failed task again, and the tool's answer is stored once."""
    store = SqlConversationStore(db)
    runs = {"tool": 0, "flaky": 0}

    async def tool(state: State) -> dict[str, object]:
        runs["tool"] += 1
        return {"messages": [AIMessage("the tool's answer", id="tool-answer")], "done": ["tool"]}

    async def flaky(state: State) -> dict[str, object]:
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            raise RuntimeError("the model's server went away")
        return {"done": ["flaky"]}

    graph = one_step_of(store, tool, flaky)
    config = {"configurable": {"thread_id": "chat-1"}}

    async with store.gathering("chat-1"):
        with pytest.raises(RuntimeError, match="went away"):
            await graph.ainvoke({"messages": [HumanMessage("hello", id="question")], "done": []}, config)
    saved = await graph.aget_state(config)
    # The step did not end, and what its finished task did is kept (its writes, pending on the step).
    assert [m.id for m in saved.values["messages"]] == ["question", "tool-answer"]
    assert {task.name for task in saved.tasks if task.error} == {"flaky"}

    async with store.gathering("chat-1"):
        final = await graph.ainvoke(None, config)
    assert runs == {"tool": 1, "flaky": 2}
    assert [m.content for m in final["messages"]] == ["hello", "the tool's answer"]
    assert sorted(final["done"]) == ["flaky", "tool"]
    stored = await db.run(lambda c: c.execute("SELECT count(*) FROM conv_bodies WHERE chat_id = $1", ("chat-1",)).fetchone()[0])
    assert stored == 2  # the question and the tool's answer, each once


async def test_a_run_stopped_mid_step_keeps_the_writes_of_the_task_that_finished(db: Database) -> None:
    """A run that ends before its step's checkpoint (a Stop while one task of the step still ran)
    commits the writes its finished task held for that checkpoint as it ends: the chat's pending
    writes, read by another replica or after a restart, and the task is not done again."""
    store = SqlConversationStore(db)
    runs = {"answer": 0, "slow": 0}
    slow_goes_on = asyncio.Event()

    async def answer(state: State) -> dict[str, object]:
        runs["answer"] += 1
        return {"messages": [AIMessage("an answer", id="answer")], "done": ["answer"]}

    async def slow(state: State) -> dict[str, object]:
        runs["slow"] += 1
        await slow_goes_on.wait()
        return {"done": ["slow"]}

    graph = one_step_of(store, answer, slow)
    config = {"configurable": {"thread_id": "chat-2"}}
    async with store.gathering("chat-2"), contextlib.aclosing(
        graph.astream({"messages": [HumanMessage("hi", id="hi")], "done": []}, config, stream_mode="updates")
    ) as stream:
        async for update in stream:
            if "answer" in update:
                break  # stopped while "slow" still runs

    saved = await SqlConversationStore(db).aget_tuple(config)  # what another replica, or a restart, reads
    assert saved is not None
    assert [m.id for m in saved.checkpoint["channel_values"]["messages"]] == ["hi"]  # the step did not end
    assert [value for _, channel, value in saved.pending_writes or [] if channel == "done"] == [["answer"]]

    slow_goes_on.set()
    async with store.gathering("chat-2"):
        final = await graph.ainvoke(None, config)
    assert runs == {"answer": 1, "slow": 2}
    assert [m.id for m in final["messages"]] == ["hi", "answer"]
