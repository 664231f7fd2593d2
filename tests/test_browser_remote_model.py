"""The chat page with a remote model (the real ChatOpenAI against a fake OpenAI-compatible server on
127.0.0.1), in a real browser: what the model says before asking for a tool stays above that tool's
block, live and after a reload, and the answer is what it says after."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import langchain_openai  # noqa: F401  imported here, not while the server starts
import pytest
import pytest_asyncio
from playwright.async_api import expect

from kazma_core.settings import Settings
from tests.conftest import make_settings
from tests.fakes.openai_server import SAID_FIRST, FakeOpenAI, serve_fake_openai
from tests.test_browser import Web, rows, send, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import PHONE, open_page, view_shot

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

KEY = "sk-test-0123456789"


@pytest_asyncio.fixture(loop_scope="session")
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with serve_fake_openai(KEY) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, fake: FakeOpenAI) -> Settings:
    model = {"provider": "openai", "name": "fake-model", "base_url": fake.base_url, "api_key": KEY, "timeout_seconds": 10}
    return make_settings(tmp_path / "data", model=model)


async def test_words_said_before_a_tool_call_stay_above_its_block(web: Web) -> None:
    page = await web.page()
    await send(page, "think calc 6*7")
    await expect(rows(page, "assistant")).to_have_text(["The answer is 6*7 = 42"])
    said = page.locator('#messages [data-role="assistant"] .tool-said')
    await expect(said).to_have_text([SAID_FIRST])
    # Above the block, not in the answer.
    assert await said.evaluate("(p) => p.nextElementSibling.matches('details.tool-block')")
    await view_shot(page, "remote-model-said-before-a-tool.png")
    await page.reload()
    await expect(said).to_have_text([SAID_FIRST])
    await expect(rows(page, "assistant")).to_have_text(["The answer is 6*7 = 42"])
    # In Arabic on a phone: the words and the block, in the answer's bubble, the block opens on a tap.
    chat = page.url.rsplit("thread=", 1)[1]
    phone = await open_page(web, f"/?thread={chat}&lang=ar", PHONE, "ar")
    said_there = phone.locator('#messages [data-role="assistant"] .tool-said')
    await expect(said_there).to_have_text([SAID_FIRST])
    await phone.locator('#messages [data-role="assistant"] details.tool-block summary').click()
    await expect(phone.locator('#messages [data-role="assistant"] details.tool-block .tool-result')).to_have_text("6*7 = 42")
    await view_shot(phone, "remote-model-said-before-a-tool-ar-phone.png")
