"""Slash commands end to end: text -> parse -> execute on the real core and rewind service."""

from __future__ import annotations

import asyncio
import re
import string
import time
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from commands import registry
from commands.answers import CommandResult
from commands.executor import execute
from commands.i18n import error_text, pick_lang
from commands.parser import (
    BUILDERS,
    Fork,
    Help,
    MemoryOff,
    ReplayClear,
    ReplayCompare,
    ReplayList,
    ReplayRestore,
    ReplayShow,
    Reset,
    Usage,
    parse,
)
from commands.service_target import ServiceTarget
from commands.target import CommandContext
from kazma_core import errors
from kazma_core.catalogue.commands import COMMANDS
from kazma_core.core import Core
from kazma_core.messages import encode_message
from kazma_core.stores.snapshots import NewStep
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import GroupGrant, RewindService

BASE = "http://kazma.test:8765"
ARABIC = re.compile(r"[\u0600-\u06FF]")


def plain(text: str) -> str:
    """Arabic text without the marks that isolate its commands and ids (U+2066 ... U+2069)."""
    return text.replace("\u2066", "").replace("\u2069", "")


@pytest.fixture
def service(core: Core) -> RewindService:
    return RewindService(core)


def context(service: RewindService, user: User, chat_id: str, *, surface: str = "telegram", lang: str = "en",
            confirmed: bool = False, grant: GroupGrant | None = None) -> CommandContext:
    return CommandContext(ServiceTarget(service, user, surface, chat_id, grant), lang, BASE + "/", confirmed)


async def run(service: RewindService, user: User, chat_id: str, text: str, **kw: Any) -> CommandResult:
    parsed = parse(text)
    assert parsed is not None, text
    return await execute(parsed, context(service, user, chat_id, **kw))


async def talk(core: Core, chat: Chat, *texts: str) -> None:
    for text in texts:
        await core.turns.send(chat.id, text)


async def step_ids(core: Core, chat_id: str, turn: int) -> list[str]:
    return [s.id for s in await core.snapshots.list_steps(chat_id) if s.turn_index == turn]


async def rows(core: Core, chat_id: str) -> list[tuple[int, str, str]]:
    return [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]


async def facts(core: Core, chat_id: str) -> list[str]:
    return [f.text for f in await core.store.memories.facts(chat_id)]


# --- each command, end to end ---------------------------------------------------------------

