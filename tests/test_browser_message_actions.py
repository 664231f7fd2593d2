"""A message's actions in the web chat (issue 22), in a real browser: on hover at a desk and on a
long press on a phone, Edit and Regenerate making versions with ‹n/m› switching in place,
Rewind to here and Fork from here with their confirmation, in English and Arabic."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Locator, Page, expect

from tests.test_browser import STEP_MS, Web, new_context, rows, shot, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import view_shot
from tests.web_session import login_url

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

PHONE = {"width": 390, "height": 844}


def message(page: Page, role: str, n: int = 0) -> Locator:
    return page.locator(f'#messages article.msg[data-role="{role}"]').nth(n)


async def below_text(node: Locator) -> float:
    """The height of a message's bubble under its text (px)."""
    bubble, text = await node.bounding_box(), await node.locator(".msg-body").bounding_box()
    assert bubble and text
    return bubble["y"] + bubble["height"] - (text["y"] + text["height"])


async def arabic_phone(web: Web, chat: str) -> Page:
    """The chat in Arabic on a phone (a touch screen), signed in through the login link."""
    context = await new_context(web.browser, locale="ar", viewport=PHONE, has_touch=True, is_mobile=True)
    page = await context.new_page()
    web.watch(page)
    await page.goto(await login_url(web.server, web.user))
    await page.goto(f"{web.server.url}/?thread={chat}&lang=ar")
    return page


async def test_hovering_a_message_shows_its_actions_and_an_edit_makes_a_version_switched_in_place(web: Web) -> None:
    chat = await web.chat("tea", "remember: tea is good", "hello")
    page = await web.page(f"/?thread={chat}")
    question, answer = message(page, "user", 1), message(page, "assistant", 1)
    await expect(answer.locator(".msg-action")).to_have_text(["Copy", "Regenerate", "Rewind to here", "Fork from here"])
    await expect(question.locator(".msg-action")).to_have_text(["Copy", "Edit", "Rewind to here", "Fork from here"])
    await page.mouse.move(0, 0)
    await expect(answer.locator(".msg-actions")).to_have_css("opacity", "0")  # out of the way until wanted
    await answer.hover()
    await expect(answer.locator(".msg-actions")).to_have_css("opacity", "1")

    await question.hover()
    await question.locator('[data-action="edit"]').click()
    # The editor says what sending makes before anything happens.
    await expect(question.locator(".msg-edit-note")).to_contain_text("the original stays as version 1/2")
    await question.locator("textarea").fill("hi there")
    await question.locator(".msg-save").click()
    await page.wait_for_url(re.compile(r"/\?thread=(?!" + chat + r")\w+$"))
    version = page.url.rsplit("=", 1)[1]
    await expect(rows(page, "user")).to_have_text(["remember: tea is good", "hi there"])
    await expect(rows(page, "assistant").last).to_have_text('You said: "hi there". I know: tea is good.')
    switcher = message(page, "user", 1).locator(".msg-versions")
    await expect(switcher.locator(".versions-at")).to_have_text("2/2")
    # One entry in the sidebar: the newest version.
    await expect(page.locator("#chat-list li")).to_have_count(1)
    await expect(page.locator(f'#chat-list a[data-thread="{version}"]')).to_have_count(1)

    await switcher.locator(".versions-prev").click()
    await page.wait_for_url(re.compile(chat + "$"))
    await expect(rows(page, "user")).to_have_text(["remember: tea is good", "hello"])
    await expect(message(page, "user", 1).locator(".versions-at")).to_have_text("1/2")
    await message(page, "user", 1).locator(".versions-next").click()
    await page.wait_for_url(re.compile(version + "$"))
    await expect(rows(page, "user").last).to_have_text("hi there")

    # Regenerate on the answer asks first, then makes a third version of turn 2.
    await message(page, "assistant", 1).hover()
    await message(page, "assistant", 1).locator('[data-action="regenerate"]').click()
    dialog = page.locator("#confirm-dialog")
    await expect(dialog.locator("h2")).to_have_text("Regenerate this answer?")
    await expect(dialog).to_contain_text("a new version of the conversation (3/3). The current answer stays as version 2/3")
    await page.click("#confirm-ok")
    await page.wait_for_url(re.compile(r"/\?thread=(?!" + version + r")\w+$"))
    await expect(message(page, "user", 1).locator(".versions-at")).to_have_text("3/3")
    await expect(rows(page, "user").last).to_have_text("hi there")
    assert not web.errors, web.errors


