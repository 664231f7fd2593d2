"""Where chats live in the chat apps: a platform chat (DM, group, channel, thread, topic) bound to a Kazma chat."""

from __future__ import annotations

from dataclasses import dataclass

from kazma_core.stores.chats_sql import chat_of
from kazma_core.stores.engine import Database
from kazma_core.stores.types import Chat, Place


@dataclass(frozen=True)
class PlaceStore:
    """kazma.db's bindings of platform chats to Kazma chats."""

    db: Database

    async def bound_chat(self, platform_chat: str) -> Chat | None:
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT c.* FROM bindings b JOIN chats c ON c.id = b.chat_id WHERE b.platform_chat = $1", (platform_chat,)
            ).fetchone()
        )
        return chat_of(row) if row else None

    async def bind_chat(
        self, platform_chat: str, chat_id: str, is_group: bool, place: str = "chat", label: str = ""
    ) -> None:
        """Bind a platform chat to a Kazma chat; `place` is chat, thread or topic, `label` its name there."""
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO bindings (platform_chat, chat_id, is_group, place, label) VALUES ($1, $2, $3, $4, $5)"
                " ON CONFLICT(platform_chat) DO UPDATE SET chat_id = excluded.chat_id, is_group = excluded.is_group,"
                " place = excluded.place, label = excluded.label",
                (platform_chat, chat_id, int(is_group), place, label),
            )
        )

    async def place_of(self, platform_chat: str) -> str | None:
        """What a bound platform chat is (chat, thread or topic); None when it is not bound."""
        row = await self.db.run(
            lambda c: c.execute("SELECT place FROM bindings WHERE platform_chat = $1", (platform_chat,)).fetchone()
        )
        return str(row["place"]) if row else None

    async def places(self, owner_id: str) -> dict[str, Place]:
        """Where each of a user's chats lives in a chat app (a thread or topic first), by chat id."""
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT b.chat_id, b.platform_chat, b.place, b.label FROM bindings b JOIN chats c ON c.id = b.chat_id"
                " WHERE c.owner_id = $1 ORDER BY b.place = 'chat', b.platform_chat",
                (owner_id,),
            ).fetchall()
        )
        found: dict[str, Place] = {}
        for row in rows:
            platform = row["platform_chat"].partition(":")[0]
            found.setdefault(row["chat_id"], Place(platform, row["place"], row["label"]))
        return found
