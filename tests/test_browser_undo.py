"""The Undo button after a restore, on the Time Travel page and in the chat, and the Compare tab
picking a step of a fork: a real browser (Debian's chromium) against the real server."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.test_browser import Web, last_step_of_turn, web  # noqa: F401  (web is a fixture)

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

RESTORED_UNDO = "This chat was restored to an earlier step (here or in another tab); it has been reloaded. · Undo"


async def test_restored_then_undo_on_the_time_travel_page_brings_everything_back_in_every_tab(web: Web) -> None:
    chat = await web.chat("tea", "remember: tea", "remember: coffee", "calc 1+2")
    target = last_step_of_turn(await web.steps(chat), 1)
    chat_tab = await web.page(f"/?thread={chat}")
    await expect(chat_tab.locator("#messages .message")).to_have_count(6)
    page = await web.tab(chat_tab, f"/replay?thread={chat}")
    await page.click(f'button[data-snapshot="{target}"]')
    await page.click("#restore-button")
    await page.click("#confirm-ok")

    notice = page.locator("#notice")
    await expect(notice).to_contain_text("Restored this chat to turn 1, step 1.")
    await expect(notice.get_by_role("button", name="Undo")).to_be_visible()
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1"])
    # The chat tab reloaded, and offers the undo too: "Restored … · Undo".
    await expect(chat_tab.locator("#messages .message .text")).to_have_text(["remember: tea", "Remembered: tea"])
    await expect(chat_tab.locator("#notice")).to_have_text(RESTORED_UNDO)

    await notice.get_by_role("button", name="Undo").click()
    await expect(notice).to_have_text("Undid the restore: the chat is as it was before it, its messages, memories and steps back.")
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1", "Turn 2", "Turn 3"])
    await expect(chat_tab.locator("#messages .message")).to_have_count(6)
    await expect(chat_tab.locator("#notice")).to_contain_text("The last restore of this chat was undone")
    facts = [f.text for f in await web.server.core.store.memories.facts(chat)]
    assert facts == ["tea", "coffee"]


async def test_undo_in_the_chat_tab_and_nothing_left_to_undo_says_why(web: Web) -> None:
    chat = await web.chat("milk", "remember: milk", "calc 2+2")
    target = last_step_of_turn(await web.steps(chat), 1)
    page = await web.page(f"/?thread={chat}")
    await expect(page.locator("#messages .message")).to_have_count(4)
    restored = await web.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target})
    assert restored.status_code == 200, restored.text
    await expect(page.locator("#notice")).to_have_text(RESTORED_UNDO)
    # Another tab undoes first: this tab's button then says why there is nothing to undo.
    done = await web.http.post("/api/replay/undo", json={"thread_id": chat})
    assert done.status_code == 200, done.text
    await expect(page.locator("#messages .message")).to_have_count(4)
    await expect(page.locator("#notice")).to_contain_text("The last restore of this chat was undone")

    restored = await web.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target})
    await expect(page.locator("#notice").get_by_role("button", name="Undo")).to_be_visible()
    await page.locator("#notice").get_by_role("button", name="Undo").click()
    await expect(page.locator("#messages .message")).to_have_count(4)
    await expect(page.locator("#messages .message .text").last).to_have_text("2+2 = 4")


async def test_the_compare_tab_picks_a_step_of_a_fork(web: Web) -> None:
    chat = await web.chat("origin", "remember: tea", "calc 1+2")
    first = last_step_of_turn(await web.steps(chat), 1)
    forked = await web.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": first})
    fork = forked.json()["thread_id"]
    said = await web.http.post(f"/api/chats/{fork}/messages", json={"text": "calc 5+5"})
    assert said.status_code == 200, said.text
    fork_last = (await web.steps(fork))["snapshots"][-1]["snapshot_id"]
    last = (await web.steps(chat))["snapshots"][-1]["snapshot_id"]
    expected = (await web.http.post(
        "/api/replay/compare", json={"thread_id": chat, "a": last, "b": fork_last, "b_thread_id": fork}
    )).json()

    page = await web.page(f"/replay?thread={chat}")
    await page.click("#tab-compare")
    # As the chat list orders them.
    await expect(page.locator("#compare-b-thread option")).to_have_text(["origin (fork)", "origin (this chat)"])
    await page.select_option("#compare-a", last)
    await page.select_option("#compare-b-thread", fork)
    await expect(page.locator(f'#compare-b option[value="{fork_last}"]')).to_have_count(1)
    await page.select_option("#compare-b", fork_last)
    await page.click("#compare-run")
    table = page.locator(".side-by-side")
    await expect(table).to_contain_text("calc 5+5")  # the fork's step, beside this chat's
    await expect(table).to_contain_text("calc 1+2")
    await expect(page.locator(".counts")).to_contain_text("Messages:")
    assert "calc 5+5" in expected["text"]  # the server's own summary names the fork's step too
