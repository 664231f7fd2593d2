"""Runs turns: the lease, the transcript, the graph, capture of each step, approval cards."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from kazma_core.agent.activity import DeltaStream
from kazma_core.agent.graph import TurnDeps, closing_messages
from kazma_core.agent.stops import StopRequests
from kazma_core.catalogue.errors import ERRORS
from kazma_core.errors import (
    ApprovalClosed,
    ApprovalPending,
    InvalidInput,
    KazmaError,
    NotFound,
    StoreUnavailable,
    TurnFailed,
    without_paths,
)
from kazma_core.events import EventBus
from kazma_core.messages import load_messages
from kazma_core.quota import StorageQuota
from kazma_core.replicas.leases import chat_lease, leave_to_sweep
from kazma_core.rewind.keep import TURN, UndoKeep
from kazma_core.settings import Settings
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.backends import database_url
from kazma_core.stores.interfaces import ConversationStore
from kazma_core.stores.snapshots import StepInfo
from kazma_core.stores.types import NOTE_KEY, Card, TurnStart
from kazma_core.time_travel import SnapshotRecorder
from kazma_core.titles import UNTITLED, title_from

log = logging.getLogger(__name__)

STOPPED_REASON = ERRORS["turn_stopped"].en
INTERRUPTED_REASON = ERRORS["turn_interrupted"].en  # the process ended mid-turn (found on the next start)
CAPTURED_NODES = {"tool_worker"}  # the turn's last step is saved by the supervisor (agent/graph.py)
PRUNE_EVERY = 10  # turns: the chat step history is cut back to its setting this often


@dataclass
class TurnResult:
    reply: str
    turn_index: int
    status: Literal["done", "awaiting_approval", "stopped"]
    gates: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StartedTurn:
    """A turn that passed every check and holds the chat's lease."""

    chat_id: str
    turn_index: int
    graph_input: dict[str, Any]
    held: contextlib.AsyncExitStack


