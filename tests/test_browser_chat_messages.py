"""The chat's messages as a person reads them, in a real browser: answers in Markdown (and no
message can run script or load anything), the answer drawn as it grows and kept when stopped,
each tool call as a block between the question and the answer, approval cards in people's
words; in English and Arabic, at a desk and on a phone."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Locator, Page, expect

from tests.test_browser import Web, rows, send, web  # noqa: F401  (web is a fixture)
from tests.test_browser_chat_page import DESK, PHONE, open_page, view_shot

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the worker's one browser runs on the session's loop (test_browser.chromium)

MARKDOWN = """**bold** and `inline`

# A heading

- one
- two

| name | value |
|------|-------|
| tea  | 2     |

```python
print("hi")
```

[a site](https://example.com/page) and the end"""


def answer(page: Page) -> object:
    return page.locator('#messages [data-role="assistant"] .msg-body').last


async def test_an_answer_in_markdown_shows_formatted_with_a_copy_button_for_code(web: Web) -> None:
    chat = await web.chat("markdown", MARKDOWN)  # the offline model says the question back
    page = await open_page(web, f"/?thread={chat}", DESK)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    body = page.locator('#messages [data-role="assistant"] .msg-body.rich')
    await expect(body.locator("strong")).to_have_text("bold")
    await expect(body.locator("p code")).to_have_text("inline")
    await expect(body.locator("h1")).to_have_text("A heading")
    await expect(body.locator("ul li")).to_have_text(["one", "two"])
    await expect(body.locator("table th")).to_have_text(["name", "value"])
    await expect(body.locator("table td")).to_have_text(["tea", "2"])
    link = body.locator("a")
    await expect(link).to_have_text("a site")
    await expect(link).to_have_attribute("href", "https://example.com/page")
    await expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
    await expect(link).to_have_attribute("target", "_blank")
    # The person's own message stays as typed.
    await expect(rows(page, "user")).to_contain_text(["**bold** and `inline`"])

    code = body.locator(".code-block")
    await expect(code.locator("pre")).to_have_text('print("hi")\n')
    await code.get_by_role("button", name="Copy").click()
    await expect(code.get_by_role("button")).to_have_text("Copied")
    assert await page.evaluate("navigator.clipboard.readText()") == 'print("hi")\n'
    await view_shot(page, "chat-markdown.png")

    # The same answer arriving live (the event stream's message) is drawn the same.
    await send(page, "- a\n- b")
    await expect(answer(page).locator("li")).to_have_text([re.compile(r'^b"')])  # '- a' follows 'You said: "' on its line
    await page.context.close()

    for lang, viewport, name in (("ar", DESK, "chat-markdown-ar.png"), ("en", PHONE, "chat-markdown-phone.png")):
        page = await open_page(web, f"/?thread={chat}&lang={lang}", viewport)
        body = page.locator('#messages [data-role="assistant"] .msg-body.rich').first
        await expect(body.locator("h1")).to_have_text("A heading")
        await expect(body.locator(".copy-code")).to_have_text("نسخ" if lang == "ar" else "Copy")
        await expect(body.locator("pre")).to_have_attribute("dir", "ltr")  # code reads left to right in Arabic too
        width = await page.evaluate("document.scrollingElement.scrollWidth - innerWidth")
        assert width <= 1, width  # a wide table or code block scrolls inside the message, not the page
        await view_shot(page, name)
        await page.context.close()


ATTACKS = """<script>window.pwned = "script"</script>
<img src="{remote}/img.png" onerror="window.pwned = 'onerror'">
<style>@import url("{remote}/style.css"); body {{ background: red }}</style>
<a href="#" onclick="window.pwned = 'onclick'">html link</a>
[js link](javascript:window.pwned='js-link') [data link](data:text/html,<script>parent.pwned=1</script>)
![remote image]({remote}/markdown.png)
<iframe src="{remote}/frame"></iframe> <form action="{remote}/form"><button>go</button></form>
<svg onload="window.pwned = 'svg'"></svg> <object data="{remote}/object"></object>"""


@pytest_asyncio.fixture(loop_scope="session")
async def remote() -> AsyncIterator[tuple[str, list[str]]]:
    """Another site, on the far side of the network: it notes every request that reaches it."""
    asked: list[str] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asked.append((await reader.readline()).decode().strip())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", asked


async def test_no_message_can_run_script_or_load_anything_from_elsewhere(web: Web, remote: tuple[str, list[str]]) -> None:
    base, asked = remote
    attack = ATTACKS.format(remote=base)
    page = await open_page(web, "/", DESK)
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    await send(page, attack)
    body = answer(page)
    await expect(body).to_contain_text("You said:")
    chat = re.search(r"thread=(\w+)", page.url)[1]  # type: ignore[index]
    await page.goto(f"{web.server.url}/?thread={chat}")  # from the transcript's rows too
    body = answer(page)
    await expect(body).to_contain_text("<script>window.pwned")  # the message's HTML is shown as its text
    for tag in ("script", "img", "style", "iframe", "form", "svg", "object"):
        await expect(page.locator(f"#messages {tag}")).to_have_count(0)
    await expect(page.locator("#messages [onclick], #messages [onerror], #messages [onload]")).to_have_count(0)
    hrefs = await page.locator("#messages a").evaluate_all("links => links.map((a) => a.getAttribute('href'))")
    assert all(href.startswith(base + "/") for href in hrefs), hrefs  # only the image's address, as a link
    await expect(body.locator("a")).to_have_text(["remote image"])
    await page.wait_for_timeout(300)  # anything the page were to load would have been asked for by now
    assert await page.evaluate("window.pwned") is None
    assert not [url for url in requested if not url.startswith(web.server.url)], requested
    assert asked == [], asked
    assert not violations, violations  # nothing even tried and was refused by the CSP
    assert "script-src 'self'" in (await page.request.get(web.server.url + "/")).headers["content-security-policy"]
    await view_shot(page, "chat-attacks.png")


# -- the answer as it grows, and tool activity ------------------------------------------------------

async def running_turn(web: Web, title: str) -> tuple[str, int]:
    """A chat whose turn runs (sleeping) until stopped: its events are the chat's own."""
    chat = (await web.http.post("/api/chats", json={"title": title})).json()["thread_id"]
    started = await web.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 600"})
    assert started.status_code == 202
    return chat, 1


async def connected(web: Web, chat: str, event: dict[str, object], drawn: Locator) -> None:
    """Publishes a tool event until the page draws it: the page shows the running turn (Stop) as soon
    as it has read the chat, which can be before its event stream is open. Once drawn, the stream is."""
    for _ in range(100):
        web.server.core.events.publish(chat, "tool", event)  # the same call again changes nothing
        if await drawn.count():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the page never drew the tool event")


def tool_event(turn: int, call: str, state: str, **extra: object) -> dict[str, object]:
    return {
        "turn_index": turn, "call_id": call, "name": "calculator", "label": "Calculating",
        "label_id": "tool_label_calculator", "state": state, "args": {"expression": "6*7"},
        "result": "", "result_chars": 0, **extra,
    }


async def test_the_answer_grows_as_it_is_made_and_stop_keeps_what_was_said(web: Web) -> None:
    for lang, viewport in (("en", DESK), ("ar", PHONE)):
        chat, turn = await running_turn(web, f"growing {lang}")
        page = await open_page(web, f"/?thread={chat}&lang={lang}", viewport)
        await expect(page.locator("#stop")).to_be_visible()
        events = web.server.core.events
        live = page.locator("#messages .msg.live")

        block = live.locator('.msg-tools details.tool-block[data-call="t1"]')
        await connected(web, chat, tool_event(turn, "t1", "running"), block)
        await expect(block).to_have_attribute("data-state", "running")
        await expect(block.locator("summary")).to_contain_text("Calculating")
        events.publish(chat, "tool", tool_event(turn, "t1", "done", result="42", result_chars=2))
        await expect(block).to_have_attribute("data-state", "done")

        for piece in ("The answer", " is **42**", ", as computed"):
            events.publish(chat, "delta", {"text": piece, "turn_index": turn})
        await expect(live.locator(".msg-body")).to_have_text("The answer is **42**, as computed")
        # Between the question and the answer: the question, then the tool block, then the words.
        order = await page.evaluate("""() => [...document.querySelectorAll('#messages .msg')].map((m) => m.dataset.role)""")
        assert order == ["user", "assistant"], order
        await view_shot(page, f"chat-growing-{lang}.png")

        await page.click("#stop")
        cut = page.locator("#messages .msg.cut")
        await expect(cut.locator(".msg-body")).to_contain_text("The answer is **42**, as computed")
        await expect(cut.locator(".cut-mark")).to_have_text("توقّفت هنا" if lang == "ar" else "stopped here")
        # The turn's tool calls go with what was said: the server's (the sleep it ran), in the page's language.
        await expect(cut.locator("details.tool-block summary")).to_contain_text(["انتظار لحظة" if lang == "ar" else "Wait a moment"])
        stopped = "توقّفت كازما أثناء إجابتها" if lang == "ar" else "Stopped while Kazma was answering"
        await expect(rows(page, "stopped")).to_contain_text([stopped])
        await expect(page.locator("#messages .msg.live")).to_have_count(0)
        await expect(page.locator("#send")).to_be_enabled()
        await view_shot(page, f"chat-stopped-answer-{lang}.png")
        await page.context.close()


async def test_each_tool_call_is_a_block_that_opens_on_its_arguments_and_result(web: Web) -> None:
    chat, turn = await running_turn(web, "tools")
    page = await open_page(web, f"/?thread={chat}", DESK)
    await expect(page.locator("#stop")).to_be_visible()
    long = "".join(f"line {n}\n" for n in range(300))  # 2,590 characters; the event carries 2,000
    events = web.server.core.events
    blocks = page.locator('#messages .msg.live details.tool-block[data-call^="t"]')
    await connected(web, chat, tool_event(turn, "t1", "done", result="42", result_chars=2), blocks)
    events.publish(chat, "tool", tool_event(turn, "t2", "failed", args={"expression": "1/0"}, result="division by zero", result_chars=16))
    events.publish(chat, "tool", tool_event(turn, "t3", "done", name="big", args={"kb": 3}, result=long[:2000], result_chars=len(long)))
    await expect(blocks).to_have_count(3)
    await expect(blocks.nth(1)).to_have_attribute("data-state", "failed")
    await expect(blocks.nth(1).locator(".tool-outcome")).to_have_text("failed")

    first = blocks.nth(0)
    await expect(first.locator(".tool-args")).to_be_hidden()  # closed until opened
    await first.locator("summary").click()
    await expect(first.locator(".tool-args dt")).to_have_text(["expression"])
    await expect(first.locator(".tool-args dd")).to_have_text(["6*7"])
    await expect(first.locator(".tool-result")).to_have_text("42")

    third = blocks.nth(2)
    await third.locator("summary").click()
    result = third.locator(".tool-result")
    assert len(await result.text_content() or "") == 601  # folded: its start, then "…"
    await third.get_by_role("button", name=re.compile("Show all")).click()
    await expect(result).to_have_text(long[:2000])
    await expect(third.locator(".tool-cut")).to_contain_text(f"The first 2,000 of {len(long):,} characters")
    await expect(third.locator(".tool-cut a")).to_have_attribute("href", f"/replay?thread={chat}")
    # A block the person opened stays open as the turn goes on.
    events.publish(chat, "tool", tool_event(turn, "t4", "running"))
    await expect(blocks).to_have_count(4)
    await expect(first).to_have_attribute("open", "")
    await expect(result).to_have_text(long[:2000])  # and a result shown whole stays whole
    await view_shot(page, "chat-tools.png")
    await page.click("#stop")
    # The turn's end (here its "stopped" note) keeps the tool calls the server saved: the sleep it ran.
    saved = page.locator('#messages [data-role="stopped"] details.tool-block')
    await expect(saved).to_have_count(1)
    await expect(saved.locator("summary")).to_contain_text("Wait a moment")


async def test_an_approval_card_says_what_will_be_written_where_in_arabic_on_a_phone(web: Web) -> None:
    page = await open_page(web, "/?lang=ar", PHONE)
    await send(page, "write plan.md: شاي ثم قهوة")
    card = page.locator(".approval")
    await expect(card.locator("h3")).to_have_text("تستأذن كازما في كتابة ملف")
    await expect(card.locator(".approval-what")).to_contain_text("ضمن ملفاتك")
    await expect(card.locator(".approval-what bdi.path")).to_have_text("plan.md")
    await expect(card.locator(".approval-text")).to_have_text("شاي ثم قهوة")
    await expect(card).not_to_contain_text("write_file")
    await view_shot(page, "chat-approval-ar-phone.png")
    await card.get_by_role("button", name="موافقة").click()
    await expect(page.locator(".approval")).to_have_count(0)


async def test_each_message_is_announced_with_its_layout_for_other_scripts(web: Web) -> None:
    chat = await web.chat("layout", "calc 2+2")
    page = await open_page(web, "/?new", DESK)  # not the last chat: it is opened below
    await page.evaluate("""() => {
        window.announced = [];
        document.addEventListener("kazma:message", (e) => window.announced.push({
            role: e.detail.row.role, id: e.detail.row.id, chat: e.detail.chat, inPage: document.contains(e.detail.node),
            slots: [".msg-head", ".msg-versions", ".msg-tools", ".msg-body", ".msg-actions"].every((s) => e.detail.node.querySelector(s)),
        }));
    }""")
    await page.locator(f'#chat-list a[data-thread="{chat}"]').click()
    await expect(rows(page, "assistant")).to_have_text(["2+2 = 4"])
    announced = await page.evaluate("window.announced")
    # A message drawn again (the stream's first read of the chat can redraw it) is announced again:
    # each message is announced, with its node in the page and its slots, whenever it is drawn.
    latest = {a["id"]: a for a in announced}
    assert [(a["role"], a["chat"], a["inPage"], a["slots"]) for a in latest.values()] == [
        ("user", chat, True, True), ("assistant", chat, True, True),
    ], announced
    assert all(isinstance(a["id"], int) for a in announced), announced
