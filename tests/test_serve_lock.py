"""One `kazma serve` per data folder (issue 14), with the real command in processes of their own.

A second server on a folder in use stops at once and names the process that holds it; a
restore names that same process; a lock a crashed server left behind is taken over, and
the log says so.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.helpers import free_port
from tests.test_serve_bots import KAZMA, kazma_serve

REFUSED_SECONDS = 30.0


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("KAZMA_")}
    env.update(PYTHONUNBUFFERED="1", KAZMA_CONFIG=str(tmp_path / "no-user-file.toml"))
    return env


async def run(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        KAZMA, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), REFUSED_SECONDS)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_second_server_on_a_folder_in_use_is_refused_naming_the_first(tmp_path: Path) -> None:
    """Broke: a second `kazma serve` on another port started on a folder in use, and
    `kazma backup restore` then named a process that did not exist."""
    async with kazma_serve(tmp_path, {}) as first:
        data = str(first.data_dir)
        code, out, err = await run(first.env, "serve", "--data-dir", data, "--port", str(free_port()))
        assert code == 1, (out, err)
        assert f"kazma: Another Kazma server is running on {data} (process {first.process.pid})." in err
        assert "/login?token=" not in out  # refused before it made a sign-in link
        backup = await run(first.env, "backup", "create", "--data-dir", data)
        assert backup[0] == 0, backup[2]
        path = backup[1].splitlines()[0].removeprefix("Backup written to ")
        restore = await run(first.env, "backup", "restore", path, "--data-dir", data)
        assert restore[0] == 1
        assert restore[2].startswith(f"kazma: Kazma is running on {data} (process {first.process.pid}).")
        await first.stop()
    assert (first.data_dir / "kazma.serve.lock").read_text() == ""  # a clean stop leaves no process id


async def test_a_lock_left_by_a_crashed_server_is_taken_over_with_a_log_line(tmp_path: Path) -> None:
    gone = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await gone.wait()
    data = tmp_path / "data"
    data.mkdir()
    (data / "kazma.serve.lock").write_text(f"{gone.pid}\n")
    async with kazma_serve(tmp_path, {}) as server:
        assert (
            f"took over the data folder lock of {data} left by process {gone.pid} (no longer running)" in server.log()
        )
        assert (data / "kazma.serve.lock").read_text().strip() == str(server.process.pid)
        await server.stop()
