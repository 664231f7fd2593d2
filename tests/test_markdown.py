"""Answers' Markdown as the web chat gets it: rendered, then sanitised, in the transcript's rows
and the event stream's answers alike (kazma_ui/web/markdown.py over the real HTTP API)."""

from __future__ import annotations

from html.parser import HTMLParser

from kazma_ui.web.markdown import render
from tests.conftest import Person
from tests.helpers import new_chat, open_events, say
from tests.http_server import RunningServer


def test_markdown_becomes_the_html_a_chat_app_shows() -> None:
    html = render(
        "# Plan\n\n**tea** then *coffee*, `cups`, ~~milk~~\n\n1. one\n2. two\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n```sh\nls -l\n```"
    )
    for part in ("<h1>Plan</h1>", "<strong>tea</strong>", "<em>coffee</em>", "<code>cups</code>", "<s>milk</s>",
                 "<ol>", "<li>one</li>", "<th>a</th>", "<td>2</td>", '<pre><code class="language-sh">ls -l\n</code></pre>'):
        assert part in html, (part, html)
    assert "style" not in html  # a column's alignment would be an inline style, which the CSP refuses
    assert render("one\ntwo") == "<p>one<br>\ntwo</p>"  # an answer's lines stay lines


def markup(html: str) -> list[tuple[str, list[str]]]:
    """The elements of some HTML, each with its attributes' names, as a browser would build them."""
    found: list[tuple[str, list[str]]] = []

    class Reader(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Reader().feed(html)
    return found


def test_nothing_rendered_can_run_script_or_load_from_elsewhere() -> None:
    said = render(
        '<script>alert(1)</script><img src="https://x.example/a.png" onerror="alert(2)">'
        "\n\n[js](javascript:alert(3)) [data](data:text/html,hi) [web](https://x.example/) [here](/replay)"
        "\n\n![picture](https://x.example/p.png)\n\n```\n<b onclick=alert(4)>\n```"
    )
    elements = markup(said)
    assert {tag for tag, _ in elements} == {"p", "a", "pre", "code"}, elements
    assert {name for _, names in elements for name in names} <= {"href", "target", "rel"}, elements
    assert "&lt;script&gt;" in said  # the message's own HTML reads as text
    assert "javascript:" not in said.replace("[js](javascript:alert(3))", "")
    assert 'href="data:' not in said
    web = '<a href="https://x.example/" target="_blank" rel="noopener noreferrer nofollow">web</a>'
    assert web in said, said
    assert '<a href="/replay" target="_blank" rel="noopener noreferrer nofollow">here</a>' in said
    # An image is never fetched: it is a link to where it points, to open or not.
    assert '<a href="https://x.example/p.png" target="_blank" rel="noopener noreferrer nofollow">picture</a>' in said


async def test_answers_carry_their_html_in_the_transcript_and_the_event_stream(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        await say(ann.http, chat, "**hi** <b>there</b>")
        live = await events.until("message", role="assistant")
    rows = (await ann.http.get(f"/api/chats/{chat}/messages")).json()["messages"]
    question, answer = rows
    assert question["html"] is None  # a person's message is shown as typed
    expected = "<p>You said: \"<strong>hi</strong> &lt;b&gt;there&lt;/b&gt;\". I know no facts yet.</p>"
    assert answer["html"] == live.data["html"] == expected
