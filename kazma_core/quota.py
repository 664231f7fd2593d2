"""Each user's storage and its limits: what one person may keep, and what a turn may take.

A user's storage is what Kazma keeps for them: the text of their conversations and
memories (kazma.db), their chats' saved steps (snapshots.db) and their own files.
It is summed when asked (a family's or a team's data, not a warehouse), so no counter
can drift from what is really on disk.

Every write a person makes is refused by one rule once they are at the quota
(`refuse_when_full`, 413 quota_exceeded): a message (`check_message`, from the start of
every turn, so an edit or a regenerate that runs a turn is held to it too), a new chat
(the chat API), a restore and a fork (the rewind service, for every surface).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

from kazma_core.agent.tools import Room, ToolLimits
from kazma_core.errors import MessageTooLong, NotFound, QuotaExceeded, StoreUnavailable
from kazma_core.settings import Settings
from kazma_core.stores.chats_sql import ChatStore
from kazma_core.stores.snapshots import SnapshotStore

log = logging.getLogger(__name__)

ROOM_SECONDS = 5.0


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under a folder (0 when it does not exist); links are not followed."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


class StorageQuota:
    def __init__(self, settings: Settings, chats: ChatStore, snapshots: SnapshotStore) -> None:
        self.settings = settings
        self.chats = chats
        self.snapshots = snapshots
        self._used: dict[str, tuple[float, int]] = {}
        self._owners: dict[str, str] = {}

    async def room(self, user_id: str, *, fresh: bool = True) -> Room:
        """What the user keeps against the quota. Summing it reads every chat of the user, so the
        check before each message, chat, restore or fork (not fresh) sums again only every
        ROOM_SECONDS for a user well under the quota (less than half); near the limit, and for a
        file, every time. A message and a fork count their bytes at once (`added`): a fork of a
        10,000-message chat summed all of its owner's chats again (a quarter of its time)."""
        now = time.monotonic()
        quota = self.settings.limits.user_quota_bytes
        cached = self._used.get(user_id)
        if not fresh and cached is not None and now - cached[0] < ROOM_SECONDS and cached[1] < quota // 2:
            return Room(cached[1], quota)
        room = await self._measure(user_id)
        self._used[user_id] = (now, room.used)
        return room

    async def _measure(self, user_id: str) -> Room:
        chats, text_bytes = await self.chats.owner_text_bytes(user_id)
        try:
            steps = await self.snapshots.bytes_of(chats)
        except StoreUnavailable:
            log.warning("quota: the saved steps cannot be read; counting the user's files and text only")
            steps = 0
        files = await asyncio.to_thread(folder_bytes, self.settings.files_of(user_id))
        return Room(text_bytes + steps + files, self.settings.limits.user_quota_bytes)

    def added(self, user_id: str, size: int) -> None:
        """Count a write's bytes at once (a fork's rows and step), before the next full sum: the
        figure a check reads between sums is never less than what the user has written since."""
        seen = self._used.get(user_id)
        if seen is not None:
            self._used[user_id] = (seen[0], seen[1] + size)

    async def check_message(self, chat_id: str, text: str) -> None:
        """Refuse a message over the length limit, or one whose chat's owner has no room left."""
        limit = self.settings.limits.max_message_chars
        if len(text) > limit:
            raise MessageTooLong(
                message_id="message_too_long", length=len(text), limit=limit, setting="limits.max_message_chars"
            )
        owner = await self.owner_of(chat_id)
        room = await self.room(owner, fresh=False)
        self.added(owner, len(text.encode()))  # the message counts at once, before the next full sum
        _refuse_if_full(room)

    async def refuse_when_full(self, user_id: str, *, fresh: bool) -> None:
        """Refuse a write for this user (a new chat, a restore, a fork) once they are at the quota;
        `fresh` for a write whose size is not counted with `added` (a version's chat)."""
        _refuse_if_full(await self.room(user_id, fresh=fresh))

    async def owner_of(self, chat_id: str) -> str:
        """The chat's owner (a chat never changes hands, so it is looked up once)."""
        owner = self._owners.get(chat_id)
        if owner is None:
            chat = await self.chats.get_chat(chat_id)
            if chat is None:
                raise NotFound(message_id="chat_missing")
            owner = self._owners[chat_id] = chat.owner_id
        return owner

    async def turn_scope(self, chat_id: str) -> tuple[Path, ToolLimits]:
        """The folder a chat's tools work in (its owner's own) and the limits they run under."""
        owner = await self.owner_of(chat_id)
        folder = self.settings.files_of(owner)
        async def keep_file(path: str, before: bytes | None, after: bytes) -> None:
            await self.snapshots.files.record_write(chat_id, path, before, after)

        # With time travel off no step will ever refer to what a write changed: nothing is kept.
        keep = keep_file if self.settings.time_travel.enabled else None
        return folder, ToolLimits(self.settings.limits.max_tool_result_chars, lambda: self.room(owner), keep)


def _refuse_if_full(room: Room) -> None:
    if room.used >= room.quota:
        raise QuotaExceeded(
            message_id="quota_exceeded", used_kb=room.used // 1024, quota_kb=room.quota // 1024,
            limit=room.quota, setting="limits.user_quota_bytes",
        )
