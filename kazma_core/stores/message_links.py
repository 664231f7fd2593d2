"""Which chat-app message is which transcript row, kept beside the chat (never in the agent's state).

A person's message and each message the bot posted are linked to their transcript row, so a
reply with /fork, a Discord message command or a Slack shortcut acts on that row's step, and a
restore made anywhere can mark the bot's messages it took back (and an undo unmark them).
`place` names where the platform numbers its messages: "telegram:<chat>", "discord:<channel>",
"slack:<team>:<channel>". The links go with their chat: deleted with it (the table references
it), dropped when it is forgotten.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.transcript_sql import SHARED_ROWS


@dataclass(frozen=True)
class MessageLink:
    place: str
    message: str  # the platform's id of the message in its place (Slack: its ts)
    chat_id: str
    row_id: int  # the transcript row
    by_bot: bool
    text: str  # what the bot posted, to put back after an undo ("" for a person's message)
    rewound: bool  # the bot's message now says it was rewound
    lang: str = ""  # the language it was answered in (a rewound mark is said in it)


def _link(row: Row) -> MessageLink:
    return MessageLink(
        row["place"], row["message"], row["chat_id"], row["row_id"], bool(row["by_bot"]), row["text"], bool(row["rewound"]),
        row["lang"],
    )


class MessageLinks:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(
        self, place: str, message: str, chat_id: str, row_id: int, *, by_bot: bool, text: str = "", lang: str = ""
    ) -> None:
        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO message_links (place, message, chat_id, row_id, by_bot, text, rewound, lang, created_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8) ON CONFLICT(place, message) DO UPDATE SET chat_id = excluded.chat_id,"
                " row_id = excluded.row_id, by_bot = excluded.by_bot, text = excluded.text, rewound = 0, lang = excluded.lang",
                (place, message, chat_id, row_id, int(by_bot), text, lang, time.time()),
            )

        await self.db.tx(write)

    async def find(self, place: str, message: str) -> MessageLink | None:
        row = await self.db.run(
            lambda c: c.execute("SELECT * FROM message_links WHERE place = $1 AND message = $2", (place, message)).fetchone()
        )
        return _link(row) if row else None

    async def out_of_step(self, chat_id: str) -> tuple[list[MessageLink], list[MessageLink]]:
        """The bot's messages whose row a restore took back, not marked yet; and those marked whose row
        an undo put back."""
        rows = await self.db.run(
            lambda c: c.execute(
                # Its row is the chat's own, or one it shares with its source.
                "SELECT l.*, (EXISTS (SELECT 1 FROM transcript t WHERE t.id = l.row_id AND t.chat_id = l.chat_id)"
                f" OR EXISTS (SELECT 1 FROM {SHARED_ROWS.format(chat='l.chat_id')} AND t.id = l.row_id)) AS shown"
                " FROM message_links l WHERE l.chat_id = $1 AND l.by_bot = 1 ORDER BY l.created_at",
                (chat_id,),
            ).fetchall()
        )
        taken = [_link(r) for r in rows if not r["shown"] and not r["rewound"]]
        back = [_link(r) for r in rows if r["shown"] and r["rewound"]]
        return taken, back

    async def set_rewound(self, link: MessageLink, rewound: bool) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "UPDATE message_links SET rewound = $1 WHERE place = $2 AND message = $3", (int(rewound), link.place, link.message)
            )
        )

    async def drop_chat(self, chat_id: str) -> int:
        """Forget which platform messages were the chat's (a forgetting: nothing of it is acted on any more)."""
        return await self.db.tx(lambda c: c.execute("DELETE FROM message_links WHERE chat_id = $1", (chat_id,)).rowcount)
