"""The one rewind service: list, read, restore, fork, compare and clear saved steps.

Every surface (HTTP, web, TUI, Telegram, Discord, Slack) calls this and nothing else
for time travel, so each rule lives here once: step addresses, ownership (failing
closed with not_found), refusals, the durable restore, the audit trail, the metrics.
Beside it, each of its parts in a module of its own: the shapes it answers with
(`rewind_results.py`), step addresses (`step_address.py`), the undo of a restore
(`rewind_undo.py`), the audit trail and metrics (`rewind_audit.py`), and the readable
views of saved states (`step_views.py`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from langchain_core.messages import AIMessage, AnyMessage, message_to_dict

from kazma_core import crashpoints
from kazma_core.agent.graph import write_finished_turn
from kazma_core.core import Core
from kazma_core.errors import (
    AmbiguousStep,
    ApprovalPending,
    FilesChanged,
    Forbidden,
    InvalidInput,
    NotFound,
    SnapshotTruncated,
    StoreUnavailable,
    TurnRunning,
    WrongMessage,
)
from kazma_core.messages import load_messages
from kazma_core.replicas.leases import chat_lease
from kazma_core.rewind.files import RESTORED, FileChange, write_files
from kazma_core.rewind.rows import TURN, Intent, RewindRows, StepPoint
from kazma_core.stores.snapshots import StepHead, StepInfo
from kazma_core.stores.types import Chat, User
from kazma_core.time_travel import strip_platform_ids
from kazma_core.titles import fork_title
from kazma_ui.message_point import MessagePoint, message_point, points_of, resolve_message
from kazma_ui.paging import window
from kazma_ui.rewind_audit import Audited
from kazma_ui.rewind_results import (
    ChatWithSteps,
    Cleared,
    Comparison,
    FileView,
    Forked,
    Lineage,
    Restored,
    RestorePreview,
    StepDetail,
    StepList,
    StepView,
    Turn,
    TurnStep,
    Undone,
    UndoOffer,
)
from kazma_ui.rewind_undo import Undos
from kazma_ui.step_address import step_prefix
from kazma_ui.step_views import compare_states, message_view, side_effects, step_action, step_label

log = logging.getLogger(__name__)

LINEAGE_DEPTH = 100  # forks of forks followed up to their first chat, at most this deep


READ = "read"
CHANGE = "change"

# What a restore takes back: the conversation (the SPEC's restore), the files its tools wrote, or both.
CONVERSATION = "conversation"
FILES = "files"
BOTH = "both"
WHAT = (CONVERSATION, FILES, BOTH)


def file_views(changes: list[FileChange]) -> list[FileView]:
    return [FileView(path=c.path, change=c.change, changed_since=c.changed_since, diff=c.diff()) for c in changes]


def refuse_changed(changes: list[FileChange], force: bool, message_id: str = "files_changed") -> None:
    """A file something other than the chat's tools changed is overwritten only when the person said so."""
    changed = [c.path for c in changes if c.changed_since]
    if changed and not force:
        raise FilesChanged(message_id=message_id, files=changed)


@dataclass(frozen=True)
class GroupGrant:
    """What a chat app vouches for: this user is in the group chat bound to chat_id, as member or admin."""

    chat_id: str
    role: str  # member | admin


def ends_with_answer(messages: list[AnyMessage]) -> bool:
    """Whether a history ends with the turn's answer (an AI message asking for no tool)."""
    return bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls


def label_of(info: StepInfo) -> str:
    """The step's English label ("turn 2, step 1"), as the service's sentences name it."""
    return step_label(info.turn_index, info.iteration)


def step_view(info: StepInfo) -> StepView:
    return StepView(
        step_id=info.id, chat_id=info.chat_id, turn_index=info.turn_index, iteration=info.iteration,
        label=label_of(info), created_at=info.created_at, model=info.model, questions=info.questions,
        message_count=info.message_count, size=info.size, truncated=info.truncated,
        action=step_action(info.did), did=info.did,
    )


