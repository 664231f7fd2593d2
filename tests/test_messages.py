"""Kazma's saved form of a message and its message-list rule (kazma_core/messages.py), against
LangChain's and LangGraph's own: what a restore, an undo and a turn write to a conversation."""

from __future__ import annotations

import copy
import operator
import random

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from kazma_core.agent.context import context_window
from kazma_core.messages import append_messages, appended_to, decode_messages, encode_message


def conversation(turns: int) -> list[AnyMessage]:
    out: list[AnyMessage] = []
    for i in range(turns):
        out += [HumanMessage(f"question {i}", id=f"h{i}"), AIMessage(f"answer {i}", id=f"a{i}")]
    return out


def shown(messages: list[AnyMessage]) -> list[tuple[str | None, str]]:
    return [(m.id, m.text) for m in messages]


def test_restores_undos_and_turns_build_the_list_langgraph_would() -> None:
    """A restore writes back the conversation's own first messages after REMOVE_ALL_MESSAGES; an
    undo then brings the dropped ones back with their ids, and a turn replaces a message by id."""
    start = conversation(30)
    early = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *start[:44]]  # back to turn 21: a restore
    whole = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *start]  # the undo of it
    updates: list[list[AnyMessage]] = [
        early,
        [HumanMessage("after the restore", id="new1"), AIMessage("again", id="a25")],  # a25 was dropped
        [AIMessage("answer 3, edited", id="a3")],
        whole,
        [AIMessage("answer 29, edited", id="a29"), RemoveMessage(id="h0")],
        [RemoveMessage(id=REMOVE_ALL_MESSAGES), *start[:10], ToolMessage("closed", tool_call_id="c", id="t1")],
        [AIMessage("answer 9, edited", id="a9"), HumanMessage("then", id="h12")],
    ]
    ours: list[AnyMessage] = append_messages([], start)
    theirs: list[AnyMessage] = add_messages([], start)  # type: ignore[assignment]
    for update in updates:
        ours = append_messages(ours, update)
        theirs = add_messages(theirs, update)  # type: ignore[assignment]
        assert shown(ours) == shown(theirs)


def test_a_saved_message_reads_back_as_it_was_each_with_fields_of_its_own() -> None:
    said = [HumanMessage("hello", id="h"), AIMessage("", id="a", tool_calls=[{"name": "calc", "args": {"x": 1}, "id": "c1"}]),
            ToolMessage("2", tool_call_id="c1", id="t"), AIMessage("two", id="b")]
    back = decode_messages([encode_message(m) for m in said])
    assert [m.model_dump() for m in back] == [m.model_dump() for m in said]
    # Fields left at their defaults are filled in fresh: a tool result noted on one message is
    # not on the next one.
    back[0].additional_kwargs["note"] = "mine"
    back[2].response_metadata["seen"] = True
    assert back[3].additional_kwargs == {} and back[1].response_metadata == {}
    assert back[3].tool_calls == [] and back[3].invalid_tool_calls == []


def test_lists_appended_from_any_step_keep_langgraphs_rule_their_own_index_and_window() -> None:
    """A list appended from any step of a chat (the newest, an older one as a restore or a retried
    step does, a copy) gets LangGraph's list, an id index exactly its own, and the model window a
    plain list of the same messages gets."""
    rnd = random.Random(20261204)

    def said() -> AnyMessage:
        kind = HumanMessage if rnd.random() < 0.5 else AIMessage
        return kind("word " * rnd.randint(1, 900), id=f"m{rnd.random()}")

    ours, theirs = [append_messages([], [HumanMessage("hello", id="first")])], [add_messages([], [HumanMessage("hello", id="first")])]
    follows = 0
    for step in range(1500):
        at = rnd.randrange(max(0, len(ours) - 6), len(ours)) if rnd.random() < 0.9 else rnd.randrange(len(ours))
        base = copy.copy(ours[at]) if rnd.random() < 0.03 else ours[at]
        move = rnd.random()
        if move < 0.08 and len(base) > 1:
            news: list[AnyMessage] = [AIMessage("changed", id=base[rnd.randrange(len(base))].id)]
        elif move < 0.12 and len(base) > 2:
            news = [RemoveMessage(id=str(base[rnd.randrange(len(base))].id))]
        elif move < 0.14:
            news = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *base[: rnd.randint(0, len(base))], said()]
        elif move < 0.16:
            twice = said()
            news = [twice, AIMessage("again", id=twice.id)]
        elif move < 0.18:
            news = []
        else:
            news = [said() for _ in range(rnd.randint(1, 3))]
        ours.append(append_messages(base, list(news)))
        theirs.append(add_messages(list(theirs[at]), list(news)))
        assert shown(ours[-1]) == shown(theirs[-1]), step
        # Known to begin with its base's very messages (the conversation store then compares none).
        if appended_to(ours[-1], base):
            follows += 1
            assert len(ours[-1]) >= len(base) and all(map(operator.is_, ours[-1], base)), step
        # The window a list found is carried to the lists appended to it (found again only when a
        # message of it changed): each new one, asked at once, moves on from its base's.
        assert list(context_window(ours[-1], 3000)) == list(context_window(list(ours[-1]), 3000)), step
        for messages in rnd.sample(ours, min(4, len(ours))):
            assert messages.ids == {m.id: i for i, m in enumerate(messages)}, step
            for budget in (100, 10**7, 3000):
                assert list(context_window(messages, budget)) == list(context_window(list(messages), budget)), step
    assert follows > 1000  # most steps only append
