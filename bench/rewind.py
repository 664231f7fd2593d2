"""Rewind benchmark: restore, fork and compare through the real service at 10, 100, 1,000 messages.

The chat is built directly (its LangGraph checkpoint, transcript and steps written as a
long conversation would leave them), then each operation runs through RewindService,
as every surface calls it. Prints medians; target at 1,000 messages: restore and fork
at most 10 ms. Run: .venv/bin/python bench/rewind.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazma_core.core import Core
from kazma_core.messages import encode_message
from kazma_core.settings import load_settings
from kazma_core.stores.snapshots import NewStep
from kazma_core.stores.types import Chat, User
from kazma_core.time_travel import MessageIds
from kazma_ui.thread_rewind import RewindService

FILLER = "Kazma keeps every step of every turn so a conversation can be rewound. " * 14  # ~1 KB


def conversation(size: int) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    turn = 0
    while len(msgs) < size:
        turn += 1
        msgs.append(HumanMessage(f"question {turn}: {FILLER}", id=f"h{turn}"))
        if turn % 5 == 0:
            call = {"name": "calculator", "args": {"expression": f"{turn}*2"}, "id": f"c{turn}", "type": "tool_call"}
            msgs.append(AIMessage("", tool_calls=[call], id=f"t{turn}"))
            msgs.append(ToolMessage(f"{turn}*2 = {turn * 2}", tool_call_id=f"c{turn}", id=f"r{turn}"))
        msgs.append(AIMessage(f"answer {turn}: {FILLER}", id=f"a{turn}"))
    return msgs[:size]


async def build_chat(core: Core, user: User, size: int) -> tuple[Chat, list[str]]:
    """The chat a long conversation leaves: its checkpoints written turn by turn (the transcript
    derived with them) and a step saved at the end of every turn."""
    chat = await core.chats.create(user, f"bench {size}")
    msgs = conversation(size)
    config = {"configurable": {"thread_id": chat.id}}
    step_ids: list[str] = []
    turn, start = 0, 0
    for end in range(1, len(msgs) + 1):
        message = msgs[end - 1]
        if isinstance(message, HumanMessage):
            turn += 1
        if (isinstance(message, AIMessage) and not message.tool_calls) or end == len(msgs):
            fields = {"turn_index": turn, "iteration": 0, "plan": [], "routing": {}, "cost": {"model_calls": turn}}
            await core.turns.graph.aupdate_state(config, {"messages": msgs[start:end], **fields}, as_node="respond")
            start = end
            prefix = msgs[:end]
            result = await core.snapshots.put(
                NewStep(uuid.uuid4().hex, chat.id, turn, 0, time.time(), "bench", [f"question {turn}"], fields,
                        MessageIds(prefix), lambda i, p=prefix: encode_message(p[i])),
                core.recorder.budgets,
            )
            step_ids.append(result.info.id)
    return chat, step_ids


async def timed(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def measure(size: int, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(data_dir=folder, time_travel={"max_snapshots": 100_000, "max_per_turn": 10_000})
        core = await Core.open(settings)
        try:
            service = RewindService(core)
            user = await core.store.users.add_user("bench")
            chat, steps = await build_chat(core, user, size)
            newest, middle = steps[-1], steps[len(steps) // 2]
            restore = await timed(lambda: service.restore(user, "bench", chat.id, newest), repeat)
            fork = await timed(lambda: service.fork(user, "bench", chat.id, newest), repeat)
            compare = await timed(lambda: service.compare(user, "bench", chat.id, middle, newest), repeat)
            listing = await timed(lambda: service.list_steps(user, "bench", chat.id), repeat)
            return {"steps": len(steps), "restore": restore, "fork": fork, "compare": compare, "list": listing}
        finally:
            await core.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    repeat = 3 if parser.parse_args().quick else 11
    print(f"Kazma rewind bench: medians of {repeat} runs, real service, real SQLite files")
    print(f"{'messages':>8} {'steps':>6} {'restore ms':>11} {'fork ms':>9} {'compare ms':>11} {'list ms':>8}")
    result: dict[str, float] = {}
    for size in (10, 100, 1000):
        result = await measure(size, repeat)
        print(f"{size:>8} {int(result['steps']):>6} {result['restore']:>11.2f} {result['fork']:>9.2f}"
              f" {result['compare']:>11.2f} {result['list']:>8.2f}")
    for name in ("restore", "fork"):
        verdict = "PASS" if result[name] <= 10 else "MISS"
        print(f"  {name} at 1,000 messages: {result[name]:.2f} ms (target <= 10 ms) {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
