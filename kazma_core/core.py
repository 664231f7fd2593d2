"""The running core: settings, stores, the graph and the turn runner, opened and closed together."""

from __future__ import annotations

from dataclasses import dataclass

from kazma_core.agent.graph import build_graph
from kazma_core.agent.models import build_model
from kazma_core.agent.runtime import TurnRunner
from kazma_core.chats import ChatService
from kazma_core.events import EventBus, LocalEventBus
from kazma_core.leases import holder_is_dead
from kazma_core.settings import Settings, ensure_data_dir
from kazma_core.stores.app_sql import SqlAppStore
from kazma_core.stores.audit_sql import SqlAuditStore
from kazma_core.stores.interfaces import AppStore, AuditStore, ConversationStore
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.legacy import convert_legacy
from kazma_core.stores.snapshots import SnapshotStore
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.app_rewind import RewindRows
from kazma_core.time_travel import SnapshotRecorder
from kazma_core.undo_keep import UndoKeep
from kazma_core.stores.backends import app_db, audit_db, steps_db


def prepare_data_dir(settings: Settings) -> None:
    """The data folder, writable, in today's layout: what every command does before opening a store
    (a folder of the first layout has its checkpoints.db converted into kazma.db first)."""
    ensure_data_dir(settings)
    convert_legacy(settings.data_dir)


@dataclass
class Core:
    settings: Settings
    store: AppStore
    snapshots: SnapshotStore
    conversation: ConversationStore
    audit: AuditStore
    events: EventBus
    recorder: SnapshotRecorder
    turns: TurnRunner
    chats: ChatService
    kept: UndoKeep

    @classmethod
    async def open(cls, settings: Settings) -> Core:
        prepare_data_dir(settings)
        store = SqlAppStore(app_db(settings))
        await store.count_users()  # creates and migrates kazma.db now, not on first use
        snapshots = SqlSnapshotStore(steps_db(settings))
        conversation = SqlConversationStore(store.db)  # the same database: a turn and its rows commit together
        audit = SqlAuditStore(audit_db(settings))
        events: EventBus = LocalEventBus()
        recorder = SnapshotRecorder(snapshots, settings.time_travel, events)
        graph = build_graph(conversation)
        kept = UndoKeep(RewindRows(store), snapshots, conversation)
        turns = TurnRunner(settings, store, conversation, graph, build_model(settings.model), recorder, events, kept)
        chats = ChatService(store, snapshots, conversation, events, settings.agent.lease_seconds, graph=graph, kept=kept)
        return cls(settings, store, snapshots, conversation, audit, events, recorder, turns, chats, kept)

    async def recover(self) -> list[str]:
        """At start: free the chats of processes that died holding them, and close the turns
        they cut off, so no chat stays blocked or half-answered. Returns the chats freed."""
        freed = []
        for chat_id, holder, purpose in await self.store.lease_holders():
            if not holder_is_dead(holder):
                continue
            await self.store.break_lease(chat_id, holder)
            if purpose == "turn":
                await self.turns.close_interrupted(chat_id)
            freed.append(chat_id)
        return freed

    async def close(self) -> None:
        await self.snapshots.close()
        await self.audit.close()
        await self.store.close()
