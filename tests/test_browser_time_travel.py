"""The Time Travel page in a real browser: live from the chat's stream, the opened step in view,
errors worded for a page, the branch tree, the long-turn and saved-cut explanations."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.test_browser import Web, last_step_of_turn, shot, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import DESK, PHONE, open_page, view_shot

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

ID32 = re.compile(r"\b[0-9a-f]{32}\b")


async def test_new_steps_and_a_restore_elsewhere_show_up_without_a_reload(web: Web) -> None:
    chat = await web.chat("live", "calc 1+1")
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1"])
    await expect(page.locator("#thread-select option")).to_have_text(["live (2 steps)"])

    await web.http.post(f"/api/chats/{chat}/messages", json={"text": "calc 2+2"})
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1", "Turn 2"])
    await expect(page.locator("#thread-select option")).to_have_text(["live (4 steps)"])

    target = last_step_of_turn(await web.steps(chat), 1)
    restored = await web.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target})
    assert restored.status_code == 200
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1"])
    await expect(page.locator("#notice")).to_contain_text("This chat was restored elsewhere")
    await expect(page.locator("#thread-select option")).to_have_text(["live (2 steps)"])


async def test_a_restore_here_refreshes_the_conversation_count(web: Web) -> None:
    chat = await web.chat("count", "calc 1+1", "calc 2+2", "calc 3+3")
    target = last_step_of_turn(await web.steps(chat), 1)
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await expect(page.locator("#thread-select option")).to_have_text(["count (6 steps)"])
    await page.click(f'button[data-snapshot="{target}"]')
    await page.click("#restore-button")
    await page.click("#confirm-ok")
    await expect(page.locator("#notice")).to_contain_text("Restored this chat to turn 1, step 1.")
    await expect(page.locator("#thread-select option")).to_have_text(["count (2 steps)"])
    await page.wait_for_timeout(500)  # its own reload event must not replace what it said
    await expect(page.locator("#notice")).to_contain_text("Restored this chat to turn 1, step 1.")


async def test_a_step_opened_low_in_the_list_is_shown_in_view(web: Web) -> None:
    chat = await web.chat("long list", *(f"calc {n}+1" for n in range(14)))
    for viewport, name in ((DESK, "time-travel-opened-low.png"), (PHONE, "time-travel-opened-low-phone.png")):
        page = await open_page(web, f"/replay?thread={chat}", viewport)
        last = page.locator(".step-button").last
        await last.scroll_into_view_if_needed()
        await last.click()
        await expect(page.locator("#step-detail h2")).to_contain_text("turn 14, step 1")
        await expect(page.locator("#step-detail h2")).to_be_in_viewport()
        await view_shot(page, name)
        await page.context.close()


async def test_a_step_deleted_meanwhile_is_explained_without_ids_or_chat_commands(web: Web) -> None:
    chat = await web.chat("gone", "calc 1+1", "calc 2+2")
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await expect(page.locator(".step-button")).to_have_count(4)
    step = page.locator(".step-button").first
    # Deleted behind the page's back, with no event it could have heard (another process would do this).
    await web.server.core.snapshots.delete_chat(chat)
    await step.click()
    notice = page.locator("#notice")
    await expect(notice).to_contain_text("That step is no longer saved")
    text = await notice.inner_text()
    assert not ID32.search(text) and "/replay" not in text, text
    await expect(page.locator("#steps-count")).to_have_text("No steps saved in this chat yet.")


async def test_the_branch_tree_shows_forks_of_forks_with_their_steps_and_opens_them(web: Web) -> None:
    chat = await web.chat("trip", "remember: tea", "calc 1+2")
    step = last_step_of_turn(await web.steps(chat), 1)
    first = (await web.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step})).json()["thread_id"]
    await web.http.post(f"/api/chats/{first}/messages", json={"text": "calc 5+5"})
    inner = last_step_of_turn(await web.steps(first), 2)
    second = (await web.http.post("/api/replay/fork", json={"thread_id": first, "snapshot_id": inner})).json()["thread_id"]

    page = await open_page(web, f"/replay?thread={second}", DESK)
    tree = page.locator("#branch-tree")
    await expect(page.locator("#branches")).to_be_visible()
    await expect(tree.locator(".branch-title")).to_have_text(["trip", "trip (fork)", "trip (fork) (fork)"])
    await expect(tree.locator(f'li[data-thread="{first}"] > .branch-meta')).to_have_text("from turn 1, step 1 · 3 steps")
    await expect(tree.locator(f'li[data-thread="{second}"] > .branch-meta')).to_contain_text("from turn 2, step 1")
    await expect(tree.locator(f'a[data-thread="{second}"]')).to_have_attribute("aria-current", "page")
    # Nested: the second fork sits inside the first, which sits inside the chat.
    await expect(tree.locator(f'li[data-thread="{chat}"] li[data-thread="{first}"] li[data-thread="{second}"]')).to_have_count(1)
    await shot(page, "time-travel-branches.png")

    await tree.locator(f'a[data-thread="{chat}"]').click()
    await expect(page.locator("#thread-select")).to_have_value(chat)
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1", "Turn 2"])
    assert page.url.endswith(f"/replay?thread={chat}")


async def test_a_long_turns_gap_and_cut_steps_are_explained_in_both_languages(web: Web) -> None:
    chat = await web.chat("long", "steps 35", "big 3000", "calc 1+1")
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    gap = page.locator('.turn[data-turn="1"] .gap').first
    await expect(gap).to_contain_text("not kept: in a long turn every step up to the 20th is kept, then every 10th, and the last.")
    note = page.locator('.turn[data-turn="2"] .cut-note')
    await expect(note).to_contain_text("Once a large tool result is in a conversation, every later step holds it too.")
    await shot(page, "time-travel-long.png")

    page_ar = await open_page(web, f"/replay?thread={chat}&lang=ar", DESK)
    await expect(page_ar.locator('.turn[data-turn="1"] .gap').first).to_contain_text("لم تُحفظ: في الدورة الطويلة")
    await expect(page_ar.locator('.turn[data-turn="2"] .cut-note')).to_contain_text("محفوظة مقصوصة")
    await shot(page_ar, "time-travel-long-ar.png")


async def test_compare_shows_the_two_steps_side_by_side_in_words_with_exact_counts(web: Web) -> None:
    chat = await web.chat("compare", "remember: tea", "steps 3")
    listing = await web.steps(chat)
    first, last = listing["snapshots"][0]["snapshot_id"], listing["snapshots"][-1]["snapshot_id"]
    expected = (await web.http.post("/api/replay/compare", json={"thread_id": chat, "a": first, "b": last})).json()
    added = len(expected["messages"]["added"])
    assert added > 5
    # The summary every chat app and the terminal show: exact counts, no code syntax, the page's role names.
    text = expected["text"]
    assert f"… and {added - 5} more added" in text
    assert not re.search(r"""[\[\]{}"']|\w\(""", text), text
    assert "Kazma: → note (text: step 1 of 3)" in text and "You: steps 3" in text

    for viewport, lang, name in ((DESK, "en", "time-travel-compare-side.png"), (PHONE, "ar", "time-travel-compare-phone-ar.png")):
        page = await open_page(web, f"/replay?thread={chat}&lang={lang}", viewport)
        await page.click("#tab-compare")
        await page.select_option("#compare-a", first)
        await page.select_option("#compare-b", last)
        await page.click("#compare-run")
        table = page.locator(".side-by-side")
        await expect(table.locator('tr[data-kind="added"]')).to_have_count(added)
        await expect(table.locator("tr.same")).to_have_count(1)  # the messages both have, folded
        await expect(table.locator('tr[data-kind="added"] td.empty')).to_have_count(added)  # nothing on the first step's side
        if lang == "en":
            await expect(page.locator(".counts")).to_have_text(f"Messages: {added} added, 0 removed, 0 changed.")
            await expect(table.locator('tr[data-kind="added"] .said').nth(1)).to_have_text("steps 3")
            await expect(table).to_contain_text("→ note (text: step 1 of 3)")
            body = await page.locator("#compare-result").inner_text()
            assert "{" not in body and '"' not in body and "[" not in body, body
        await shot(page, name)
        await page.context.close()