class RewindService:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.rows = RewindRows(core.store.db)
        self.undos = Undos(core, self.rows)
        self.audited = Audited(core)

    # addresses and checks ---------------------------------------------------------------
    async def _access(self, user: User, chat_id: str, grant: GroupGrant | None, need: str) -> Chat:
        """The chat's owner may do anything; in a group chat, a member may read and fork
        (a fork is theirs), an admin may also restore and clear. Anyone else: not_found."""
        chat = await self.core.store.chats.get_chat(chat_id) if chat_id else None
        if chat is not None and chat.owner_id == user.id:
            return chat
        if chat is None or grant is None or grant.chat_id != chat_id:
            raise NotFound(message_id="chat_not_yours")
        if need == CHANGE and grant.role != "admin":
            raise Forbidden(message_id="group_admins_only")
        return chat

    async def resolve(self, chat_id: str, address: str) -> StepInfo:
        """A full id or a unique prefix of at least 8 hex characters, within this chat only."""
        given, prefix = step_prefix(address)
        found = await self.core.snapshots.find(chat_id, prefix, limit=10)
        if not found:
            chat = await self.core.store.chats.get_chat(chat_id)
            source = chat.forked_from["thread_id"] if chat and chat.forked_from else None
            if source and await self.core.snapshots.find(source, prefix, limit=1):
                raise NotFound(message_id="step_in_source", address=given, chat=source)
            raise NotFound(message_id="step_not_found", address=given)
        if len(found) > 1:
            raise AmbiguousStep(
                message_id="ambiguous_step", address=given, count=len(found),
                matches=[{"turn": s.turn_index, "step": s.iteration, "id": s.id} for s in found],
                candidates=[f"{label_of(s)} ({s.id})" for s in found],  # the API's English list, kept for its readers
            )
        return found[0]

    async def _target(self, chat_id: str, address: str | None, message_id: int | None) -> StepInfo | None:
        """The step a restore or fork goes to: by its address, or by a transcript message
        (`message_point.py`); None for the empty conversation before the first message."""
        if message_id is None:
            return await self.resolve(chat_id, address or "")
        return (await resolve_message(self.core, chat_id, message_id)).step

    async def _target_step(self, chat_id: str, address: str | None, message_id: int | None) -> StepInfo:
        """As `_target`, for a restore: before the first message there is no step to go back to."""
        info = await self._target(chat_id, address, message_id)
        if info is None:
            raise WrongMessage(message_id="nothing_before_first")
        return info

    async def message_points(self, user: User, surface: str, chat_id: str, grant: GroupGrant | None = None) -> list[MessagePoint]:
        """Each transcript message's point (what rewind or fork from it goes to, or that it is no longer kept)."""
        await self._access(user, chat_id, grant, READ)
        return points_of(await self.core.store.transcript.transcript(chat_id), await self.core.snapshots.list_steps(chat_id))

    async def message_point(self, user: User, surface: str, chat_id: str, message_id: int, grant: GroupGrant | None = None) -> MessagePoint:
        """One transcript message's point, its step None when that is no longer kept."""
        await self._access(user, chat_id, grant, READ)
        return await message_point(self.core, chat_id, message_id)

    @staticmethod
    def _refuse_truncated(info: StepInfo) -> None:
        if info.truncated:
            raise SnapshotTruncated(message_id="snapshot_truncated", turn=info.turn_index, step=info.iteration)

    # reading -------------------------------------------------------------------------------
    async def list_chats(self, user: User, surface: str) -> list[ChatWithSteps]:
        """The person's chats that have saved steps."""
        chats = {c.id: c for c in await self.core.chats.list(user)}
        return [
            ChatWithSteps(chat_id=t.chat_id, title=chats[t.chat_id].title, steps=t.steps, bytes=t.bytes, last_at=t.last_at)
            for t in await self.core.snapshots.threads()
            if t.chat_id in chats
        ]

    async def list_steps(self, user: User, surface: str, chat_id: str, grant: GroupGrant | None = None) -> StepList:
        await self._access(user, chat_id, grant, READ)
        infos = await self.core.snapshots.list_steps(chat_id)
        turns: dict[int, Turn] = {}
        for info in infos:
            turn = turns.setdefault(info.turn_index, Turn(turn_index=info.turn_index, questions=info.questions, steps=[]))
            turn.steps.append(TurnStep(
                step=info.iteration, step_id=info.id, label=label_of(info), truncated=info.truncated,
                action=step_action(info.did), did=info.did,
            ))
        return StepList(chat_id=chat_id, steps=[step_view(i) for i in infos], turns=list(turns.values()))

    async def get_step(
        self, user: User, surface: str, chat_id: str, address: str, grant: GroupGrant | None = None,
        *, before: int | None = None, limit: int | None = None,
    ) -> StepDetail:
        """The step with its messages: all of them, or one page (`kazma_ui/paging.py`: the newest
        `limit`, or those before position `before`), read from the store without the others."""
        await self._access(user, chat_id, grant, READ)
        info = await self.resolve(chat_id, address)
        step = await self.core.snapshots.get(chat_id, info.id, window(info.message_count, before, limit))
        if step is None:
            raise NotFound(message_id="step_deleted")
        state = step.state
        return StepDetail(
            step=step_view(info), messages=[message_view(m) for m in state.get("messages", [])],
            plan=state.get("plan"), routing=state.get("routing"), cost=state.get("cost"),
            scratchpad=state.get("scratchpad"), model=state.get("model"), gates=state.get("gates"),
            first=step.first, more=step.first > 0, added_from=step.added_from,
        )

    async def preview_restore(
        self, user: User, surface: str, chat_id: str, address: str | None, grant: GroupGrant | None = None,
        *, refuse_cut: bool = False, message_id: int | None = None,
    ) -> RestorePreview:
        """What a restore to this step would take back, and the side effects it will not undo.
        It refuses as the restore would (and audits the refused restore), so nobody is asked
        to confirm what cannot happen. A step saved cut is refused too with `refuse_cut` (a
        command's question); the Time Travel page shows such a step as not restorable instead."""
        async with self.audited.attempt("restore", user, surface, chat_id, refusals_only=True) as attempt:
            chat = await self._access(user, chat_id, grant, CHANGE)
            await self.core.turns.quota.refuse_when_full(chat.owner_id, fresh=False)
            info = await self._target_step(chat_id, address, message_id)
            attempt.step_id = info.id
            if refuse_cut:
                self._refuse_truncated(info)
            attempt.detail = {"stage": "preview"}
            await self.core.turns.settle_expired(chat_id)
            if await self.core.store.leases.lease(chat_id) is not None:
                raise TurnRunning(message_id="turn_running_preview")
            await self._refuse_pending(chat_id)
        current = await self.core.turns.graph.aget_state(self.core.turns.config(chat_id))
        later = [message_to_dict(m) for m in current.values.get("messages", [])[info.message_count :]]
        steps = await self.core.snapshots.list_steps(chat_id)
        # The files are in the owner's folder: only the owner is shown (and may restore) them.
        files = await self._file_plan(chat_id, info.id) if chat.owner_id == user.id else []
        return RestorePreview(
            files=file_views(files),
            step=step_view(info),
            side_effects=side_effects(later),
            later_steps=sum(1 for s in steps if s.seq > info.seq),
            later_turns=max((await self.core.store.chats.get_chat(chat_id)).last_turn - info.turn_index, 0),  # type: ignore[union-attr]
            restorable=not info.truncated,
        )

    async def preview_fork(
        self, user: User, surface: str, chat_id: str, address: str | None, grant: GroupGrant | None = None,
        *, message_id: int | None = None,
    ) -> StepView:
        """The step a fork would branch. A step saved cut is refused as the fork would refuse it,
        and the refusal audited, so nobody is asked to confirm what cannot happen. Before the
        first message (by `message_id`) there is no step: use `message_point` for that."""
        await self._access(user, chat_id, grant, READ)
        info = await self._target_step(chat_id, address, message_id)
        async with self.audited.attempt("fork", user, surface, chat_id, refusals_only=True) as attempt:
            attempt.step_id = info.id
            self._refuse_truncated(info)
            await self.core.turns.quota.refuse_when_full(user.id, fresh=True)
        return step_view(info)

    async def _lineage_root(self, chat_id: str) -> str:
        """The first chat a chat was forked from (itself when it is no fork)."""
        current = chat_id
        for _ in range(LINEAGE_DEPTH):
            chat = await self.core.store.chats.get_chat(current)
            if chat is None or not chat.forked_from:
                break
            current = Lineage.model_validate(chat.forked_from).chat_id
        return current

    async def compare(
        self, user: User, surface: str, chat_id: str, a: str, b: str, grant: GroupGrant | None = None,
        b_chat_id: str | None = None,
    ) -> Comparison:
        """Two steps of one chat, or of two chats of one lineage (a fork and its source, two forks
        of one chat): the person must be allowed to read both chats, or it is not_found."""
        other = b_chat_id or chat_id
        await self._access(user, chat_id, grant, READ)
        if other != chat_id:
            await self._access(user, other, grant, READ)
            if await self._lineage_root(chat_id) != await self._lineage_root(other):
                raise InvalidInput(message_id="other_lineage", reason="other_lineage")
        ia, ib = await self.resolve(chat_id, a), await self.resolve(other, b)
        sa, sb = await self.core.snapshots.get(chat_id, ia.id), await self.core.snapshots.get(other, ib.id)
        if sa is None or sb is None:
            raise NotFound(message_id="steps_deleted")
        return compare_states(sa.state, sb.state, ia, ib)

    # changing ------------------------------------------------------------------------------
    async def _step_messages(self, chat_id: str, head: StepHead) -> list[AnyMessage]:
        """The step's messages. When the conversation's first messages end with the step's last
        one (same id, same body), they are the step's: the conversation's own objects, which
        the conversation store writes back as references. Otherwise (the chat was reset since,
        say) they are rebuilt from the step, and stored again only where their bodies are gone."""
        count = head.info.message_count
        found = await self.core.conversation.head(chat_id)
        if found is not None and count == 0:
            return []
        if found is not None and head.tail_digest is not None and len(found[1]) >= count:
            checkpoint_id, messages = found
            if messages[count - 1].id == head.tail_key and (
                await self.core.conversation.body_digest(chat_id, checkpoint_id, count - 1) == head.tail_digest
            ):
                return messages[:count]
        step = await self.core.snapshots.get(chat_id, head.info.id)
        if step is None:
            raise NotFound(message_id="step_deleted")
        return load_messages(strip_platform_ids(step.state).get("messages") or [])

    async def _file_plan(self, chat_id: str, step_id: str) -> list[FileChange]:
        workspace = await self.core.rewinds.workspace(chat_id)
        return await self.core.rewinds.files.plan(chat_id, step_id, workspace)

    async def restore(
        self, user: User, surface: str, chat_id: str, address: str | None, grant: GroupGrant | None = None,
        *, message_id: int | None = None, what: str = CONVERSATION, force: bool = False,
    ) -> Restored:
        """Restore the chat to a step, given by its address or by a transcript message
        (`message_point.py`: right after an answer, right before a person's message): its
        conversation (the SPEC's restore), the files its tools wrote (`what`: files), or both.
        Files something else changed since are refused (files_changed) unless `force`; only the
        owner's own folder is ever touched."""
        if what not in WHAT:
            raise InvalidInput(message_id="bad_what", what=what, choices=list(WHAT))
        async with self.audited.attempt("restore", user, surface, chat_id) as attempt:
            chat = await self._access(user, chat_id, grant, CHANGE)
            if what != CONVERSATION and chat.owner_id != user.id:
                raise Forbidden(message_id="files_owner_only")
            # The chat's storage is its owner's; a restore writes little (it takes back more).
            await self.core.turns.quota.refuse_when_full(chat.owner_id, fresh=False)
            info = await self._target_step(chat_id, address, message_id)
            attempt.step_id = info.id
            self._refuse_truncated(info)
            await self.core.turns.settle_expired(chat_id)
            ttl = self.core.settings.agent.lease_seconds
            async with chat_lease(self.core.store.leases, chat_id, "restore", ttl):
                await self._refuse_pending(chat_id)
                head = await self.core.snapshots.head(chat_id, info.id)
                if head is None:
                    raise NotFound(message_id="step_deleted")
                # Only the last restore can be undone: what an earlier one took back goes for good now
                # (the files' write-ahead logs emptied after the answer).
                await self.core.kept.drop(chat_id, TURN, purge_later=True)
                changes = await self._file_plan(chat_id, info.id) if what != CONVERSATION else []
                refuse_changed(changes, force)
                attempt.checkpoint_before = await self.core.conversation.latest_id(chat_id)
                messages = await self._step_messages(chat_id, head)
                crashpoints.passed("restore-messages")
                point = StepPoint(info.turn_index, info.iteration, ends_with_answer(messages))
                restore_id = uuid.uuid4().hex
                # What the files hold now, kept for the undo before anything is decided (a crash
                # before the commit leaves rows no undo wants, which the next start deletes).
                bases = await self.core.rewinds.files.keep_for_undo(chat_id, restore_id, changes) if changes else {}
                intent = Intent(restore_id, chat_id, info.id, "rows_done", {
                    "turn_index": point.turn_index, "iteration": point.iteration,
                    "is_turn_answer": point.is_turn_answer, "checkpoint_before": attempt.checkpoint_before,
                    "what": what, "files": [[c.path, c.to_n, bases[c.path]] for c in changes],
                })
                undo_seconds = self.core.settings.time_travel.undo_seconds
                if what == FILES:
                    # The conversation stays: the restore is its undo row and intent, then the files.
                    await self.core.store.db.tx(self.rows.files_only_writes(intent, undo_seconds))
                else:
                    # The step written back, the later rows taken back and the intent: one transaction.
                    async with self.core.conversation.same_transaction(
                        chat_id, self.rows.restore_writes(intent, point, undo_seconds), rewind=True,
                        taken_back=self.rows.keep_rows(intent.id), last_turn_rows=True,
                    ):
                        await write_finished_turn(self.core.turns.graph, chat_id, strip_platform_ids(head.fields), messages)
                    crashpoints.passed("restore-checkpoint")
                # The files and the steps: what a crash leaves of it is finished at the next start.
                removed = await self._finish(intent)
            attempt.detail = {"removed_steps": removed, "what": what, "files": [c.path for c in changes]}
        self.core.events.publish(chat_id, "reload", {"reason": "restored", "snapshot_id": info.id})
        return Restored(
            chat_id=chat_id, step=step_view(info), turn_index=info.turn_index, removed_steps=removed,
            undo=await self.undos.offer(chat_id), what=what, files=file_views(changes),
        )

    async def undo_offer(self, chat_id: str) -> UndoOffer | None:
        """What an undo of the chat's last restore is offered with, or None when there is none."""
        return await self.undos.offer(chat_id)

    async def undo(
        self, user: User, surface: str, chat_id: str, grant: GroupGrant | None = None, *, force: bool = False
    ) -> Undone:
        """Put back exactly what the chat's last restore took (`Undos.put_back`), with a restore's
        own checks: its owner or a group's admin, not while a turn runs or an approval waits. Files
        the restore changed and something else changed since are refused unless `force`."""
        async with self.audited.attempt("undo", user, surface, chat_id) as attempt:
            await self._access(user, chat_id, grant, CHANGE)
            await self.core.turns.settle_expired(chat_id)
            async with chat_lease(self.core.store.leases, chat_id, "undo", self.core.settings.agent.lease_seconds):
                await self._refuse_pending(chat_id)
                undo = await self.undos.undoable(chat_id)
                if await self.core.snapshots.files.undo_rows(chat_id, undo.restore_id):
                    workspace = await self.core.rewinds.workspace(chat_id)
                    changed = await self.core.rewinds.files.changed_since_restore(chat_id, undo.restore_id, workspace)
                    if changed and not force:
                        raise FilesChanged(message_id="files_changed_undo", files=changed)
                attempt.step_id = undo.step_id
                attempt.checkpoint_before = await self.core.conversation.latest_id(chat_id)
                back = await self.undos.put_back(undo)
            attempt.detail = {"restore_id": undo.restore_id, **back.model_dump()}
        self.core.events.publish(chat_id, "reload", {"reason": "undone"})
        return Undone(chat_id=chat_id, undone_step_id=undo.step_id, turn_index=undo.last_turn_before, back=back)

    async def _refuse_pending(self, chat_id: str) -> None:
        pending = await self.core.store.cards.cards(chat_id, "pending")
        if pending:
            raise ApprovalPending(message_id="approval_pending", gates=[c.to_dict() for c in pending])
        crashpoints.passed("checks")

    async def _finish(self, intent: Intent) -> int:
        """The restore's part outside kazma.db: the steps after it. Safe to run again after a crash."""
        return await self.core.rewinds.restore_steps(intent)

    async def recover(self) -> int:
        """Finish every restore and undo a crash interrupted (run at start, after Core.recover,
        before serving).

        A restore's checkpoint and rows committed together with its intent, an undo's with its
        row's state: what is left is the steps, in snapshots.db."""
        finished = len(await self.core.rewinds.finish_cut(wait=self.core.settings.agent.lease_seconds + 1))
        # Steps kept aside for an undo that is gone (a crash between its two files). An unreadable
        # snapshots.db must not keep the server from starting: every read of it says so.
        try:
            await self.core.snapshots.drop_kept_except(await self.rows.live_restores())
        except StoreUnavailable as err:
            log.warning("kept-aside steps not checked at start: %s", err.message)
        # A process killed before a restore's purge left what it gave up in the write-ahead logs.
        self.core.kept.purge_soon()
        return finished

    async def fork(
        self, user: User, surface: str, chat_id: str, address: str | None, grant: GroupGrant | None = None,
        *, message_id: int | None = None, files: bool = False, force: bool = False,
    ) -> Forked:
        """Branch a step into a new chat of the forker's: given by its address, or by a transcript
        message (before the first message: a new empty chat with its lineage). With `files`, the
        step's files are put in the forker's own folder (files something else changed there are
        refused unless `force`)."""
        async with self.audited.attempt("fork", user, surface, chat_id) as attempt:
            source = await self._access(user, chat_id, grant, READ)
            quota = self.core.turns.quota
            await quota.refuse_when_full(user.id, fresh=False)  # the new chat is the forker's: its bytes are added below
            found = await self._target(chat_id, address, message_id)
            if found is None:
                empty = await self.core.store.chats.create_chat(
                    user.id, f"{source.title} (fork)"[:200],
                    forked_from={"thread_id": chat_id, "snapshot_id": None, "turn_index": 0, "iteration": None},
                )
                attempt.new_chat_id = empty.id
                return Forked(
                    chat_id=empty.id, title=empty.title,
                    forked_from=Lineage.model_validate(empty.forked_from) if empty.forked_from else None, step_id=None,
                )
            info = found
            attempt.step_id = info.id
            self._refuse_truncated(info)
            changes: list[FileChange] = []
            if files:
                # Only the step's files, in the forker's folder: what the source chat's tools left
                # there counts as theirs only when the forker owns the source.
                workspace = self.core.settings.files_of(user.id)
                planned = await self.core.rewinds.files.plan(
                    chat_id, info.id, workspace, own_marks=source.owner_id == user.id
                )
                changes = [c for c in planned if c.change == RESTORED]
                refuse_changed(changes, force)
            head = await self.core.snapshots.head(chat_id, info.id)
            if head is None:
                raise NotFound(message_id="step_deleted")
            messages = await self._step_messages(chat_id, head)
            new_id = uuid.uuid4().hex
            point = StepPoint(info.turn_index, info.iteration, ends_with_answer(messages))
            title = fork_title(source.title)
            # The chat row, its transcript and facts, and its first checkpoint commit together.
            counted: list[int] = []
            writes = self.rows.fork_writes(new_id, user.id, title, chat_id, info.id, point, counted)
            async with self.core.conversation.same_transaction(
                new_id, writes, fork_from=chat_id, rewind=True, last_turn_rows=True
            ):
                await write_finished_turn(self.core.turns.graph, new_id, strip_platform_ids(head.fields), messages)
            chat = await self.core.store.chats.get_chat(new_id)
            copied = await self.core.snapshots.copy(chat_id, info.id, new_id, uuid.uuid4().hex, self.core.recorder.budgets)
            for change in changes:  # after the copy: the fork's files are bodies of its space
                await self.core.snapshots.files.record_write(new_id, change.path, change.disk, change.to or b"")
            if changes:
                await asyncio.to_thread(write_files, workspace, [(c.path, c.to) for c in changes])
            # What the fork added (its rows, its step and files kept, the files written; at most the
            # latter's size), counted before the next full sum.
            stored = (await self.core.snapshots.usage(new_id))[1]
            quota.added(user.id, sum(counted) + stored + sum(len(c.to or b"") for c in changes))
            attempt.new_chat_id = new_id
        return Forked(
            chat_id=new_id,
            title=title,
            forked_from=Lineage.model_validate(chat.forked_from) if chat and chat.forked_from else None,
            step_id=copied.id if copied else None,
            files=file_views(changes),
        )

    async def clear(self, user: User, surface: str, chat_id: str, grant: GroupGrant | None = None) -> Cleared:
        async with self.audited.attempt("clear", user, surface, chat_id) as attempt:
            await self._access(user, chat_id, grant, CHANGE)
            async with chat_lease(self.core.store.leases, chat_id, "clear", self.core.settings.agent.lease_seconds, wait=2.0):
                deleted = await self.core.snapshots.delete_chat(chat_id)
                await self.core.snapshots.purge_wal()  # no copy of the deleted steps stays in a WAL
            attempt.detail = {"deleted": deleted}
        return Cleared(chat_id=chat_id, deleted=deleted)
