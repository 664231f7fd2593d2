"""Slack: the message shortcuts "Fork from here" and "Rewind to here", declared in `kazma slack-manifest`.

Slack POSTs a shortcut to the interactivity URL form-encoded (`payload=` JSON, `"type": "message_action"`,
with the message's `ts`, `channel`, `user`, `response_url`, `trigger_id`), signed like every request;
the answers are read off the fake's response URL.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any
from urllib.parse import urlencode

from bots.slack_manifest import manifest
from commands import registry
from kazma_core.catalogue import sentence
from kazma_ui.thread_rewind import RewindService
from tests.test_slack_bot import ANN, BOB, DM, TEAM, Slack, buttons_of, slack, text_of  # noqa: F401  (slack: the fixture)

UNKNOWN = "Kazma has no record of that message in this chat"


async def said(slack: Slack, user: str, text: str) -> tuple[str, str]:
    """A person's DM (its ts) and the ts of the bot's answer to it."""
    before = len(slack.fake.called("chat.postMessage"))
    ts = f"{time.time():.6f}"
    await slack.event({"type": "message", "channel_type": "im", "channel": DM, "user": user, "text": text, "ts": ts})
    await slack.fake.wait_for(lambda: len(slack.fake.called("chat.postMessage")) > before)
    return ts, str(slack.fake.called("chat.postMessage")[-1].answer["ts"])


async def shortcut(slack: Slack, user: str, callback_id: str, message_ts: str, by_bot: bool) -> str:
    """The person picks a message shortcut on a message; the response URL its answers go to."""
    url = slack.fake.response_url()
    message: dict[str, Any] = {"type": "message", "ts": message_ts, "text": "…"}
    message.update({"bot_id": "B0KAZMABOT"} if by_bot else {"user": user})
    payload = {
        "type": "message_action", "callback_id": callback_id, "trigger_id": uuid.uuid4().hex, "response_url": url,
        "team": {"id": TEAM, "domain": "kazma"}, "channel": {"id": DM, "name": "directmessage"},
        "user": {"id": user, "username": slack.fake.users[user].name, "team_id": TEAM},
        "message_ts": message_ts, "message": message, "action_ts": str(time.time()), "token": "unused",
    }
    response = await slack.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200, response.text
    return url


def test_the_manifest_declares_the_message_shortcuts_the_app_listens_for() -> None:
    shortcuts = manifest("https://kazma.example.org")["features"]["shortcuts"]
    assert [(s["name"], s["type"], s["callback_id"]) for s in shortcuts] == [
        ("Fork from here", "message", "fork_from_here"), ("Rewind to here", "message", "rewind_to_here")]
    assert [s["callback_id"] for s in shortcuts] == [a.key for a in registry.MESSAGE_ACTIONS]
    assert all(len(s["name"]) <= 24 and len(s["description"]) <= 80 for s in shortcuts)  # Slack's limits


async def test_rewind_to_here_on_an_answer_asks_then_restores_to_the_end_of_its_turn(slack: Slack) -> None:
    _, first = await said(slack, ANN, "hello")
    _, second = await said(slack, ANN, "remember: tea is good")
    said_then = slack.fake.messages[(DM, second)]["text"]
    url = await shortcut(slack, ANN, "rewind_to_here", first, by_bot=True)
    (asked,) = await slack.answers(url)
    assert asked["response_type"] == "ephemeral" and text_of(asked).startswith("Restore this chat to turn 1, step ")
    core = slack.server.core
    chat = await core.store.places.bound_chat(f"slack:{DM}")
    assert chat is not None and len(await core.store.transcript.transcript(chat.id)) == 4  # asked, not done
    # The private question goes, and the answer is posted for the channel.
    gone, done = await slack.answers(await slack.press(ANN, buttons_of(asked)["Yes, do it"]), 2)
    assert gone == {"delete_original": True} and done["response_type"] == "in_channel"
    assert text_of(done).startswith("Restored this chat to turn 1, step ")
    assert [r.text for r in await core.store.transcript.transcript(chat.id)] == ["hello", 'You said: "hello". I know no facts yet.']
    # The answer it took back says so, and /replay undo puts its text back.
    [update] = await slack.fake.wait_for(lambda: slack.fake.updates or None)
    assert (update["ts"], update["text"]) == (second, REWOUND)
    await slack.command(ANN, "undo")
    back = await slack.fake.wait_for(lambda: slack.fake.updates[1:] or None)
    assert [(u["ts"], u["text"]) for u in back] == [(second, said_then)]


async def test_fork_from_here_on_a_persons_message_asks_to_fork_from_just_before_it(slack: Slack) -> None:
    await said(slack, ANN, "hello")
    second, _ = await said(slack, ANN, "calc 2+3")
    (asked,) = await slack.answers(await shortcut(slack, ANN, "fork_from_here", second, by_bot=False))
    assert text_of(asked).startswith("Fork turn 1, step ") and set(buttons_of(asked)) == {"Yes, do it", "Cancel"}


async def test_on_the_first_message_fork_makes_an_empty_chat_of_its_lineage_and_rewind_says_why_not(slack: Slack) -> None:
    hello, _ = await said(slack, ANN, "hello")
    await said(slack, ANN, "calc 2+3")
    core = slack.server.core
    chat = await core.store.places.bound_chat(f"slack:{DM}")
    assert chat is not None
    (refused,) = await slack.answers(await shortcut(slack, ANN, "rewind_to_here", hello, by_bot=False))
    assert text_of(refused) == sentence("errors.nothing_before_first", "en") and buttons_of(refused) == {}
    (asked,) = await slack.answers(await shortcut(slack, ANN, "fork_from_here", hello, by_bot=False))
    assert text_of(asked) == sentence("commands.confirm_fork_start", "en")
    _, forked = await slack.answers(await slack.press(ANN, buttons_of(asked)["Yes, do it"]), 2)
    assert text_of(forked).startswith("Forked from before the first message into a new chat, ")
    [thread] = [c for c in await core.store.chats.list_chats(chat.owner_id) if c.id != chat.id]
    assert thread.forked_from == {"thread_id": chat.id, "snapshot_id": None, "turn_index": 0, "iteration": None}
    assert await core.store.transcript.transcript(thread.id) == [] and len(await core.store.transcript.transcript(chat.id)) == 4


async def test_a_shortcut_on_a_message_kazma_never_linked_is_refused_with_a_sentence(slack: Slack) -> None:
    await said(slack, ANN, "hello")
    (refused,) = await slack.answers(await shortcut(slack, ANN, "fork_from_here", "1600000000.000001", by_bot=False))
    assert refused["response_type"] == "ephemeral" and text_of(refused).startswith(UNKNOWN)


REWOUND = "⏪ Rewound: a restore took this answer back. /replay undo brings it back."


async def test_a_restore_marks_the_answers_it_took_back_and_an_undo_puts_their_text_back(slack: Slack) -> None:
    await said(slack, ANN, "hello")
    _, second = await said(slack, ANN, "calc 2+3")
    await restored_on_the_web_then_undone(slack, second, text_of(slack.fake.posts()[-1]))


async def restored_on_the_web_then_undone(slack: Slack, ts: str, said_then: str) -> None:
    """Ann's DM restored to the end of its first turn on the web: the bot's message `ts` is marked
    rewound; undone, it says `said_then` again."""
    core = slack.server.core
    chat = await core.store.places.bound_chat(f"slack:{DM}")
    user = await core.store.users.user_for_identity(f"slack:{TEAM}:{ANN}")
    assert chat is not None and user is not None
    end_of_first = [s.id for s in await core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
    rewind = RewindService(core)
    await rewind.restore(user, "web", chat.id, end_of_first)
    [update] = await slack.fake.wait_for(lambda: slack.fake.updates or None)
    assert (update["channel"], update["ts"], update["text"]) == (DM, ts, REWOUND)
    await rewind.undo(user, "web", chat.id)
    back = await slack.fake.wait_for(lambda: slack.fake.updates[1:] or None)
    assert [(u["ts"], u["text"]) for u in back] == [(ts, said_then)]


async def test_an_answer_given_after_an_approval_is_marked_by_a_restore_and_put_back_by_an_undo(slack: Slack) -> None:
    await said(slack, ANN, "hello")
    _, card_ts = await said(slack, ANN, "write notes.txt: ship it")
    card = slack.fake.posts()[-1]
    message = {"type": "message", "ts": card_ts, "text": card["text"], "bot_id": "B0KAZMABOT"}
    (done,) = await slack.answers(await slack.press(ANN, buttons_of(card)["Approve"], DM, ephemeral=False, message=message))
    # The answer takes the card's place, in the bot's own message: chat.update can still edit it.
    assert done["replace_original"] is True and "Wrote 7 bytes to notes.txt" in text_of(done)
    await restored_on_the_web_then_undone(slack, card_ts, slack.fake.messages[(DM, card_ts)]["text"])
