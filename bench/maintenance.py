"""Clean-up benchmark: what one daily pass costs on a store of N steps.

Chats of 20 steps each (every step holds the whole conversation so far, messages of about
1 KB) are saved through the real store; half the chats are 40 days old. One pass of the
real clean-up (retention 30 days) then runs, with a real kazma.db holding the chats.
Printed per size: the pass's wall time, steps deleted, the step data freed, the file
before and after, whether it compacted and why, and the check (text samples looked for
in the file and its WAL).

    .venv/bin/python bench/maintenance.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from kazma_core.maintenance import DAY, Maintenance, megabytes
from kazma_core.messages import encode_message
from kazma_core.settings import load_settings
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.backends import app_db, steps_db
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.snapshots import Budgets, NewStep
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.time_travel import MessageIds

STEPS_PER_CHAT = 20
ROOMY = Budgets(100_000, 100_000_000, 100_000, 1 << 40, 1 << 44, 1 << 30)


async def one(total_steps: int, body_bytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=tmp)
        store = AppStore(app_db(settings))
        snapshots = SqlSnapshotStore(steps_db(settings))
        conversation = SqlConversationStore(store.db)
        try:
            owner = await store.users.add_user("bench", "owner")
            now = time.time()
            for c in range(total_steps // STEPS_PER_CHAT):
                chat = (await store.chats.create_chat(owner.id, f"c{c}")).id
                saved_at = now - (40 if c % 2 else 1) * DAY
                messages: list[BaseMessage] = []
                for n in range(STEPS_PER_CHAT):
                    messages.append(HumanMessage(os.urandom(body_bytes // 2).hex(), id=uuid.uuid4().hex))
                    messages.append(AIMessage(os.urandom(body_bytes // 2).hex(), id=uuid.uuid4().hex))
                    held = list(messages)
                    await snapshots.put(
                        NewStep(uuid.uuid4().hex, chat, n + 1, 0, saved_at, "m", ["q"], {}, MessageIds(held),
                                lambda i, held=held: encode_message(held[i])),
                        ROOMY,
                    )
            started = time.perf_counter()
            report = await Maintenance(settings, store, snapshots, conversation, orphan_grace=0.0).run_pass()
            wall = time.perf_counter() - started
        finally:
            await snapshots.close()
            await store.close()
    check = report.verification
    assert check is not None
    print(
        f"{total_steps:>6} steps, {body_bytes // 1024:>3} KB messages: pass {wall:6.2f} s; "
        f"{report.steps_deleted} deleted; step data {megabytes(report.step_bytes_before)} -> "
        f"{megabytes(report.step_bytes_after)}; on disk (file + WAL) {megabytes(report.disk_bytes_before)} -> "
        f"{megabytes(report.disk_bytes_after)}; {'compacted' if report.compacted else 'not compacted'}; "
        f"check {'passed' if check.passed else 'FAILED'} ({check.samples} samples of {check.bodies_freed} freed bodies)"
    )


async def main(quick: bool) -> None:
    sizes = [(200, 1024), (2000, 1024)] if quick else [(200, 1024), (2000, 1024), (2000, 8192), (10_000, 1024)]
    for total, body in sizes:
        await one(total, body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
