"""One user cannot hurt another (issue 14): files, sizes and names, attacked as the attack was.

Two people (ann and bob) use one real server over HTTP on loopback, with real SQLite files
and real folders; each test is one row of the issue's table.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, make_settings, person, user_file
from tests.helpers import chat_ids, error_of, new_chat, say, transcript
from tests.http_server import RunningServer, serve_kazma


async def approve(who: Person, chat: str, turn: dict[str, Any]) -> dict[str, Any]:
    (card,) = turn["gates"]
    response = await who.http.post(f"/api/chats/{chat}/approvals/{card['card_id']}", json={"decision": "approve"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def two_people(settings: Settings) -> AsyncIterator[tuple[RunningServer, Person, Person]]:
    async with serve_kazma(settings) as server, person(server, "ann") as ann, person(server, "bob") as bob:
        yield server, ann, bob


# -- shared file workspace ---------------------------------------------------------------------


async def test_the_same_file_name_written_by_two_users_keeps_each_ones_own(
    ann: Person, bob: Person, settings: Settings
) -> None:
    """Broke: bob, in his own chat, overwrote the ok.txt alice had written (one workspace for all)."""
    ann_chat, bob_chat = await new_chat(ann.http), await new_chat(bob.http)
    asked = await say(ann.http, ann_chat, "write ok.txt: mine")
    assert asked["gates"][0]["args"]["path"] == "ok.txt"
    assert (await approve(ann, ann_chat, asked))["reply"] == "Wrote 4 bytes to ok.txt."
    assert (await approve(bob, bob_chat, await say(bob.http, bob_chat, "write ok.txt: BOB")))["reply"] == "Wrote 3 bytes to ok.txt."
    assert user_file(settings, "ann", "ok.txt").read_text() == "mine"
    assert user_file(settings, "bob", "ok.txt").read_text() == "BOB"
    assert not (settings.workspace / "ok.txt").exists()  # nothing is written outside a person's own folder


async def test_the_card_shows_the_path_the_file_will_have(ann: Person, settings: Settings) -> None:
    chat = await new_chat(ann.http)
    asked = await say(ann.http, chat, "write ./notes//todo.txt: buy milk")
    assert asked["gates"][0]["args"] == {"path": "notes/todo.txt", "text": "buy milk"}
    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert listed[0]["args"]["path"] == "notes/todo.txt"
    assert (await approve(ann, chat, asked))["reply"] == "Wrote 8 bytes to notes/todo.txt."
    assert user_file(settings, "ann", "notes/todo.txt").read_text() == "buy milk"


# -- no size limits ------------------------------------------------------------------------------


async def test_a_declared_200_mb_body_is_refused_unread_with_the_limit_and_its_setting(ann: Person, server: RunningServer) -> None:
    """Broke: a 200 MB JSON body to POST /api/chats was read whole (+118 MB of server memory)."""
    host, port = server.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = (
        f"POST /api/chats HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {ann.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {200 * 1024 * 1024}\r\n\r\n"
    )
    writer.write(head.encode() + b'{"title": "' + b"x" * 65_536)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    answer = await asyncio.wait_for(reader.read(65_536), 10)
    writer.close()
    status_line, _, rest = answer.decode(errors="replace").partition("\r\n")
    assert status_line == "HTTP/1.1 413 Request Entity Too Large", answer[:300]
    assert '"error":"too_large"' in rest and "limits.max_body_bytes" in rest and "1048576" in rest
    assert [c["title"] for c in (await ann.http.get("/api/chats")).json()["chats"]] == []


async def test_a_chunked_body_over_the_limit_is_refused_and_one_under_it_is_taken(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", limits={"max_body_bytes": 4096})
    async with two_people(settings) as (_, ann, _bob):

        async def chunks(total: int) -> AsyncIterator[bytes]:
            body = b'{"title": "' + b"t" * (total - 13) + b'"}'
            for start in range(0, len(body), 2048):
                yield body[start:start + 2048]

        refused = error_of(await ann.http.post("/api/chats", content=chunks(8192)), 413, "too_large")
        assert refused["setting"] == "limits.max_body_bytes" and refused["limit"] == 4096
        small = await ann.http.post("/api/chats", content=b'{"title": "small"}', headers={"content-type": "application/json"})
        assert small.status_code == 201, small.text


async def test_a_message_over_the_length_limit_is_422_naming_the_setting(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", limits={"max_message_chars": 100})
    async with two_people(settings) as (_, ann, _bob):
        chat = await new_chat(ann.http)
        refused = error_of(await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "a" * 101}), 422, "message_too_long")
        assert "limits.max_message_chars" in refused["message"] and "100" in refused["message"]
        assert await transcript(ann.http, chat) == []
        assert (await say(ann.http, chat, "a" * 100))["status"] == "done"


async def test_a_tool_result_over_the_limit_is_cut_and_the_model_is_told(tmp_path: Path) -> None:
    """Broke: `big 100000` put 100 MB into each saved state: 12 GB on disk from one user."""
    settings = make_settings(tmp_path / "data", limits={"max_tool_result_chars": 4096})
    async with two_people(settings) as (_, ann, _bob):
        chat = await new_chat(ann.http)
        assert (await say(ann.http, chat, "big 100000"))["reply"] == "Received 4 KB of text."
        steps = (await ann.http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"]
        assert all(s["size"] < 64 * 1024 and not s["truncated"] for s in steps)
        step = (await ann.http.get(f"/api/replay/snapshots/{chat}/{steps[-1]['snapshot_id']}")).json()
        said = str(step)
        assert "[Cut: this result had 102400020 characters; only the first 4096 are given" in said
        assert "(setting limits.max_tool_result_chars)" in said



def noise(chars: int) -> str:
    """Text that does not compress (stored bodies of prose are kept compressed; this counts whole)."""
    return base64.b64encode(os.urandom(chars * 3 // 4 + 3)).decode()[:chars]

async def test_a_full_quota_stops_only_its_user_and_deleting_frees_it(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", limits={"user_quota_bytes": 65_536, "max_message_chars": 100_000})
    async with two_people(settings) as (_, ann, bob):
        chat = await new_chat(ann.http)
        written = await approve(ann, chat, await say(ann.http, chat, "write big.txt: " + noise(40_000)))
        assert written["reply"].startswith("Not written: your storage is full (")
        assert "setting limits.user_quota_bytes" in written["reply"]
        assert not user_file(settings, "ann", "big.txt").exists()
        full = error_of(await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "hello"}), 413, "quota_exceeded")
        assert full["setting"] == "limits.user_quota_bytes" and full["limit"] == 65_536
        assert "Delete chats or files" in full["message"]
        bobs = await new_chat(bob.http)
        assert (await say(bob.http, bobs, "hello"))["status"] == "done"  # one full user does not stop another
        assert (await ann.http.delete(f"/api/chats/{chat}")).status_code == 204
        assert (await say(ann.http, await new_chat(ann.http), "hello"))["status"] == "done"


async def test_the_owner_raises_the_quota_on_the_settings_page_and_it_applies_at_once(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", limits={"user_quota_bytes": 65_536, "max_message_chars": 100_000})
    async with two_people(settings) as (server, ann, _bob):
        _, token = await server.add_user("olga", role="owner")
        chat = await new_chat(ann.http)
        await say(ann.http, chat, noise(70_000))
        error_of(await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "hello"}), 413, "quota_exceeded")
        async with server.client(token) as olga:
            raised = await olga.put("/api/settings/limits.user_quota_bytes", json={"value": 1 << 20})
        assert raised.status_code == 200 and raised.json()["restart_needed"] is False, raised.text
        assert (await say(ann.http, chat, "hello"))["status"] == "done"


async def test_a_user_at_the_quota_cannot_fork_restore_or_start_a_chat_on_any_route(tmp_path: Path) -> None:
    """Broke: a user at the quota forked their newest step 15 times, each answered 201: only a message was checked."""
    settings = make_settings(tmp_path / "data", limits={"user_quota_bytes": 65_536, "max_message_chars": 100_000})
    async with two_people(settings) as (server, ann, bob):
        chat = await new_chat(ann.http)
        await say(ann.http, chat, noise(70_000))
        await say(bob.http, await new_chat(bob.http), "hello")
        steps = (await ann.http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"]
        step = {"thread_id": chat, "snapshot_id": steps[-1]["snapshot_id"]}
        for _ in range(15):
            full = error_of(await ann.http.post("/api/replay/fork", json=step), 413, "quota_exceeded")
            assert full["setting"] == "limits.user_quota_bytes" and full["limit"] == 65_536
            assert full["message"].startswith("Your storage is full: ") and "Delete chats or files" in full["message"]
        error_of(await ann.http.post("/api/replay/restore", json={**step, "snapshot_id": steps[0]["snapshot_id"]}), 413, "quota_exceeded")
        error_of(await ann.http.get(f"/api/replay/snapshots/{chat}/{steps[0]['snapshot_id']}/preview"), 413, "quota_exceeded")
        error_of(await ann.http.post("/api/chats", json={"title": "one more"}), 413, "quota_exceeded")
        for confirmed in (False, True):  # the command asks first; both the question and the fork are refused
            said = await ann.http.post(  # run by the command handler and the rewind service, as in a chat app
                f"/api/chats/{chat}/commands", json={"text": f"/fork {step['snapshot_id'][:8]}", "confirmed": confirmed},
                headers={"X-Kazma-Surface": "tui"},
            )
            assert said.status_code == 200, said.text
            assert said.json()["kind"] == "error" and said.json()["code"] == "quota_exceeded", said.json()
            assert said.json()["text"].startswith("Your storage is full: "), said.json()
        assert await chat_ids(ann.http) == [chat]  # nothing was written
        forked = await bob.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step["snapshot_id"]})
        assert forked.status_code == 404  # a stranger learns nothing of ann's chat, her quota included
        _, token = await server.add_user("olga", role="owner")
        async with server.client(token) as olga:
            raised = await olga.put("/api/settings/limits.user_quota_bytes", json={"value": 1 << 20})
            assert raised.status_code == 200, raised.text
        assert (await ann.http.post("/api/replay/fork", json=step)).status_code == 201
        assert (await ann.http.post("/api/chats", json={"title": "one more"})).status_code == 201


# -- paths leak, odd file names --------------------------------------------------------------------


async def test_a_refused_write_names_no_server_path(ann: Person, settings: Settings) -> None:
    """Broke: `write_file failed: [Errno 21] Is a directory: '/…/data/workspace'` was shown in the chat."""
    chat = await new_chat(ann.http)
    await approve(ann, chat, await say(ann.http, chat, "write d/a.txt: 1"))
    into_folder = await approve(ann, chat, await say(ann.http, chat, "write d: 2"))
    assert into_folder["reply"] == "Not written: d is a folder; name a file inside it, such as d/notes.txt."
    await approve(ann, chat, await say(ann.http, chat, "write f: 3"))
    under_file = await approve(ann, chat, await say(ann.http, chat, "write f/b.txt: 4"))
    assert under_file["reply"] == "Not written: f is a file, so it cannot hold other files."
    for _, _, text in await transcript(ann.http, chat):
        assert str(settings.data_dir) not in text and "Errno" not in text and "/tmp" not in text, text


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("dir/", "a file name cannot end with /"),
        ("/etc/passwd", "a path starts inside your files"),
        ("../bob/ok.txt", "a path cannot go up with .."),
        ("./", "a file name cannot end with /"),
    ],
)
async def test_a_file_name_that_is_not_a_file_is_refused_before_any_card(
    ann: Person, bob: Person, settings: Settings, path: str, why: str
) -> None:
    """Broke: `write dir/: x` created a file named `dir`."""
    await say(bob.http, await new_chat(bob.http), "hello")
    chat = await new_chat(ann.http)
    refused = await say(ann.http, chat, f"write {path}: x")
    assert refused["status"] == "done" and refused["gates"] == []
    assert refused["reply"].startswith(f"Bad arguments for write_file: {why}")
    assert refused["reply"].endswith("give a file name such as notes/todo.txt")
    assert sorted(p.name for p in settings.workspace.rglob("*") if p.is_file()) == []


async def test_the_openapi_description_states_the_message_limit_the_server_runs_with(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", limits={"max_message_chars": 500})
    async with two_people(settings) as (server, _ann, _bob), server.client() as http:
        described = (await http.get("/openapi.json")).json()["components"]["schemas"]["NewMessage"]
    assert described["properties"]["text"] == {"type": "string", "minLength": 1, "maxLength": 500, "pattern": r"\S", "title": "Text"}


async def test_every_documented_route_that_takes_a_body_documents_the_413(server: RunningServer) -> None:
    async with server.client() as http:
        paths = (await http.get("/openapi.json")).json()["paths"]
    with_body = [(p, m) for p, ops in paths.items() for m, op in ops.items() if "requestBody" in op]
    assert len(with_body) >= 10
    assert [(p, m) for p, m in with_body if "413" not in paths[p][m]["responses"]] == []


async def test_forks_in_quick_succession_stop_at_the_quota(tmp_path: Path) -> None:
    """A fork is checked as a message is (the full sum at most every few seconds while the user is
    under half the quota) and counts what it added at once: forks made a moment apart must not
    slip past the quota on an older sum."""
    settings = make_settings(tmp_path / "data", limits={"user_quota_bytes": 1 << 20, "max_message_chars": 400_000})
    async with two_people(settings) as (_server, ann, _bob):
        chat = await new_chat(ann.http)
        await say(ann.http, chat, noise(300_000))
        steps = (await ann.http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"]
        step = {"thread_id": chat, "snapshot_id": steps[-1]["snapshot_id"]}
        answers = [await ann.http.post("/api/replay/fork", json=step) for _ in range(8)]
        codes = [a.status_code for a in answers]
        assert 201 in codes and 413 in codes, codes
        assert codes == sorted(codes), codes  # once refused, refused every time after
        full = error_of(answers[-1], 413, "quota_exceeded")
        assert full["used_kb"] >= full["quota_kb"] == 1024