async def test_rewind_to_here_shows_what_it_takes_back_asks_and_can_be_undone(web: Web) -> None:
    chat = await web.chat("tea", "remember: tea", "write notes.txt: hello", "calc 1+2")
    page = await web.page(f"/?thread={chat}")
    await expect(page.locator("#messages article.msg")).to_have_count(6)
    first_answer = message(page, "assistant", 0)
    await first_answer.hover()
    await first_answer.locator('[data-action="rewind"]').click()
    dialog = page.locator("#confirm-dialog")
    await expect(dialog.locator("h2")).to_have_text("Rewind this chat to here?")
    await expect(dialog).to_contain_text("The chat goes back to right after this message.")
    await expect(dialog).to_contain_text("Later turns taken back: 2")
    await expect(dialog.locator("li")).to_have_text(["file written: notes.txt"])
    await page.click("#confirm-cancel")
    await expect(page.locator("#messages article.msg")).to_have_count(6)

    await first_answer.hover()
    await first_answer.locator('[data-action="rewind"]').click()
    await page.click("#confirm-ok")
    await expect(rows(page, "user")).to_have_text(["remember: tea"])
    await expect(page.locator("#notice .undo-button")).to_be_visible()
    await page.click("#notice .undo-button")
    await expect(page.locator("#messages article.msg")).to_have_count(6)

    # Fork from before the first message: a new empty chat.
    first = message(page, "user", 0)
    await first.hover()
    await first.locator('[data-action="fork"]').click()
    await expect(page.locator("#confirm-dialog")).to_contain_text("starts empty, before the first message")
    await page.click("#confirm-ok")
    await page.wait_for_url(re.compile(r"/\?thread=(?!" + chat + r")\w+$"))
    await expect(page.locator("#messages article.msg")).to_have_count(0)


async def test_on_a_phone_a_long_press_shows_the_actions_in_arabic(web: Web) -> None:
    chat = await web.chat("tea", "remember: tea", "hello")
    page = await arabic_phone(web, chat)
    answer = message(page, "assistant", 1)
    await expect(answer.locator(".msg-action")).to_have_text(["نسخ", "إعادة التوليد", "الرجوع إلى هنا", "التفريع من هنا"])
    await expect(answer.locator(".msg-actions")).to_be_hidden()
    # Hidden, they take no room: the bubble ends where its text does (its padding under it), with
    # no empty band where their wrapped rows would be.
    assert await below_text(answer) < 16
    await answer.locator(".msg-body").dispatch_event("pointerdown", {"pointerType": "touch", "isPrimary": True})
    await expect(answer).to_have_class(re.compile("show-actions"))
    await expect(answer.locator(".msg-actions")).to_be_visible()
    await expect(answer.locator(".msg-actions")).to_have_css("opacity", "1")
    assert await below_text(answer) > 30  # now they are there, under the text
    await view_shot(page, "chat-actions-phone-ar.png")
    # A tap elsewhere hides them again.
    await message(page, "user", 0).locator(".msg-body").dispatch_event("pointerdown", {"pointerType": "touch"})
    await expect(answer).not_to_have_class(re.compile("show-actions"))
    await answer.locator(".msg-body").dispatch_event("pointerdown", {"pointerType": "touch"})
    await answer.locator('[data-action="rewind"]').click()
    await expect(page.locator("#confirm-dialog h2")).to_have_text("هل ترجع هذه الدردشة إلى هنا؟")
    await page.click("#confirm-ok")
    await expect(rows(page, "user")).to_have_text(["remember: tea", "hello"])


async def test_the_time_travel_page_labels_each_step_by_what_it_did_in_english_and_arabic(web: Web) -> None:
    chat = await web.chat("sums", "calc 1+1")
    for lang, used, answered in (("en", "calculated", "answered"), ("ar", "أجرى حسابًا", "أجاب")):
        page = await web.page(f"/replay?thread={chat}&lang={lang}")
        await expect(page.locator(".step-button .step-did")).to_have_text([used, answered])
        await page.locator(".step-button").first.click()
        await expect(page.locator("#step-did")).to_have_text(used)
        await page.context.close()


