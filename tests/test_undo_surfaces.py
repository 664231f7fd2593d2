"""/replay undo and /replay compare across a fork, typed in a chat app (the fake Telegram) and in the TUI."""

from __future__ import annotations

from kazma_ui.tui.app import KazmaTui  # noqa: F401  (the pilot's app)
from tests.conftest import Person
from tests.fakes.telegram_server import private_chat
from tests.helpers import new_chat, said, say, steps_of
from tests.http_server import RunningServer
from tests.test_telegram_bot import ANN, ARABIC, LINA, YES, Bot, bot  # noqa: F401  (bot is a fixture)
from tests.test_tui import enter, tui, until, until_shown


async def test_telegram_restore_offers_undo_and_undo_brings_everything_back(bot: Bot) -> None:
    ann = private_chat(ANN)
    for text in ("hello", "remember: tea is good", "calc 1+1"):
        await bot.say(ANN, ann, text)
    chat = await bot.chat(ann)
    rows = [r.text for r in await bot.core.store.transcript.transcript(chat.id)]
    steps = [s.id for s in await bot.core.snapshots.list_steps(chat.id)]
    target = (await bot.step_ids(ann, 1))[-1]
    [asked] = await bot.say(ANN, ann, f"/replay {target[:8]}")
    [done] = await bot.press(ANN, asked, YES)
    assert done.text.endswith("Restored the wrong step? /replay undo puts everything back, until the next message.")
    assert [f.text for f in await bot.core.store.memories.facts(chat.id)] == []

    [undone] = await bot.say(ANN, ann, "/replay undo")
    assert undone.text == (
        "Undid the last restore: the chat is as it was before it. Back: 4 messages, 1 memories, "
        f"{len(steps) - steps.index(target) - 1} steps."
    )
    assert [r.text for r in await bot.core.store.transcript.transcript(chat.id)] == rows
    assert [s.id for s in await bot.core.snapshots.list_steps(chat.id)] == steps
    assert [f.text for f in await bot.core.store.memories.facts(chat.id)] == ["tea is good"]
    [again] = await bot.say(ANN, ann, "/replay undo")
    assert again.text == "The last restore of this chat was undone already. /replay list shows the steps you can restore."
    [after] = await bot.say(ANN, ann, "what now?")
    assert after.text == 'You said: "what now?". I know: tea is good.'
    audited = [(r.action, r.outcome, r.surface) for r in await bot.core.audit.rows(chat.id)]
    assert audited[-2:] == [("undo", "ok", "telegram"), ("undo", "not_found", "telegram")]


async def test_telegram_says_in_arabic_that_there_is_nothing_to_undo(bot: Bot) -> None:
    lina = private_chat(LINA)
    await bot.say(LINA, lina, "hello")
    [answer] = await bot.say(LINA, lina, "/replay undo")
    assert ARABIC.search(answer.text) and "لا استعادة للتراجع عنها" in answer.text


async def test_telegram_compares_a_step_of_a_fork_with_one_of_its_source(bot: Bot) -> None:
    ann = private_chat(ANN)
    for text in ("hello", "calc 1+1"):
        await bot.say(ANN, ann, text)
    await bot.chat(ann)
    first = (await bot.step_ids(ann, 1))[-1]
    user = await bot.kazma_user(ANN)
    fork = await bot.core.chats.create(user)  # a chat of another lineage first: refused
    [refused] = await bot.say(ANN, ann, f"/replay compare {first[:8]} {fork.id}:{'0' * 8}")
    assert refused.text.startswith("Those two chats are not of one lineage")
    [asked] = await bot.say(ANN, ann, f"/fork {first[:8]} here")
    [_forked] = await bot.press(ANN, asked, YES)
    fork_id = next(c.id for c in await bot.core.chats.list(user) if c.forked_from)
    fork_step = [s.id for s in await bot.core.snapshots.list_steps(fork_id)][-1]
    second = (await bot.step_ids(ann, 2))[-1]
    [compared] = await bot.say(ANN, ann, f"/replay compare {second[:8]} {fork_id}:{fork_step[:8]}")
    assert compared.text.startswith("turn 2, step 1 → turn 1, step 0\nMessages: 0 added, 4 removed, 0 changed.")


async def test_tui_undo_after_a_restore_shows_the_chat_as_it_was(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Undo")
    await say(ann.http, chat, "calc 1+1")
    await say(ann.http, chat, "calc 2+2")
    before = await said(ann.http, chat)
    target = (await steps_of(ann.http, chat))[0]["snapshot_id"]
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/replay undo")
        await until_shown(pilot, "This chat has no restore to undo.")
        await enter(pilot, f"/replay {target[:8]}")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog")
        await pilot.press("y")
        await until_shown(pilot, "/replay undo puts everything back")
        await until(pilot, lambda: not app.slash.expected)
        await enter(pilot, "/replay undo")
        await until_shown(pilot, "Undid the last restore")
        await until(pilot, lambda: not app.slash.expected)
        conversation = ["You: calc 1+1", "Kazma: 1+1 = 2", "You: calc 2+2", "Kazma: 2+2 = 4"]
        await until(pilot, lambda: [t for t in app.view.texts() if t.startswith(("You:", "Kazma:"))] == conversation)
    assert await said(ann.http, chat) == before
    audited = [(r.action, r.outcome, r.surface) for r in await server.core.audit.rows(chat)]
    assert audited == [("undo", "not_found", "tui"), ("restore", "ok", "tui"), ("undo", "ok", "tui")]


async def test_tui_compares_a_step_with_one_of_a_fork(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Source")
    await say(ann.http, chat, "calc 1+1")
    first = (await steps_of(ann.http, chat))[0]["snapshot_id"]
    fork = (await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": first})).json()["thread_id"]
    await say(ann.http, fork, "calc 3+3")
    b = (await steps_of(ann.http, fork))[-1]["snapshot_id"]
    expected = (await ann.http.post(
        "/api/replay/compare", json={"thread_id": fork, "a": b, "b": first, "b_thread_id": chat}
    )).json()["text"]
    assert "calc 3+3" in expected
    async with tui(server.url, ann.token) as (app, pilot):  # it opens the newest chat: the fork
        await enter(pilot, f"/replay compare {b[:8]} {chat}:{first[:8]}")
        await until(pilot, lambda: app.view.texts()[-1] == expected)