async def test_a_long_step_opens_on_what_it_added_with_the_earlier_conversation_folded_behind_one_control(web: Web) -> None:
    chat = await web.chat("long step", *(f"calc {n}+0" for n in range(1, 56)))  # 4 messages a turn: 220
    page = await open_page(web, f"/replay?thread={chat}", DESK)
    await page.locator(".step-button").last.click()
    await expect(page.locator("#step-detail h2")).to_contain_text("turn 55, step 1")
    saved = page.locator("#saved-messages .message")
    # The step added the turn's answer (the question and the tool's call and result came with the
    # step before): that alone is shown, marked, with the 219 messages before it folded.
    await expect(saved).to_have_count(1)
    await expect(saved).to_contain_text("55+0 = 55")
    await expect(page.locator("#saved-messages .message.added")).to_contain_text("new in this step")
    fold = page.locator("#saved-messages .fold-toggle")
    await expect(fold).to_have_text("Show the 219 earlier messages")
    await expect(fold).to_have_attribute("aria-expanded", "false")
    await expect(page.locator("#saved-messages .older-note")).to_have_count(0)
    await view_shot(page, "time-travel-step-folded.png")

    # Opened: the newest page of them, just above the control; older ones come as today, a page at a time.
    await fold.click()
    await expect(fold).to_have_text("Hide the earlier messages")
    await expect(fold).to_have_attribute("aria-expanded", "true")
    await expect(fold).to_be_focused()
    await expect(saved).to_have_count(100)
    await expect(page.locator("#saved-messages .message.added")).to_have_count(1)
    await expect(saved.last).to_contain_text("55+0 = 55")
    await expect(page.locator("#saved-messages .older-note")).to_have_text("120 earlier messages: scroll up to read them.")
    await expect(page.locator('#saved-messages [data-role="user"] .text').last).to_be_in_viewport()  # the question of turn 55
    await view_shot(page, "time-travel-step-unfolded.png")
    for shown in (200, 220):
        await page.evaluate("document.getElementById('saved-messages').scrollTop = 0")
        await expect(saved).to_have_count(shown)
    await expect(page.locator("#saved-messages .older-note")).to_have_count(0)
    await expect(page.locator('#saved-messages [data-role="user"] .text').first).to_have_text("calc 1+0")
    # Folded again from the keyboard.
    await fold.press("Enter")
    await expect(saved).to_have_count(1)
    await expect(fold).to_have_text("Show the 219 earlier messages")


