"""Users, their tokens (API tokens, web sessions, sign-in links) and the chat-app identities linked to them."""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from dataclasses import dataclass

from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.types import User


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class UserStore:
    """Who may use this Kazma, and what proves it is them: kazma.db's users, tokens and identities."""

    db: Database

    async def add_user(self, name: str, role: str = "user") -> User:
        user = User(uuid.uuid4().hex, name, role, "")

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO users (id, name, role, lang, created_at) VALUES ($1, $2, $3, '', $4)",
                (user.id, name, role, time.time()),
            )

        await self.db.tx(write)
        return user

    async def user_by_name(self, name: str) -> User | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM users WHERE name = $1", (name,)).fetchone())
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None

    async def user_by_id(self, user_id: str) -> User | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM users WHERE id = $1", (user_id,)).fetchone())
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
        await self.db.tx(lambda c: c.execute("DELETE FROM users WHERE id = $1", (user_id,)))
        await self.db.purge_wal()

    async def set_user_lang(self, user_id: str, lang: str) -> None:
        await self.db.tx(lambda c: c.execute("UPDATE users SET lang = $1 WHERE id = $2", (lang, user_id)))

    async def issue_token(self, user_id: str, kind: str = "api", ttl: float | None = None) -> str:
        token = secrets.token_urlsafe(32)
        expires = time.time() + ttl if ttl else None

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO tokens (hash, user_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
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
                "WHERE t.hash = $1 AND t.kind = $2",
                (hash_token(token), kind),
            ).fetchone()
            now = time.time()
            if row is None or (row["expires_at"] is not None and row["expires_at"] < now):
                return None
            if max_age is not None and row["issued_at"] + max_age < now:
                return None
            if consume:
                conn.execute("DELETE FROM tokens WHERE hash = $1", (hash_token(token),))
            return User(row["id"], row["name"], row["role"], row["lang"])

        # Only a token used up is written: reading one takes no write lock (SQLite's is the file's).
        return await (self.db.tx(read, small=True) if consume else self.db.run(read, small=True))

    async def revoke_token(self, token: str) -> bool:
        cur = await self.db.tx(lambda c: c.execute("DELETE FROM tokens WHERE hash = $1", (hash_token(token),)))
        return cur.rowcount == 1

    async def revoke_tokens(self, user_id: str) -> int:
        """Every token of a user (API tokens, web sessions, sign-in links): none works after this."""
        cur = await self.db.tx(lambda c: c.execute("DELETE FROM tokens WHERE user_id = $1", (user_id,)))
        return cur.rowcount

    async def link_identity(self, platform_key: str, user_id: str) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO identities (platform_key, user_id) VALUES ($1, $2) "
                "ON CONFLICT(platform_key) DO UPDATE SET user_id = excluded.user_id",
                (platform_key, user_id),
            )
        )

    async def user_for_identity(self, platform_key: str) -> User | None:
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT u.* FROM identities i JOIN users u ON u.id = i.user_id WHERE i.platform_key = $1",
                (platform_key,),
            ).fetchone()
        )
        return User(row["id"], row["name"], row["role"], row["lang"]) if row else None
