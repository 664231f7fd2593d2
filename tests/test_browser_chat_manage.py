"""Managing chats in a real browser (issue 23): the last chat on "/", rename, delete, search, titles
from the first message, Arabic titles, the phone's chat drawer, dark mode and keyboard shortcuts."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Page, Route, expect

from tests.test_browser import Web, new_context, rows, send, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import DESK, PHONE, open_page, view_shot
from tests.web_session import login_url

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)


def chat_titles(page: Page):  # type: ignore[no-untyped-def]
    return page.locator("#chat-list .chat-title")


async def test_slash_opens_the_last_chat_and_new_chat_starts_empty(web: Web) -> None:
    older = await web.chat("Older chat", "calc 1+1")
    newer = await web.chat("Newer chat", "calc 2+2")
    page = await open_page(web, "/", DESK)
    await expect(page.locator("#chat-heading")).to_have_text("Newer chat")  # the newest, the first time
    await expect(page).to_have_url(re.compile(f"thread={newer}"))
    await page.locator(f'.chat-link[data-thread="{older}"]').click()
    await expect(rows(page, "assistant")).to_have_text([re.compile("1\\+1 = 2")])
    await page.goto(web.server.url + "/")
    await expect(page.locator("#chat-heading")).to_have_text("Older chat")  # the one last opened
    await page.click("#new-chat")
    await expect(page.locator("#chat-heading")).to_have_text("New chat")
    await expect(page.locator("#messages > *")).to_have_count(0)
    # A first message names the new chat, in the sidebar and the heading.
    await send(page, "calc 6*7 please, and then explain how you got the answer in small steps")
    await expect(rows(page, "assistant")).to_have_count(1)
    await expect(chat_titles(page).first).to_have_text("calc 6*7 please, and then explain how you got the answer…")
    await expect(page.locator("#chat-heading")).to_have_text("calc 6*7 please, and then explain how you got the answer…")


async def test_a_chat_is_renamed_and_deleted_from_the_sidebar(web: Web) -> None:
    keep = await web.chat("Keep me", "remember the cat is called Tom")
    gone = await web.chat("Delete me", "calc 1+1")
    page = await open_page(web, f"/?thread={keep}", DESK)
    item = page.locator(f'.chat-item[data-thread="{keep}"]')
    await item.hover()
    await item.locator('[data-action="rename"]').click()
    await page.fill(".rename-input", "Cats at home")
    await page.press(".rename-input", "Enter")
    await expect(page.locator(f'.chat-link[data-thread="{keep}"] .chat-title')).to_have_text("Cats at home")
    await expect(page.locator("#chat-heading")).to_have_text("Cats at home")
    listed = {c["thread_id"]: c["title"] for c in (await web.http.get("/api/chats")).json()["chats"]}
    assert listed[keep] == "Cats at home"

    # Delete asks what should go: "only what Kazma learned" keeps the chat and its messages.
    await item.hover()
    await item.locator('[data-action="delete"]').click()
    await expect(page.locator("#confirm-dialog")).to_be_visible()
    await view_shot(page, "chat-delete-dialog.png")
    await page.locator('input[value="learned"]').check()
    await page.click("#confirm-ok")
    await expect(page.locator("#notice")).to_have_text(re.compile("forgot what it learned"))
    assert (await web.http.get(f"/api/chats/{keep}/messages")).json()["messages"]
    assert (await web.steps(keep))["snapshots"] == []

    other = page.locator(f'.chat-item[data-thread="{gone}"]')
    await other.hover()
    await other.locator('[data-action="delete"]').click()
    await page.click("#confirm-cancel")
    await expect(other).to_have_count(1)  # cancelled: nothing goes
    await other.hover()
    await other.locator('[data-action="delete"]').click()
    await page.click("#confirm-ok")
    await expect(other).to_have_count(0)
    assert gone not in {c["thread_id"] for c in (await web.http.get("/api/chats")).json()["chats"]}
    await expect(page.locator("#chat-heading")).to_have_text("Cats at home")  # the open chat stays open


async def test_the_search_box_finds_chats_by_what_was_said(web: Web) -> None:
    cats = await web.chat("Pets", "remember the cat is called Tom")
    await web.chat("Trip", "remember we go to Petra")
    page = await open_page(web, "/", DESK)
    await expect(chat_titles(page)).to_have_count(2)
    await page.keyboard.press("Control+k")  # the shortcut puts the cursor in the search box
    await expect(page.locator("#chat-search")).to_be_focused()
    await page.keyboard.type("tom")
    await expect(chat_titles(page)).to_have_text(["Pets"])
    await expect(page.locator(f'.chat-link[data-thread="{cats}"] .found')).to_contain_text("Tom")
    await page.keyboard.type("xyz")
    await expect(page.locator("#no-match")).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(chat_titles(page)).to_have_count(2)


async def test_an_english_title_reads_left_to_right_in_the_arabic_sidebar(web: Web) -> None:
    chat = await web.chat("hello, what can you do?")
    page = await open_page(web, f"/?thread={chat}&lang=ar", DESK)
    title = page.locator(f'.chat-link[data-thread="{chat}"] .chat-title')
    await expect(title).to_have_text("hello, what can you do?")
    # The question mark is drawn at the end of the English words (to their right), not before them.
    at = await title.evaluate(
        """(node) => {
            const text = node.firstChild, range = document.createRange();
            const x = (i) => { range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect().left; };
            return { h: x(0), mark: x(text.length - 1) };
        }"""
    )
    assert at["mark"] > at["h"], at
    await view_shot(page, "chat-sidebar-ar.png")


async def test_on_a_phone_the_chat_list_is_a_drawer_over_the_chat(web: Web) -> None:
    first = await web.chat("First chat", "calc 1+1")
    await web.chat("Second chat", "calc 2+2")
    for lang in ("en", "ar"):
        page = await open_page(web, f"/?thread={first}&lang={lang}", PHONE)
        await expect(rows(page, "assistant")).to_have_count(1)
        sidebar = page.locator("#sidebar")
        await expect(sidebar).not_to_be_in_viewport()  # the chat has the whole screen
        head = await page.locator(".conversation").bounding_box()
        assert head is not None and head["y"] < 120, head  # not pushed down by the list
        await page.click("#chats-toggle")
        await expect(sidebar).to_be_in_viewport()
        await expect(page.locator("#chats-toggle")).to_have_attribute("aria-expanded", "true")
        await page.wait_for_timeout(300)  # the drawer slides in
        await view_shot(page, f"chat-phone-drawer-{lang}.png")
        await page.locator(".chat-link", has_text="Second chat").click()
        await expect(page.locator("#chat-heading")).to_have_text("Second chat")
        await expect(sidebar).not_to_be_in_viewport()
        await page.context.close()


async def test_dark_mode_follows_the_browser_and_the_switch_overrides_it(web: Web) -> None:
    await web.chat("Night", "calc 3+3")
    context = await new_context(web.browser, color_scheme="dark", viewport=DESK)
    page = await context.new_page()
    web.watch(page)
    await page.goto(await login_url(web.server, web.user))
    await expect(rows(page, "assistant")).to_have_count(1)
    background = "() => getComputedStyle(document.documentElement).backgroundColor"
    assert await page.evaluate(background) == "rgb(15, 19, 24)"
    await view_shot(page, "chat-dark.png")
    await page.select_option("#theme-switch", "light")
    assert await page.evaluate(background) == "rgb(245, 246, 248)"
    await page.reload()
    await expect(page.locator("#theme-switch")).to_have_value("light")  # kept in this browser
    assert await page.evaluate(background) == "rgb(245, 246, 248)"
    await page.select_option("#theme-switch", "auto")
    assert await page.evaluate(background) == "rgb(15, 19, 24)"
    await context.close()


async def test_keyboard_shortcuts_start_a_chat_reach_the_box_and_stop_and_help_lists_them(web: Web) -> None:
    chat = await web.chat("Busy")
    page = await open_page(web, f"/?thread={chat}", DESK)
    await send(page, "/help")
    await expect(page.locator('#messages [data-role="command"]').last).to_contain_text("Ctrl+Shift+O")
    await page.locator("#chat-search").focus()
    await page.keyboard.press("Shift+Escape")
    await expect(page.locator("#message-input")).to_be_focused()
    await send(page, "sleep 600")
    await expect(page.locator("#stop")).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(page.locator("#stop")).to_be_hidden()
    await expect(rows(page, "stopped")).to_have_count(1)
    await page.keyboard.press("Control+Shift+O")
    await expect(page.locator("#chat-heading")).to_have_text("New chat")
    await expect(page).to_have_url(re.compile(r"/\?new$"))


async def test_what_is_typed_while_the_page_opens_goes_to_the_chat_it_opens(web: Web) -> None:
    chat = await web.chat("Quick", "calc 1+1")
    context = await new_context(web.browser, viewport=DESK)
    page = await context.new_page()
    web.watch(page)
    await page.goto(await login_url(web.server, web.user))
    listed = asyncio.Event()

    async def slow_list(route: Route) -> None:
        await listed.wait()  # the chat list answers only once the person has pressed Enter
        await route.continue_()

    await page.route(re.compile(r"/api/chats$"), slow_list)
    await page.goto(f"{web.server.url}/?thread={chat}")
    await send(page, "/help")
    await send(page, "calc 2+2")
    await page.wait_for_timeout(300)
    listed.set()
    await expect(page.locator('#messages [data-role="command"]').last).to_contain_text("Ctrl+Shift+O")
    await expect(rows(page, "assistant")).to_have_count(2)
    await expect(page).to_have_url(re.compile(re.escape(f"?thread={chat}") + "$"))
    listing = (await web.http.get("/api/chats")).json()["chats"]
    assert [c["thread_id"] for c in listing] == [chat]  # no new chat was made for them
    await context.close()


async def test_settings_show_sizes_in_mb_and_the_model_in_both_languages(web: Web) -> None:
    for lang, quota, provider in (("en", "1 GB", "Offline"), ("ar", "1 غ.ب", "دون اتصال")):
        page = await open_page(web, f"/settings?lang={lang}", DESK)
        row = page.locator('tr[data-setting="limits.user_quota_bytes"]')
        await expect(row.locator(".running")).to_have_text(quota)
        await expect(page.locator("#model-provider")).to_contain_text(provider)
        await expect(page.locator("#model-name")).not_to_be_empty()
        await expect(page.locator("#model-prompt")).to_contain_text("You are Kazma")
        await view_shot(page, f"settings-model-{lang}.png")
        await page.context.close()


async def test_compare_names_costs_in_words_and_opens_a_long_message_whole(web: Web) -> None:
    chat = await web.chat("Long", "calc 1+1", "big 2")
    listing = await web.steps(chat)
    first, last = listing["snapshots"][0]["snapshot_id"], listing["snapshots"][-1]["snapshot_id"]
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await page.click("#tab-compare")
    await expect(page.locator("#panel-compare")).to_contain_text(
        "from another version of it, from a fork of it or the chat it was forked from"
    )
    await page.select_option("#compare-a", first)
    await page.select_option("#compare-b", last)
    await page.click("#compare-run")
    long = page.locator(".side-by-side td", has=page.locator(".show-all")).first
    before = await long.locator(".said").inner_text()
    assert before.endswith("…") and len(before) <= 400
    await long.locator(".show-all").click()
    assert len(await long.locator(".said").inner_text()) >= 2048  # the whole tool result
    await expect(long.locator(".show-all")).to_have_text("Show less")
    cost = page.locator(".fields tr", has_text="Cost")
    await expect(cost).to_contain_text("Tokens read: +")
    assert "input_tokens" not in await cost.inner_text()
    await view_shot(page, "compare-words.png")