async def test_the_first_step_folds_nothing_and_a_step_is_folded_in_arabic(web: Web) -> None:
    chat = await web.chat("short", "calc 1+1", "calc 2+2")
    steps = (await web.steps(chat))["snapshots"]
    last = (await web.http.get(f"/api/replay/snapshots/{chat}/{steps[-1]['snapshot_id']}")).json()
    earlier, count = last["added_from"], last["snapshot"]["message_count"]
    assert 3 <= earlier <= 10  # Arabic counts 3 to 10 in the plural ("رسائل")
    page = await open_page(web, f"/replay?thread={chat}&lang=ar", PHONE)
    await page.locator(".step-button").first.click()
    first = page.locator("#saved-messages .message")
    await expect(first.first).to_be_visible()
    assert await first.count() == await page.locator("#saved-messages .message.added").count()  # all of it is new
    await expect(page.locator("#saved-messages .fold-toggle")).to_have_count(0)
    await page.locator(".step-button").last.click()
    await expect(page.locator("#saved-messages .fold-toggle")).to_have_text(f"اعرض {earlier} رسائل سابقة")
    await expect(page.locator("#saved-messages .message")).to_have_count(count - earlier)
    await expect(page.locator("#saved-messages .message.added")).to_contain_text("جديدة في هذه الخطوة")
    await page.locator("#step-detail").scroll_into_view_if_needed()
    await view_shot(page, "time-travel-step-folded-phone-ar.png")
    await page.locator("#saved-messages .fold-toggle").click()
    await expect(page.locator("#saved-messages .message")).to_have_count(count)
    await expect(page.locator("#saved-messages .fold-toggle")).to_have_text("أخفِ الرسائل السابقة")


async def versions_of(web: Web) -> tuple[str, str, str]:
    """A conversation of three versions: the first chat, an edit of its turn 2, a regenerate of that."""
    chat = await web.chat("tea", "remember: tea is good", "hello")
    messages = (await web.http.get(f"/api/chats/{chat}/messages")).json()["messages"]
    edit = (await web.http.post(f"/api/chats/{chat}/messages/{messages[2]['id']}/edit", json={"text": "hi there"})).json()["thread_id"]
    answer = (await web.http.get(f"/api/chats/{edit}/messages")).json()["messages"][-1]["id"]
    regen = (await web.http.post(f"/api/chats/{edit}/messages/{answer}/regenerate")).json()["thread_id"]
    return chat, edit, regen


