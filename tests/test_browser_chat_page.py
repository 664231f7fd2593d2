"""The chat page as a person first meets it, in a real browser: its layout at a desk and on a
phone, in English and Arabic, Stop, refusals by the composer, /docs without a network."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from tests.test_browser import STEP_MS, Web, new_context, rows, send, shot, web  # noqa: F401  (web is a fixture)
from tests.web_session import login_url

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 850}


async def open_page(web: Web, path: str, viewport: dict[str, int], locale: str = "en-US") -> Page:
    context = await new_context(web.browser, locale=locale, viewport=viewport)
    page = await context.new_page()
    web.watch(page)
    await page.goto(await login_url(web.server, web.user))
    await page.goto(web.server.url + path)
    return page


async def view_shot(page: Page, name: str) -> None:
    """What the person sees (the viewport), not the whole document."""
    from tests.test_browser import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / name))


async def layout(page: Page) -> dict[str, float]:
    return await page.evaluate(  # type: ignore[no-any-return]
        """() => {
        const box = (sel) => document.querySelector(sel).getBoundingClientRect();
        const t = document.getElementById("transcript");
        return {
            page_scrolls: document.scrollingElement.scrollHeight - innerHeight,
            viewport: innerHeight, width: innerWidth,
            topbar_top: box(".topbar").top, composer_bottom: box("#composer").bottom,
            send_right: box("#send").right, transcript_overflow: t.scrollHeight - t.clientHeight,
            transcript_at_end: t.scrollHeight - t.clientHeight - t.scrollTop,
            page_wide: document.scrollingElement.scrollWidth - innerWidth,
        };
    }"""
    )


async def assert_chat_app_layout(page: Page) -> None:
    await page.wait_for_function("document.getElementById('transcript').scrollHeight > document.getElementById('transcript').clientHeight")
    await page.wait_for_timeout(100)  # the scroll to the newest message follows the render
    box = await layout(page)
    assert box["page_scrolls"] <= 1, box  # the page itself does not scroll
    assert box["page_wide"] <= 1, box  # nor sideways
    assert box["topbar_top"] == 0, box  # the header stays
    assert box["composer_bottom"] <= box["viewport"], box  # the message box is whole on screen
    assert box["send_right"] <= box["width"], box
    assert box["transcript_overflow"] > 0 and box["transcript_at_end"] <= 2, box  # only it scrolls, to the newest


async def test_only_the_transcript_scrolls_and_the_composer_stays_on_screen(web: Web) -> None:
    chat = await web.chat("many", *(f"calc {n}+{n}" for n in range(1, 13)))
    page = await open_page(web, f"/?thread={chat}", DESK)
    await expect(rows(page, "assistant")).to_have_count(12)
    await assert_chat_app_layout(page)
    await view_shot(page, "chat-desk-long.png")


async def test_on_a_phone_the_chat_fits_the_screen_in_english_and_arabic(web: Web) -> None:
    chat = await web.chat("phone", *(f"calc {n}*2" for n in range(1, 10)))
    for lang, name in (("en", "chat-phone.png"), ("ar", "chat-phone-ar.png")):
        page = await open_page(web, f"/?thread={chat}&lang={lang}", PHONE)
        await expect(rows(page, "assistant")).to_have_count(9)
        # A reply without letters ("9*2 = 18") reads left to right inside Arabic too.
        await expect(rows(page, "assistant").last).to_have_attribute("dir", "ltr")
        await assert_chat_app_layout(page)
        await view_shot(page, name)
        await page.context.close()


async def test_send_waits_while_a_turn_runs_and_stop_ends_it(web: Web) -> None:
    page = await open_page(web, "/", DESK)
    await send(page, "sleep 600")
    await expect(rows(page, "user")).to_have_text(["sleep 600"])
    await expect(page.locator("#send")).to_be_disabled()
    await expect(page.locator("#stop")).to_be_visible()
    await expect(page.locator("#status")).to_have_text(re.compile("Kazma is working"))

    # Another message now is not lost: it stays in the box, and the reason is said beside it.
    await send(page, "calc 1+1")
    notice = page.locator(".composer-area #notice")
    await expect(notice).to_have_text("Kazma is still answering. Wait for the answer, or press Stop; your text stays here.")
    await expect(page.locator("#message-input")).to_have_value("calc 1+1")
    await view_shot(page, "chat-running.png")

    await page.click("#stop")
    await expect(rows(page, "stopped")).to_have_text(["Stopped before Kazma answered, as you asked. Send a message to go on."])
    await expect(page.locator("#stop")).to_be_hidden()
    await expect(page.locator("#send")).to_be_enabled()
    await expect(page.locator("#status")).to_be_hidden()
    await view_shot(page, "chat-stopped.png")

    await page.click("#send")
    await expect(rows(page, "assistant")).to_have_text(["1+1 = 2"])
    await expect(page.locator("#message-input")).to_have_value("")


async def test_a_turn_running_when_the_page_opens_can_be_stopped_there(web: Web) -> None:
    response = await web.http.post("/api/chats", json={"title": "slow"})
    chat = response.json()["thread_id"]
    started = await web.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 600"})
    assert started.status_code == 202
    page = await open_page(web, f"/?thread={chat}", DESK)
    await expect(page.locator("#stop")).to_be_visible()
    await page.click("#stop")
    await expect(rows(page, "stopped")).to_have_count(1)
    await expect(page.locator("#send")).to_be_enabled()


async def test_a_refusal_is_shown_next_to_the_composer_and_the_text_stays(web: Web) -> None:
    chat = await web.chat("waiting", *(f"calc {n}+1" for n in range(8)))
    paused = await web.http.post(f"/api/chats/{chat}/messages", json={"text": "write a.txt: x"})
    assert paused.json()["status"] == "awaiting_approval"
    page = await open_page(web, f"/?thread={chat}", PHONE)
    await expect(page.locator(".approval")).to_have_count(1)
    await send(page, "calc 9+9")
    notice = page.locator(".composer-area #notice")
    await expect(notice).to_contain_text("An approval is waiting in this chat.")
    await expect(notice).to_be_in_viewport()
    await expect(page.locator("#message-input")).to_have_value("calc 9+9")
    await view_shot(page, "chat-refused-phone.png")


async def test_the_api_page_and_the_icon_load_without_any_other_host(web: Web) -> None:
    page = await open_page(web, "/", DESK)
    elsewhere: list[str] = []
    page.on("request", lambda request: elsewhere.append(request.url) if not request.url.startswith(web.server.url) else None)
    await page.goto(web.server.url + "/docs")
    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("Kazma")
    await expect(page.locator(".opblock-summary-path", has_text="/api/chats/{thread_id}/stop")).to_have_count(1)
    await shot(page, "docs.png")
    assert elsewhere == []
    icon = await web.http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    await page.goto(web.server.url + "/")
    href = await page.locator('link[rel="icon"]').get_attribute("href")
    assert href and (await web.http.get(href)).status_code == 200


async def test_a_refused_setting_is_explained_in_arabic_without_english(web: Web) -> None:
    page = await open_page(web, "/settings?lang=ar", DESK)
    row = page.locator('tr[data-setting="time_travel.max_snapshots"]')
    await row.locator("input").fill("0")
    await row.get_by_role("button", name="حفظ").click()
    message = row.locator(".row-message")
    await expect(message).to_contain_text("لم يُحفظ: يأخذ هذا الإعداد عددًا صحيحًا من")
    assert not re.search(r"[A-Za-z]", await message.inner_text())
    await view_shot(page, "settings-ar.png")


async def test_commands_inside_arabic_sentences_keep_their_order(web: Web) -> None:
    chat = await web.chat("أوامر", "calc 1+1")
    page = await open_page(web, f"/?thread={chat}&lang=ar", DESK)
    await expect(page.locator('.hint bdi[dir="ltr"]', has_text="/replay clear")).to_have_count(1)
    await send(page, "/help")
    note = page.locator('#messages [data-role="command"]').last
    await expect(note.locator("bdi", has_text="/replay clear")).to_have_count(1)
    await expect(note.locator("bdi", has_text="/stop")).to_have_count(1)
    await expect(note).to_contain_text("الأوامر:")  # in the page's language, though none was stored
    # Drawn as typed: the slash left of the word, the whole command at the line's start (its right end).
    where = await note.locator("bdi").first.evaluate("""bdi => {
        const range = document.createRange();
        const left = (node, i) => { range.setStart(node, i); range.setEnd(node, i + 1); return range.getBoundingClientRect().left; };
        return { slash: left(bdi.firstChild, 0), word: left(bdi.firstChild, 1), after: left(bdi.nextSibling, 3) };
    }""")
    assert where["slash"] < where["word"] and where["after"] < where["slash"], where
    await view_shot(page, "chat-help-ar.png")


async def test_a_long_chat_opens_on_its_newest_page_and_scrolling_up_brings_the_older_ones(web: Web) -> None:
    chat = await web.chat("long", *(f"calc {n}+0" for n in range(1, 56)))
    page = await open_page(web, f"/?thread={chat}", DESK)
    await expect(rows(page, "assistant").last).to_have_text("55+0 = 55")
    await expect(page.locator("#messages .message")).to_have_count(100)  # the newest page only
    reading = rows(page, "user").first
    await expect(reading).to_have_text("calc 6+0")
    # Scrolled to the top, the page before comes in above, and the message read stays on screen.
    await page.evaluate("document.getElementById('transcript').scrollTop = 0")
    await expect(page.locator("#messages .message")).to_have_count(110)
    await expect(rows(page, "user").first).to_have_text("calc 1+0")
    assert await on_screen(page, "calc 6+0")
    await view_shot(page, "chat-desk-older-page.png")
    # The chat goes on from another device: its turn comes in below, and the reader is left where they read.
    said = await web.http.post(f"/api/chats/{chat}/messages", json={"text": "calc 99+0"})
    assert said.status_code == 200, said.text
    await expect(rows(page, "assistant").last).to_have_text("99+0 = 99")
    await expect(page.locator("#messages .message")).to_have_count(112)
    assert await on_screen(page, "calc 6+0")
    assert not await on_screen(page, "calc 99+0")
    # What the person sends themselves is followed to its answer at the end.
    await send(page, "calc 56+0")
    await expect(rows(page, "assistant").last).to_have_text("56+0 = 56")
    await expect(page.locator("#messages .message")).to_have_count(114)
    assert await on_screen(page, "calc 56+0")


async def on_screen(page: Page, text: str) -> bool:
    """Whether the person's message `text` is wholly inside the transcript's visible box."""
    box: dict[str, float] = await page.evaluate(
        """(text) => {
        const t = document.getElementById("transcript").getBoundingClientRect();
        const m = [...document.querySelectorAll('#messages [data-role="user"] .text')]
            .find((n) => n.textContent === text).getBoundingClientRect();
        return { top: m.top - t.top, bottom: t.bottom - m.bottom };
    }""",
        text,
    )
    return box["top"] >= 0 and box["bottom"] >= 0
