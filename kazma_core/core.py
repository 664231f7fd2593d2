"""The running core: settings, stores, the graph and the turn runner, opened and closed together."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from kazma_core.agent.graph import build_graph
from kazma_core.agent.models import build_model
from kazma_core.agent.runtime import TurnRunner
from kazma_core.chats import ChatService
from kazma_core.errors import StoreUnavailable, TurnRunning
from kazma_core.events import EventBus, LocalEventBus
from kazma_core.replicas.claims import ReplicaStore
from kazma_core.replicas.leases import chat_lease, holder_is_dead
from kazma_core.replicas.relay import RelayedBus, shared_bus
from kazma_core.rewind.finish import RewindFinisher
from kazma_core.rewind.keep import UndoKeep
from kazma_core.rewind.rows import RewindRows
from kazma_core.settings import Settings, prepare_data_dir
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.backends import Stores
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.interfaces import CUT_TURNS, AuditStore
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.time_travel import SnapshotRecorder

log = logging.getLogger(__name__)

@dataclass
class Core:
    settings: Settings
    store: AppStore
    snapshots: SqlSnapshotStore  # the SQL stores themselves: the clean-up works on their databases
    conversation: SqlConversationStore
    audit: AuditStore
    events: EventBus  # the process's bus, relayed to the other replicas when they share a database
    recorder: SnapshotRecorder
    turns: TurnRunner
    chats: ChatService
    kept: UndoKeep
    replicas: ReplicaStore  # what replicas sharing the database agree on (leaders, daily claims)
    rewinds: RewindFinisher  # restores and undos a crash cut, finished by whoever finds them

    @classmethod
    async def open(cls, settings: Settings) -> Core:
        prepare_data_dir(settings)
        stores = await Stores.open(settings)
        store, snapshots, conversation, audit = stores.app, stores.snapshots, stores.conversation, stores.audit
        events = shared_bus(settings, LocalEventBus())
        recorder = SnapshotRecorder(snapshots, settings.time_travel, events)
        graph = build_graph(conversation)
        rows = RewindRows(store.db)
        kept = UndoKeep(rows, snapshots, conversation)
        turns = TurnRunner(settings, store, conversation, graph, build_model(settings.model), recorder, events, kept)
        chats = ChatService(
            store, snapshots, conversation, events, settings.agent.lease_seconds, graph=graph, kept=kept, stops=turns.stops
        )
        if isinstance(events, RelayedBus):  # a Stop sent to another replica, of a turn running here
            events.answer("stop", turns.stop)
        replicas = ReplicaStore(store.db)
        rewinds = RewindFinisher(rows, snapshots, store.chats, store.leases, events, settings.agent.lease_seconds, settings.files_of)
        return cls(settings, store, snapshots, conversation, audit, events, recorder, turns, chats, kept, replicas, rewinds)

    async def recover(self) -> list[str]:
        """Free the chats of replicas that died holding them, and close the turns they cut off, so
        no chat stays blocked or half-answered: at start, and every few seconds (`sweep`). A holder
        known dead (a process of this host gone) is freed at once; one on another host only when
        its lease expired. Returns the chats freed."""
        freed = []
        for chat_id, holder, purpose in await self.store.leases.lease_holders():
            if holder_is_dead(holder):
                await self.store.leases.release_lease(chat_id, holder)
                if purpose in CUT_TURNS:
                    await self._close_cut_turn(chat_id)
                freed.append(chat_id)
        # An expired lease of another purpose is simply taken by the next one to ask for it.
        for chat_id, _, purpose in await self.store.leases.expired_leases(time.time()):
            if purpose in CUT_TURNS and await self._close_cut_turn(chat_id):
                freed.append(chat_id)
        return freed

    async def _close_cut_turn(self, chat_id: str) -> bool:
        """Close a turn its holder left cut off, under a lease of our own (taking the expired one);
        False when the chat was taken meanwhile (a new turn, or another replica doing the same)."""
        try:
            async with chat_lease(self.store.leases, chat_id, "recover", self.settings.agent.lease_seconds):
                await self.turns.close_interrupted(chat_id)
        except TurnRunning:
            return False
        return True

    async def sweep(self) -> None:
        """Finish what dead replicas left, every third of a lease's time, for ever: with
        replicas, one killed mid-turn or mid-restore has its chats freed (`recover`), its turns
        closed and its restores and undos finished (`RewindFinisher.finish_cut`) by the others
        within about agent.lease_seconds and a third. First it listens to the other replicas,
        so that a Stop sent to one of them reaches a turn running here."""
        if isinstance(self.events, RelayedBus):
            await self.events.hear()
        every = self.settings.agent.lease_seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                if freed := await self.recover():
                    log.info("freed %d chat(s) whose holder died or stopped renewing its lease", len(freed))
                await self.rewinds.finish_cut()
            except StoreUnavailable as err:  # a store away for a moment (the steps' too): the next sweep tries again
                log.warning("the sweep of dead holders' chats failed (%s)", err)
            except Exception:  # nothing ends the sweep: a chat it cannot free now is tried again next time
                log.exception("the sweep of dead holders' chats failed")

    async def close(self) -> None:
        await self.kept.purged()
        if isinstance(self.events, RelayedBus):
            await self.events.close()
        await self.snapshots.close()
        await self.audit.close()
        await self.store.close()
