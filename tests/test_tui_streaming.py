"""The terminal UI while a turn runs: a working sign, the answer drawn as it grows, each tool
call as a folded line that opens on its arguments and result; a chat opened later shows the
same lines from the transcript. Textual's pilot against the real server over HTTP.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kazma_core.settings import Settings
from kazma_ui.tui.widgets.chat_view import ToolLine
from tests.conftest import Person, make_settings
from tests.helpers import new_chat, said
from tests.http_server import RunningServer
from tests.test_tui import enter, shown, tui, until, until_shown

QUESTION = " ".join(f"w{n}" for n in range(30))
ANSWER = f'Kazma: You said: "{QUESTION}". I know no facts yet.'


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The offline model's words 0.05 s apart: the answer is seen growing.
    return make_settings(tmp_path / "data", model={"piece_seconds": 0.05})


def growing(app: object) -> str | None:
    lines = [str(w.content) for w in app.view.query(".growing")]  # type: ignore[attr-defined]
    return lines[0] if lines else None


async def test_the_answer_is_drawn_as_it_grows_under_a_working_sign(server: RunningServer, ann: Person) -> None:
    await new_chat(ann.http, "Growing")
    async with tui(server.url, ann.token) as (app, pilot):
        working = app.query_one("#working")
        assert not working.display
        await enter(pilot, QUESTION)
        await until(pilot, lambda: growing(app) is not None)
        first = growing(app)
        assert first is not None and ANSWER.startswith(first) and first != ANSWER
        assert working.display  # the working sign shows while the turn runs
        await until(pilot, lambda: (g := growing(app)) is not None and len(g) > len(first))  # it grew
        await until_shown(pilot, ANSWER)
        await until(pilot, lambda: growing(app) is None and not working.display)
        assert app.view.texts().count(ANSWER) == 1  # the whole answer once, in place of the growing one


async def test_a_tool_call_is_a_folded_line_that_opens_on_its_arguments_and_result(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Tools")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "calc 6*7")
        await until_shown(pilot, "Kazma: 6*7 = 42")
        await until(pilot, lambda: app.view.tool_lines() == ["⚙ Calculate · done"])
        line = app.view.query_one(ToolLine)
        assert line.collapsed and str(line.content) == "▶ ⚙ Calculate · done"
        await pilot.click(ToolLine)
        await until(pilot, lambda: not line.collapsed)
        assert str(line.content).splitlines() == ["▼ ⚙ Calculate · done", '{"expression": "6*7"}', "6*7 = 42"]
        texts = app.view.texts()
        assert texts[texts.index("You: calc 6*7") + 1] == "Kazma: 6*7 = 42"
    assert await said(ann.http, chat) == [("user", "calc 6*7"), ("assistant", "6*7 = 42")]

    # Opened again (a new TUI), the line comes from the transcript, in Arabic for an Arabic reader.
    async with tui(server.url, ann.token, lang="ar") as (app, pilot):
        await until(pilot, lambda: "6*7 = 42" in shown(app))
        assert app.view.tool_lines() == ["⚙ حساب · تمّ"]
        assert len(app.view.query(ToolLine)) == 1