async def test_edit_is_an_inline_editor_esc_cancels_ctrl_enter_sends_and_regenerate_can_be_declined(web: Web) -> None:
    hostile = '<img src=x id="pwned"> **bold**'
    chat = await web.chat("keys", "remember: tea", hostile)
    page = await web.page(f"/?thread={chat}")
    question = message(page, "user", 1)
    await expect(question.locator(".msg-body")).to_have_text(hostile)  # a person's message is its text
    await question.hover()
    await question.locator('[data-action="edit"]').click()
    box = question.locator("textarea")
    await expect(box).to_be_focused()
    await expect(box).to_have_value(hostile)  # the old text, as text
    await expect(page.locator("#pwned")).to_have_count(0)
    await expect(question.locator(".msg-edit-note")).to_have_text(
        "Sending makes a new version of the conversation from here (2/2); the original stays as version 1/2, "
        "one click away with ‹ ›. Ctrl+Enter sends, Esc cancels."
    )
    await expect(question.locator(".msg-body")).to_be_hidden()
    await shot(page, "message-edit-inline.png")
    # Escape cancels: the message as it was, nothing made.
    await box.fill("changed my mind")
    await box.press("Escape")
    await expect(question.locator("textarea")).to_have_count(0)
    await expect(question.locator(".msg-body")).to_have_text(hostile)
    assert page.url.endswith(chat)

    # Regenerate declined: nothing happens.
    answer = message(page, "assistant", 1)
    await answer.hover()
    await answer.locator('[data-action="regenerate"]').click()
    await page.click("#confirm-cancel")
    assert page.url.endswith(chat)
    assert [c["versions"] for c in (await web.http.get("/api/chats")).json()["chats"]] == [1]

    # Ctrl+Enter sends the edit as a new version.
    await question.hover()
    await question.locator('[data-action="edit"]').click()
    await question.locator("textarea").fill("hello")
    await question.locator("textarea").press("Control+Enter")
    await page.wait_for_url(re.compile(r"/\?thread=(?!" + chat + r")\w+$"))
    await expect(rows(page, "user")).to_have_text(["remember: tea", "hello"])
    await expect(message(page, "user", 1).locator(".versions-at")).to_have_text("2/2")
    assert not web.errors, web.errors


async def test_on_a_phone_in_arabic_the_editor_and_the_regenerate_question_say_what_they_make(web: Web) -> None:
    chat = await web.chat("tea", "remember: tea", "hello")
    first = (await web.http.get(f"/api/chats/{chat}/messages")).json()["messages"][2]["id"]
    made = await web.http.post(f"/api/chats/{chat}/messages/{first}/edit", json={"text": "hi"})
    version = made.json()["thread_id"]
    page = await arabic_phone(web, version)
    question = message(page, "user", 1)
    await expect(question.locator(".versions-at")).to_have_text("2/2")
    await question.locator(".msg-body").dispatch_event("pointerdown", {"pointerType": "touch"})
    await question.locator('[data-action="edit"]').click()
    # A third version of turn 2; the one shown now (2 of 2) stays as 2/3.
    await expect(question.locator(".msg-edit-note")).to_contain_text("(3/3)؛ وتبقى الأصلية النسخة 2/3")
    await expect(question.locator(".msg-save")).to_have_text("أرسل كنسخة جديدة")
    editor = await question.locator(".msg-edit").bounding_box()
    assert editor and editor["x"] >= 0 and editor["x"] + editor["width"] <= PHONE["width"], editor  # fits the phone
    await view_shot(page, "message-edit-phone-ar.png")
    await question.locator(".msg-cancel").click()

    answer = message(page, "assistant", 1)
    await answer.locator(".msg-body").dispatch_event("pointerdown", {"pointerType": "touch"})
    await answer.locator('[data-action="regenerate"]').click()
    dialog = page.locator("#confirm-dialog")
    await expect(dialog.locator("h2")).to_have_text("هل تعيد توليد هذه الإجابة؟")
    await expect(dialog).to_contain_text("(3/3)")
    await view_shot(page, "message-regenerate-phone-ar.png")
    await page.click("#confirm-ok")
    await page.wait_for_url(re.compile(r"/\?thread=(?!" + version + r")\w+&?"))
    await expect(message(page, "user", 1).locator(".versions-at")).to_have_text("3/3")
    await page.context.close()
