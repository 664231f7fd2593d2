"""The app store in SQL (SQLite or PostgreSQL): users, chats, transcript, facts, approval cards, turn
leases, settings and alerts."""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from kazma_core.stores.app_rewind import undo_ready
from kazma_core.stores.bodies import unpack
from kazma_core.stores.engine import Conn, Database, Row, octets
from kazma_core.stores.interfaces import CUT_TURNS, RECOVER, Also
from kazma_core.stores.types import Alert, Card, Chat, Fact, Place, TranscriptRow, TurnStart, User

_CUT_TURNS = f"({', '.join('?' * len(CUT_TURNS))})"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def body_text(body: bytes) -> str:
    """The words of a saved message body (its content; the text parts of a list content)."""
    content = orjson.loads(unpack(body)).get("data", {}).get("content", "")
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def transcript_row(chat_id: str, turn_index: int, role: str, text: str) -> Callable[[Conn], None]:
    """A row that is not a message of the conversation (a reset's marker), to commit with a checkpoint."""

    def write(conn: Conn) -> None:
        conn.execute(
            "INSERT INTO transcript (chat_id, turn_index, role, text, created_at) VALUES (?, ?, ?, ?, ?)",
            (chat_id, turn_index, role, text, time.time()),
        )

    return write


def delete_chat_row(chat_id: str) -> Callable[[Conn], None]:
    """The chat's row (its transcript, facts and cards go with it), to delete with its conversation."""

    def write(conn: Conn) -> None:
        conn.execute("DELETE FROM chats WHERE id = ?", (chat_id,))

    return write


def _chat(row: Row) -> Chat:
    forked = None
    if row["forked_from_chat"]:
        forked = {
            "thread_id": row["forked_from_chat"],
            "snapshot_id": row["forked_from_step"],
            "turn_index": row["forked_from_turn"],
            "iteration": row["forked_from_iteration"],
        }
    return Chat(row["id"], row["owner_id"], row["title"], row["created_at"], row["last_turn"], forked)


def _card(row: Row) -> Card:
    return Card(
        row["id"], row["chat_id"], row["turn_index"], row["tool_call_id"], row["tool"],
        orjson.loads(row["args"]), row["status"], row["created_at"], row["expires_at"],
    )


