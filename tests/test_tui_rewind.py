"""/rewind in the terminal UI (issue 22), under Textual's pilot against the real server: the
chat's past prompts newest first with their time; Enter rewinds to before the chosen one and
puts its text in the input; f forks from there instead."""

from __future__ import annotations

import pytest

from kazma_ui.tui.widgets.chat_list import ChatList
from kazma_ui.tui.widgets.rewind_list import RewindList
from tests.conftest import Person
from tests.helpers import new_chat, said, say
from tests.http_server import RunningServer
from tests.test_tui import dialog, enter, question, shown, tui, until, until_shown

pytestmark = pytest.mark.engines("sqlite")


def prompts_of(screen: RewindList) -> list[str]:
    return [str(screen.query_one("#rewind-prompts").get_option_at_index(i).prompt) for i in range(len(screen.prompts))]  # type: ignore[attr-defined]


async def test_rewind_lists_past_prompts_newest_first_and_enter_goes_back_to_before_one(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Tea")
    await say(ann.http, chat, "remember: tea is good")
    await say(ann.http, chat, "remember: coffee is better")
    await say(ann.http, chat, "hello")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindList))
        screen = app.screen
        assert isinstance(screen, RewindList)
        lines = prompts_of(screen)
        assert [line.split("  ", 1)[1] for line in lines] == ["hello", "remember: coffee is better", "remember: tea is good"]
        assert all(line[:4].isdigit() for line in lines)  # each with its time
        await pilot.press("down")  # the second newest: "remember: coffee is better"
        await pilot.press("enter")
        await until(pilot, lambda: dialog(app) is not None)
        assert question(app).startswith("Rewind this chat to before “remember: coffee is better”? Later turns taken back: 2.")
        await pilot.press("y")
        await until_shown(pilot, "Rewound to before that prompt")
        await until(pilot, lambda: app.input_line.value == "remember: coffee is better")
        assert "hello" not in shown(app)
        assert await said(ann.http, chat) == [("user", "remember: tea is good"), ("assistant", "Remembered: tea is good")]
        # The text waits in the input: edited and sent, it continues from there.
        app.input_line.value = "remember: milk is fine"
        await pilot.press("enter")
        await until_shown(pilot, "Remembered: milk is fine")

        # Escape leaves without changing anything.
        await enter(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindList))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, RewindList))
    assert len(await said(ann.http, chat)) == 4


async def test_f_forks_from_before_the_prompt_into_a_new_chat_with_its_text_in_the_input(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "Trip")
    await say(ann.http, chat, "remember: we go to Oman")
    await say(ann.http, chat, "calc 3*3")
    async with tui(server.url, ann.token) as (app, pilot):
        await enter(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindList))
        await pilot.press("f")  # the newest prompt: "calc 3*3"
        await until(pilot, lambda: app.chat_id != chat and "open now" in shown(app))
        fork = app.chat_id
        await until(pilot, lambda: app.input_line.value == "calc 3*3")
        await until(pilot, lambda: [i.thread_id for i in app.query_one(ChatList).items] == [fork, chat])
        assert "we go to Oman" in shown(app) and "3*3 = 9" not in shown(app)
    assert len(await said(ann.http, chat)) == 4
