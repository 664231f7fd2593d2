"""Steps labelled by what they did (issue 22): the step list over HTTP, and /replay list in
English and Arabic, from what was kept beside each step at capture."""

from __future__ import annotations

import pytest

from commands import render
from tests.conftest import Person
from tests.helpers import new_chat, steps_of
from tests.http_server import RunningServer

pytestmark = pytest.mark.engines()


async def test_each_step_says_what_it_did_in_the_list_and_in_both_languages(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    asked = (await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "write notes.txt: hello"})).json()
    assert asked["status"] == "awaiting_approval"
    card = asked["gates"][0]["card_id"]
    assert (await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"})).status_code == 200
    assert (await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "calc 1+1"})).status_code == 200
    steps = await steps_of(ann.http, chat)
    assert [s["action"] for s in steps] == [
        "asked to approve writing notes.txt", "answered", "calculated", "answered",
    ]
    # /replay list, as every chat app and the terminal word it (commands/render.py).
    listing = await server.app.state.rewind.list_steps(ann.user, "http", chat)
    english, _ = render.step_list(listing, "en", "http://kazma.test/replay")
    assert f"turn 1, step 0 · {steps[0]['snapshot_id'][:8]} · asked to approve writing notes.txt" in english
    arabic, _ = render.step_list(listing, "ar", "http://kazma.test/replay")
    assert "طلب الموافقة على كتابة" in arabic and "notes.txt" in arabic
    assert "أجرى حسابًا" in arabic and "أجاب" in arabic and "calculator" not in arabic
