"""Files benchmark: a chat whose tools wrote 200 files (issue 24), then a restore of its files.

The chat is made through the real agent: each file one approved `write` turn of the offline
model, every step saved as a turn leaves it, and every tenth file written a second time with new
text (what a person's notes look like after a while). Prints what the files cost on disk (their
bodies in snapshots.db, counted once whatever the number of steps referring to them, against
the text written) and how long a restore of the files, of both, and their undo take through
the rewind service, as every surface calls it.
Run: .venv/bin/python bench/files.py [--files 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kazma_core.core import Core
from kazma_core.settings import load_settings
from kazma_core.stores import files_sql
from kazma_core.stores.engine import Conn
from kazma_ui.thread_rewind import RewindService

WORDS = "kazma keeps every step of every turn and now the files its tools wrote notes code plan list".split()


def text_of(i: int, version: int) -> str:
    """About 1.5 KB of words, different for each file and version (compressing as prose does)."""
    rng = random.Random(i * 10 + version)
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(25))


def on_disk(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        # Every step kept (the default keeps a chat's newest 50): the restore goes to the first write.
        os.environ.setdefault("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", str(count * 4))
        core = await Core.open(load_settings(data_dir=Path(folder)))
        try:
            user = await core.store.users.add_user("bench")
            chat = await core.chats.create(user, "200 files")
            service = RewindService(core)
            written = 0
            started = time.perf_counter()
            writes = [(i, 1) for i in range(count)] + [(i, 2) for i in range(0, count, 10)]
            first_step = None
            for i, version in writes:
                text = text_of(i, version)
                waiting = await core.turns.send(chat.id, f"write notes/file{i:03}.txt: {text}")
                await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "approve", user.id)
                written += len(text.encode())
                if first_step is None:
                    first_step = (await core.snapshots.list_steps(chat.id))[-1].id
            made = time.perf_counter() - started
            assert first_step is not None

            def file_bytes(conn: Conn) -> tuple[int, int]:
                """The file bodies the chat's steps and marks refer to, and their bytes as stored."""
                found = [n for lo, _ in files_sql.held(conn, chat.id) for n in [lo]]
                sizes = [conn.execute("SELECT length(body) FROM bodies WHERE chat_id = $1 AND n = $2", (chat.id, n)).fetchone()[0]
                         for n in found]
                return len(found), sum(sizes)

            bodies, stored = await core.snapshots.db.run(file_bytes)
            steps, step_bytes = await core.snapshots.usage(chat.id)
            print(f"files: {count} written ({len(writes)} writes, {written / 1024:.0f} KB of text) in {made:.1f} s")
            print(f"disk: {bodies} file bodies, {stored / 1024:.0f} KB stored for them; {steps} steps, "
                  f"{step_bytes / 1024:.0f} KB counted for the chat (conversation included); "
                  f"snapshots.db with its log {on_disk(core.settings.snapshots_db) / 1024:.0f} KB")

            at = time.perf_counter()
            planned = await core.rewinds.files.plan(chat.id, first_step, core.settings.files_of(user.id))
            print(f"plan: {len(planned)} files compared with the folder in {(time.perf_counter() - at) * 1000:.0f} ms")
            for what in ("files", "both"):
                preview_at = time.perf_counter()
                preview = await service.preview_restore(user, "bench", chat.id, first_step)
                previewed = time.perf_counter() - preview_at
                at = time.perf_counter()
                done = await service.restore(user, "bench", chat.id, first_step, what=what)
                restored = time.perf_counter() - at
                at = time.perf_counter()
                back = await service.undo(user, "bench", chat.id)
                undone = time.perf_counter() - at
                print(f"restore {what}: preview {previewed * 1000:.0f} ms ({len(preview.files)} files listed), "
                      f"restore {restored * 1000:.0f} ms ({len(done.files)} files changed), "
                      f"undo {undone * 1000:.0f} ms ({back.back.files} files put back)")
        finally:
            await core.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    asyncio.run(main(parser.parse_args().files))
