"""The chat API over real HTTP: the real app under uvicorn on 127.0.0.1, real stores, the offline model.

Users and tokens are made through the real stores; every request goes through httpx
and the network stack, as a script, the TUI or the web page would send it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, user_file, written
from tests.helpers import chat_ids, error_of, free_port, new_chat, open_events, say, transcript, turn_over
from tests.http_server import RunningServer

VENV_BIN = Path(sys.executable).parent
ROUTES = {
    ("/api/chats", "get"),
    ("/api/chats", "post"),
    ("/api/chats/{thread_id}", "delete"),
    ("/api/chats/{thread_id}/messages", "get"),
    ("/api/chats/{thread_id}/messages", "post"),
    ("/api/chats/{thread_id}/approvals", "get"),
    ("/api/chats/{thread_id}/approvals/{card_id}", "post"),
    ("/api/chats/{thread_id}/forget", "post"),
    ("/api/chats/{thread_id}/events", "get"),
}


# -- chats ---------------------------------------------------------------------------


async def test_creating_a_chat_answers_201_with_its_id_and_title(ann: Person) -> None:
    response = await ann.http.post("/api/chats", json={"title": "Holiday plans"})
    assert response.status_code == 201
    body = response.json()
    assert len(body["thread_id"]) >= 16
    assert body["title"] == "Holiday plans"
    assert body["forked_from"] is None

    untitled = await ann.http.post("/api/chats")
    assert untitled.status_code == 201
    assert untitled.json()["title"] == "New chat"
    assert untitled.json()["thread_id"] != body["thread_id"]


async def test_the_chat_list_shows_only_the_callers_own_chats(ann: Person, bob: Person) -> None:
    first = await new_chat(ann.http, "ann one")
    second = await new_chat(ann.http, "ann two")
    bobs = await new_chat(bob.http, "bob one")

    listed = (await ann.http.get("/api/chats")).json()["chats"]
    assert {c["thread_id"] for c in listed} == {first, second}
    assert {c["title"] for c in listed} == {"ann one", "ann two"}
    assert all(c["forked_from"] is None for c in listed)
    assert await chat_ids(bob.http) == [bobs]


# -- messages ------------------------------------------------------------------------


async def test_a_message_gets_the_reply_its_turn_and_done(ann: Person) -> None:
    chat = await new_chat(ann.http)
    assert await say(ann.http, chat, "calc 1+2") == {"reply": "1+2 = 3", "turn_index": 1, "status": "done", "gates": []}
    second = await say(ann.http, chat, "hello there")
    assert second == {
        "reply": 'You said: "hello there". I know no facts yet.', "turn_index": 2, "status": "done", "gates": [],
    }


async def test_the_transcript_lists_each_turns_user_and_assistant_rows_in_order(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 6*7")
    await say(ann.http, chat, "remember: the cat is called Tom")
    await say(ann.http, chat, "who is the cat?")

    response = await ann.http.get(f"/api/chats/{chat}/messages")
    body = response.json()
    assert body["thread_id"] == chat
    ids = [m["id"] for m in body["messages"]]
    assert ids == sorted(ids)
    assert await transcript(ann.http, chat) == [
        (1, "user", "calc 6*7"),
        (1, "assistant", "6*7 = 42"),
        (2, "user", "remember: the cat is called Tom"),
        (2, "assistant", "Remembered: the cat is called Tom"),
        (3, "user", "who is the cat?"),
        (3, "assistant", 'You said: "who is the cat?". I know: the cat is called Tom.'),
    ]


@pytest.mark.engines()
async def test_a_long_transcript_is_read_a_page_at_a_time_from_the_newest(ann: Person) -> None:
    chat = await new_chat(ann.http)
    for n in range(13):
        await say(ann.http, chat, f"calc {n}+1")
    whole = (await ann.http.get(f"/api/chats/{chat}/messages")).json()
    assert len(whole["messages"]) == 26 and whole["more"] is False

    pages, before = [], None
    while True:
        params = {"limit": 10} | ({"before": before} if before else {})
        body = (await ann.http.get(f"/api/chats/{chat}/messages", params=params)).json()
        page = body["messages"]
        assert [m["id"] for m in page] == sorted(m["id"] for m in page)  # oldest first within a page
        pages.insert(0, page)
        if not body["more"]:
            break
        before = page[0]["id"]
    assert [len(p) for p in pages] == [6, 10, 10]
    assert [m for p in pages for m in p] == whole["messages"]
    # `before` alone reads the page before that row; past the first row, nothing.
    older = (await ann.http.get(f"/api/chats/{chat}/messages", params={"before": whole["messages"][3]["id"]})).json()
    assert older["messages"] == whole["messages"][:3] and older["more"] is False
    error_of(await ann.http.get(f"/api/chats/{chat}/messages", params={"limit": 0}), 422, "invalid_input")
    error_of(await ann.http.get(f"/api/chats/{chat}/messages", params={"limit": 5000}), 422, "invalid_input")


async def test_another_users_transcript_pages_are_not_found(ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    error_of(await bob.http.get(f"/api/chats/{chat}/messages", params={"limit": 1}), 404, "not_found")


# -- approvals -----------------------------------------------------------------------


async def test_a_file_is_written_only_after_its_approval(ann: Person, settings: Settings) -> None:
    chat = await new_chat(ann.http)
    notes = user_file(settings, "ann", "notes.txt")

    paused = await say(ann.http, chat, "write notes.txt: hello")
    assert paused["status"] == "awaiting_approval"
    assert paused["turn_index"] == 1
    assert len(paused["gates"]) == 1
    gate = paused["gates"][0]
    assert gate["tool"] == "write_file"
    assert gate["args"] == {"path": "notes.txt", "text": "hello"}
    assert gate["status"] == "pending"
    assert not notes.exists()

    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert [(a["card_id"], a["status"]) for a in listed] == [(gate["card_id"], "pending")]

    meanwhile = await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "calc 1+1"})
    refused = error_of(meanwhile, 409, "approval_pending")
    assert [g["card_id"] for g in refused["gates"]] == [gate["card_id"]]

    approved = await ann.http.post(f"/api/chats/{chat}/approvals/{gate['card_id']}", json={"decision": "approve"})
    assert approved.status_code == 200, approved.text
    assert approved.json() == {"reply": "Wrote 5 bytes to notes.txt.", "turn_index": 1, "status": "done", "gates": []}
    assert notes.read_text() == "hello"

    again = await ann.http.post(f"/api/chats/{chat}/approvals/{gate['card_id']}", json={"decision": "deny"})
    error_of(again, 409, "approval_closed")
    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert [(a["card_id"], a["status"]) for a in listed] == [(gate["card_id"], "approved")]

    # The refused message left no trace, and the chat takes messages again.
    assert await transcript(ann.http, chat) == [
        (1, "user", "write notes.txt: hello"),
        (1, "assistant", "Wrote 5 bytes to notes.txt."),
    ]
    assert (await say(ann.http, chat, "calc 1+1"))["reply"] == "1+1 = 2"


async def test_a_denied_file_is_not_written(ann: Person, settings: Settings) -> None:
    chat = await new_chat(ann.http)
    paused = await say(ann.http, chat, "write secret.txt: do not write me")
    card = paused["gates"][0]["card_id"]

    denied = await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "deny"})
    assert denied.status_code == 200, denied.text
    assert denied.json()["status"] == "done"
    assert denied.json()["reply"] == "Not done: write_file needed approval and it was denied."
    assert not (user_file(settings, "ann", "secret.txt")).exists()
    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert [a["status"] for a in listed] == ["denied"]
    error_of(await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"}), 409, "approval_closed")
    assert not (user_file(settings, "ann", "secret.txt")).exists()


async def test_deciding_a_card_that_does_not_exist_is_not_found(ann: Person) -> None:
    chat = await new_chat(ann.http)
    response = await ann.http.post(f"/api/chats/{chat}/approvals/nosuchcard", json={"decision": "approve"})
    error_of(response, 404, "not_found")


# -- turns that run in the background ------------------------------------------------------


async def test_a_message_sent_without_waiting_runs_in_the_background(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        accepted = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 1"})
        assert accepted.status_code == 202, accepted.text
        assert accepted.json() == {"status": "running", "thread_id": chat}

        await events.until("message", role="user", text="sleep 1")  # the turn holds the chat now
        busy = await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "calc 1+1"})
        error_of(busy, 409, "turn_running")

        answer = await events.until("message", role="assistant")
        # An answer comes with its Markdown rendered for a page (kazma_ui/web/markdown.py).
        assert answer.data == {"role": "assistant", "text": "Slept 1 seconds.", "turn_index": 1, "html": "<p>Slept 1 seconds.</p>"}

    assert await transcript(ann.http, chat) == [(1, "user", "sleep 1"), (1, "assistant", "Slept 1 seconds.")]
    assert (await say(ann.http, chat, "calc 2+2"))["turn_index"] == 2


async def test_a_message_sent_without_waiting_is_refused_while_an_approval_waits(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "write later.txt: x")
    response = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "calc 1+1"})
    error_of(response, 409, "approval_pending")


# -- authentication and input ----------------------------------------------------------------


async def test_a_request_without_a_valid_token_is_unauthorized(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client() as anonymous, server.client("not-a-token") as forged:
        for http in (anonymous, forged):
            error_of(await http.get("/api/chats"), 401, "unauthorized")
            error_of(await http.post("/api/chats"), 401, "unauthorized")
            error_of(await http.get(f"/api/chats/{chat}/messages"), 401, "unauthorized")
            error_of(await http.post(f"/api/chats/{chat}/messages", json={"text": "hi"}), 401, "unauthorized")
            error_of(await http.delete(f"/api/chats/{chat}"), 401, "unauthorized")
    # A one-time login token is not an API token.
    login = await server.core.store.users.issue_token(ann.user.id, "login", ttl=60)
    async with server.client(login) as wrong_kind:
        error_of(await wrong_kind.get("/api/chats"), 401, "unauthorized")
    assert await chat_ids(ann.http) == [chat]
    assert await transcript(ann.http, chat) == []


INVALID_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("/api/chats/{chat}/messages", {}),
    ("/api/chats/{chat}/messages", {"text": "hi", "extra": 1}),
    ("/api/chats/{chat}/messages", {"text": ""}),
    ("/api/chats/{chat}/messages", {"text": 5}),
    ("/api/chats/{chat}/messages", {"message": "hi"}),
    ("/api/chats", {"title": "x", "colour": "red"}),
    ("/api/chats", {"title": "x" * 201}),
    ("/api/chats/{chat}/approvals/abc", {}),
    ("/api/chats/{chat}/approvals/abc", {"decision": "maybe"}),
    ("/api/chats/{chat}/approvals/abc", {"decision": "approve", "note": "sure"}),
]


async def test_a_body_with_missing_or_unknown_fields_is_invalid_input(ann: Person) -> None:
    chat = await new_chat(ann.http)
    for path, body in INVALID_BODIES:
        response = await ann.http.post(path.format(chat=chat), json=body)
        assert response.status_code == 422, (path, body, response.text)
        error_of(response, 422, "invalid_input")
    missing = await ann.http.post(f"/api/chats/{chat}/messages", json={})
    assert "text" in error_of(missing, 422, "invalid_input")["message"]  # it names the field to fix
    assert await transcript(ann.http, chat) == []
    assert await chat_ids(ann.http) == [chat]


async def test_a_body_that_is_not_json_is_invalid_input(ann: Person) -> None:
    chat = await new_chat(ann.http)
    response = await ann.http.post(
        f"/api/chats/{chat}/messages", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    error_of(response, 422, "invalid_input")


async def test_a_blank_message_is_refused_and_not_recorded(ann: Person) -> None:
    chat = await new_chat(ann.http)
    response = await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "   "})
    assert response.status_code in (400, 422)
    error_of(response, response.status_code, "invalid_input")
    assert await transcript(ann.http, chat) == []


async def test_an_unknown_api_route_or_method_answers_in_the_error_shape(ann: Person) -> None:
    chat = await new_chat(ann.http)
    error_of(await ann.http.get(f"/api/chats/{chat}/nothing-here"), 404, "not_found")
    response = await ann.http.put(f"/api/chats/{chat}", json={})
    assert response.status_code == 405
    assert {"error", "message"} <= response.json().keys()


# -- ownership -------------------------------------------------------------------------------


async def test_another_users_chat_is_not_found_on_every_route_and_stays_unchanged(
    server: RunningServer, ann: Person, bob: Person, settings: Settings
) -> None:
    chat = await new_chat(ann.http, "ann's")
    await say(ann.http, chat, "remember: ann likes tea")
    card = (await say(ann.http, chat, "write mine.txt: ann's file"))["gates"][0]["card_id"]
    before = (await ann.http.get(f"/api/chats/{chat}/messages")).json()
    steps_before = [s.id for s in await server.core.snapshots.list_steps(chat)]
    assert steps_before

    nowhere = uuid.uuid4().hex
    for target in (chat, nowhere):
        attempts = [
            await bob.http.post(f"/api/chats/{target}/messages", json={"text": "calc 1+1"}),
            await bob.http.post(f"/api/chats/{target}/messages", params={"wait": "false"}, json={"text": "hi"}),
            await bob.http.get(f"/api/chats/{target}/messages"),
            await bob.http.get(f"/api/chats/{target}/approvals"),
            await bob.http.post(f"/api/chats/{target}/approvals/{card}", json={"decision": "approve"}),
            await bob.http.delete(f"/api/chats/{target}"),
            await bob.http.post(f"/api/chats/{target}/forget"),
            await asyncio.wait_for(bob.http.get(f"/api/chats/{target}/events"), 10),
        ]
        bodies = [error_of(r, 404, "not_found") for r in attempts]
        if target == chat:
            strangers = bodies
        else:
            assert bodies == strangers  # a stranger learns nothing, not even that the chat exists

    assert chat not in await chat_ids(bob.http)
    assert await chat_ids(ann.http) == [chat]
    assert (await ann.http.get(f"/api/chats/{chat}/messages")).json() == before
    assert [s.id for s in await server.core.snapshots.list_steps(chat)] == steps_before
    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert [(a["card_id"], a["status"]) for a in listed] == [(card, "pending")]
    assert not (written(settings, "mine.txt")).exists()

    # Ann's own approval still works, and her facts were not forgotten.
    approved = await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"})
    assert approved.json()["reply"] == "Wrote 10 bytes to mine.txt."
    assert (await say(ann.http, chat, "what do I like?"))["reply"].endswith("I know: ann likes tea.")


# -- delete and forget -------------------------------------------------------------------------


async def test_a_deleted_chat_is_gone_with_its_steps(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    kept = await new_chat(ann.http)
    await say(ann.http, chat, "steps 2")
    await say(ann.http, kept, "calc 1+1")
    core = server.core
    assert len(await core.snapshots.list_steps(chat)) == 3
    kept_steps = await core.snapshots.list_steps(kept)

    response = await ann.http.delete(f"/api/chats/{chat}")
    assert response.status_code == 204
    assert response.content == b""

    assert await chat_ids(ann.http) == [kept]
    for attempt in (
        await ann.http.get(f"/api/chats/{chat}/messages"),
        await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "hello?"}),
        await ann.http.get(f"/api/chats/{chat}/approvals"),
        await ann.http.post(f"/api/chats/{chat}/forget"),
        await ann.http.delete(f"/api/chats/{chat}"),
        await asyncio.wait_for(ann.http.get(f"/api/chats/{chat}/events"), 10),
    ):
        error_of(attempt, 404, "not_found")
    assert await core.snapshots.list_steps(chat) == []
    assert await core.conversation.aget_tuple({"configurable": {"thread_id": chat}}) is None
    assert await core.snapshots.list_steps(kept) == kept_steps
    assert len(await transcript(ann.http, kept)) == 2


async def test_deleting_a_chat_while_its_turn_runs_leaves_none_of_its_steps(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        accepted = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 0.3"})
        assert accepted.status_code == 202
        await events.until("message", role="user")
        deleted = await ann.http.delete(f"/api/chats/{chat}")
    if deleted.status_code == 409:  # refusing is a fix too: then the chat must be intact
        error_of(deleted, 409, "turn_running")
        await turn_over(server, chat)
        assert await chat_ids(ann.http) == [chat]
        return
    assert deleted.status_code == 204
    await turn_over(server, chat)
    assert await chat_ids(ann.http) == []
    assert await server.core.snapshots.list_steps(chat) == []
    assert await server.core.conversation.aget_tuple({"configurable": {"thread_id": chat}}) is None


async def test_forgetting_a_chat_drops_its_steps_and_what_it_learned(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    other = await new_chat(ann.http)
    await say(ann.http, chat, "remember: my cat is Tom")
    await say(ann.http, other, "remember: my dog is Rex")
    assert (await say(ann.http, chat, "hello"))["reply"] == 'You said: "hello". I know: my cat is Tom.'
    assert await server.core.snapshots.list_steps(chat)

    response = await ann.http.post(f"/api/chats/{chat}/forget")
    assert response.status_code == 200, response.text
    assert response.json() == {"ok": True}

    assert await server.core.snapshots.list_steps(chat) == []
    assert (await say(ann.http, chat, "hello again"))["reply"] == 'You said: "hello again". I know no facts yet.'
    # The chat itself stays, with its transcript; another chat keeps what it learned.
    assert chat in await chat_ids(ann.http)
    assert (await transcript(ann.http, chat))[0] == (1, "user", "remember: my cat is Tom")
    assert (await say(ann.http, other, "hi"))["reply"] == 'You said: "hi". I know: my dog is Rex.'


# -- the chat stream ---------------------------------------------------------------------------


async def test_the_chat_stream_announces_each_saved_step_and_the_reply(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        sent = asyncio.create_task(say(ann.http, chat, "steps 2"))
        try:
            question = await events.until("message", role="user")
            answer = await events.until("message", role="assistant")
            result = await asyncio.wait_for(sent, 10)
        finally:
            sent.cancel()
        seen = events.seen

    assert question.data == {"role": "user", "text": "steps 2", "turn_index": 1}
    assert answer.data == {"role": "assistant", "text": "Done: 2 steps.", "turn_index": 1, "html": "<p>Done: 2 steps.</p>"}
    assert result["reply"] == "Done: 2 steps."
    announced = [e.data for e in seen if e.type == "snapshot"]
    assert [(s["thread_id"], s["turn_index"], s["iteration"]) for s in announced] == [
        (chat, 1, 0), (chat, 1, 1), (chat, 1, 2),
    ]
    stored = await server.core.snapshots.list_steps(chat)
    assert [s["snapshot_id"] for s in announced] == [s.id for s in stored]
    # Every step is announced before the reply that ends its turn.
    assert seen.index(answer) > max(i for i, e in enumerate(seen) if e.type == "snapshot")


async def test_the_chat_stream_tells_an_open_tab_when_its_chat_is_deleted(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        assert (await ann.http.delete(f"/api/chats/{chat}")).status_code == 204
        reload = await events.until("reload")
    assert reload.data == {"reason": "deleted"}


# -- the API description -------------------------------------------------------------------------


async def test_the_openapi_document_lists_every_chat_route(server: RunningServer) -> None:
    async with server.client() as http:
        response = await http.get("/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    listed = {(path, method) for path, methods in paths.items() for method in methods if path.startswith("/api/chats")}
    assert listed >= ROUTES  # every route of the contract (later issues add more)
    send = paths["/api/chats/{thread_id}/messages"]["post"]
    assert {"200", "202", "401", "404", "409", "422"} <= send["responses"].keys()


# -- kazma serve -------------------------------------------------------------------------------------


async def read_login_url(stdout: asyncio.StreamReader) -> str:
    while True:
        line = (await stdout.readline()).decode()
        if not line:
            raise AssertionError("kazma serve ended without printing a login link")
        if "/login?token=" in line:
            return next(word for word in line.split() if "/login?token=" in word)


async def wait_until_up(url: str, process: asyncio.subprocess.Process) -> None:
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        while True:
            if process.returncode is not None:
                raise AssertionError(f"kazma serve exited with {process.returncode}")
            with contextlib.suppress(httpx.TransportError):
                if (await http.get("/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.05)


async def test_kazma_serve_prints_a_one_time_login_link_that_signs_the_browser_in(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        str(VENV_BIN / "kazma"), "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port),
        stdout=asyncio.subprocess.PIPE, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        login_url = await asyncio.wait_for(read_login_url(process.stdout), 20)
        assert login_url.startswith(f"{base}/login?token=")
        await asyncio.wait_for(wait_until_up(base, process), 20)

        async with httpx.AsyncClient(trust_env=False) as browser:
            signed_in = await browser.get(login_url, follow_redirects=False)
            assert signed_in.status_code == 303
            assert signed_in.headers["location"] == "/"
            session = signed_in.cookies.get("kazma_session")
            csrf = signed_in.cookies.get("kazma_csrf")
            assert session and csrf
            assert any("kazma_session=" in c and "httponly" in c.lower() for c in signed_in.headers.get_list("set-cookie"))

            cookies = {"Cookie": f"kazma_session={session}; kazma_csrf={csrf}"}
            listed = await browser.get(f"{base}/api/chats", headers=cookies)
            assert listed.status_code == 200, listed.text
            assert listed.json() == {"chats": []}
            error_of(await browser.post(f"{base}/api/chats", headers=cookies), 401, "unauthorized")
            error_of(
                await browser.post(f"{base}/api/chats", headers={**cookies, "X-Kazma-CSRF": "wrong"}), 401, "unauthorized"
            )
            created = await browser.post(f"{base}/api/chats", headers={**cookies, "X-Kazma-CSRF": csrf})
            assert created.status_code == 201, created.text
            assert [c["thread_id"] for c in (await browser.get(f"{base}/api/chats", headers=cookies)).json()["chats"]] == [
                created.json()["thread_id"]
            ]

            reused = await browser.get(login_url, follow_redirects=False)
            assert reused.status_code == 303
            assert reused.headers["location"] != "/"
            assert "kazma_session" not in reused.cookies
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        log.close()


@pytest.mark.parametrize(("asked", "logged"), [({}, False), ({"KAZMA_SERVER__ACCESS_LOG": "true"}, True)])
async def test_kazma_serve_prints_a_line_per_request_only_when_asked(tmp_path: Path, asked: dict[str, str], logged: bool) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAZMA_")}
    process = await asyncio.create_subprocess_exec(
        str(VENV_BIN / "kazma"), "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**env, "KAZMA_CONFIG": str(tmp_path / "none.toml"), "PYTHONUNBUFFERED": "1", **asked},
    )
    try:
        await asyncio.wait_for(wait_until_up(base, process), 20)
        async with httpx.AsyncClient(trust_env=False) as http:
            assert (await http.get(f"{base}/api/chats")).status_code == 401
    finally:
        process.terminate()
        out, _ = await asyncio.wait_for(process.communicate(), 10)
    output = out.decode()
    assert "Application startup complete" in output  # the server's own lines are printed either way
    assert ('"GET /api/chats HTTP/1.1" 401' in output) is logged
