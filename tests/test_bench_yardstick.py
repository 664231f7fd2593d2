"""The yardstick: bench/e2e.py measures `kazma serve` beside the same server on LangGraph's stock
saver (bench/stock_serve.py), in the same run. That server subclasses the stock saver with what
Kazma's conversation store offers; when the store gains something the turn uses and the yardstick
does not, every bench run stops at its first message (a 502), and the comparison is lost."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import sys
from pathlib import Path

import httpx

from kazma_core.core import Core
from tests.conftest import make_settings
from tests.forked import start
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parent.parent


def _stock(argv: list[str]) -> None:
    spec = importlib.util.spec_from_file_location("stock_serve", ROOT / "bench" / "stock_serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.argv = ["stock_serve.py", *argv]
    module.main()


async def test_the_benchs_stock_server_answers_turns_and_restores_a_step(tmp_path: Path) -> None:
    data = tmp_path / "data"
    core = await Core.open(make_settings(data))
    try:
        user = await core.store.users.add_user("ann")
        token = await core.store.users.issue_token(user.id, "api")
    finally:
        await core.close()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAZMA_")}
    env.update(KAZMA_CONFIG=str(tmp_path / "no-user-file.toml"), KAZMA_MODEL__PIECE_SECONDS="0")
    process = start(_stock, (["--data-dir", str(data), "--port", str(port)],), env, tmp_path / "out.log", tmp_path / "err.log")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                                     trust_env=False, timeout=30) as http:
            for _ in range(600):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/healthz")).status_code == 200:
                        break
                assert process.returncode is None, (tmp_path / "err.log").read_text()[-2000:]
                await asyncio.sleep(0.05)
            chat = (await http.post("/api/chats", json={})).json()["thread_id"]
            answers = []
            for text in ("hello", "calc 1+1"):
                sent = await http.post(f"/api/chats/{chat}/messages", json={"text": text})
                assert sent.status_code == 200, (sent.text, (tmp_path / "err.log").read_text()[-2000:])
                answers.append(sent.json()["reply"])
            assert "2" in answers[1]
            steps = (await http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"]
            first_turn = next(s["snapshot_id"] for s in steps if s["turn_index"] == steps[0]["turn_index"])
            restored = await http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": first_turn})
            assert restored.status_code == 200, restored.text
            shown = [m["text"] for m in (await http.get(f"/api/chats/{chat}/messages")).json()["messages"]]
            assert "hello" in shown and "calc 1+1" not in shown
    finally:
        process.send_signal(signal.SIGTERM)
        await process.wait()
