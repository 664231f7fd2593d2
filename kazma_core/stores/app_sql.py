"""kazma.db's stores, one per concern, on its one database: users and tokens, chats, their places in the
chat apps, the transcript, memories, approval cards, turn leases, settings overrides and operator alerts.

A caller names the one it uses (``core.store.users.user_for_token``, ``chat_lease(core.store.leases,
...)``); what spans concerns shares the database's transactions (``db``: the conversation store's
puts, a restore's rows). Each store's class is its contract: one SQL implementation runs on both
engines (the engine's differences are ``engine.Database``'s), so a Protocol beside it would only
write every signature a second time. The methods kept their names from the one store they were
split from, so a call of another branch moves with one rule: ``store.m(`` becomes
``store.<concern>.m(``.
"""

from __future__ import annotations

from kazma_core.stores.alerts_sql import AlertStore
from kazma_core.stores.cards_sql import CardStore
from kazma_core.stores.chats_sql import ChatStore
from kazma_core.stores.engine import Database
from kazma_core.stores.leases_sql import LeaseStore
from kazma_core.stores.memories_sql import MemoryStore
from kazma_core.stores.places_sql import PlaceStore
from kazma_core.stores.settings_sql import SettingsStore
from kazma_core.stores.transcript_sql import TranscriptStore
from kazma_core.stores.users_sql import UserStore


class AppStore:
    """Everything in kazma.db except time-travel steps and the audit trail, by concern."""

    def __init__(self, db: Database) -> None:
        # The database it runs on: the conversation store and a restore's rows share its transactions.
        self.db = db
        self.users = UserStore(db)
        self.chats = ChatStore(db)
        self.places = PlaceStore(db)
        self.transcript = TranscriptStore(db)
        self.memories = MemoryStore(db)
        self.cards = CardStore(db)
        self.leases = LeaseStore(db)
        self.settings = SettingsStore(db)
        self.alerts = AlertStore(db)

    async def close(self) -> None:
        await self.db.close()

    async def purge_deleted(self) -> None:
        """What was deleted leaves the database's files now (secure deletion)."""
        await self.db.purge_wal()
