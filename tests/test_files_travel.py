"""Files travel too (issue 24): a restore can put back what the chat's tools wrote, over real HTTP,
on both store engines.

The scenario of the issue: `write notes.txt: v1`, `write notes.txt: v2`, `write draft.txt: x`
(each approved), then a restore to the end of the first turn, taking the conversation, the
files, or both; a hand edit refused then forced; the undo; another user's folder untouched;
a fork taking the step's files.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, user_file
from tests.helpers import error_of, new_chat, say, transcript

pytestmark = pytest.mark.engines()


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def write(http: httpx.AsyncClient, chat: str, path: str, text: str) -> None:
    """One approved write of the agent's tool (a turn of its own)."""
    card = (await say(http, chat, f"write {path}: {text}"))["gates"][0]["card_id"]
    ok(await http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"}))


async def end_of_turn(http: httpx.AsyncClient, chat: str, turn: int) -> str:
    steps = ok(await http.get(f"/api/replay/snapshots/{chat}"))["snapshots"]
    return [s["snapshot_id"] for s in steps if s["turn_index"] == turn][-1]


async def three_writes(ann: Person) -> tuple[str, str]:
    chat = await new_chat(ann.http, "notes")
    await write(ann.http, chat, "notes.txt", "v1")
    await write(ann.http, chat, "notes.txt", "v2")
    await write(ann.http, chat, "draft.txt", "x")
    return chat, await end_of_turn(ann.http, chat, 1)


def restore(chat: str, step: str, **more: Any) -> dict[str, Any]:
    return {"thread_id": chat, "snapshot_id": step, **more}


async def test_a_restore_with_both_gives_back_the_chat_and_its_files_and_the_undo_puts_them_back(
    ann: Person, settings: Settings
) -> None:
    chat, first = await three_writes(ann)
    notes, draft = user_file(settings, "ann", "notes.txt"), user_file(settings, "ann", "draft.txt")
    assert (notes.read_text(), draft.read_text()) == ("v2", "x")

    preview = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{first}/preview"))
    listed = {f["path"]: f for f in preview["files"]}
    assert {p: (f["change"], f["changed_since"]) for p, f in listed.items()} == {
        "draft.txt": ("removed", False), "notes.txt": ("restored", False),
    }
    assert "-v2" in listed["notes.txt"]["diff"] and "+v1" in listed["notes.txt"]["diff"]
    assert (notes.read_text(), draft.exists()) == ("v2", True)  # looking changes nothing

    done = ok(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="both")))
    assert done["what"] == "both"
    assert sorted(f["path"] for f in done["files"]) == ["draft.txt", "notes.txt"]
    assert notes.read_text() == "v1" and not draft.exists()
    assert {t[0] for t in await transcript(ann.http, chat)} == {1}  # the first turn only

    undone = ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))
    assert undone["back"]["files"] == 2
    assert (notes.read_text(), draft.read_text()) == ("v2", "x")
    assert {t[0] for t in await transcript(ann.http, chat)} == {1, 2, 3}


async def test_the_default_restore_leaves_the_files_and_files_alone_leaves_the_conversation(
    ann: Person, settings: Settings
) -> None:
    chat, first = await three_writes(ann)
    notes = user_file(settings, "ann", "notes.txt")
    rows = await transcript(ann.http, chat)

    ok(await ann.http.post("/api/replay/restore", json=restore(chat, first)))  # today's restore
    assert notes.read_text() == "v2"
    ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))

    done = ok(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="files")))
    assert done["removed_steps"] == 0
    assert notes.read_text() == "v1" and not user_file(settings, "ann", "draft.txt").exists()
    assert await transcript(ann.http, chat) == rows  # the conversation as it was


async def test_a_hand_edit_is_refused_by_name_then_overwritten_when_forced_and_the_undo_gives_it_back(
    ann: Person, settings: Settings
) -> None:
    chat, first = await three_writes(ann)
    notes = user_file(settings, "ann", "notes.txt")
    notes.write_text("my own words")
    rows = await transcript(ann.http, chat)

    preview = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{first}/preview"))
    assert {f["path"]: f["changed_since"] for f in preview["files"]} == {"notes.txt": True, "draft.txt": False}
    refused = error_of(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="both")), 409, "files_changed")
    assert refused["files"] == ["notes.txt"] and "notes.txt" in refused["message"]
    assert refused["message_id"] == "files_changed"
    assert notes.read_text() == "my own words"  # nothing was touched
    assert user_file(settings, "ann", "draft.txt").exists()
    assert await transcript(ann.http, chat) == rows

    ok(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="files", force=True)))
    assert notes.read_text() == "v1"
    ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))
    assert notes.read_text() == "my own words"  # nothing of theirs is lost


