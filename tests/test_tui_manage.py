"""Managing chats in the terminal UI (issue 23), driven by Textual's pilot against the real server:
titles from the first message, rename (F2) and delete (F8), one "stopped" line, the echo of
/replay undo after what it brought back, and the <chat>:<step> hint inside a fork."""

from __future__ import annotations

from kazma_ui.tui.widgets.chat_list import ChatList
from kazma_ui.tui.widgets.chat_manage import DeleteDialog, RenameDialog
from tests.conftest import Person
from tests.helpers import new_chat, said, say, steps_of
from tests.http_server import RunningServer
from tests.test_tui import enter, shown, tui, until, until_shown


def titles(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [item.title for item in app.query_one(ChatList).items]


async def test_a_chat_started_in_the_terminal_is_named_by_its_first_message(server: RunningServer, ann: Person) -> None:
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "calc 12*12")
        await until_shown(pilot, "Kazma: 12*12 = 144")
        await until(pilot, lambda: titles(app) == ["calc 12*12"])
    assert [c["title"] for c in (await ann.http.get("/api/chats")).json()["chats"]] == ["calc 12*12"]


async def test_f2_renames_and_f8_deletes_the_open_chat_after_asking_what_goes(server: RunningServer, ann: Person) -> None:
    older = await new_chat(ann.http, "Older")
    chat = await new_chat(ann.http, "Pets")
    await say(ann.http, chat, "remember the cat is called Tom")
    async with tui(server.url, ann.token) as (app, pilot):
        assert app.chat_id == chat
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, RenameDialog))
        app.screen.query_one("#title").value = "Cats at home"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until_shown(pilot, "Renamed to “Cats at home”.")
        await until(pilot, lambda: titles(app) == ["Cats at home", "Older"])

        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, DeleteDialog))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DeleteDialog))
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, DeleteDialog))
        await pilot.press("l")  # only what Kazma learned: the messages stay
        await until_shown(pilot, "Kazma forgot what it learned in “Cats at home”; its messages stay.")
        assert await said(ann.http, chat) and await steps_of(ann.http, chat) == []

        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, DeleteDialog))
        await pilot.press("c")
        await until(pilot, lambda: app.chat_id == older and app.shown_chat == older)
        await until_shown(pilot, "Deleted “Cats at home”.")
        assert "deleted" not in shown(app).replace("Deleted “Cats at home”.", "")  # said once, not twice
        await until(pilot, lambda: titles(app) == ["Older"])
    assert [c["thread_id"] for c in (await ann.http.get("/api/chats")).json()["chats"]] == [older]


async def test_stop_says_stopped_once(server: RunningServer, ann: Person) -> None:
    await new_chat(ann.http, "Slow")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "sleep 600")
        await until(pilot, lambda: "working" in app.sub_title)
        await enter(pilot, "/stop")
        await until_shown(pilot, "Stopped: Stopped before Kazma answered, as you asked.")
        await until(pilot, lambda: "working" not in app.sub_title)
        await pilot.pause(0.2)
        lines = [t for t in app.view.texts() if "topped" in t and not t.startswith("›")]
        assert len(lines) == 1 and lines[0].startswith("Stopped: Stopped before Kazma answered"), app.view.texts()


async def test_the_echo_of_replay_undo_comes_after_the_messages_it_brought_back(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Undo")
    await say(ann.http, chat, "calc 1+1")
    await say(ann.http, chat, "calc 2+2")
    target = (await steps_of(ann.http, chat))[0]["snapshot_id"]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/replay {target[:8]}")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog")
        await pilot.press("y")
        await until_shown(pilot, "/replay undo puts everything back")
        await until(pilot, lambda: not app.slash.expected)
        await enter(pilot, "/replay undo")
        await until_shown(pilot, "Undid the last restore")
        await until(pilot, lambda: not app.slash.expected)
        texts = app.view.texts()
        at = texts.index("Kazma: 2+2 = 4")
        assert texts[at + 1] == "› /replay undo" and texts[at + 2].startswith("Undid the last restore"), texts


async def test_a_step_of_the_source_named_in_a_fork_is_answered_with_the_chat_step_form(
    server: RunningServer, ann: Person
) -> None:
    source = await new_chat(ann.http, "Source")
    await say(ann.http, source, "calc 1+1")
    await say(ann.http, source, "calc 2+2")
    first, *_, last = [s["snapshot_id"] for s in await steps_of(ann.http, source)]
    forked = await ann.http.post("/api/replay/fork", json={"thread_id": source, "snapshot_id": first})
    fork = forked.json()["thread_id"]
    fork_step = (await steps_of(ann.http, fork))[-1]["snapshot_id"]
    async with tui(server.url, ann.token) as (app, pilot):
        await until(pilot, lambda: app.chat_id == fork)
        await enter(pilot, f"/replay compare {fork_step[:8]} {last[:8]}")
        await until_shown(pilot, f"{last[:8]} is a step of the chat this one was forked from")
        assert f"{source}:{last[:8]}" in shown(app)
        await enter(pilot, f"/replay compare {fork_step[:8]} {source}:{last[:8]}")  # the form it names works
        await until_shown(pilot, "Messages:")
