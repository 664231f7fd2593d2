"""Edit and regenerate make versions (issue 22), over real HTTP on both engines: 201 with the
new version, the source untouched, the versions of one conversation listed once, and
`/versions` telling each turn's versions, also where the point's step is no longer kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, make_settings
from tests.helpers import error_of, new_chat, say, steps_of, transcript

pytestmark = pytest.mark.engines()
KEPT = 6


@pytest.fixture
def settings(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Settings:
    database = {"url": request.getfixturevalue("pg_url")} if engine == "postgresql" else {}
    return make_settings(tmp_path / "data", database=database, time_travel={"max_snapshots": KEPT})


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def rows(http: httpx.AsyncClient, chat: str) -> list[dict[str, Any]]:
    return ok(await http.get(f"/api/chats/{chat}/messages"))["messages"]  # type: ignore[no-any-return]


async def listed(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    return ok(await http.get("/api/chats"))["chats"]  # type: ignore[no-any-return]


async def tea_chat(http: httpx.AsyncClient) -> tuple[str, list[dict[str, Any]]]:
    chat = await new_chat(http, "tea")
    await say(http, chat, "remember: tea is good")
    await say(http, chat, "hello")
    return chat, await rows(http, chat)


async def test_an_edit_is_a_new_version_from_the_turn_before_and_the_source_is_untouched(ann: Person) -> None:
    chat, messages = await tea_chat(ann.http)
    before = await transcript(ann.http, chat)
    made = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[2]['id']}/edit", json={"text": "hi there"}), 201)
    assert made["version_of"] == chat and made["thread_id"] != chat
    assert (made["turn_index"], made["status"], made["gates"]) == (2, "done", [])
    assert made["reply"] == 'You said: "hi there". I know: tea is good.'
    assert await transcript(ann.http, made["thread_id"]) == [
        *before[:2], (2, "user", "hi there"), (2, "assistant", made["reply"]),
    ]
    assert await transcript(ann.http, chat) == before
    # Its own steps: restorable like any chat's.
    assert await steps_of(ann.http, made["thread_id"])


async def test_versions_are_one_entry_in_the_chat_list_opening_the_newest(ann: Person) -> None:
    chat, messages = await tea_chat(ann.http)
    other = await new_chat(ann.http, "other")
    first = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[2]['id']}/edit", json={"text": "one"}), 201)
    second = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[3]['id']}/regenerate"), 201)
    assert second["reply"] == (await transcript(ann.http, chat))[3][2]  # the same question asked again
    chats = await listed(ann.http)
    assert [(c["thread_id"], c["versions"]) for c in chats] == [(second["thread_id"], 3), (other, 1)]
    # A version of a version is of the same conversation.
    third_rows = await rows(ann.http, first["thread_id"])
    ok(await ann.http.post(f"/api/chats/{first['thread_id']}/messages/{third_rows[0]['id']}/edit", json={"text": "remember: milk"}), 201)
    assert [c["versions"] for c in await listed(ann.http)] == [4, 1]
    # Deleting the newest opens the next newest.
    newest = (await listed(ann.http))[0]["thread_id"]
    assert (await ann.http.delete(f"/api/chats/{newest}")).status_code == 204
    assert [(c["thread_id"], c["versions"]) for c in await listed(ann.http)] == [(second["thread_id"], 3), (other, 1)]


async def test_the_versions_route_tells_each_turns_versions_and_which_one_is_open(ann: Person) -> None:
    chat, messages = await tea_chat(ann.http)
    assert ok(await ann.http.get(f"/api/chats/{chat}/versions")) == {"turns": [], "chats": []}
    edit = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[2]['id']}/edit", json={"text": "one"}), 201)["thread_id"]
    regen = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[3]['id']}/regenerate"), 201)["thread_id"]
    mine = ok(await ann.http.get(f"/api/chats/{chat}/versions"))
    assert mine["turns"] == [{"turn_index": 2, "versions": [chat, edit, regen], "current": 0}]
    theirs = ok(await ann.http.get(f"/api/chats/{regen}/versions"))
    assert theirs["turns"] == [{"turn_index": 2, "versions": [chat, edit, regen], "current": 2}]
    # Every chat of the conversation, oldest first, each with where it was made from.
    assert [(c["thread_id"], c["version_of"], c["turn_index"], c["title"]) for c in theirs["chats"]] == [
        (chat, None, None, "tea"), (edit, chat, 2, "tea"), (regen, chat, 2, "tea"),
    ]
    assert theirs["chats"] == mine["chats"]
    # An edit of the first message makes turn 1 differ; turn 2's versions are those sharing turn 1.
    regen_first = (await rows(ann.http, regen))[0]["id"]
    first = ok(await ann.http.post(f"/api/chats/{regen}/messages/{regen_first}/edit", json={"text": "hello"}), 201)["thread_id"]
    assert ok(await ann.http.get(f"/api/chats/{first}/versions"))["turns"] == [
        {"turn_index": 1, "versions": [regen, first], "current": 1}
    ]
    assert ok(await ann.http.get(f"/api/chats/{edit}/versions"))["turns"] == [
        {"turn_index": 1, "versions": [edit, first], "current": 0},
        {"turn_index": 2, "versions": [chat, edit, regen], "current": 1},
    ]


async def test_an_edit_where_no_step_is_kept_starts_from_the_transcripts_messages(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "remember: tea is good")
    for n in range(KEPT + 1):
        await say(ann.http, chat, f"calc {n}+1")
    messages = await rows(ann.http, chat)
    assert min(s["turn_index"] for s in await steps_of(ann.http, chat)) > 3
    made = ok(await ann.http.post(f"/api/chats/{chat}/messages/{messages[4]['id']}/edit", json={"text": "hello"}), 201)
    assert made["turn_index"] == 3
    assert made["reply"] == 'You said: "hello". I know: tea is good.'
    assert await transcript(ann.http, made["thread_id"]) == [
        *[(m["turn_index"], m["role"], m["text"]) for m in messages[:4]], (3, "user", "hello"), (3, "assistant", made["reply"]),
    ]


async def test_edit_and_regenerate_refuse_what_they_cannot_do_and_change_nothing(ann: Person, bob: Person) -> None:
    chat, messages = await tea_chat(ann.http)
    base = f"/api/chats/{chat}/messages"
    error_of(await ann.http.post(f"{base}/{messages[1]['id']}/edit", json={"text": "x"}), 409, "wrong_message")
    error_of(await ann.http.post(f"{base}/{messages[0]['id']}/regenerate"), 409, "wrong_message")
    error_of(await ann.http.post(f"{base}/{10**9}/regenerate"), 404, "not_found")
    error_of(await ann.http.post(f"{base}/{messages[0]['id']}/edit", json={"text": ""}), 422, "invalid_input")
    error_of(await bob.http.post(f"{base}/{messages[0]['id']}/edit", json={"text": "x"}), 404, "not_found")
    error_of(await bob.http.get(f"/api/chats/{chat}/versions"), 404, "not_found")
    assert [(c["thread_id"], c["versions"]) for c in await listed(ann.http)] == [(chat, 1)]
    assert await listed(bob.http) == []