async def test_an_undo_over_a_file_changed_since_the_restore_asks_for_force(ann: Person, settings: Settings) -> None:
    chat, first = await three_writes(ann)
    ok(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="files")))
    notes = user_file(settings, "ann", "notes.txt")
    notes.write_text("edited after the restore")
    refused = error_of(await ann.http.post("/api/replay/undo", json={"thread_id": chat}), 409, "files_changed")
    assert refused["files"] == ["notes.txt"]
    assert notes.read_text() == "edited after the restore"
    ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat, "force": True}))
    assert notes.read_text() == "v2"


async def test_another_users_folder_is_never_touched(ann: Person, bob: Person, settings: Settings) -> None:
    bobs = await new_chat(bob.http)
    await write(bob.http, bobs, "notes.txt", "bob's")
    chat, first = await three_writes(ann)
    ok(await ann.http.post("/api/replay/restore", json=restore(chat, first, what="both")))
    assert user_file(settings, "bob", "notes.txt").read_text() == "bob's"
    # Bob cannot restore Ann's chat, nor see its files.
    error_of(await bob.http.post("/api/replay/restore", json=restore(chat, first, what="files")), 404, "not_found")
    error_of(await bob.http.get(f"/api/replay/snapshots/{chat}/{first}/preview"), 404, "not_found")


async def test_a_fork_with_files_puts_the_steps_files_in_the_forkers_folder(ann: Person, settings: Settings) -> None:
    chat, first = await three_writes(ann)
    notes = user_file(settings, "ann", "notes.txt")
    forked = ok(await ann.http.post("/api/replay/fork", json=restore(chat, first, files=True)), 201)
    assert [f["path"] for f in forked["files"]] == ["notes.txt"]
    assert notes.read_text() == "v1"
    assert user_file(settings, "ann", "draft.txt").exists()  # a fork only brings the step's files

    # The fork's own files restore as its steps know them: before its first write, notes.txt was v2.
    fork = forked["thread_id"]
    await write(ann.http, fork, "notes.txt", "v3")
    assert notes.read_text() == "v3"
    step = await end_of_turn(ann.http, fork, 1)
    ok(await ann.http.post("/api/replay/restore", json=restore(fork, step, what="files")))
    assert notes.read_text() == "v1"

    notes.write_text("by hand")
    error_of(await ann.http.post("/api/replay/fork", json=restore(chat, first, files=True)), 409, "files_changed")
    assert notes.read_text() == "by hand"


async def test_a_file_written_twice_with_the_same_text_is_stored_once_and_deleting_the_chat_frees_it(
    ann: Person, server: Any
) -> None:
    chat = await new_chat(ann.http)
    big = "".join(f"line {i} of a long note\n" for i in range(1000))
    await write(ann.http, chat, "a.txt", big)
    await write(ann.http, chat, "b.txt", big)
    db = server.core.snapshots.db
    marks = await db.run(lambda c: c.execute("SELECT path, now_n FROM file_marks WHERE chat_id = $1 ORDER BY path", (chat,)).fetchall())
    assert [m[0] for m in marks] == ["a.txt", "b.txt"]
    assert marks[0][1] == marks[1][1]  # one body, referred to twice
    owner = await db.run(lambda c: c.execute("SELECT added_by FROM bodies WHERE n = $1 AND chat_id = $2", (marks[0][1], chat)).fetchone())
    assert owner[0] == chat  # counted in the chat's bytes: its budgets, its owner's quota
    assert (await ann.http.delete(f"/api/chats/{chat}")).status_code < 300
    for table in ("file_marks", "bodies", "steps"):
        left = await db.run(lambda c, table=table: c.execute(f"SELECT count(*) FROM {table} WHERE chat_id = $1", (chat,)).fetchone())
        assert left[0] == 0, table
