"""Managing chats over real HTTP (rename, search, titles from the first message, fork titles), on
SQLite and on PostgreSQL: the real app under uvicorn, real stores, the offline model."""

from __future__ import annotations

import pytest

from tests.conftest import Person
from tests.helpers import error_of, new_chat, say, steps_of

pytestmark = pytest.mark.engines()


async def chats(person: Person, q: str | None = None) -> list[dict]:
    response = await person.http.get("/api/chats", params={"q": q} if q is not None else None)
    assert response.status_code == 200, response.text
    return response.json()["chats"]


async def test_a_chat_is_renamed_for_its_owner_only(ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http, "Holiday plans")
    renamed = await ann.http.patch(f"/api/chats/{chat}", json={"title": "  Trip   to\nPetra  "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["title"] == "Trip to Petra"
    assert [c["title"] for c in await chats(ann)] == ["Trip to Petra"]

    error_of(await bob.http.patch(f"/api/chats/{chat}", json={"title": "mine now"}), 404, "not_found")
    error_of(await ann.http.patch(f"/api/chats/{chat}", json={"title": "   "}), 400, "invalid_input")
    error_of(await ann.http.patch(f"/api/chats/{chat}", json={"title": "x" * 201}), 400, "invalid_input")
    error_of(await ann.http.patch(f"/api/chats/{chat}", json={"name": "x"}), 422, "invalid_input")
    assert [c["title"] for c in await chats(ann)] == ["Trip to Petra"]


async def test_an_untitled_chat_is_named_by_its_first_message(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 2+2 and then tell me about the weather in Amman tomorrow please, in detail")
    await say(ann.http, chat, "calc 3+3")
    (title,) = [c["title"] for c in await chats(ann)]
    assert title == "calc 2+2 and then tell me about the weather in Amman…"
    assert len(title) <= 60

    named = await new_chat(ann.http, "Kept")
    await say(ann.http, named, "calc 1+1")
    assert {c["title"] for c in await chats(ann)} == {title, "Kept"}


async def test_a_fork_of_a_long_title_keeps_its_fork_mark_in_view(ann: Person) -> None:
    chat = await new_chat(ann.http, "A very long title about planning the family holiday to the south coast in summer")
    await say(ann.http, chat, "calc 1+1")
    step = (await steps_of(ann.http, chat))[-1]["snapshot_id"]
    forked = await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step})
    assert forked.status_code == 201, forked.text
    fork = next(c for c in await chats(ann) if c["forked_from"])
    assert fork["title"].endswith("… (fork)") and len(fork["title"]) <= 60
    assert fork["title"].startswith("A very long title about planning")


async def test_search_finds_chats_by_title_and_by_what_was_said(ann: Person, bob: Person) -> None:
    cats = await new_chat(ann.http, "Cats")
    await say(ann.http, cats, "remember the cat is called Tom")
    petra = await new_chat(ann.http, "Trip")
    await say(ann.http, petra, "remember we go to Petra in MAY")
    arabic = await new_chat(ann.http, "رحلة العائلة")
    bobs = await new_chat(bob.http, "Bob's cats")
    await say(bob.http, bobs, "remember Tom is my cat too")

    found = await chats(ann, "tom")
    assert [c["thread_id"] for c in found] == [cats]
    assert "Tom" in found[0]["found"]
    assert [c["thread_id"] for c in await chats(ann, "petra in may")] == [petra]  # case folded
    by_title = await chats(ann, "cats")
    assert [c["thread_id"] for c in by_title] == [cats] and by_title[0]["found"] == ""
    assert [c["thread_id"] for c in await chats(ann, "العائلة")] == [arabic]
    assert await chats(ann, "nothing like this") == []
    # No words: the whole list, as without ?q=.
    assert len(await chats(ann, "  ")) == 3
    assert [c["thread_id"] for c in await chats(bob, "tom")] == [bobs]
