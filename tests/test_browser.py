"""The web pages in a real browser: Playwright driving Debian's chromium against the real server.

Every step waits at most STEP_MS; screenshots are kept in test-artifacts/screenshots
(or $KAZMA_TEST_ARTIFACTS/screenshots) for a person to look at.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page, expect

from kazma_core.catalogue.errors import Said
from kazma_core.settings import Settings
from kazma_core.stores.types import User
from tests.conftest import make_settings, written
from tests.fakes.telegram_server import group_chat, person, serve_fake_telegram
from tests.http_server import RunningServer, serve_kazma
from tests.web_session import login_url

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

STEP_MS = 10_000
# A page's load (its scripts, styles, a first fetch) waits longer than a step: under `make test`
# the two cores run four workers' servers and browsers, and a reload once took over 10 s on CI.
LOAD_MS = 30_000
ARTIFACTS = Path(os.environ.get("KAZMA_TEST_ARTIFACTS", Path(__file__).resolve().parent.parent / "test-artifacts"))
SCREENSHOTS = ARTIFACTS / "screenshots"

expect.set_options(timeout=STEP_MS)


async def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """A new browser profile whose steps wait at most STEP_MS, and page loads LOAD_MS."""
    context = await browser.new_context(**options)
    context.set_default_timeout(STEP_MS)
    context.set_default_navigation_timeout(LOAD_MS)
    return context


@dataclass
class Web:
    """The real server, a browser, and the owner who signs in with the printed link."""

    server: RunningServer
    browser: Browser
    user: User
    http: httpx.AsyncClient  # the same person over the API, to set a chat up quickly
    errors: list[str] = field(default_factory=list)

    async def page(self, path: str = "/", locale: str = "en-US") -> Page:
        """A new browser signed in through the login link, then at `path`."""
        context = await new_context(self.browser, locale=locale, viewport={"width": 1280, "height": 860})
        page = await context.new_page()
        self.watch(page)
        await page.goto(await login_url(self.server, self.user))
        # "/" opens the person's last chat, when they have one.
        assert re.fullmatch(re.escape(self.server.url) + r"/(\?thread=\w+)?", page.url), page.url
        if path != "/":
            await page.goto(self.server.url + path)
        return page

    async def tab(self, page: Page, path: str) -> Page:
        """Another tab of the same browser (same session)."""
        tab = await page.context.new_page()
        self.watch(tab)
        await tab.goto(self.server.url + path)
        return tab

    def watch(self, page: Page) -> None:
        page.on("pageerror", lambda err: self.errors.append(f"{page.url}: {err}"))

    async def chat(self, title: str, *messages: str) -> str:
        response = await self.http.post("/api/chats", json={"title": title})
        assert response.status_code == 201, response.text
        chat: str = response.json()["thread_id"]
        for text in messages:
            said = await self.http.post(f"/api/chats/{chat}/messages", json={"text": text})
            assert said.status_code == 200, said.text
            for gate in said.json()["gates"]:
                decided = await self.http.post(f"/api/chats/{chat}/approvals/{gate['card_id']}", json={"decision": "approve"})
                assert decided.status_code == 200, decided.text
        return chat

    async def steps(self, chat: str) -> dict[str, Any]:
        response = await self.http.get(f"/api/replay/snapshots/{chat}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]


@pytest_asyncio.fixture(loop_scope="session")
async def web(settings: Settings, chromium: Browser) -> AsyncIterator[Web]:
    async with serve_kazma(settings) as server:
        user, token = await server.add_user("olive", role="owner")
        async with server.client(token) as http:
            running = Web(server, chromium, user, http)
            try:
                yield running
            finally:
                for context in chromium.contexts:  # the test's pages, closed before its server stops
                    await context.close()
    assert not running.errors, running.errors  # no script of a page failed


async def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def rows(page: Page, role: str) -> Any:
    return page.locator(f'#messages [data-role="{role}"] .text')


async def send(page: Page, text: str) -> None:
    await page.fill("#message-input", text)
    await page.press("#message-input", "Enter")


def last_step_of_turn(listing: dict[str, Any], turn: int) -> str:
    found = next(t for t in listing["turns"] if t["turn_index"] == turn)
    return found["steps"][-1]["snapshot_id"]  # type: ignore[no-any-return]


# -- the chat ----------------------------------------------------------------------------------------


async def test_the_login_link_signs_in_and_the_answer_streams_into_the_chat(web: Web) -> None:
    page = await web.page()
    await expect(page.locator("#chats-heading")).to_have_text("Your chats")
    await expect(page.locator("#no-chats")).to_be_visible()

    await send(page, "remember: tea")
    await expect(rows(page, "user")).to_have_text(["remember: tea"])
    await expect(rows(page, "assistant")).to_have_text(["Remembered: tea"])
    await expect(page.locator("#chat-list .chat-title")).to_have_text(["remember: tea"])
    chat = re.search(r"thread=(\w+)", page.url).group(1)  # type: ignore[union-attr]
    await expect(page.locator("#chat-replay-link")).to_have_attribute("href", f"/replay?thread={chat}")

    await send(page, "what do I like?")
    await expect(rows(page, "assistant")).to_have_text(["Remembered: tea", 'You said: "what do I like?". I know: tea.'])
    await expect(page.locator("#status")).to_be_hidden()
    await shot(page, "chat.png")


async def test_a_write_waits_at_its_card_and_runs_once_approved(web: Web, settings: Settings) -> None:
    page = await web.page()
    await send(page, "write notes.txt: hello")
    card = page.locator(".approval")
    # In people's words: what will be written where, with the text (not the tool's name nor JSON).
    await expect(card.locator("h3")).to_have_text("Kazma asks to write a file")
    await expect(card.locator(".approval-what")).to_have_text("It will write 5 B to notes.txt in your files:")
    await expect(card.locator(".approval-text")).to_have_text("hello")
    await expect(card).not_to_contain_text("write_file")
    notes = settings.files_of(web.user.id) / "notes.txt"
    assert not notes.exists()

    await card.get_by_role("button", name="Approve").click()
    await expect(rows(page, "assistant")).to_have_text(["Wrote 5 bytes to notes.txt."])
    await expect(page.locator(".approval")).to_have_count(0)
    assert notes.read_text() == "hello"


async def test_replay_in_the_chat_answers_without_the_model_and_replay_clear_asks_first(web: Web) -> None:
    chat = await web.chat("commands", "calc 1+2")
    page = await web.page(f"/?thread={chat}")
    await expect(rows(page, "assistant")).to_have_text(["1+2 = 3"])

    await send(page, "/replay")
    note = page.locator('#messages [data-role="command"]').first
    await expect(note).to_contain_text("Saved steps in this chat: 2.")
    await expect(note.locator("a")).to_have_attribute("href", f"{web.server.url}/replay?thread={chat}")
    await send(page, "/fork")
    await expect(page.locator('#messages [data-role="command"]')).to_have_count(2)

    await send(page, "/replay clear")
    dialog = page.locator("#confirm-dialog")
    await expect(dialog).to_contain_text("Delete this chat’s saved steps (2)?")
    await page.click("#confirm-ok")
    await expect(page.locator('#messages [data-role="command"]').last).to_have_text(re.compile("Deleted this chat’s saved steps: 2"))
    assert (await web.steps(chat))["snapshots"] == []
    await expect(rows(page, "user")).to_have_text(["calc 1+2"])  # the model saw none of it

    await note.locator("a").click()
    await page.wait_for_url(f"**/replay?thread={chat}")
    await expect(page.locator("#steps-count")).to_have_text("No steps saved in this chat yet.")


# -- the Time Travel page ---------------------------------------------------------------------------------


async def test_restore_shows_its_preview_asks_and_every_open_tab_of_the_chat_reloads(web: Web, settings: Settings) -> None:
    chat = await web.chat("tea", "remember: tea", "write notes.txt: hello", "calc 1+2")
    target = last_step_of_turn(await web.steps(chat), 1)
    first = await web.page(f"/?thread={chat}")
    second = await web.tab(first, f"/?thread={chat}")
    for tab in (first, second):
        await expect(tab.locator("#messages .message")).to_have_count(6)

    page = await web.tab(first, f"/replay?thread={chat}")
    await expect(page.locator("#thread-select")).to_have_value(chat)
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1", "Turn 2", "Turn 3"])
    await page.click(f'button[data-snapshot="{target}"]')
    detail = page.locator("#step-detail")
    await expect(detail.locator("h2")).to_have_text(f"turn 1, step 1 {target[:8]}")
    await expect(detail.locator('[data-role="assistant"] .text').last).to_have_text("Remembered: tea")
    await detail.locator(".fold-toggle").click()  # the conversation before the step, folded until asked for
    await expect(detail.locator('[data-role="user"] .text')).to_have_text(["remember: tea"])
    await shot(page, "time-travel.png")

    await page.click("#restore-button")
    dialog = page.locator("#confirm-dialog")
    await expect(dialog.locator("h2")).to_have_text(f"Restore this chat to turn 1, step 1 ({target[:8]})?")
    await expect(dialog).to_contain_text("Later turns taken back: 2")
    await expect(dialog).to_contain_text("Restoring rewinds the conversation, not the world. These stay done:")
    await expect(dialog.locator(".effects li")).to_have_text(["file written: notes.txt"])
    await shot(page, "time-travel-restore.png")
    await page.click("#confirm-ok")

    await expect(page.locator("#notice")).to_contain_text("Restored this chat to turn 1, step 1.")
    await expect(page.locator(".turn h3")).to_have_text(["Turn 1"])
    for tab in (first, second):
        await expect(tab.locator("#notice")).to_contain_text("This chat was restored to an earlier step")
        await expect(tab.locator("#messages .message .text")).to_have_text(["remember: tea", "Remembered: tea"])
    assert (written(settings, "notes.txt")).read_text() == "hello"  # the world is not rewound

    # A refusal is shown as its sentence: here an approval waits in the chat.
    paused = await web.http.post(f"/api/chats/{chat}/messages", json={"text": "write later.txt: x"})
    assert paused.json()["status"] == "awaiting_approval"
    await page.click("#restore-button")
    await expect(page.locator("#notice")).to_have_text(
        "An approval is waiting in this chat. Approve or deny it (or let it expire), then try again."
    )
    await expect(page.locator("#notice")).to_have_class(re.compile("error"))


async def test_fork_asks_then_opens_the_new_chat_with_its_lineage(web: Web) -> None:
    chat = await web.chat("holiday", "remember: tea", "calc 1+2")
    target = last_step_of_turn(await web.steps(chat), 1)
    page = await web.page(f"/replay?thread={chat}")
    await page.click(f'button[data-snapshot="{target}"]')
    await page.click("#fork-button")
    await expect(page.locator("#confirm-dialog h2")).to_have_text(f"Fork turn 1, step 1 ({target[:8]}) into a new chat?")
    await page.click("#confirm-ok")

    await page.wait_for_url(re.compile(r"/\?thread=(?!" + chat + r")\w+$"))
    fork = page.url.rsplit("=", 1)[1]
    await expect(page.locator("#chat-heading")).to_have_text("holiday (fork)")
    await expect(page.locator(f'a[data-thread="{fork}"] .lineage')).to_have_text("forked from holiday, turn 1 step 1")
    await expect(page.locator("#messages .message .text")).to_have_text(["remember: tea", "Remembered: tea"])
    listed = {c["thread_id"]: c for c in (await web.http.get("/api/chats")).json()["chats"]}
    assert listed[fork]["forked_from"]["thread_id"] == chat and len(listed) == 2


async def test_the_compare_tab_shows_what_differs_between_two_steps(web: Web) -> None:
    chat = await web.chat("compare", "remember: tea", "calc 1+2")
    listing = await web.steps(chat)
    first, last = listing["snapshots"][0]["snapshot_id"], listing["snapshots"][-1]["snapshot_id"]
    expected = (await web.http.post("/api/replay/compare", json={"thread_id": chat, "a": first, "b": last})).json()

    page = await web.page(f"/replay?thread={chat}")
    await page.click("#tab-compare")
    await expect(page.locator("#panel-compare")).to_be_visible()
    await expect(page.locator("#panel-steps")).to_be_hidden()
    await page.select_option("#compare-a", first)
    await page.select_option("#compare-b", last)
    await page.click("#compare-run")
    added = len(expected["messages"]["added"])
    await expect(page.locator(".counts")).to_have_text(f"Messages: {added} added, 0 removed, 0 changed.")
    await expect(page.locator('.side-by-side tr[data-kind="added"]')).to_have_count(added)
    await shot(page, "time-travel-compare.png")


async def test_a_step_saved_cut_is_marked_and_cannot_be_restored_or_forked(web: Web) -> None:
    chat = await web.chat("big", "big 3000")
    cut = [s for s in (await web.steps(chat))["snapshots"] if s["truncated"]]
    assert cut, "big 3000 should be saved cut"
    page = await web.page(f"/replay?thread={chat}")
    button = page.locator(f'button[data-snapshot="{cut[0]["snapshot_id"]}"]')
    await expect(button.locator(".badge")).to_have_text("saved cut")
    await button.click()
    await expect(page.locator("#truncated-reason")).to_contain_text("It can be read, but not restored or forked.")
    for action in ("#restore-button", "#fork-button"):
        await expect(page.locator(action)).to_be_disabled()
        await expect(page.locator(action)).to_have_attribute("title", re.compile("saved cut"))


# -- Settings and the two languages -----------------------------------------------------------------------


async def test_settings_apply_live_ones_at_once_and_refuse_invalid_values_with_the_reason(web: Web) -> None:
    page = await web.page("/settings")
    live = page.locator('tr[data-setting="time_travel.retention_days"]')
    await live.locator("input").fill("7")
    await live.get_by_role("button", name="Save").click()
    saved = page.locator('tr[data-setting="time_travel.retention_days"]')
    await expect(saved.locator(".row-message")).to_have_text("Saved time_travel.retention_days: it applies now.")
    await expect(saved.locator(".running")).to_have_text("7")
    assert web.server.core.settings.time_travel.retention_days == 7

    later = page.locator('tr[data-setting="time_travel.max_snapshots"]')
    widths = await page.locator(".settings-table thead th").evaluate_all("cells => cells.map((c) => c.offsetWidth)")
    await later.locator("input").fill("0")
    await later.get_by_role("button", name="Save").click()
    await expect(later.locator(".row-message")).to_have_text(
        "Not saved: this setting takes a whole number from 1 to 100,000. Enter one in that range and save again."
    )
    # The columns stay where they were when the message appears.
    assert await page.locator(".settings-table thead th").evaluate_all("cells => cells.map((c) => c.offsetWidth)") == widths
    await later.locator("input").fill("10")
    await later.get_by_role("button", name="Save").click()
    row = page.locator('tr[data-setting="time_travel.max_snapshots"]')
    await expect(row.locator(".restart")).to_have_text("restart needed")
    await expect(row.locator(".running")).to_have_text("50")
    await expect(row.locator(".stored")).to_have_text("10")
    await shot(page, "settings.png")


async def test_switching_to_arabic_lays_every_page_out_right_to_left(web: Web) -> None:
    chat = await web.chat("شاي", "remember: tea")
    page = await web.page(f"/?thread={chat}")
    await page.click('a[data-set-lang="ar"]')
    await expect(page.locator("html")).to_have_attribute("dir", "rtl")
    await expect(page.locator("html")).to_have_attribute("lang", "ar")
    await expect(page.locator("#chats-heading")).to_have_text("دردشاتك")
    await expect(page.locator('.nav a[href="/replay"]')).to_have_text("السفر عبر الزمن")
    await expect(rows(page, "assistant")).to_have_text(["Remembered: tea"])
    sidebar, conversation = await page.locator(".sidebar").bounding_box(), await page.locator(".conversation").bounding_box()
    assert sidebar and conversation and sidebar["x"] > conversation["x"]  # the sidebar moved to the right
    assert (await web.server.core.store.users.user_by_id(web.user.id)).lang == "ar"  # type: ignore[union-attr]
    await shot(page, "chat-ar.png")

    await page.goto(f"{web.server.url}/replay?thread={chat}")
    await expect(page.locator("html")).to_have_attribute("dir", "rtl")
    await page.locator(".step-button").last.click()
    await expect(page.locator("#step-detail h2")).to_contain_text("الدورة 1، الخطوة 1")
    await expect(page.locator("#restore-button")).to_have_text("الاستعادة هنا")
    await shot(page, "time-travel-ar.png")

    await page.click('a[data-set-lang="en"]')
    await expect(page.locator("html")).to_have_attribute("dir", "ltr")


async def test_the_owner_sees_an_operator_alert_on_every_page_in_their_language_until_acknowledged(web: Web) -> None:
    await web.server.core.store.alerts.add_alert("deletion_not_verified", Said("alert_text_left", {"left": 3}))
    page = await web.page()
    alert = page.locator("#alerts .alert")
    await expect(alert).to_contain_text("text of 3 deleted messages is still in snapshots.db or its WAL")
    tab = await web.tab(page, "/replay")
    await expect(tab.locator("#alerts .alert")).to_have_count(1)
    # Kept with its sentence's id: the owner who reads Arabic reads it in Arabic (it was kept in English only).
    await tab.click('a[data-set-lang="ar"]')
    await expect(tab.locator("#alerts .alert")).to_contain_text("لكن نص 3 رسالة محذوفة ما زال في snapshots.db")
    await shot(tab, "alert-ar.png")
    await tab.set_viewport_size({"width": 390, "height": 844})
    await shot(tab, "alert-ar-phone.png")
    await tab.set_viewport_size({"width": 1280, "height": 860})
    await tab.click('a[data-set-lang="en"]')
    await expect(tab.locator("#alerts .alert")).to_contain_text("text of 3 deleted messages")
    await shot(tab, "alert-en.png")
    await alert.get_by_role("button", name="Acknowledge").click()
    await expect(alert).to_have_count(0)
    await tab.reload()
    await expect(tab.locator("#alerts .alert")).to_have_count(0)
    assert await web.server.core.store.alerts.alerts(False) == []


async def test_the_sidebar_shows_a_fork_made_in_telegram_living_in_its_topic(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chromium: Browser
) -> None:
    token, ann, forum = "5550001111:AAH-browser-token", person(5551234987, "Ann"), group_chat(-1001112223334, "Forum", forum=True)
    async with serve_fake_telegram(token) as telegram:
        monkeypatch.setenv("KAZMA_TELEGRAM__TOKEN", token)
        monkeypatch.setenv("KAZMA_TELEGRAM__BASE_URL", telegram.base_url)
        async with serve_kazma(make_settings(tmp_path / "data")) as server:
            await telegram.wait_for(lambda: telegram.called("getUpdates"))
            for text in ("@KazmaBot hello", "@KazmaBot calc 1+1"):
                before = len(telegram.sent)
                telegram.message(ann, forum, text)
                await telegram.wait_for(lambda before=before: len(telegram.sent) > before)
            source = await server.core.store.places.bound_chat(f"telegram:{forum['id']}")
            assert source is not None
            step = (await server.core.snapshots.list_steps(source.id))[0].id
            telegram.message(ann, forum, f"/fork {step[:8]}")
            asked = await telegram.wait_for(lambda: [s for s in telegram.sent if s.buttons()])
            telegram.press(ann, asked[0], "Yes, do it")
            [topic] = await telegram.wait_for(lambda: telegram.topics)
            fork = await telegram.wait_for(lambda: [s for s in telegram.sent if "it continues in the topic" in s.text])
            fork_id = re.search(r"\?thread=(\w+)", fork[0].text)[1]  # type: ignore[index]

            context = await new_context(chromium, locale="en-US")
            try:
                user = await server.core.store.users.user_for_identity(f"telegram:{ann['id']}")
                assert user is not None
                page = await context.new_page()
                await page.goto(await login_url(server, user))
                place = page.locator(f'a[data-thread="{fork_id}"] .lives-in')
                await expect(place).to_have_text(f"in a Telegram topic: {topic.name}")
                await expect(page.locator(f'a[data-thread="{source.id}"] .lives-in')).to_have_text("in Telegram")
                await shot(page, "sidebar-fork-in-a-telegram-topic.png")
            finally:
                await context.close()


async def test_sign_out_ends_the_session_and_shows_the_sign_in_page(web: Web) -> None:
    page = await web.page()
    session = next(c["value"] for c in await page.context.cookies() if c["name"] == "kazma_session")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.locator("body")).to_have_attribute("data-page", "signin")
    assert not [c for c in await page.context.cookies() if c["name"] == "kazma_session"]
    async with httpx.AsyncClient(base_url=web.server.url, trust_env=False, cookies={"kazma_session": session}) as kept:
        assert (await kept.get("/api/me")).status_code == 401  # a copy of the cookie is worth nothing now


async def test_the_api_docs_render_in_the_browser_under_the_strict_policy(web: Web) -> None:
    """Broke: /docs needed 'unsafe-inline' and a CDN in its policy, for Swagger UI's inline start."""
    page = await web.page("/docs")
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
    # Reported by the browser itself, whatever the page's own scripts do.
    await page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error(`CSP: ${e.violatedDirective} ${e.blockedURI}`))"
    )
    await page.reload()
    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("Kazma")
    chats = page.locator(".opblock-summary-path", has_text="/api/chats").first
    await expect(chats).to_be_visible()
    await chats.click()  # an operation opens, with its parameters and answers
    await expect(page.locator(".opblock-body").first).to_be_visible()
    await shot(page, "docs.png")
    assert violations == []
