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


async def test_a_turns_message_is_saved_with_its_first_step_and_read_back_whole(db: Database) -> None:
    """A second turn's input checkpoint (its message, not yet in the state's messages) is written in
    the transaction of the step that follows it: another replica, or a restart, reads each of the
    turn's checkpoints, each the parent of the next, the message in the first step's state, and
    none of its bodies stored twice."""
    store = SqlConversationStore(db)

    async def answer(state: State) -> dict[str, object]:
        said = state["messages"][-1].content
        return {"messages": [AIMessage(f"you said {said}", id=f"answer-{said}")], "done": [str(said)]}

    graph = one_step_of(store, answer)
    config = {"configurable": {"thread_id": "chat-3"}}
    for said in ("one", "two", "three"):
        async with store.gathering("chat-3"):
            await graph.ainvoke({"messages": [HumanMessage(said, id=said)], "done": []}, config)

    other = SqlConversationStore(db)  # another replica, or the server after a restart
    history = [t async for t in other.alist(config)]  # newest first
    turn = [t for t in history if t.metadata.get("step", 0) >= history[0].metadata["step"] - 2]
    assert [t.metadata["source"] for t in turn] == ["loop", "loop", "input"]
    assert [t.parent_config["configurable"]["checkpoint_id"] for t in turn[:-1] if t.parent_config] == [
        t.checkpoint["id"] for t in turn[1:]
    ]
    assert [m.id for m in turn[-1].checkpoint["channel_values"]["messages"]] == ["one", "answer-one", "two", "answer-two"]
    assert [m.id for m in turn[1].checkpoint["channel_values"]["messages"]] == [
        "one", "answer-one", "two", "answer-two", "three",
    ]
    state = (await other.aget_tuple(config))
    assert state is not None
    assert [m.content for m in state.checkpoint["channel_values"]["messages"]][-2:] == ["three", "you said three"]
    assert sorted(state.checkpoint["channel_values"]["done"]) == ["one", "three", "two"]
    stored = await db.run(lambda c: c.execute("SELECT count(*) FROM conv_bodies WHERE chat_id = $1", ("chat-3",)).fetchone()[0])
    assert stored == 6  # three messages, three answers, each once
    # The next turn goes on from there on the other store, as after a restart.
    async with other.gathering("chat-3"):
        final = await one_step_of(other, answer).ainvoke({"messages": [HumanMessage("four", id="four")], "done": []}, config)
    assert [m.id for m in final["messages"]][-2:] == ["four", "answer-four"]


async def test_a_chat_whose_state_outgrew_the_memory_budget_is_not_read_again_at_each_turn(db: Database) -> None:
    """A chat of many long tool results (here 20 of 1 MB: more than a quarter of what the store keeps
    in memory, where it used to stop keeping a chat) is kept in memory as it changes: the next turn
    starts from the messages it has, not from every body read and decoded again (which made each
    turn of such a chat cost three to four times as much, and the server's memory churn to 600 MB).
    Another store (a replica, a restart) still reads it whole from the database."""
    store = SqlConversationStore(db)
    results = [AIMessage(f"{n}:" + "x" * (1 << 20), id=f"result-{n}") for n in range(20)]

    async def read_files(state: State) -> dict[str, object]:
        return {"messages": results, "done": ["read"]}

    config = {"configurable": {"thread_id": "chat-big"}}
    async with store.gathering("chat-big"):
        await one_step_of(store, read_files).ainvoke({"messages": [HumanMessage("read them", id="ask")], "done": []}, config)
    first, again = await store.aget_tuple(config), await store.aget_tuple(config)
    assert first is not None and again is not None
    held = first.checkpoint["channel_values"]["messages"]
    assert len(held) == 21 and all(a is b for a, b in zip(held, again.checkpoint["channel_values"]["messages"], strict=True))
    assert held[1:] == results and all(a is b for a, b in zip(held[1:], results, strict=True))  # the very objects the turn made

    other = SqlConversationStore(db)  # another replica, or the server after a restart
    read = await other.aget_tuple(config)
    assert read is not None and [m.content for m in read.checkpoint["channel_values"]["messages"]][1:] == [r.content for r in results]