async def test_replay_list_shows_each_turns_questions_and_steps_with_short_ids(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello", "steps 2")
    turn2 = await step_ids(core, chat.id, 2)
    english = await run(service, user, chat.id, "/replay list")
    assert (english.kind, english.code, english.ephemeral) == ("answer", None, True)
    assert "Turn 1: hello" in english.text and "Turn 2: steps 2" in english.text
    assert f"turn 2, step 1 · {turn2[1][:8]}" in english.text
    assert [s["snapshot_id"] for s in english.data["turns"][1]["steps"]] == turn2
    arabic = await run(service, user, chat.id, "/REPLAY   list", lang="ar")
    assert f"الدورة 2، الخطوة 1 · {turn2[1][:8]}" in plain(arabic.text) and "turn 2" not in arabic.text


async def test_replay_list_of_a_chat_without_steps_says_none_are_saved_yet(chat: Chat, user: User, service: RewindService) -> None:
    assert (await run(service, user, chat.id, "/replay list")).text == "No steps saved in this chat yet."
    assert (await run(service, user, chat.id, "/replay", lang="ar")).text == "لا خطوات محفوظة في هذه الدردشة بعد."


async def test_restore_asks_first_then_takes_back_later_turns_facts_and_rows(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello", "remember: tea is good", "remember: coffee is better")
    target = (await step_ids(core, chat.id, 2))[-1]
    asked = await run(service, user, chat.id, f"/replay {target[:8]}")
    assert (asked.kind, asked.ephemeral) == ("confirm", True)
    assert asked.text.startswith(f"Restore this chat to turn 2, step 1 ({target[:8]})?")
    assert asked.data["preview"]["later_turns"] == 1 and asked.data["confirm"] == f"/replay {target}"
    assert await facts(core, chat.id) == ["tea is good", "coffee is better"]  # asking changed nothing

    done = await run(service, user, chat.id, asked.data["confirm"], confirmed=True)
    assert (done.kind, done.ephemeral) == ("answer", False)
    assert done.text.startswith("Restored this chat to turn 2, step 1. Later steps removed: 2.")
    assert await facts(core, chat.id) == ["tea is good"]
    assert await rows(core, chat.id) == [
        (1, "user", "hello"), (1, "assistant", 'You said: "hello". I know no facts yet.'),
        (2, "user", "remember: tea is good"), (2, "assistant", "Remembered: tea is good"),
    ]
    assert (await core.turns.send(chat.id, "and now?")).reply == 'You said: "and now?". I know: tea is good.'


async def test_restore_in_arabic_names_the_step_and_what_it_will_not_undo(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello")
    waiting = await core.turns.send(chat.id, "write a.txt: hi")
    await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "approve", user.id)
    target = (await step_ids(core, chat.id, 1))[-1]
    english = await run(service, user, chat.id, f"/replay {target}")
    assert "Restoring rewinds the conversation, not the world. These stay done:" in english.text
    assert "• file written (write_file): path: a.txt, text: hi" in english.text
    arabic = await run(service, user, chat.id, f"/replay {target}", lang="ar")
    assert "الاستعادة تُرجع المحادثة، لا العالم" in arabic.text and "الدورة 1، الخطوة 0" in arabic.text
    done = await run(service, user, chat.id, f"/replay {target}", lang="ar", confirmed=True)
    assert done.text.startswith("استُعيدت هذه الدردشة إلى الدورة 1، الخطوة 0.")
    assert (core.settings.files_of(user.id) / "a.txt").read_text() == "hi"  # the world is not rewound


async def test_replay_show_gives_the_steps_messages_plan_routing_and_cost(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "remember: tea is good")
    first = (await step_ids(core, chat.id, 1))[0]
    shown = await run(service, user, chat.id, f"/replay show {first[:10]}")
    assert shown.ephemeral and shown.text.splitlines()[0] == f"turn 1, step 0 · {first[:8]} · model kazma-offline"
    assert "You: remember: tea is good" in shown.text and "Kazma: → remember (fact: tea is good)" in shown.text
    assert "Plan: remember" in shown.text and "Routing: next: tools, tools: remember" in shown.text
    assert re.search(r"Cost: input_tokens \d+, output_tokens \d+, model_calls 1", shown.text)
    arabic = await run(service, user, chat.id, f"/replay show {first[:10]}", lang="ar")
    assert "أنت: \u2068remember: tea is good\u2069" in arabic.text and "الخطة: remember" in arabic.text


async def test_compare_answers_with_the_services_text_and_says_it_in_arabic(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello", "calc 1+1")
    a, b = (await step_ids(core, chat.id, 1))[0], (await step_ids(core, chat.id, 2))[-1]
    expected = (await service.compare(user, "test", chat.id, a, b)).text
    english = await run(service, user, chat.id, f"/replay compare {a[:8]} {b[:8]}")
    assert english.text == expected and english.ephemeral
    assert english.text.startswith("turn 1, step 0 → turn 2, step 1\nMessages: 4 added, 0 removed, 0 changed.")
    arabic = await run(service, user, chat.id, f"/replay compare {a[:8]} {b[:8]}", lang="ar")
    assert arabic.text.startswith("الدورة 1، الخطوة 0 ← الدورة 2، الخطوة 1\nالرسائل: 4 مضافة، 0 محذوفة، 0 متغيّرة.")


async def test_clear_asks_then_deletes_every_step_and_keeps_the_conversation(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello", "steps 2")
    count = len(await core.snapshots.list_steps(chat.id))
    asked = await run(service, user, chat.id, "/replay clear", lang="ar")
    assert asked.kind == "confirm" and f"({count})" in asked.text and ARABIC.search(asked.text)
    assert len(await core.snapshots.list_steps(chat.id)) == count
    done = await run(service, user, chat.id, asked.data["confirm"], confirmed=True)
    assert done.text == f"Deleted this chat’s saved steps: {count}."
    assert await core.snapshots.list_steps(chat.id) == [] and len(await rows(core, chat.id)) == 4


async def test_fork_gives_a_chat_owned_by_the_user_and_a_link_to_it(core: Core, chat: Chat, user: User, service: RewindService) -> None:
    await talk(core, chat, "remember: tea is good", "remember: coffee is better")
    target = (await step_ids(core, chat.id, 1))[-1]
    asked = await run(service, user, chat.id, f"/fork {target[:8]}")
    assert asked.kind == "confirm" and asked.data["confirm"] == f"/fork {target}"
    assert [c.id for c in await core.chats.list(user)] == [chat.id]
    done = await run(service, user, chat.id, asked.data["confirm"], confirmed=True)
    new_id = done.data["thread_id"]
    assert done.data["link"] == f"{BASE}/?thread={new_id}" and done.data["link"] in done.text
    assert done.text.startswith("Forked turn 1, step 1 into a new chat, “tests (fork)”.")
    fork = await core.chats.owned(user, new_id)
    assert fork.forked_from is not None and fork.forked_from["snapshot_id"] == target
    assert await facts(core, new_id) == ["tea is good"]
    assert await facts(core, chat.id) == ["tea is good", "coffee is better"]  # the original is not touched
    arabic = await run(service, user, chat.id, f"/fork {target}", lang="ar", confirmed=True)
    assert arabic.text.startswith("فُرّعت الدورة 1، الخطوة 1 إلى دردشة جديدة")


async def test_web_chat_replay_and_fork_answer_without_the_model_with_a_link_to_the_page(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    page = f"{BASE}/replay?thread={chat.id}"
    empty = await run(service, user, chat.id, "/replay", surface="web")
    assert empty.text == f"No steps saved in this chat yet. The Time Travel page: {page}"
    await talk(core, chat, "hello", "steps 2")
    count = len(await core.snapshots.list_steps(chat.id))
    target = (await step_ids(core, chat.id, 1))[0]
    for text in ("/replay", "/replay list", "/fork", f"/fork {target[:8]}", f"/replay {target[:8]}"):
        answer = await run(service, user, chat.id, text, surface="web")
        assert answer.kind == "answer" and answer.data == {"thread_id": chat.id, "steps": count, "link": page}, text
        assert answer.text.startswith(f"Saved steps in this chat: {count}.") and page in answer.text
    assert len(await core.snapshots.list_steps(chat.id)) == count and len(await rows(core, chat.id)) == 4
    cleared = await run(service, user, chat.id, "/replay clear", surface="web", confirmed=True)
    assert cleared.data["deleted"] == count and await core.snapshots.list_steps(chat.id) == []


async def test_reset_starts_the_conversation_afresh_and_keeps_the_steps(core: Core, chat: Chat, user: User, service: RewindService) -> None:
    await talk(core, chat, "hello", "calc 2*3")
    steps = await core.snapshots.list_steps(chat.id)
    done = await run(service, user, chat.id, "/reset")
    assert (done.kind, done.ephemeral) == ("answer", False) and "steps are kept" in done.text
    assert await core.snapshots.list_steps(chat.id) == steps
    assert (await rows(core, chat.id))[-1] == (3, "system", "Conversation reset")
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert state.values["messages"] == [] and state.next == ()
    await talk(core, chat, "again")
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert [m.type for m in state.values["messages"]] == ["human", "ai"]
    assert (await run(service, user, chat.id, "/reset", lang="ar")).text.startswith("أُعيد ضبط المحادثة")


async def test_restoring_to_before_a_reset_takes_the_reset_back(core: Core, chat: Chat, user: User, service: RewindService) -> None:
    await talk(core, chat, "hello")
    await run(service, user, chat.id, "/reset")
    await talk(core, chat, "again")
    before = (await step_ids(core, chat.id, 1))[-1]
    await run(service, user, chat.id, f"/replay {before}", confirmed=True)
    assert [r[1] for r in await rows(core, chat.id)] == ["user", "assistant"]
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert [m.type for m in state.values["messages"]] == ["human", "ai"]


async def test_memory_off_forgets_facts_and_steps_and_the_agent_stops_remembering(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "remember: tea is good")
    asked = await run(service, user, chat.id, "/Memory off")
    assert asked.kind == "confirm" and asked.data["confirm"] == "/memory off"
    assert "cannot be undone" in asked.text and await facts(core, chat.id) == ["tea is good"]  # nothing yet
    done = await run(service, user, chat.id, "/Memory off", lang="ar", confirmed=True)
    assert done.kind == "answer" and done.text.startswith("الذاكرة متوقفة في هذه الدردشة")
    assert await facts(core, chat.id) == [] and await core.snapshots.list_steps(chat.id) == []
    assert not await core.store.memories.memory_on(chat.id)
    reply = (await core.turns.send(chat.id, "remember: coffee")).reply
    assert reply == "Memory is off in this chat, so I did not remember that."
    assert await facts(core, chat.id) == []


async def test_help_lists_the_commands_of_the_surface_in_the_persons_language(chat: Chat, user: User, service: RewindService) -> None:
    telegram = await run(service, user, chat.id, "/help")
    assert telegram.text == registry.help_text("en", "telegram") and "/replay compare <a> <b>" in telegram.text
    web = await run(service, user, chat.id, "/start", surface="web", lang="ar")
    assert web.text == registry.help_text("ar", "web") and "/replay compare" not in web.text
    assert "/replay clear — حذف الخطوات المحفوظة لهذه الدردشة" in web.text


# --- refusals ------------------------------------------------------------------------------

async def test_restore_and_reset_are_refused_while_an_approval_waits_naming_the_card(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello")
    card = (await core.turns.send(chat.id, "write a.txt: hi")).gates[0]["card_id"]
    target = (await step_ids(core, chat.id, 1))[-1]
    before = await rows(core, chat.id)
    for text, lang in ((f"/replay {target[:8]}", "en"), ("/reset", "en"), (f"/replay {target[:8]}", "ar")):
        refused = await run(service, user, chat.id, text, confirmed=True, lang=lang)
        assert (refused.kind, refused.code, refused.ephemeral) == ("error", "approval_pending", True)
        assert [g["card_id"] for g in refused.data["gates"]] == [card]
    assert plain(refused.text) == "موافقة تنتظر في هذه الدردشة. وافق عليها أو ارفضها (أو دعها تنتهي صلاحيتها)، ثم حاول مجددًا."
    assert await rows(core, chat.id) == before and (await core.store.cards.cards(chat.id))[0].status == "pending"


async def test_changes_are_refused_while_a_turn_runs(core: Core, chat: Chat, user: User, service: RewindService) -> None:
    await talk(core, chat, "remember: tea is good")
    target = (await step_ids(core, chat.id, 1))[-1]
    slow = asyncio.create_task(core.turns.send(chat.id, "sleep 1"))
    while await core.store.leases.lease(chat.id) is None:
        await asyncio.sleep(0.01)
    for text in (f"/replay {target}", "/reset", "/memory off"):
        refused = await run(service, user, chat.id, text, confirmed=True)
        assert (refused.kind, refused.code) == ("error", "turn_running"), text
        assert refused.text == "A turn is running in this chat. Wait for its answer (or stop it), then try again."
    arabic = await run(service, user, chat.id, "/reset", lang="ar")
    assert arabic.text.startswith("دورة تجري الآن في هذه الدردشة")
    assert (await slow).reply == "Slept 1 seconds."
    assert await facts(core, chat.id) == ["tea is good"] and await core.store.memories.memory_on(chat.id)
    assert [r[2] for r in await rows(core, chat.id)][-1] == "Slept 1 seconds."


async def put_step(core: Core, chat_id: str, step_id: str, turn: int) -> None:
    msgs = [HumanMessage("hi", id=f"h{turn}"), AIMessage("hello", id=f"a{turn}")]
    await core.snapshots.put(
        NewStep(step_id, chat_id, turn, 0, time.time(), "m", ["hi"], {"turn_index": turn, "iteration": 0},
                [m.id for m in msgs], lambda i: encode_message(msgs[i])),
        core.recorder.budgets,
    )


async def test_step_addresses_must_be_unique_hex_prefixes_and_wildcards_never_match(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await put_step(core, chat.id, "abcdef01" + "0" * 24, 1)
    await put_step(core, chat.id, "abcdef01" + "f" * 24, 2)
    for text in ("/replay abcdef01", "/replay show ABCDEF01", "/fork abcdef01"):
        ambiguous = await run(service, user, chat.id, text, confirmed=True)
        assert ambiguous.code == "ambiguous_step" and len(ambiguous.data["candidates"]) == 2, text
    arabic = await run(service, user, chat.id, "/replay show abcdef01", lang="ar")
    assert "يطابق 2 خطوات: الدورة 1، الخطوة 0 (abcdef01" in plain(arabic.text)
    for bad in ("%%%%%%%%", "________", "abc", "abcdef0%", "abcdef0_", "zzzzzzzz", "'OR'1'='1"):
        for text in (f"/replay {bad}", f"/replay show {bad}", f"/fork {bad}", f"/replay compare {bad} abcdef010"):
            for confirmed in (False, True):
                refused = await run(service, user, chat.id, text, confirmed=confirmed)
                assert refused.code in ("invalid_step", "not_found"), (text, refused)
    assert (await run(service, user, chat.id, "/replay 12345678")).code == "not_found"
    assert len(await core.snapshots.list_steps(chat.id)) == 2 and [c.id for c in await core.chats.list(user)] == [chat.id]


async def test_a_long_step_list_fits_one_message_keeping_the_newest_turns(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    ids = [uuid.uuid4().hex for _ in range(50)]
    for turn, step_id in enumerate(ids, start=1):
        await put_step(core, chat.id, step_id, turn)
    for lang in ("en", "ar"):
        listed = await run(service, user, chat.id, "/replay list", lang=lang)
        assert len(listed.text) <= 1900 and ids[-1][:8] in listed.text and ids[0][:8] not in listed.text
        assert listed.text.splitlines()[-1].endswith(f"{BASE}/replay?thread={chat.id}")
        assert len(listed.data["turns"]) == 50  # the data keeps every turn for richer surfaces
    assert "Older turns not shown here: " in (await run(service, user, chat.id, "/replay list")).text


async def test_another_users_chat_is_not_found_for_every_command_and_unchanged(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "remember: tea is good", "hello")
    target = (await step_ids(core, chat.id, 1))[-1]
    stranger = await core.store.users.add_user("eve")
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    before = (await rows(core, chat.id), await core.snapshots.list_steps(chat.id), await facts(core, chat.id), state.values)
    texts = ["/replay", "/replay list", f"/replay {target}", f"/replay show {target}", f"/replay compare {target} {target}",
             "/replay clear", f"/fork {target}", "/reset", "/memory off"]
    for surface in ("telegram", "web"):
        for text in texts:
            for confirmed in (False, True):
                refused = await run(service, stranger, chat.id, text, surface=surface, confirmed=confirmed)
                assert (refused.kind, refused.code) == ("error", "not_found"), (surface, text)
    arabic = await run(service, stranger, chat.id, "/reset", lang="ar")
    assert arabic.text == "لا توجد دردشة كهذه بين دردشاتك. تحقّق من معرّف الدردشة، أو اعرض دردشاتك."
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert (await rows(core, chat.id), await core.snapshots.list_steps(chat.id), await facts(core, chat.id), state.values) == before
    assert await core.store.memories.memory_on(chat.id) and await core.chats.list(stranger) == []


async def test_in_a_group_members_read_and_fork_and_only_admins_restore_or_clear(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "hello", "calc 1+1")
    target = (await step_ids(core, chat.id, 1))[-1]
    member, admin = await core.store.users.add_user("bob"), await core.store.users.add_user("cy")
    as_member, as_admin = GroupGrant(chat.id, "member"), GroupGrant(chat.id, "admin")
    assert (await run(service, member, chat.id, "/replay list", grant=as_member)).kind == "answer"
    assert (await run(service, member, chat.id, f"/replay show {target}", grant=as_member)).kind == "answer"
    for text in (f"/replay {target}", "/replay clear"):
        refused = await run(service, member, chat.id, text, confirmed=True, grant=as_member)
        assert (refused.kind, refused.code) == ("error", "forbidden"), text
    arabic = await run(service, member, chat.id, f"/replay {target}", confirmed=True, grant=as_member, lang="ar")
    assert arabic.text.startswith("لا يستطيع استعادة هذه الدردشة")
    forked = await run(service, member, chat.id, f"/fork {target}", confirmed=True, grant=as_member)
    assert (await core.chats.owned(member, forked.data["thread_id"])).forked_from["thread_id"] == chat.id
    restored = await run(service, admin, chat.id, f"/replay {target}", confirmed=True, grant=as_admin)
    assert restored.text.startswith("Restored this chat to turn 1, step 0.")
    assert len(await rows(core, chat.id)) == 2


async def test_bad_commands_answer_with_the_usage_to_show(chat: Chat, user: User, service: RewindService) -> None:
    cases = {
        "/replay compare abcdef01": ("replay compare", "Missing <b>. Use: /replay compare <a> <b>."),
        "/replay show": ("replay show", "Missing <step>. Use: /replay show <step>."),
        "/fork": ("fork", "Missing <step>. Use: /fork <step> [here]."),
        "/fork abcdef01 there": ("fork", "“there” is not a word this command takes. Use: /fork <step> [here]."),
        "/memory on": ("memory", "/memory on is not a command. Use: /memory off."),
        "/reset now": ("reset", "Too many words for this command. Use: /reset."),
        "/nope": (None, "/nope is not a command here. Send /help to see the commands."),
    }
    for text, (command, sentence) in cases.items():
        usage = parse(text)
        assert isinstance(usage, Usage) and usage.code == "bad_command" and usage.command == command, text
        answer = await execute(usage, context(service, user, chat.id))
        assert (answer.kind, answer.code, answer.text, answer.ephemeral) == ("error", "bad_command", sentence, True)
    arabic = await run(service, user, chat.id, "/memory on", lang="ar")
    # Each command is isolated, so it reads "/memory off" inside the Arabic sentence, not "memory off/".
    assert arabic.text == "\u2066/memory\u2069 on ليس أمرًا. استخدم: \u2066/memory off\u2069."


# --- the grammar ---------------------------------------------------------------------------

def test_parse_reads_each_command_with_bot_addresses_extra_whitespace_and_any_case() -> None:
    assert parse("/replay list") == ReplayList() == parse("/replay") == parse("  /Replay@KazmaBot \t LIST \n")
    assert parse("/replay 3f9a1c2e") == ReplayRestore("3f9a1c2e") == parse("/replay restore 3f9a1c2e")
    assert parse("/REPLAY@kazma_bot show  3F9A1C2E") == ReplayShow("3F9A1C2E")
    assert parse("/replay compare a1b2c3d4\u00a0e5f6a7b8") == ReplayCompare("a1b2c3d4", "e5f6a7b8")
    assert parse("/replay clear") == ReplayClear()
    assert parse("/fork@KazmaBot 3f9a1c2e") == Fork("3f9a1c2e")
    assert parse("/fork 3f9a1c2e Here") == Fork("3f9a1c2e", "here") and Fork("3f9a1c2e", "here").text() == "/fork 3f9a1c2e here"
    assert (parse("/reset"), parse("/memory OFF"), parse("/help"), parse("/start")) == (Reset(), MemoryOff(), Help(), Help())


def test_plain_messages_and_commands_for_another_bot_are_not_commands() -> None:
    for text in ("hello", "", "   ", "/", "/ replay", "//replay", "/etc/passwd is a file", "/replay.", "see /replay",
                 "/replay@", "/ｒｅｐｌａｙ list", "x" * 10_000):
        assert parse(text) is None, text
    assert parse("/replay@OtherBot list", bot_name="KazmaBot") is None
    assert parse("/replay@kazmabot list", bot_name="@KazmaBot") == ReplayList()


def test_every_command_round_trips_through_the_text_it_confirms_with() -> None:
    for cmd in (ReplayList(), ReplayRestore("3f9a1c2e"), ReplayShow("ab"), ReplayCompare("a", "b"), ReplayClear(),
                Fork("3f9a1c2e" * 4), Reset(), MemoryOff(), Help()):
        assert parse(cmd.text()) == cmd


def test_an_overlong_step_is_a_usage_result_not_a_lookup() -> None:
    usage = parse("/replay " + "a" * 65)
    assert isinstance(usage, Usage) and usage.reason == "too_long" and len(usage.word) <= 40


COMMAND_TEXT = st.text(alphabet=st.sampled_from(string.hexdigits + string.ascii_letters + " \t\n\u00a0@%_/'\"é中"), max_size=80)


def check_parsed(result: object) -> None:
    assert result is None or isinstance(result, (Usage, *BUILDERS.values()))
    if isinstance(result, Usage):
        err = result.error("telegram")
        assert err.code == "bad_command" and error_text(err, "en") and error_text(err, "ar")
    elif result is not None:
        assert parse(result.text()) == result  # type: ignore[union-attr]


@hyp_settings(max_examples=400, deadline=None)
@given(st.text())
def test_parse_never_raises_on_any_text(text: str) -> None:
    check_parsed(parse(text))


@hyp_settings(max_examples=400, deadline=None)
@given(st.sampled_from(["/replay", "/fork", "/replay@KazmaBot", "/REPLAY compare", "/replay show", "/memory", "/help"]), COMMAND_TEXT)
def test_parse_never_raises_on_texts_that_start_like_commands(prefix: str, rest: str) -> None:
    check_parsed(parse(prefix + rest))
    check_parsed(parse(prefix + " " + rest))


# --- the registry ------------------------------------------------------------------------

def test_registry_names_are_unique_and_every_entry_has_a_typed_command_and_a_handler() -> None:
    words = [w for c in registry.COMMANDS for w in (c.name, *c.aliases)]
    assert len(words) == len(set(words))
    for c in registry.COMMANDS:
        assert len({s.name for s in c.subcommands}) == len(c.subcommands)
        assert sum(s.implicit for s in c.subcommands) <= 1
        assert c.run is None if c.subcommands else c.run is not None, c.name
    assert set(BUILDERS) == {leaf.path for leaf in registry.leaves()}
    assert all(leaf.cmd.run is not None for leaf in registry.leaves())
    # A change a person could regret is asked about first, on every surface.
    assert {leaf.path for leaf in registry.leaves() if leaf.cmd.ask} == {"replay restore", "replay clear", "fork", "memory off"}


def test_telegram_menu_follows_telegrams_rules_in_both_languages() -> None:
    for lang in ("en", "ar"):
        menu = registry.telegram_menu(lang)
        assert [name for name, _ in menu] == ["replay", "fork", "stop", "reset", "memory", "help"]
        for name, description in menu:
            assert re.fullmatch(r"[a-z0-9_]{1,32}", name) and 1 <= len(description) <= 256


def test_slash_definitions_fit_discord_limits_and_name_every_argument() -> None:
    definitions = registry.slash_definitions("discord")
    assert registry.slash_definitions("slack") == definitions
    for cmd in definitions:
        assert not (cmd["options"] and cmd["subcommands"])  # Discord cannot mix the two
        for item in (cmd, *cmd["subcommands"], *cmd["options"], *(o for s in cmd["subcommands"] for o in s["options"])):
            assert re.fullmatch(r"[a-z0-9_-]{1,32}", item["name"])
            assert 1 <= len(item["description"]) <= 100 and 1 <= len(item["description_ar"]) <= 100
    replay = next(c for c in definitions if c["name"] == "replay")
    compare = next(s for s in replay["subcommands"] if s["name"] == "compare")
    assert [o["name"] for o in compare["options"]] == ["a", "b"] and compare["usage"] == "/replay compare <a> <b>"


def test_every_command_and_argument_is_described_in_english_and_arabic() -> None:
    for leaf in registry.leaves():
        texts = [leaf.cmd.description, *(a.description for a in leaf.cmd.args), *([leaf.cmd.web] if leaf.cmd.web else [])]
        for text in texts:
            assert text.en.strip() and ARABIC.search(text.ar), leaf.path
        assert leaf.cmd.surfaces <= set(registry.SURFACES) and leaf.cmd.surfaces, leaf.path


@pytest.mark.parametrize("surface", registry.SURFACES)
def test_help_lists_each_command_offered_on_a_surface_and_no_other(surface: str) -> None:
    for lang in ("en", "ar"):
        lines = registry.help_text(lang, surface).split("\n\n")[0].splitlines()[1:]  # then, in a chat app, acting on a message
        offered = [leaf for leaf in registry.leaves() if surface in leaf.cmd.surfaces]
        assert [line.split(" — ")[0] for line in lines] == [leaf.typed(surface=surface) for leaf in offered]
        assert all(leaf.description(lang, surface) in line for leaf, line in zip(offered, lines, strict=True))


# --- language ------------------------------------------------------------------------------

def test_pick_lang_reads_locales_and_accept_language_headers() -> None:
    picked = [pick_lang(v) for v in ("ar-EG", "ar", "AR_sa", "en-US", None, "", "fr-FR", "*")]
    assert picked == ["ar", "ar", "ar", "en", "en", "en", "en", "en"]
    assert pick_lang("fr-FR,ar;q=0.8,en;q=0.5") == "ar"
    assert pick_lang("ar;q=0.2, en-GB;q=0.9") == "en"
    assert pick_lang("ar;q=abc, en;q=0.1") == "en"
    assert pick_lang("ar;q=1.2.3,,;;=") == "en"


def test_an_error_without_a_sentence_of_its_own_is_said_with_its_code_in_arabic() -> None:
    """A server's refusal that names no sentence (an older server, a proxy) is still said in both languages."""
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.KazmaError):
            err = cls("An English sentence.")
            assert error_text(err, "en") == "An English sentence."
            assert ARABIC.search(error_text(err, "ar")) and "An English sentence." in error_text(err, "ar"), cls.code


def test_english_and_arabic_sentences_take_the_same_placeholders() -> None:
    names = lambda s: sorted(f for _, f, _, _ in string.Formatter().parse(s) if f)  # noqa: E731
    for key, text in COMMANDS.items():
        assert names(text.en) == names(text.ar), key
        assert ARABIC.search(text.ar), key


def test_slash_definitions_fit_discord_and_slack_description_limits() -> None:
    """Discord refuses a command or option description over 100 characters, and the bot would not start."""
    for surface in ("discord", "slack"):
        checked = False
        for definition in registry.slash_definitions(surface):
            found = [definition, *definition["options"], *definition["subcommands"]]
            for sub in definition["subcommands"]:
                found += sub["options"]
            for item in found:
                assert 1 <= len(item.get("description", "x")) <= 100, (surface, item)
            checked = True
        assert checked


async def test_the_step_list_explains_long_turn_gaps_and_cut_steps_in_both_languages(
    core: Core, chat: Chat, user: User, service: RewindService
) -> None:
    await talk(core, chat, "steps 25", "big 3000")
    english = await run(service, user, chat.id, "/replay list")
    assert "  … steps 20–24 not kept (a long turn keeps every step up to the 20th, then every 10th, and the last)" in english.text
    assert "Saved cut: it added more than the step size limit" in english.text
    arabic = await run(service, user, chat.id, "/replay list", lang="ar")
    assert "لم تُحفظ (تحفظ الدورة الطويلة كل خطوة حتى العشرين" in arabic.text and "محفوظة مقصوصة: أضافت أكثر من حدّ حجم الخطوة" in arabic.text
