"""Chats as their owners see them: ownership checks (failing closed), create, list, delete, reset, forget, stop."""

from __future__ import annotations

import builtins
from typing import Any

from kazma_core.agent.graph import write_finished_turn
from kazma_core.agent.stops import STOP_WAIT_SECONDS, StopRequests
from kazma_core.errors import ApprovalPending, InvalidInput, NotFound
from kazma_core.events import EventBus
from kazma_core.replicas.leases import ASK_AGAIN, chat_lease, held_here
from kazma_core.replicas.relay import ask_replicas
from kazma_core.retry import ask_until
from kazma_core.rewind.keep import FORGOTTEN, TURN, UndoKeep
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.interfaces import ConversationStore
from kazma_core.stores.message_links import MessageLinks
from kazma_core.stores.snapshots import SnapshotStore
from kazma_core.stores.types import Chat, User
from kazma_core.titles import FITS, MAX_TITLE, UNTITLED, shortened


class ChatService:
    def __init__(
        self,
        store: AppStore,
        snapshots: SnapshotStore,
        conversation: ConversationStore,
        events: EventBus,
        lease_seconds: float,
        *,
        graph: Any,
        kept: UndoKeep,
        stops: StopRequests,
    ) -> None:
        self.kept = kept
        self.stops = stops  # the turns running in this process
        self.lease_seconds = lease_seconds
        self.graph = graph
        self.store = store
        self.snapshots = snapshots
        self.links = MessageLinks(store.db)  # which chat-app message is which row: forgotten with the chat
        self.conversation = conversation
        self.events = events

    async def _purge(self) -> None:
        """After a deletion, no copy of the deleted text stays in a WAL (secure_delete clears the files)."""
        await self.snapshots.purge_wal()
        await self.store.purge_deleted()  # kazma.db holds the conversation store too

    async def owned(self, user: User, chat_id: str) -> Chat:
        """The chat if it is this user's; not_found otherwise (a stranger learns nothing)."""
        chat = await self.store.chats.get_chat(chat_id) if isinstance(chat_id, str) and chat_id else None
        if chat is None or chat.owner_id != user.id:
            raise NotFound(message_id="chat_not_yours")
        return chat

    async def create(self, user: User, title: str | None = None) -> Chat:
        """A new chat; without a title it is named by its first message (see TurnRunner.begin)."""
        return await self.store.chats.create_chat(user.id, _title(title, UNTITLED))

    async def list(self, user: User) -> list[Chat]:
        return await self.store.chats.list_chats(user.id)

    async def search(self, user: User, query: str) -> builtins.list[tuple[Chat, str]]:  # `list` here is the method above
        """The user's chats whose title or a message holds the query, each with a piece of the
        message found around the words ("" when the title held them)."""
        query = " ".join(query.split())
        return [(chat, around(found, query)) for chat, found in await self.store.chats.search_chats(user.id, query)]

    async def rename(self, user: User, chat_id: str, title: str) -> Chat:
        await self.owned(user, chat_id)
        chat = await self.store.chats.rename_chat(chat_id, _title(title, None))
        if chat is None:
            raise NotFound(message_id="chat_not_yours")
        self.events.publish(chat_id, "chat", {"title": chat.title})
        return chat

    async def delete(self, user: User, chat_id: str) -> None:
        """Delete a chat with its steps (they are copies of it) and its conversation.

        The chat's row goes with its checkpoints in one transaction; its steps first (a crash
        between leaves a chat without steps, never steps without a chat)."""
        await self.owned(user, chat_id)
        async with chat_lease(self.store.leases, chat_id, "delete", self.lease_seconds):
            await self.snapshots.delete_chat(chat_id)
            await self.conversation.adelete_thread(chat_id, also=self.store.chats.chat_deletion(chat_id))
            await self._purge()
        self.events.publish(chat_id, "reload", {"reason": "deleted"})

    async def forget(self, user: User, chat_id: str) -> None:
        """Forget what Kazma learned in a chat: its facts, and every step (each holds the conversation)."""
        await self.owned(user, chat_id)
        async with chat_lease(self.store.leases, chat_id, "forget", self.lease_seconds):
            await self.kept.drop(chat_id, FORGOTTEN)
            await self.snapshots.delete_chat(chat_id)
            await self.store.memories.delete_facts(chat_id)
            await self.links.drop_chat(chat_id)
            await self._purge()
        self.events.publish(chat_id, "reload", {"reason": "forgotten"})

    async def memory_off(self, user: User, chat_id: str) -> None:
        """Stop remembering in a chat and forget what was learned there (facts and every step).

        All under one lease: refused while a turn runs, it changes nothing, rather than
        leaving memory off with the facts still kept."""
        await self.owned(user, chat_id)
        async with chat_lease(self.store.leases, chat_id, "forget", self.lease_seconds):
            await self.store.memories.set_memory(chat_id, False)
            await self.kept.drop(chat_id, FORGOTTEN)
            await self.snapshots.delete_chat(chat_id)
            await self.store.memories.delete_facts(chat_id)
            await self.links.drop_chat(chat_id)
            await self._purge()
        self.events.publish(chat_id, "reload", {"reason": "forgotten"})

    async def reset(self, user: User, chat_id: str) -> None:
        """Start the conversation afresh: an empty finished turn on the chat's thread. Steps are kept.

        The transcript's "Conversation reset" row is numbered as the next turn, so restoring
        to any step from before the reset takes the row back along with the reset."""
        await self.owned(user, chat_id)
        async with chat_lease(self.store.leases, chat_id, "reset", self.lease_seconds):
            pending = await self.store.cards.cards(chat_id, "pending")
            if pending:
                raise ApprovalPending(message_id="approval_pending_reset", gates=[c.to_dict() for c in pending])
            chat = await self.owned(user, chat_id)  # read again under the lease: a turn may have ended meanwhile
            await self.kept.drop(chat_id, TURN)  # the chat moves on, as with a turn
            marker = self.store.transcript.marker_row(chat_id, chat.last_turn + 1, "system", "Conversation reset")
            async with self.conversation.same_transaction(chat_id, marker):
                await write_finished_turn(self.graph, chat_id, {"messages": []})
        self.events.publish(chat_id, "reload", {"reason": "reset"})

    async def stop(self, chat_id: str) -> bool:
        """Stop the chat's running turn at its next step boundary, on whichever replica runs it.
        True once it has ended (or after STOP_WAIT_SECONDS), False when none was running.

        A turn runs where its lease is held. When that is another replica, the request goes to
        it through the event relay, and the answer waits here until the turn's lease is
        released: the person can send the next message as soon as they are told."""
        if await self.stops.request(chat_id):
            return True
        lease = await self.store.leases.lease(chat_id)
        if lease is None or lease[1] != "turn" or held_here(lease[0]):
            return False  # nothing runs, or this replica holds the chat but no turn of it is stoppable yet
        if not ask_replicas(self.events, "stop", chat_id):
            return False
        holder = lease[0]

        async def ended() -> bool:
            now = await self.store.leases.lease(chat_id)
            return now is None or now[0] != holder

        await ask_until(ASK_AGAIN, STOP_WAIT_SECONDS, ended)
        return True

    async def forget_fact(self, user: User, chat_id: str, fact_id: int) -> None:
        """Forget one memory for good, and the chat's steps from its turn on (each holds it)."""
        await self.owned(user, chat_id)
        await self.kept.drop(chat_id, FORGOTTEN)
        fact = await self.store.memories.delete_fact(chat_id, fact_id)
        if fact is None:
            raise NotFound(message_id="memory_missing")
        await self.snapshots.delete_from_turn(chat_id, fact.turn_index)
        await self._purge()


def _title(title: str | None, otherwise: str | None) -> str:
    """A title as typed, on one line; an empty one is refused unless there is a placeholder."""
    flat = " ".join((title or "").split())
    if not flat:
        if otherwise is None:
            raise InvalidInput(message_id="title_empty")
        return otherwise
    if len(flat) > MAX_TITLE:
        raise InvalidInput(message_id="title_too_long", max=MAX_TITLE)
    return flat


def around(text: str, query: str) -> str:
    """A piece of the text on one line, with the query's first occurrence in view."""
    flat = " ".join(text.split())
    at = flat.casefold().find(query.casefold())
    if at <= FITS // 3:
        return shortened(flat, FITS * 2)
    return "…" + shortened(flat[at - FITS // 3 :], FITS * 2)