async def test_the_branches_panel_and_a_version_picker_show_a_conversations_versions_and_compare_across_them(web: Web) -> None:
    chat, edit, regen = await versions_of(web)
    fork_step = last_step_of_turn(await web.steps(chat), 2)
    fork = (await web.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": fork_step})).json()["thread_id"]
    page = await open_page(web, f"/replay?thread={regen}", DESK)
    # The list of chats shows the conversation once (its newest version) and the fork.
    await expect(page.locator("#thread-select")).to_have_value(regen)
    tree = page.locator("#branch-tree")
    await expect(page.locator("#branches")).to_be_visible()
    await expect(page.locator("#branches-intro")).to_contain_text("The versions of this conversation (made by Edit and Regenerate)")
    # Each version side by side, the fork of the first under it.
    await expect(tree.locator(":scope > li")).to_have_count(3)
    await expect(tree.locator(":scope > li > .branch-meta")).to_have_text([
        re.compile(r"^Version 1 of 3 · \d+ steps$"),
        re.compile(r"^Version 2 of 3 · changed at turn 2 · \d+ steps$"),
        re.compile(r"^Version 3 of 3 · changed at turn 2 · \d+ steps$"),
    ])
    await expect(tree.locator(f'li[data-thread="{chat}"] li[data-thread="{fork}"] > .branch-meta')).to_contain_text("from turn 2, step")
    await expect(tree.locator(f'a[data-thread="{regen}"]')).to_have_attribute("aria-current", "page")
    await expect(page.locator("#version-select option")).to_have_text([
        "Version 1 of 3", "Version 2 of 3 · changed at turn 2", "Version 3 of 3 · changed at turn 2",
    ])
    await expect(page.locator("#version-select")).to_have_value(regen)
    await shot(page, "time-travel-versions.png")

    # Picking the first version shows its steps (its turn 2 asked "hello"); the list still names the conversation.
    await page.select_option("#version-select", chat)
    await expect(page.locator('.turn[data-turn="2"] .questions')).to_have_text("hello")
    await expect(page.locator("#thread-select")).to_have_value(regen)
    await expect(tree.locator(f'a[data-thread="{chat}"]')).to_have_attribute("aria-current", "page")
    assert page.url.endswith(f"/replay?thread={chat}")
    # And a branch opens the version it names.
    await tree.locator(f'a[data-thread="{edit}"]').click()
    await expect(page.locator("#version-select")).to_have_value(edit)
    await expect(page.locator('.turn[data-turn="2"] .questions')).to_have_text("hi there")

    # Compare: a step of this version against one of another version.
    await page.click("#tab-compare")
    await expect(page.locator("#compare-b-thread option")).to_contain_text([
        "tea · Version 1 of 3", "tea · Version 2 of 3 · changed at turn 2 (this chat)", "tea · Version 3 of 3 · changed at turn 2",
    ])
    mine = (await web.steps(edit))["snapshots"][-1]["snapshot_id"]
    await page.select_option("#compare-a", mine)
    await page.select_option("#compare-b-thread", chat)
    theirs = (await web.steps(chat))["snapshots"][-1]["snapshot_id"]
    await expect(page.locator(f'#compare-b option[value="{theirs}"]')).to_have_count(1)
    await page.select_option("#compare-b", theirs)
    await page.click("#compare-run")
    changed = page.locator('.side-by-side tr[data-kind="changed"]')
    await expect(changed.first).to_contain_text("hi there")
    await expect(changed.first).to_contain_text("hello")
    await shot(page, "time-travel-versions-compare.png")

    # The fork of the first version (not itself a version) is shown in its place among them.
    await page.click("#tab-steps")
    await tree.locator(f'a[data-thread="{fork}"]').click()
    await expect(page.locator("#thread-select")).to_have_value(fork)
    await expect(page.locator("#version-picker")).to_be_hidden()
    await expect(tree.locator(f'li[data-thread="{chat}"] a[data-thread="{fork}"]')).to_have_attribute("aria-current", "page")
    await expect(tree.locator(":scope > li")).to_have_count(3)


async def test_the_versions_show_on_a_phone_in_arabic(web: Web) -> None:
    _chat, edit, _regen = await versions_of(web)
    page = await open_page(web, f"/replay?thread={edit}&lang=ar", PHONE)
    await expect(page.locator("#branch-tree > li > .branch-meta").nth(1)).to_contain_text("النسخة 2 من 3 · تغيّرت عند الدورة 2")
    await expect(page.locator("#version-select")).to_have_value(edit)
    box = await page.locator("#version-select").bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    await shot(page, "time-travel-versions-phone-ar.png")
