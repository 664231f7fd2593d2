"""The restore dialog of the Time Travel page offers Conversation / Files / Both with the files that
would change (a real browser): Both puts the files back, and a hand edit is overwritten only once
the person confirms it, named."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.test_browser import Web, last_step_of_turn, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import DESK, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)


async def wrote(web: Web, chat: str, path: str, text: str) -> None:
    answer = (await web.http.post(f"/api/chats/{chat}/messages", json={"text": f"write {path}: {text}"})).json()
    decided = await web.http.post(f"/api/chats/{chat}/approvals/{answer['gates'][0]['card_id']}", json={"decision": "approve"})
    assert decided.status_code == 200, decided.text


async def test_the_restore_dialog_lists_the_files_and_restores_both_after_asking_about_a_hand_edit(web: Web) -> None:
    chat = await web.chat("notes")
    for path, text in (("notes.txt", "v1"), ("notes.txt", "v2"), ("draft.txt", "x")):
        await wrote(web, chat, path, text)
    owner = web.server.core.settings
    user = (await web.server.core.store.users.owner())
    assert user is not None
    notes, draft = owner.files_of(user.id) / "notes.txt", owner.files_of(user.id) / "draft.txt"
    notes.write_text("by hand")
    target = last_step_of_turn(await web.steps(chat), 1)

    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await page.click(f'button[data-snapshot="{target}"]')
    await page.click("#restore-button")
    files = page.locator("#restore-files li")
    await expect(files).to_have_count(2)
    await expect(page.locator('#restore-files li[data-path="notes.txt"]')).to_contain_text("changed since by something else")
    await expect(page.locator('#restore-files li[data-path="draft.txt"]')).to_contain_text("is removed")
    await expect(page.locator("#restore-what-conversation")).to_be_checked()
    await page.check("#restore-what-both")
    await page.click("#confirm-ok")

    # The hand edit is named, and nothing is touched until the person says so.
    await expect(page.locator("#files-changed")).to_contain_text("notes.txt")
    assert notes.read_text() == "by hand" and draft.exists()
    await page.click("#confirm-ok")
    await expect(page.locator("#notice")).to_contain_text("Files put back: 2.")
    assert notes.read_text() == "v1" and not draft.exists()
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1"])
