"""The answer drawn as the model makes it, in a real browser: the offline model streams its words
a little apart (as a real model does), the page shows them growing, and a Stop pressed while
they come keeps what was said, marked stopped, across a reload."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from playwright.async_api import expect

from kazma_core.settings import Settings
from tests.conftest import make_settings
from tests.test_browser import Web, rows, send, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import DESK, PHONE, open_page, view_shot

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

QUESTION = "tell me **all** about green tea, black tea, white tea and oolong, one by one, slowly"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data", model={"piece_seconds": 0.15})


WATCH = """() => {
    window.seen = [];
    new MutationObserver(() => {
        const live = document.querySelector("#messages .msg.live .msg-body");
        if (live && live.textContent && window.seen[window.seen.length - 1] !== live.textContent) window.seen.push(live.textContent);
    }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
}"""


async def test_the_answer_grows_word_by_word_then_shows_its_markdown(web: Web) -> None:
    page = await open_page(web, "/", DESK)
    await page.evaluate(WATCH)
    await send(page, QUESTION)
    await expect(page.locator("#messages .msg.live .msg-body")).to_contain_text("You said")
    await view_shot(page, "chat-streaming.png")
    answer = page.locator('#messages [data-role="assistant"] .msg-body.rich')
    await expect(answer.locator("strong")).to_have_text("all")  # whole: drawn from its Markdown
    await expect(page.locator("#messages .msg.live")).to_have_count(0)
    seen: list[str] = await page.evaluate("window.seen")
    final = (await answer.text_content() or "").strip()
    assert len(seen) >= 5, seen  # it grew in pieces
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(seen)), seen  # only ever growing
    assert final.startswith("You said:") and len(seen[0]) < len(final), (seen[0], final)


async def test_stop_while_the_answer_comes_keeps_what_was_said_after_a_reload_too(web: Web) -> None:
    for lang, viewport in (("en", DESK), ("ar", PHONE)):
        page = await open_page(web, f"/?new&lang={lang}", viewport)
        await send(page, QUESTION)
        live = page.locator("#messages .msg.live .msg-body")
        await expect(live).to_contain_text("You said")
        await page.click("#stop")
        cut = page.locator("#messages .msg.cut")
        await expect(cut.locator(".msg-body")).to_contain_text("You said:")
        said = (await cut.locator(".msg-body").text_content() or "")
        mark = "توقّفت هنا" if lang == "ar" else "stopped here"
        assert said.endswith(mark) and len(said) < len(QUESTION), said  # cut short, and marked
        stopped = "توقّفت كازما أثناء إجابتها" if lang == "ar" else "Stopped while Kazma was answering"
        await expect(rows(page, "stopped")).to_contain_text([stopped])
        await expect(page.locator("#send")).to_be_enabled()
        await view_shot(page, f"chat-stopped-streaming-{lang}.png")

        chat = page.url.split("thread=")[1]
        await page.goto(f"{web.server.url}/?thread={chat}&lang={lang}")  # opened again
        cut = page.locator("#messages .msg.cut")
        await expect(cut).to_have_count(1)
        await expect(cut.locator(".msg-body")).to_have_text(said)  # the server kept it, rendered the same
        await expect(rows(page, "stopped")).to_contain_text([stopped])
        await page.context.close()