class SqlAppStore:
    """Everything in kazma.db except time-travel steps and the audit trail."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def close(self) -> None:
        await self.db.close()

    async def purge_deleted(self) -> None:
        await self.db.purge_wal()

    def marker_row(self, chat_id: str, turn_index: int, role: str, text: str) -> Also:
        return transcript_row(chat_id, turn_index, role, text)

    def chat_deletion(self, chat_id: str) -> Also:
        return delete_chat_row(chat_id)

    # users and tokens -------------------------------------------------------------
    async def add_user(self, name: str, role: str = "user") -> User:
        user = User(uuid.uuid4().hex, name, role, "")

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO users (id, name, role, lang, created_at) VALUES (?, ?, ?, '', ?)",
                (user.id, name, role, time.time()),
            )

        await self.db.tx(write)
        return user

    async def user_by_name(self, name: str) -> User | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone())
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None

    async def user_by_id(self, user_id: str) -> User | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone())
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None

    async def owner(self) -> User | None:
        row = await self.db.run(
            lambda c: c.execute("SELECT * FROM users WHERE role = 'owner' ORDER BY created_at LIMIT 1").fetchone()
        )
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None

    async def count_users(self) -> int:
        return await self.db.run(lambda c: c.execute("SELECT count(*) FROM users").fetchone()[0])

    async def users(self) -> list[User]:
        rows = await self.db.run(lambda c: c.execute("SELECT * FROM users ORDER BY created_at, name").fetchall())
        return [User(r["id"], r["name"], r["role"], r["lang"]) for r in rows]

    async def count_owners(self) -> int:
        return await self.db.run(lambda c: c.execute("SELECT count(*) FROM users WHERE role = 'owner'").fetchone()[0])

    async def delete_user(self, user_id: str) -> None:
        """A user with their tokens and linked identities; their chats must be deleted first."""
        await self.db.tx(lambda c: c.execute("DELETE FROM users WHERE id = ?", (user_id,)))
        await self.db.purge_wal()

    async def set_user_lang(self, user_id: str, lang: str) -> None:
        await self.db.tx(lambda c: c.execute("UPDATE users SET lang = ? WHERE id = ?", (lang, user_id)))

    async def issue_token(self, user_id: str, kind: str = "api", ttl: float | None = None) -> str:
        token = secrets.token_urlsafe(32)
        expires = time.time() + ttl if ttl else None

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO tokens (hash, user_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                (hash_token(token), user_id, kind, time.time(), expires),
            )

        await self.db.tx(write)
        return token

    async def user_for_token(
        self, token: str, kind: str = "api", consume: bool = False, max_age: float | None = None
    ) -> User | None:
        """The token's user while the token lives: not past its expiry, nor older than max_age seconds."""

        def read(conn: Conn) -> User | None:
            row = conn.execute(
                "SELECT u.* , t.expires_at, t.created_at AS issued_at FROM tokens t JOIN users u ON u.id = t.user_id "
                "WHERE t.hash = ? AND t.kind = ?",
                (hash_token(token), kind),
            ).fetchone()
            now = time.time()
            if row is None or (row["expires_at"] is not None and row["expires_at"] < now):
                return None
            if max_age is not None and row["issued_at"] + max_age < now:
                return None
            if consume:
                conn.execute("DELETE FROM tokens WHERE hash = ?", (hash_token(token),))
            return User(row["id"], row["name"], row["role"], row["lang"])

        return await self.db.tx(read)

    async def revoke_token(self, token: str) -> bool:
        cur = await self.db.tx(lambda c: c.execute("DELETE FROM tokens WHERE hash = ?", (hash_token(token),)))
        return cur.rowcount == 1

    async def revoke_tokens(self, user_id: str) -> int:
        """Every token of a user (API tokens, web sessions, sign-in links): none works after this."""
        cur = await self.db.tx(lambda c: c.execute("DELETE FROM tokens WHERE user_id = ?", (user_id,)))
        return cur.rowcount

    async def link_identity(self, platform_key: str, user_id: str) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO identities (platform_key, user_id) VALUES (?, ?) "
                "ON CONFLICT(platform_key) DO UPDATE SET user_id = excluded.user_id",
                (platform_key, user_id),
            )
        )

    async def user_for_identity(self, platform_key: str) -> User | None:
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT u.* FROM identities i JOIN users u ON u.id = i.user_id WHERE i.platform_key = ?",
                (platform_key,),
            ).fetchone()
        )
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None

    # chat-app bindings: a platform chat (DM, group, channel, thread) -> a Kazma chat ---------
    async def bound_chat(self, platform_chat: str) -> Chat | None:
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT c.* FROM bindings b JOIN chats c ON c.id = b.chat_id WHERE b.platform_chat = ?", (platform_chat,)
            ).fetchone()
        )
        return _chat(row) if row else None

    async def bind_chat(
        self, platform_chat: str, chat_id: str, is_group: bool, place: str = "chat", label: str = ""
    ) -> None:
        """Bind a platform chat to a Kazma chat; `place` is chat, thread or topic, `label` its name there."""
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO bindings (platform_chat, chat_id, is_group, place, label) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(platform_chat) DO UPDATE SET chat_id = excluded.chat_id, is_group = excluded.is_group,"
                " place = excluded.place, label = excluded.label",
                (platform_chat, chat_id, int(is_group), place, label),
            )
        )

    async def place_of(self, platform_chat: str) -> str | None:
        """What a bound platform chat is (chat, thread or topic); None when it is not bound."""
        row = await self.db.run(
            lambda c: c.execute("SELECT place FROM bindings WHERE platform_chat = ?", (platform_chat,)).fetchone()
        )
        return str(row["place"]) if row else None

    async def places(self, owner_id: str) -> dict[str, Place]:
        """Where each of a user's chats lives in a chat app (a thread or topic first), by chat id."""
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT b.chat_id, b.platform_chat, b.place, b.label FROM bindings b JOIN chats c ON c.id = b.chat_id"
                " WHERE c.owner_id = ? ORDER BY b.place = 'chat', b.platform_chat",
                (owner_id,),
            ).fetchall()
        )
        found: dict[str, Place] = {}
        for row in rows:
            platform = row["platform_chat"].partition(":")[0]
            found.setdefault(row["chat_id"], Place(platform, row["place"], row["label"]))
        return found

    # chats --------------------------------------------------------------------------
    async def create_chat(
        self, owner_id: str, title: str, *, chat_id: str | None = None, forked_from: dict[str, Any] | None = None
    ) -> Chat:
        chat_id = chat_id or uuid.uuid4().hex
        fork = forked_from or {}

        def write(conn: Conn) -> Chat:
            conn.execute(
                "INSERT INTO chats (id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step,"
                " forked_from_turn, forked_from_iteration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    chat_id, owner_id, title, time.time(), fork.get("turn_index", 0),
                    fork.get("thread_id"), fork.get("snapshot_id"), fork.get("turn_index"), fork.get("iteration"),
                ),
            )
            return _chat(conn.execute("SELECT * FROM chats WHERE id = ?", (chat_id,)).fetchone())

        return await self.db.tx(write)

    def turn_start(self, chat_id: str, into: TurnStart) -> Also:
        """A read of what starting a turn checks (the chat, its pending cards, an undo ready) into
        `into`, as the chat's lease is taken (acquire_lease's `also`)."""

        def read(conn: Conn) -> None:
            row = conn.execute("SELECT * FROM chats WHERE id = ?", (chat_id,)).fetchone()
            cards = conn.execute(
                "SELECT * FROM approvals WHERE chat_id = ? AND status = 'pending' ORDER BY created_at", (chat_id,)
            ).fetchall()
            into.chat = _chat(row) if row else None
            into.pending = [_card(r) for r in cards]
            into.undo_ready = undo_ready(conn, chat_id)

        return read

    async def get_chat(self, chat_id: str) -> Chat | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM chats WHERE id = ?", (chat_id,)).fetchone())
        return _chat(row) if row else None

    async def list_chats(self, owner_id: str) -> list[Chat]:
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT * FROM chats WHERE owner_id = ? ORDER BY created_at DESC, id", (owner_id,)
            ).fetchall()
        )
        return [_chat(r) for r in rows]

    async def rename_chat(self, chat_id: str, title: str) -> Chat | None:
        def write(conn: Conn) -> Chat | None:
            conn.execute("UPDATE chats SET title = ? WHERE id = ?", (title, chat_id))
            row = conn.execute("SELECT * FROM chats WHERE id = ?", (chat_id,)).fetchone()
            return _chat(row) if row else None

        return await self.db.tx(write)

    async def title_untitled(self, chat_id: str, untitled: str, title: str) -> bool:
        """Give the chat this title if it still has the placeholder one; True when it did."""

        def write(conn: Conn) -> bool:
            changed = conn.execute(
                "UPDATE chats SET title = ? WHERE id = ? AND title = ?", (title, chat_id, untitled)
            ).rowcount
            return bool(changed)

        return await self.db.tx(write)

    async def search_chats(self, owner_id: str, query: str) -> list[tuple[Chat, str]]:
        """The owner's chats whose title or a message holds the query (case folded), newest first,
        each with the first matching message's text ("" when only the title matched).

        A message's words may be kept compressed in its body, so they are matched here rather
        than by SQL: one read of the owner's transcript, the same on either engine."""
        wanted = query.casefold()

        def read(conn: Conn) -> list[tuple[Chat, str]]:
            chats = conn.execute(
                "SELECT * FROM chats WHERE owner_id = ? ORDER BY created_at DESC, id", (owner_id,)
            ).fetchall()
            rows = conn.execute(
                "SELECT t.chat_id, t.text, b.body FROM transcript t JOIN chats c ON c.id = t.chat_id"
                " LEFT JOIN conv_spaces s ON s.thread_id = t.chat_id"
                " LEFT JOIN conv_bodies b ON b.chat_id = coalesce(s.space, t.chat_id) AND b.n = t.body_n"
                " WHERE c.owner_id = ? AND t.role IN ('user', 'assistant') ORDER BY t.id",
                (owner_id,),
            )
            found: dict[str, str] = {}
            for chat_id, text, body in rows.fetchall():
                if chat_id in found:
                    continue
                words = text or (body_text(body) if body is not None else "")
                if wanted in words.casefold():
                    found[chat_id] = words
            return [
                (_chat(r), found.get(r["id"], ""))
                for r in chats
                if r["id"] in found or wanted in r["title"].casefold()
            ]

        return await self.db.run(read)

    async def chat_ids(self) -> set[str]:
        """The id of every chat, whoever owns it."""
        rows = await self.db.run(lambda c: c.execute("SELECT id FROM chats").fetchall())
        return {r["id"] for r in rows}

    async def owner_text_bytes(self, owner_id: str) -> tuple[list[str], int]:
        """A user's chats, and the bytes of their conversations, transcripts and memories."""

        def read(conn: Conn) -> tuple[list[str], int]:
            chats = [r["id"] for r in conn.execute("SELECT id FROM chats WHERE owner_id = ?", (owner_id,))]
            (text,) = conn.execute(
                f"SELECT COALESCE(SUM({octets(self.db, 't.text')}), 0) FROM transcript t"
                " JOIN chats c ON c.id = t.chat_id WHERE c.owner_id = ?", (owner_id,),
            ).fetchone()
            # The conversation's messages, kept once in the body space of each chat it began
            # (a fork refers to its source's space, counted there). `b.n > 0` (every number is)
            # has SQLite walk the bodies in number order, the order they were written: found by
            # digest, the same sum read them at random (150 ms instead of 5 at 10,000 messages).
            (conversation,) = conn.execute(
                "SELECT COALESCE(SUM(length(b.body)), 0) FROM conv_bodies b"
                " JOIN chats c ON c.id = b.chat_id WHERE c.owner_id = ? AND b.n > 0", (owner_id,),
            ).fetchone()
            (facts,) = conn.execute(
                f"SELECT COALESCE(SUM({octets(self.db, 'f.text')}), 0) FROM facts f"
                " JOIN chats c ON c.id = f.chat_id WHERE c.owner_id = ?", (owner_id,),
            ).fetchone()
            return chats, int(text) + int(conversation) + int(facts)

        return await self.db.run(read)

    async def delete_chat(self, chat_id: str) -> None:
        await self.db.tx(lambda c: c.execute("DELETE FROM chats WHERE id = ?", (chat_id,)))

    # transcript: its rows are written by the conversation store, with the checkpoints they show
    async def transcript(
        self, chat_id: str, *, before: int | None = None, limit: int | None = None
    ) -> list[TranscriptRow]:
        """The chat's visible messages, oldest first; a row that refers to a message body shows that
        body's text. With `limit`, only the newest `limit` rows (of those before row id `before`):
        a page read by the index, however long the chat."""
        where = "t.chat_id = ?"
        params: list[str | int] = [chat_id]
        if before is not None:
            where += " AND t.id < ?"
            params.append(before)
        order = "t.id"
        if limit is not None:
            order += " DESC LIMIT ?"
            params.append(limit)

        def read(conn: Conn) -> list[TranscriptRow]:
            rows = conn.execute(
                "SELECT t.id, t.turn_index, t.role, t.text, t.created_at, b.body FROM transcript t"
                " LEFT JOIN conv_spaces s ON s.thread_id = t.chat_id"
                " LEFT JOIN conv_bodies b ON b.chat_id = coalesce(s.space, t.chat_id) AND b.n = t.body_n"
                f" WHERE {where} ORDER BY {order}",
                params,
            ).fetchall()
            if limit is not None:
                rows.reverse()
            # A row's own text (an error note's reason, a reset marker) comes first; else its message's words.
            return [TranscriptRow(r[0], r[1], r[2], r[3] or (body_text(r[5]) if r[5] is not None else ""), r[4]) for r in rows]

        return await self.db.run(read)

    # facts --------------------------------------------------------------------------
    async def add_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO facts (chat_id, turn_index, iteration, text, created_at) VALUES (?, ?, ?, ?, ?)",
                (chat_id, turn_index, iteration, text, time.time()),
            )
        )

    async def forget_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> int:
        """The agent's forget: marked with its step, so a restore to before it brings the fact back."""
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE facts SET forgotten_turn = ?, forgotten_iteration = ? WHERE chat_id = ?"
                " AND forgotten_turn IS NULL AND lower(text) = lower(?)",
                (turn_index, iteration, chat_id, text),
            )
        )
        return cur.rowcount

    async def delete_facts(self, chat_id: str, from_turn: int = 0) -> int:
        cur = await self.db.tx(
            lambda c: c.execute("DELETE FROM facts WHERE chat_id = ? AND turn_index >= ?", (chat_id, from_turn))
        )
        return cur.rowcount

    async def delete_fact(self, chat_id: str, fact_id: int) -> Fact | None:
        """A person's forget: the fact is gone for good (returns it, or None when there was none)."""

        def write(conn: Conn) -> Fact | None:
            row = conn.execute(
                "SELECT id, turn_index, text FROM facts WHERE chat_id = ? AND id = ?", (chat_id, fact_id)
            ).fetchone()
            conn.execute("DELETE FROM facts WHERE chat_id = ? AND id = ?", (chat_id, fact_id))
            return Fact(*tuple(row)) if row else None

        return await self.db.tx(write)

    async def facts(self, chat_id: str) -> list[Fact]:
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT id, turn_index, text FROM facts WHERE chat_id = ? AND forgotten_turn IS NULL ORDER BY id",
                (chat_id,),
            ).fetchall()
        )
        return [Fact(*tuple(r)) for r in rows]

    async def memory_on(self, chat_id: str) -> bool:
        row = await self.db.run(lambda c: c.execute("SELECT memory FROM chats WHERE id = ?", (chat_id,)).fetchone())
        return bool(row and row["memory"])

    async def set_memory(self, chat_id: str, on: bool) -> None:
        await self.db.tx(lambda c: c.execute("UPDATE chats SET memory = ? WHERE id = ?", (int(on), chat_id)))

    # approval cards -----------------------------------------------------------------
    async def open_card(
        self, chat_id: str, turn_index: int, tool_call_id: str, tool: str, args: dict[str, Any], ttl: float
    ) -> Card:
        """Create the card for a gated tool call, or return the one it already has."""

        def write(conn: Conn) -> Card:
            now = time.time()
            conn.execute(
                "INSERT INTO approvals (id, chat_id, turn_index, tool_call_id, tool, args, status,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING",
                (uuid.uuid4().hex[:12], chat_id, turn_index, tool_call_id, tool, orjson.dumps(args).decode(), now, now + ttl),
            )
            row = conn.execute(
                "SELECT * FROM approvals WHERE chat_id = ? AND tool_call_id = ?", (chat_id, tool_call_id)
            ).fetchone()
            return _card(row)

        return await self.db.tx(write)

    async def cards(self, chat_id: str, status: str | None = None) -> list[Card]:
        sql = "SELECT * FROM approvals WHERE chat_id = ?" + (" AND status = ?" if status else "") + " ORDER BY created_at"
        args = (chat_id, status) if status else (chat_id,)
        rows = await self.db.run(lambda c: c.execute(sql, args).fetchall())
        return [_card(r) for r in rows]

    async def card(self, chat_id: str, card_id: str) -> Card | None:
        row = await self.db.run(
            lambda c: c.execute("SELECT * FROM approvals WHERE chat_id = ? AND id = ?", (chat_id, card_id)).fetchone()
        )
        return _card(row) if row else None

    async def close_card(self, card_id: str, status: str, by: str | None) -> bool:
        """Move a pending card to its outcome; False when it was no longer pending."""
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
                (status, by, time.time(), card_id),
            )
        )
        return cur.rowcount == 1

    # turn leases ----------------------------------------------------------------------
    async def acquire_lease(
        self, chat_id: str, holder: str, purpose: str, ttl: float, *, finishing: bool = False, also: Also | None = None
    ) -> bool:
        def write(conn: Conn) -> bool:
            if not finishing and conn.execute(
                "SELECT 1 FROM restore_intents WHERE chat_id = ? LIMIT 1", (chat_id,)
            ).fetchone():
                # A restore whose steps part was cut (a database away, a replica killed): its later
                # steps are still listed. Nothing else runs in the chat until the sweep finished it.
                return False
            now = time.time()
            cur = conn.execute(
                "INSERT INTO leases (chat_id, holder, purpose, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(chat_id) DO UPDATE SET holder = excluded.holder, purpose = excluded.purpose,"
                " expires_at = excluded.expires_at WHERE leases.expires_at < ?"
                f" AND (excluded.purpose = ? OR leases.purpose NOT IN {_CUT_TURNS})",
                (chat_id, holder, purpose, now + ttl, now, RECOVER, *CUT_TURNS),
            )
            if cur.rowcount != 1:
                return False
            if also is not None and self.db.dialect == "sqlite":
                also(conn)
            return True

        taken = await self.db.tx(write)
        if taken and also is not None and self.db.dialect != "sqlite":
            # Read after the lease's transaction, not in it: in a SERIALIZABLE transaction, reads of
            # other chats' index pages made the turns of different chats conflict (503s under load).
            await self.db.run(also)
        return taken

    async def renew_lease(self, chat_id: str, holder: str, ttl: float) -> bool:
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE leases SET expires_at = ? WHERE chat_id = ? AND holder = ?",
                (time.time() + ttl, chat_id, holder),
            )
        )
        return cur.rowcount == 1

    async def release_lease(self, chat_id: str, holder: str) -> None:
        await self.db.tx(lambda c: c.execute("DELETE FROM leases WHERE chat_id = ? AND holder = ?", (chat_id, holder)))

    async def lease_holders(self) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of every lease row, live or not."""
        rows = await self.db.run(lambda c: c.execute("SELECT chat_id, holder, purpose FROM leases").fetchall())
        return [(r["chat_id"], r["holder"], r["purpose"]) for r in rows]

    async def expired_leases(self, now: float) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of the leases not renewed in time (their holders are gone or stalled)."""
        rows = await self.db.run(
            lambda c: c.execute("SELECT chat_id, holder, purpose FROM leases WHERE expires_at < ?", (now,)).fetchall()
        )
        return [(r["chat_id"], r["holder"], r["purpose"]) for r in rows]

    async def lease(self, chat_id: str) -> tuple[str, str] | None:
        """(holder, purpose) of the live lease on a chat, if any."""
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT holder, purpose FROM leases WHERE chat_id = ? AND expires_at >= ?", (chat_id, time.time())
            ).fetchone()
        )
        return (row["holder"], row["purpose"]) if row else None

    # settings overrides -------------------------------------------------------------
    async def set_override(self, key: str, value: Any) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO settings_overrides (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, orjson.dumps(value).decode(), time.time()),
            )
        )

    async def overrides(self) -> dict[str, Any]:
        rows = await self.db.run(lambda c: c.execute("SELECT key, value FROM settings_overrides").fetchall())
        return {r["key"]: orjson.loads(r["value"]) for r in rows}

    # operator alerts ----------------------------------------------------------------
    async def add_alert(self, kind: str, message: str, at: float | None = None) -> Alert:
        def write(conn: Conn) -> Alert:
            return _alert(conn.execute(
                "INSERT INTO alerts (kind, message, created_at) VALUES (?, ?, ?) RETURNING *",
                (kind, message, time.time() if at is None else at),
            ).fetchone())

        return await self.db.tx(write)

    async def alerts(self, include_acknowledged: bool = False) -> list[Alert]:
        """Newest first; only the ones not yet acknowledged unless asked."""
        where = "" if include_acknowledged else " WHERE acknowledged_at IS NULL"
        rows = await self.db.run(lambda c: c.execute(f"SELECT * FROM alerts{where} ORDER BY id DESC").fetchall())
        return [_alert(r) for r in rows]

    async def acknowledge_alert(self, alert_id: int, at: float | None = None) -> Alert | None:
        """Mark an alert seen (the first acknowledgement's time is kept); None when there is no such alert."""

        def write(conn: Conn) -> Alert | None:
            conn.execute(
                "UPDATE alerts SET acknowledged_at = ? WHERE id = ? AND acknowledged_at IS NULL",
                (time.time() if at is None else at, alert_id),
            )
            row = conn.execute("SELECT * FROM alerts WHERE id = ?", (alert_id,)).fetchone()
            return _alert(row) if row else None

        return await self.db.tx(write)


def _alert(row: Row) -> Alert:
    return Alert(row["id"], row["kind"], row["message"], row["created_at"], row["acknowledged_at"])
