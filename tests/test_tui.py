"""The terminal UI, driven by Textual's pilot against the real server on a free port.

The app talks to the server over real HTTP only (the chat stream included); the test
sets the scene through the same HTTP API and reads what the app shows: the chat view's
lines, the chat list, the approval cards, the banner, the input line. Every wait is
bounded, and none is a measure of time.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from kazma_core.settings import Settings
from kazma_server import cli
from kazma_ui.tui.app import KazmaTui
from kazma_ui.tui.widgets.chat_list import ChatList
from kazma_ui.tui.widgets.confirm import ConfirmDialog
from tests.conftest import Person, make_settings
from tests.helpers import free_port, new_chat, said, say, steps_of, turn_over
from tests.http_server import RunningServer, serve_kazma
from tests.tcp_proxy import tcp_proxy

WAIT = 10.0
SIZE = (120, 50)
SHORT_ID = re.compile(r"· ([0-9a-f]{8})\b")


# -- helpers: the scene over HTTP, and what the app shows ------------------------------------


def shown(app: KazmaTui) -> str:
    return "\n".join(app.view.texts())


async def until(pilot: Pilot[None], what: Callable[[], object], timeout: float = WAIT) -> None:
    """Let the app run until `what()` holds (bounded)."""
    try:
        async with asyncio.timeout(timeout):
            while not what():
                await pilot.pause(0.02)
    except TimeoutError:
        app = pilot.app
        assert isinstance(app, KazmaTui)
        raise AssertionError(f"not shown in {timeout} s; the view shows:\n{shown(app)}") from None


async def until_shown(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, KazmaTui)
    await until(pilot, lambda: text in shown(app))


async def enter(pilot: Pilot[None], text: str) -> None:
    """Put text in the input line and press Enter (keys are pressed one by one where typing
    itself is under test; each press costs a redraw)."""
    app = pilot.app
    assert isinstance(app, KazmaTui)
    app.input_line.focus()
    app.input_line.value = text
    await pilot.press("enter")


def dialog(app: KazmaTui) -> ConfirmDialog | None:
    return app.screen if isinstance(app.screen, ConfirmDialog) else None


def question(app: KazmaTui) -> str:
    screen = dialog(app)
    assert screen is not None
    return screen.question


def refused(app: KazmaTui, typed: str) -> Callable[[], bool]:
    """Whether the view ends with the echo of `typed` and the alert that answered it."""
    return lambda: len(app.view.entries) > 1 and app.view.entries[-1].kind == "alert" and app.view.texts()[-2] == f"› {typed}"


@contextlib.asynccontextmanager
async def tui(url: str, token: str, **kwargs: Any) -> AsyncIterator[tuple[KazmaTui, Pilot[None]]]:
    """The app against the server at `url`, once it shows a chat it is following."""
    app = KazmaTui(url, token, retry_first=0.05, retry_max=0.2, **kwargs)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.chat_id is not None and app.shown_chat == app.chat_id and not app.banner.lost)
        yield app, pilot


# -- chatting ----------------------------------------------------------------------------------


async def test_a_message_is_sent_and_its_reply_streams_into_the_view(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Sums")
    async with tui(server.url, ann.token) as (app, pilot):
        assert app.chat_id == chat
        assert [item.title for item in app.query_one(ChatList).items] == ["Sums"]
        await enter(pilot, "calc 6*7")
        await until_shown(pilot, "Kazma: 6*7 = 42")
        assert app.view.texts()[:2] == ["You: calc 6*7", "Kazma: 6*7 = 42"]
        assert app.input_line.value == ""
        # Each saved step is announced; the header names the newest.
        last = (await steps_of(ann.http, chat))[-1]
        await until(pilot, lambda: last["snapshot_id"][:8] in app.sub_title)
        assert "turn 1, step" in app.sub_title
    assert await said(ann.http, chat) == [("user", "calc 6*7"), ("assistant", "6*7 = 42")]


async def test_an_approval_card_is_answered_with_a_key(server: RunningServer, ann: Person, settings: Settings) -> None:
    chat = await new_chat(ann.http, "Files")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "write notes.txt: hello")
        await until(pilot, lambda: app.cards)
        (card,) = app.cards
        assert str(card.content) == (
            "Kazma asks to write a file\nIt will write 5 B to notes.txt in your files:\n\nhello\n[a] approve  [d] deny"
        )
        assert app.focused is card  # the input was empty: the card takes the keys
        assert not (settings.files_of(ann.user.id) / "notes.txt").exists()
        await pilot.press("a")
        await until_shown(pilot, "Kazma: Wrote 5 bytes to notes.txt.")
        await until(pilot, lambda: not app.cards)
        assert "write_file: approved." in shown(app)
        assert (settings.files_of(ann.user.id) / "notes.txt").read_text() == "hello"

        await enter(pilot, "write secret.txt: no")
        await until(pilot, lambda: app.cards)
        await pilot.press("d")
        await until_shown(pilot, "Kazma: Not done: write_file needed approval and it was denied.")
        assert not (settings.files_of(ann.user.id) / "secret.txt").exists()
    listed = (await ann.http.get(f"/api/chats/{chat}/approvals")).json()["approvals"]
    assert [a["status"] for a in listed] == ["approved", "denied"]


async def test_a_card_waiting_when_the_chat_opens_is_shown_and_blocks_a_restore(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Waiting")
    await say(ann.http, chat, "calc 1+1")
    step = (await steps_of(ann.http, chat))[0]["snapshot_id"]
    paused = await say(ann.http, chat, "write later.txt: x")
    card_id = paused["gates"][0]["card_id"]
    async with tui(server.url, ann.token) as (app, pilot):
        await until(pilot, lambda: [c.card_id for c in app.cards] == [card_id])
        await enter(pilot, f"/replay {step[:8]}")
        await until_shown(pilot, "An approval is waiting in this chat.")
        assert dialog(app) is None  # refused before anything was asked
        assert app.view.entries[-1].kind == "alert"
    assert await said(ann.http, chat) == [("user", "calc 1+1"), ("assistant", "1+1 = 2"), ("user", "write later.txt: x")]


# -- time travel commands ------------------------------------------------------------------------


async def test_replay_list_shows_the_steps_turn_by_turn_with_short_ids(server: RunningServer, ann: Person) -> None:
    empty = await new_chat(ann.http, "Empty")
    chat = await new_chat(ann.http, "Busy")
    await say(ann.http, chat, "calc 1+1")
    await say(ann.http, chat, "steps 2")
    steps = await steps_of(ann.http, chat)
    async with tui(server.url, ann.token) as (app, pilot):
        assert app.chat_id == chat  # the newest chat opens first
        await enter(pilot, "/replay list")
        await until_shown(pilot, "This chat’s saved steps, turn by turn")
        listing = app.view.texts()[-1]
        assert "› /replay list" in app.view.texts()
        lines = listing.splitlines()
        assert lines[0] == f"This chat’s saved steps, turn by turn ({len(steps)}):"
        assert "Turn 1: calc 1+1" in lines and "Turn 2: steps 2" in lines
        assert SHORT_ID.findall(listing) == [s["snapshot_id"][:8] for s in steps]
        # Each step says what it did: the calculator used, the answer given.
        assert "  turn 1, step 0 · " + steps[0]["snapshot_id"][:8] + " · calculated" in lines
        assert "  turn 2, step 2 · " + steps[-1]["snapshot_id"][:8] + " · answered" in lines
        assert lines.index("Turn 2: steps 2") > lines.index("Turn 1: calc 1+1")
        assert app.input_line.value == ""

        await enter(pilot, "/replay")  # the default subcommand is list
        await until(pilot, lambda: app.view.texts().count(listing) == 2)

        await app.open_chat(empty)
        await until(pilot, lambda: app.shown_chat == empty)
        assert "Empty" in app.sub_title and app.view.texts() == []
        await enter(pilot, "/replay list")
        await until_shown(pilot, "No steps saved in this chat yet.")


async def test_replay_show_gives_a_steps_messages_plan_routing_and_cost(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Show")
    await say(ann.http, chat, "steps 2")
    step = (await steps_of(ann.http, chat))[1]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/replay show {step['snapshot_id'][:8]}")
        await until_shown(pilot, "Cost:")
        lines = app.view.texts()[-1].splitlines()
        assert lines[0] == f"turn 1, step 1 · {step['snapshot_id'][:8]} · model {step['model']}"
        assert lines[1].startswith("Messages (")
        assert "You: steps 2" in lines
        assert "Kazma: → note (text: step 1 of 2)" in lines
        assert [line.split(":")[0] for line in lines[-3:]] == ["Plan", "Routing", "Cost"]
        assert dialog(app) is None


async def test_replay_compare_shows_what_differs_between_two_steps(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Compare")
    await say(ann.http, chat, "calc 1+1")
    await say(ann.http, chat, "calc 2+2")
    steps = await steps_of(ann.http, chat)
    a, b = steps[0]["snapshot_id"], steps[-1]["snapshot_id"]
    expected = (await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": a, "b": b})).json()["text"]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/replay compare {a[:8]} {b[:8]}")
        await until(pilot, lambda: app.view.texts()[-1] == expected)
        assert "calc 2+2" in expected


async def test_restore_shows_what_it_will_not_undo_and_cancel_changes_nothing(
    server: RunningServer, ann: Person, settings: Settings
) -> None:
    chat = await new_chat(ann.http, "Notes")
    await say(ann.http, chat, "calc 1+1")
    target = (await steps_of(ann.http, chat))[-1]
    card = (await say(ann.http, chat, "write notes.txt: hi"))["gates"][0]["card_id"]
    await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"})
    await say(ann.http, chat, "calc 2+2")
    before = await said(ann.http, chat)
    steps_before = await steps_of(ann.http, chat)
    short = target["snapshot_id"][:8]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/replay {short}")
        await until(pilot, lambda: dialog(app) is not None)
        asked = question(app)
        assert asked.startswith(f"Restore this chat to turn 1, step {target['iteration']} ({short})?")
        assert "Later turns taken back: 2" in asked
        assert "These stay done:" in asked
        assert "file written (write_file)" in asked and "notes.txt" in asked
        await pilot.press("n")
        await until_shown(pilot, "Cancelled: nothing was changed.")
        assert dialog(app) is None
        assert await said(ann.http, chat) == before
        assert await steps_of(ann.http, chat) == steps_before

        await enter(pilot, f"/replay {short}")
        await until(pilot, lambda: dialog(app) is not None)
        await pilot.press("y")
        await until_shown(pilot, "Restored this chat to turn 1")
        await until(pilot, lambda: not app.slash.expected)  # its own reload event came, and was not news
        await pilot.pause(0.1)
        texts = app.view.texts()
        assert texts[:3] == ["You: calc 1+1", "Kazma: 1+1 = 2", f"› /replay {short}"]  # the command after the chat it left
        assert texts[3].startswith(f"Restored this chat to turn 1, step {target['iteration']}. Later steps removed: ")
        assert len(texts) == 4
    assert await said(ann.http, chat) == before[:2]
    assert [s["snapshot_id"] for s in await steps_of(ann.http, chat)][-1] == target["snapshot_id"]
    assert (settings.files_of(ann.user.id) / "notes.txt").read_text() == "hi"  # the world is not rewound
    audited = [(r.action, r.outcome, r.surface) for r in await server.core.audit.rows(chat)]
    assert audited == [("restore", "ok", "tui")]


async def test_fork_asks_then_opens_the_new_chat_listed_with_its_lineage(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Trip")
    await say(ann.http, chat, "remember: we go to Oman")
    await say(ann.http, chat, "calc 3*3")
    step = (await steps_of(ann.http, chat))[0]
    short = step["snapshot_id"][:8]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, f"/fork {short}")
        await until(pilot, lambda: dialog(app) is not None)
        assert question(app) == (
            f"Fork turn 1, step {step['iteration']} ({short}) into a new chat, owned by you? The original is not touched."
        )
        await pilot.press("escape")
        await until_shown(pilot, "Cancelled: nothing was changed.")
        assert len((await ann.http.get("/api/chats")).json()["chats"]) == 1

        await enter(pilot, f"/fork {short}")
        await until(pilot, lambda: dialog(app) is not None)
        await pilot.press("y")
        await until(pilot, lambda: app.chat_id != chat and "which is open now" in shown(app))
        fork = app.chat_id
        await until(pilot, lambda: [i.thread_id for i in app.query_one(ChatList).items] == [fork, chat])
        items = app.query_one(ChatList).items
        assert items[0].title == "Trip (fork)"
        assert items[0].lineage == f"forked from Trip, turn 1, step {step['iteration']}"
        assert items[1].lineage == ""
        assert "Trip (fork)" in app.sub_title
        assert app.view.texts()[-1] == (
            f"Forked turn 1, step {step['iteration']} into a new chat, “Trip (fork)”, which is open now. "
            "The original is not touched."
        )

        await enter(pilot, "where do we go?")
        await until_shown(pilot, 'Kazma: You said: "where do we go?". I know: we go to Oman.')

        await pilot.click(app.query_one(ChatList).items[1])  # back to the original, from the list
        await until(pilot, lambda: app.chat_id == chat and len(app.view.texts()) == 4)
        assert app.view.texts()[-1] == "Kazma: 3*3 = 9"
        assert app.focused is app.input_line
    assert [r for r, _ in await said(ann.http, chat)] == ["user", "assistant", "user", "assistant"]


async def test_replay_clear_asks_first_and_deletes_the_steps(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Clear")
    await say(ann.http, chat, "steps 1")
    count = len(await steps_of(ann.http, chat))
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/replay clear")
        await until(pilot, lambda: dialog(app) is not None)
        assert question(app).startswith(f"Delete this chat’s saved steps ({count})?")
        await pilot.press("n")
        await until_shown(pilot, "Cancelled: nothing was changed.")
        assert len(await steps_of(ann.http, chat)) == count

        await enter(pilot, "/replay clear")
        await until(pilot, lambda: dialog(app) is not None)
        await pilot.click("#yes")
        await until_shown(pilot, f"Deleted this chat’s saved steps: {count}.")
        assert await steps_of(ann.http, chat) == []
        await enter(pilot, "/replay clear")
        await until(pilot, lambda: app.view.texts()[-1] == "No steps saved in this chat yet.")
        assert dialog(app) is None
    assert len(await said(ann.http, chat)) == 2  # the conversation itself stays


async def test_help_and_mistyped_commands_are_answered_with_what_to_type(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Help")
    await say(ann.http, chat, "calc 1+1")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/help")
        await until_shown(pilot, "Commands:")
        help_text = app.view.texts()[-1]
        for usage in ("/replay list", "/replay <step> [files|both] [force]", "/replay show <step>", "/replay clear", "/fork <step>"):
            assert f"\n{usage} — " in help_text, usage
        assert "a approves and d denies" in help_text

        answers = {
            "/nosuch": "/nosuch is not a command here. Send /help to see the commands.",
            "/replay compare abcdef12": "Missing <b>. Use: /replay compare <a> <b>.",
            "/replay zz": "'zz' is not a step id. Use the id shown by /replay list (8 or more of its characters).",
            "/replay show 0000": "'0000' is too short: give at least 8 characters of the step id.",
            "/replay show 00000000": "No saved step of this chat starts with 00000000. /replay list shows the steps.",
        }
        for typed, answer in answers.items():
            await enter(pilot, typed)
            await until(pilot, refused(app, typed))
            assert app.view.texts()[-1] == answer, typed
            assert app.input_line.value == ""
        assert dialog(app) is None
    assert await said(ann.http, chat) == [("user", "calc 1+1"), ("assistant", "1+1 = 2")]


async def test_reset_and_memory_off_run_on_the_server(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Memory")
    await say(ann.http, chat, "remember: tea, no sugar")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/reset")
        await until_shown(pilot, "Conversation reset: the next message starts afresh.")
        await until(pilot, lambda: not app.slash.expected)
        assert "System: Conversation reset" in app.view.texts()
        assert len(await steps_of(ann.http, chat)) > 0

        await enter(pilot, "/memory off")
        await until(pilot, lambda: dialog(app) is not None)
        assert "Turn memory off in this chat?" in question(app)
        await pilot.press("n")
        await until_shown(pilot, "Cancelled: nothing was changed.")
        assert len(await steps_of(ann.http, chat)) > 0

        await enter(pilot, "/memory off")
        await until(pilot, lambda: dialog(app) is not None)
        await pilot.press("y")
        await until_shown(pilot, "Memory is off in this chat")
        assert await steps_of(ann.http, chat) == []
        await enter(pilot, "hello")
        await until_shown(pilot, 'Kazma: You said: "hello". I know no facts yet.')


# -- refusals, reloads and the connection -------------------------------------------------------


async def test_while_a_turn_runs_a_message_and_a_restore_are_refused_with_what_to_do(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http, "Busy")
    await say(ann.http, chat, "calc 3+3")
    short = (await steps_of(ann.http, chat))[0]["snapshot_id"][:8]
    busy = "A turn is running in this chat. Wait for its answer"
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "sleep 2")
        await until_shown(pilot, "You: sleep 2")  # the turn holds the chat now

        await enter(pilot, f"/replay {short}")
        await until(pilot, lambda: app.view.entries[-1].kind == "alert")
        assert app.view.texts()[-1].startswith(busy)
        assert dialog(app) is None  # refused before anything was asked

        await enter(pilot, "calc 1+1")
        await until(pilot, lambda: sum(t.startswith(busy) for t in app.view.texts()) == 2)
        assert app.input_line.value == "calc 1+1"  # refused, so kept to send again

        await until_shown(pilot, "Kazma: Slept 2 seconds.")
        await turn_over(server, chat)
        app.input_line.focus()
        await pilot.press("enter")
        await until_shown(pilot, "Kazma: 1+1 = 2")
        assert app.input_line.value == ""
    assert [text for _, text in await said(ann.http, chat)] == [
        "calc 3+3", "3+3 = 6", "sleep 2", "Slept 2 seconds.", "calc 1+1", "1+1 = 2",
    ]


async def test_a_restore_made_through_the_api_reloads_the_open_chat(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Elsewhere")
    await say(ann.http, chat, "calc 1+1")
    target = (await steps_of(ann.http, chat))[-1]["snapshot_id"]
    await say(ann.http, chat, "calc 2+2")
    async with tui(server.url, ann.token) as (app, pilot):
        await until(pilot, lambda: len(app.view.texts()) == 4)
        await enter(pilot, "/replay list")
        await until_shown(pilot, "This chat’s saved steps")

        restored = await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target})
        assert restored.status_code == 200, restored.text
        note = f"This chat was restored on another surface (to step {target[:8]}); the view was reloaded."
        await until(pilot, lambda: app.view.texts() == ["You: calc 1+1", "Kazma: 1+1 = 2", note])

        await enter(pilot, "calc 5+5")
        await until_shown(pilot, "Kazma: 5+5 = 10")
    assert await said(ann.http, chat) == [
        ("user", "calc 1+1"), ("assistant", "1+1 = 2"), ("user", "calc 5+5"), ("assistant", "5+5 = 10"),
    ]


async def test_when_the_open_chat_is_deleted_elsewhere_another_one_opens_and_says_why(
    server: RunningServer, ann: Person
) -> None:
    kept = await new_chat(ann.http, "Kept")
    await say(ann.http, kept, "calc 1+1")
    doomed = await new_chat(ann.http, "Doomed")
    async with tui(server.url, ann.token) as (app, pilot):
        assert app.chat_id == doomed
        assert (await ann.http.delete(f"/api/chats/{doomed}")).status_code == 204
        await until(pilot, lambda: app.chat_id == kept and len(app.view.texts()) == 3)
        assert app.view.texts()[:2] == ["You: calc 1+1", "Kazma: 1+1 = 2"]
        assert app.view.texts()[2].startswith("The chat you had open was deleted on another surface")
        assert [item.title for item in app.query_one(ChatList).items] == ["Kept"]
        assert "Kept" in app.sub_title


async def test_a_step_saved_cut_is_refused_with_its_reason_and_nothing_is_asked(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", time_travel={"max_snapshot_bytes": 4096})
    async with serve_kazma(settings) as server:
        _, token = await server.add_user("ann")
        async with server.client(token) as http:
            chat = await new_chat(http, "Big")
            await say(http, chat, "big 8")
            cut = next(s for s in await steps_of(http, chat) if s["truncated"])
            async with tui(server.url, token) as (app, pilot):
                for typed in (f"/replay {cut['snapshot_id'][:8]}", f"/fork {cut['snapshot_id'][:8]}"):
                    await enter(pilot, typed)
                    await until(pilot, refused(app, typed))
                    assert app.view.texts()[-1].startswith(f"turn 1, step {cut['iteration']} was saved cut"), typed
                    assert "pick another step" in app.view.texts()[-1]
                    assert dialog(app) is None

                await pilot.press("ctrl+n")  # and a new chat, from the keyboard
                await until(pilot, lambda: app.chat_id != chat and app.shown_chat == app.chat_id)
                await until(pilot, lambda: [i.title for i in app.query_one(ChatList).items] == ["New chat", "Big"])
            assert len((await http.get("/api/chats")).json()["chats"]) == 2
        outcomes = [(r.action, r.outcome) for r in await server.core.audit.rows(chat)]
    assert outcomes == [("restore", "snapshot_truncated"), ("fork", "snapshot_truncated")]


async def test_a_bad_token_is_said_on_the_banner(server: RunningServer) -> None:
    app = KazmaTui(server.url, "not-a-token", retry_first=0.05, retry_max=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.banner.lost)
        assert str(app.banner.content) == (
            "That token is not valid (it may have been replaced or revoked). Ask the owner for a new one: "
            "kazma users token NAME"
        )
        assert app.chat_id is None


async def test_a_broken_stream_resumes_and_shows_what_was_said_meanwhile_once(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Resume")
    await say(ann.http, chat, "calc 1+1")
    async with tcp_proxy(server.url) as network, tui(network.url, ann.token) as (app, pilot):
        await until(pilot, lambda: app.view.texts() == ["You: calc 1+1", "Kazma: 1+1 = 2"])
        await say(ann.http, chat, "calc 2+2")  # from another device, while the TUI follows the chat
        await until_shown(pilot, "Kazma: 2+2 = 4")

        network.cut()
        await until(pilot, lambda: app.banner.lost)
        await say(ann.http, chat, "calc 3+3")  # while the TUI cannot hear it
        network.mend()
        await until(pilot, lambda: not app.banner.lost)
        await until_shown(pilot, "Kazma: 3+3 = 6")
        assert app.view.texts() == [
            "You: calc 1+1", "Kazma: 1+1 = 2", "You: calc 2+2", "Kazma: 2+2 = 4", "You: calc 3+3", "Kazma: 3+3 = 6",
        ]


async def test_a_lost_server_shows_the_banner_and_reconnects_keeping_what_was_typed(settings: Settings) -> None:
    port = free_port()
    async with contextlib.AsyncExitStack() as first_run:
        first = await first_run.enter_async_context(serve_kazma(settings, port))
        _, token = await first.add_user("ann")
        async with first.client(token) as http:
            chat = await new_chat(http, "Restart")
            await say(http, chat, "calc 1+1")
        app = KazmaTui(first.url, token, retry_first=0.05, retry_max=0.2)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.view.texts() == ["You: calc 1+1", "Kazma: 1+1 = 2"])
            await enter(pilot, "/replay list")
            await until_shown(pilot, "This chat’s saved steps")
            app.input_line.focus()
            await pilot.press(*"calc 2")
            await first_run.aclose()  # the server stops while the person types

            await until(pilot, lambda: app.banner.lost)
            assert "Reconnecting in" in str(app.banner.content)
            assert "what you type is kept" in str(app.banner.content)
            await pilot.press(*"+2")
            await pilot.press("enter")  # sent while the server is away: refused, and kept
            await until_shown(pilot, "Not sent: the server cannot be reached.")
            assert app.input_line.value == "calc 2+2"
            await until(pilot, lambda: app.attempt >= 2)  # it keeps trying
            assert str(app.banner.content).startswith(f"Cannot reach the Kazma server at {first.url}")

            async with serve_kazma(settings, port) as second:
                await until(pilot, lambda: not app.banner.lost)
                assert app.input_line.value == "calc 2+2"
                # What was shown before the loss is still there: the reload found nothing new.
                assert app.view.texts()[:3] == ["You: calc 1+1", "Kazma: 1+1 = 2", "› /replay list"]
                app.input_line.focus()
                await pilot.press("enter")
                await until_shown(pilot, "Kazma: 2+2 = 4")
                assert app.input_line.value == ""
                async with second.client(token) as http:
                    assert [t for _, t in await said(http, chat)] == ["calc 1+1", "1+1 = 2", "calc 2+2", "2+2 = 4"]


def test_kazma_tui_without_a_token_says_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tui", "--url", "http://127.0.0.1:9"]) == 1
    assert capsys.readouterr().err == (
        "kazma: Give an API token: kazma tui --token TOKEN (or set KAZMA_TOKEN). Create one with: kazma users add NAME\n"
    )


async def test_a_long_turn_shows_a_working_sign_and_stop_ends_it(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Slow")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "sleep 600")
        await until_shown(pilot, "You: sleep 600")
        await until(pilot, lambda: "working… (/stop stops it)" in app.sub_title)
        await enter(pilot, "/stop")
        await until_shown(pilot, "Stopped: Stopped before Kazma answered, as you asked.")
        await until(pilot, lambda: "working" not in app.sub_title)
        await enter(pilot, "calc 3+3")
        await until_shown(pilot, "Kazma: 3+3 = 6")
    assert (await said(ann.http, chat))[-1] == ("assistant", "3+3 = 6")


async def test_after_a_restore_the_header_no_longer_names_a_deleted_step(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Header")
    await say(ann.http, chat, "calc 1+1")
    target = (await steps_of(ann.http, chat))[-1]["snapshot_id"]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "calc 2+2")
        await until_shown(pilot, "Kazma: 2+2 = 4")
        newest = (await steps_of(ann.http, chat))[-1]["snapshot_id"]
        await until(pilot, lambda: newest[:8] in app.sub_title)
        restored = await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target})
        assert restored.status_code == 200, restored.text
        await until(pilot, lambda: newest[:8] not in app.sub_title)
        assert app.sub_title == "Header"


async def test_a_long_chat_opens_on_its_newest_messages_and_older_ones_come_scrolling_up(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http, "Long")
    for n in range(1, 56):
        await say(ann.http, chat, f"calc {n}+0")
    async with tui(server.url, ann.token) as (app, pilot):
        await until(pilot, lambda: app.shown_chat == chat)
        # The newest page only: its last answer, not the chat's first question.
        assert len(app.view.entries) == 100 and app.view.texts()[-1] == "Kazma: 55+0 = 55"
        assert "You: calc 1+0" not in app.view.texts()
        app.view.scroll_home(animate=False)
        await until(pilot, lambda: len(app.view.entries) == 110)
        assert app.view.texts()[:2] == ["You: calc 1+0", "Kazma: 1+0 = 1"]
        assert not app.view.more
        # A message sent now still lands at the end, once.
        await enter(pilot, "calc 56+0")
        await until_shown(pilot, "Kazma: 56+0 = 56")
        assert app.view.texts().count("Kazma: 56+0 = 56") == 1 and len(app.view.entries) == 112
