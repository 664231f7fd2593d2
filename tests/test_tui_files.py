"""The TUI's `/replay <step> files|both`: the question lists the files, and yes puts them back (the
real app under Textual's pilot, against the real server)."""

from __future__ import annotations

from kazma_core.settings import Settings
from tests.conftest import Person
from tests.helpers import new_chat, said, say, steps_of
from tests.http_server import RunningServer
from tests.test_tui import dialog, enter, question, tui, until, until_shown


async def test_replay_files_asks_with_the_files_then_puts_them_back_and_leaves_the_conversation(
    server: RunningServer, ann: Person, settings: Settings
) -> None:
    chat = await new_chat(ann.http, "Notes")
    for text in ("write notes.txt: v1", "write notes.txt: v2", "write draft.txt: x"):
        card = (await say(ann.http, chat, text))["gates"][0]["card_id"]
        await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"})
    target = [s for s in await steps_of(ann.http, chat) if s["turn_index"] == 1][-1]["snapshot_id"]
    before = await said(ann.http, chat)
    folder = settings.files_of(ann.user.id)
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/replay {target[:8]} files")
        await until(pilot, lambda: dialog(app) is not None)
        asked = question(app)
        assert "The conversation stays as it is" in asked
        assert "notes.txt: back to its content at the step" in asked and "draft.txt: removed" in asked
        await pilot.press("y")
        await until_shown(pilot, "Files put back: 2.")
    assert (folder / "notes.txt").read_text() == "v1" and not (folder / "draft.txt").exists()
    assert await said(ann.http, chat) == before