def _stopped_answer(state: dict[str, Any]) -> str | None:
    """The text of an answer a Stop cut while it was said (its note, agent/graph.py), if the turn ends so."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    note = last.additional_kwargs.get(NOTE_KEY) if isinstance(last, AIMessage) else None
    return str(note["text"]) if isinstance(note, dict) and note.get("role") == "stopped" else None


def gates_of(cards: list[Card]) -> list[dict[str, Any]]:
    return [c.to_dict() for c in cards]


class TurnRunner:
    def __init__(
        self,
        settings: Settings,
        store: AppStore,
        conversation: ConversationStore,
        graph: Any,
        model: BaseChatModel,
        recorder: SnapshotRecorder,
        events: EventBus,
        kept: UndoKeep,
    ) -> None:
        self.kept = kept
        self.settings = settings
        self.store = store
        self.conversation = conversation
        self.graph = graph
        self.model = model
        self.recorder = recorder
        self.events = events
        self.quota = StorageQuota(settings, store.chats, recorder.store)
        self.stops = StopRequests()

    @property
    def model_name(self) -> str:
        return self.settings.model.name

    def config(self, chat_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": chat_id}, "recursion_limit": 4 * self.settings.agent.max_iterations + 10}

    async def send(self, chat_id: str, text: str, *, wait_for_lease: float = 0.0) -> TurnResult:
        """Run one turn for a user message, or raise turn_running / approval_pending."""
        return await self.finish(await self.begin(chat_id, text, wait_for_lease=wait_for_lease))

    async def begin(self, chat_id: str, text: str, *, wait_for_lease: float = 0.0) -> StartedTurn:
        """Everything that can refuse a turn, done now: the caller may run the rest later."""
        text = text.strip()
        if not text:
            raise InvalidInput(message_id="empty_message")
        await self.quota.check_message(chat_id, text)
        held, ready = await self._take(chat_id, wait_for_lease)
        if any(card.expires_at <= time.time() for card in ready.pending):
            # A card past its time is closed as expired first (its paused turn finishes), then asked again.
            await held.aclose()
            await self.settle_expired(chat_id)
            held, ready = await self._take(chat_id, wait_for_lease)
        try:
            chat, pending = ready.chat, ready.pending
            if pending:
                raise ApprovalPending(message_id="approval_pending_send", gates=gates_of(pending))
            if chat is None:
                raise NotFound(message_id="chat_missing_start")
            # Numbered under the lease; the user's row is written with the turn's first
            # checkpoint (the conversation store derives it), so the two always agree.
            turn_index = chat.last_turn + 1
            # A chat still untitled is named by its first message, whichever surface sent it.
            untitled = chat.last_turn == 0 and chat.title == UNTITLED
            if untitled and await self.store.chats.title_untitled(chat_id, UNTITLED, title_from(text)):
                self.events.publish(chat_id, "chat", {"title": title_from(text)})
            # A turn starting ends the last restore's undo: the chat has moved on.
            if ready.undo_ready:
                await self.kept.drop(chat_id, TURN)
        except BaseException:
            await held.aclose()
            raise
        self.events.publish(chat_id, "message", {"role": "user", "text": text, "turn_index": turn_index})
        start = {
            "messages": [HumanMessage(text)],
            "turn_index": turn_index,
            "questions": [text],
            "iteration": -1,
            "plan": [],
            "routing": {},
            "gates": [],
            "model": self.model_name,
        }
        return StartedTurn(chat_id, turn_index, start, held)

    async def _take(self, chat_id: str, wait: float) -> tuple[contextlib.AsyncExitStack, TurnStart]:
        """The chat's lease, and what starting a turn checks, read in the transaction that takes it."""
        held = contextlib.AsyncExitStack()
        ready = TurnStart()
        await held.enter_async_context(chat_lease(
            self.store.leases, chat_id, "turn", self.settings.agent.lease_seconds, wait, also=self.store.chats.turn_start(chat_id, ready)
        ))
        return held, ready

    async def finish(self, turn: StartedTurn) -> TurnResult:
        """Run a begun turn to its answer (or its approval card), then release the chat."""
        # Stoppable until the lease is released, so a stopped chat takes the next message at once.
        try:
            with self.stops.running(turn.chat_id):
                async with turn.held:
                    return await self._run(turn.chat_id, turn.turn_index, turn.graph_input)
        finally:
            self.events.publish(turn.chat_id, "turn", {"running": False, "turn_index": turn.turn_index})

    async def stop(self, chat_id: str) -> bool:
        """Stop the chat's running turn at its next step boundary; False when none was running."""
        return await self.stops.request(chat_id)

    async def decide(self, chat_id: str, card_id: str, decision: str, by: str) -> TurnResult:
        """Approve or deny a waiting card; the turn it paused goes on."""
        if decision not in ("approve", "deny"):
            raise InvalidInput(message_id="bad_decision")
        card = await self.store.cards.card(chat_id, card_id)
        if card is None:
            raise NotFound(message_id="approval_missing")
        await self.settle_expired(chat_id)
        async with chat_lease(self.store.leases, chat_id, "turn", self.settings.agent.lease_seconds):
            status = "approved" if decision == "approve" else "denied"
            if not await self.store.cards.close_card(card.id, status, by):
                current = await self.store.cards.card(chat_id, card_id)
                raise ApprovalClosed(message_id="approval_closed", status=current.status if current else "gone")
            self.events.publish(chat_id, "approval", {**card.to_dict(), "status": status})
            return await self._run(chat_id, card.turn_index, Command(resume={"decision": decision}))

    async def settle_expired(self, chat_id: str) -> None:
        """Close cards past their time as expired, and let their paused turns finish."""
        now = time.time()
        for card in await self.store.cards.cards(chat_id, "pending"):
            if card.expires_at > now:
                continue
            try:
                async with chat_lease(self.store.leases, chat_id, "turn", self.settings.agent.lease_seconds):
                    if await self.store.cards.close_card(card.id, "expired", None):
                        self.events.publish(chat_id, "approval", {**card.to_dict(), "status": "expired"})
                        await self._run(chat_id, card.turn_index, Command(resume={"decision": "expired"}))
            except KazmaError:
                log.info("chat %s is busy; its expired card %s will be closed later", chat_id, card.id)

    async def close_interrupted(self, chat_id: str) -> bool:
        """Close a turn cut off by a crash (its process died holding the lease) or by the database
        going away, as a failed one, under the chat's lease. The database away again meanwhile,
        the lease stays (leave_to_sweep): the sweep closes the turn once it is back."""
        try:
            snapshot = await self.graph.aget_state(self.config(chat_id))
            chat = await self.store.chats.get_chat(chat_id)
            # A superstep cut short shows as a task (with or without its writes), not always in `next`.
            if chat is None or not (snapshot.next or snapshot.tasks) or await self.store.cards.cards(chat_id, "pending"):
                return False
            # The unshown step goes first: closed, the turn is no longer the sweep's to look at,
            # so a step left by a database away at that moment would stay restorable.
            await self._drop_unshown_step(chat_id, chat.last_turn)
            await self._close_failed_turn(chat_id, chat.last_turn, INTERRUPTED_REASON)
        except StoreUnavailable:
            leave_to_sweep(chat_id)
            raise
        return True

    async def _drop_unshown_step(self, chat_id: str, turn_index: int) -> None:
        """A turn's last step is saved before its answer's checkpoint: a process that died between
        the two left a step whose answer the conversation never took in (nor showed). It goes, so
        a restore cannot bring back an answer the transcript never had."""
        try:
            steps = await self.recorder.store.list_steps(chat_id)
            newest = steps[-1] if steps and steps[-1].turn_index == turn_index else None
            step = await self.recorder.store.get(chat_id, newest.id) if newest else None
            saved = load_messages(step.state.get("messages") or []) if step else []
            held = {m.id for m in (await self.graph.aget_state(self.config(chat_id))).values.get("messages", [])}
            if not saved or saved[-1].id in held:
                return
            if len(steps) > 1:
                await self.recorder.store.delete_after(chat_id, steps[-2].id)
            else:
                await self.recorder.store.delete_from_turn(chat_id, turn_index)
        except StoreUnavailable:
            if database_url(self.settings):
                # The steps share the conversation's database: away for a moment, it stops the
                # closing too, and the sweep does both again once it is back.
                raise
            # A steps file of its own (SQLite) that cannot be used must not hold the chat for ever:
            # the turn is closed, the step left (its file refuses restores until it reads back whole).
            log.exception("time travel: could not check the last step of chat %s's cut turn", chat_id)

    async def _close_failed_turn(self, chat_id: str, turn_index: int, reason: str, role: str = "error") -> bool:
        """Leave the history a finished turn, so the next message does not replay a broken one.

        The note it adds (when the turn has no answer) is the transcript's error row, written
        with the checkpoint that holds it: a turn is never marked failed twice, nor failed
        with its answer saved. A message the cut turn had taken in but not yet saved in a
        checkpoint (its input, a node's output) is kept, so the note follows the person's
        message and carries its turn. True when it added that note."""
        config = self.config(chat_id)
        noted = False
        # Writes a cut superstep had saved are applied with the first update, and may hold a
        # tool call of their own: look again until the history is whole (twice is enough).
        for _ in range(3):
            snapshot = await self.graph.aget_state(config)
            messages = list(snapshot.values.get("messages", []))
            saved = await self.conversation.aget_tuple(config)
            kept = {m.id for m in (saved.checkpoint["channel_values"].get("messages") or [])} if saved else set()
            unsaved = [m for m in messages if m.id not in kept]
            closing = closing_messages(messages, None if noted else reason, role)
            if not (closing or unsaved or snapshot.next or snapshot.tasks):
                break
            noted = noted or any(isinstance(m, AIMessage) for m in closing)
            done: dict[str, Any] = {"messages": [*unsaved, *closing], "routing": {"next": "done", "tools": []}}
            if unsaved:
                done.update({k: snapshot.values[k] for k in ("turn_index", "questions") if k in snapshot.values})
            await self.graph.aupdate_state(config, done, as_node="respond")
            turn_index = int(snapshot.values.get("turn_index", turn_index))
        if noted:
            self.events.publish(chat_id, "message", {"role": role, "text": reason, "turn_index": turn_index})
        return noted

    async def _close_stopped(self, chat_id: str, turn_index: int, state: dict[str, Any]) -> TurnResult:
        """End a turn a Stop broke off at a step boundary. The save of the state it stopped at may
        have failed (the database away at that moment): like a cut turn's, its last step goes
        when its answer was not saved, and the turn is closed with a note unless that answer was."""
        try:
            await self._drop_unshown_step(chat_id, turn_index)
            noted = await self._close_failed_turn(chat_id, turn_index, STOPPED_REASON, role="stopped")
        except StoreUnavailable:
            leave_to_sweep(chat_id)
            raise
        cut = _stopped_answer(state)
        if cut is not None and not noted:  # stopped while the answer was being said: what was said is kept, marked stopped
            self.events.publish(chat_id, "message", {"role": "stopped", "text": cut, "turn_index": turn_index})
            return TurnResult(cut, turn_index, "stopped", [])
        return TurnResult(STOPPED_REASON, turn_index, "stopped", [])

    async def _run(self, chat_id: str, turn_index: int, graph_input: Any) -> TurnResult:
        workspace, limits = await self.quota.turn_scope(chat_id)
        # A tool step is saved while the graph goes on (the step store's one thread keeps their
        # order); the turn ends only when every one of them is saved.
        captures: list[asyncio.Task[Any]] = []

        async def keep_last_step(values: dict[str, Any]) -> StepInfo | None:
            """The turn's last step, saved before its answer is shown (agent/graph.py), after
            the tool steps before it. See SnapshotRecorder.capture for a step store that is down.

            The save is one of the turn's captures, which the turn waits for before it is closed:
            a Stop that ends the stream cancels the node mid-save, and the step would otherwise be
            written after the closing had looked for an unshown step (a restore to it would bring
            back an answer the transcript never had)."""
            await asyncio.gather(*captures)
            save = asyncio.ensure_future(self.recorder.save(self.recorder.prepare(chat_id, values, last=True)))
            captures.append(save)
            return await asyncio.shield(save)

        deps = TurnDeps(
            chat_id=chat_id,
            turn_index=turn_index,
            memories=self.store.memories,
            cards=self.store.cards,
            model=self.model,
            workspace=workspace,
            max_iterations=self.settings.agent.max_iterations,
            context_tokens=self.settings.model.context_tokens,
            approval_ttl=self.settings.agent.approval_ttl_seconds,
            limits=limits,
            keep_last_step=keep_last_step,
            activity=(activity := DeltaStream(lambda type_, data: self.events.publish(chat_id, type_, data), turn_index)),
        )
        node: str | None = None
        interrupted = False
        state: dict[str, Any] = {}
        stopped = False
        stoppable = contextlib.ExitStack()  # a resumed turn (an approval answered) can be stopped too
        stoppable.enter_context(self.stops.running(chat_id))
        try:
            # Closed on the way out, a Stop's break included: LangGraph then finishes the checkpoint
            # it was writing (a "values" chunk comes before its save) before the turn is closed.
            # Left to the garbage collector, that save could land after the closing, or fail unseen.
            try:
                async with self.conversation.gathering(chat_id), contextlib.aclosing(self.graph.astream(
                    graph_input, self.config(chat_id), context=deps, stream_mode=["updates", "values"]
                )) as stream:
                    async for mode, chunk in stream:
                        if mode == "updates":
                            interrupted = interrupted or "__interrupt__" in chunk
                            node = next((k for k in chunk if k in CAPTURED_NODES), None)
                            continue
                        state = chunk
                        if node is not None:
                            step = self.recorder.prepare(chat_id, state, last=False)
                            captures.append(asyncio.create_task(self.recorder.save(step)))
                            node = None
                        if self.stops.requested(chat_id):  # a step boundary: the saved state is whole
                            stopped = True
                            break
            finally:
                activity.close()  # the last pieces go before whatever the turn ends with
                await asyncio.gather(*captures)
        except StoreUnavailable:
            # The database went away mid-turn: the turn is closed now as a crash's is (its error
            # note, and its last step dropped when the answer it ends was never saved), before the
            # chat takes anything else; else by the sweep. Left open, the step of an answer nobody
            # saw could be restored, bringing back an answer the transcript never had.
            with contextlib.suppress(StoreUnavailable):
                await self.close_interrupted(chat_id)
            raise
        except KazmaError:
            raise
        except Exception as err:
            log.exception("turn %s of chat %s failed", turn_index, chat_id)
            failure = TurnFailed(message_id="turn_failed", cause=f"{type(err).__name__}: {without_paths(str(err))}")
            await self._close_failed_turn(chat_id, turn_index, failure.message)
            raise failure from err
        finally:
            stoppable.close()
        if stopped and not interrupted:
            return await self._close_stopped(chat_id, turn_index, state)
        if interrupted:
            cards = await self.store.cards.cards(chat_id, "pending")
            for card in cards:
                self.events.publish(chat_id, "approval", card.to_dict())
            return TurnResult("", turn_index, "awaiting_approval", gates_of(cards))
        reply = next((m.text for m in reversed(state.get("messages", [])) if isinstance(m, AIMessage)), "")
        self.events.publish(chat_id, "message", {"role": "assistant", "text": reply, "turn_index": turn_index})
        if turn_index % PRUNE_EVERY == 0:
            await self.conversation.trim(chat_id, self.settings.history.checkpoints_per_chat)
        return TurnResult(reply, turn_index, "done", [])
