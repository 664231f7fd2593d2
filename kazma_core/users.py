"""Who has access to Kazma, and ending it: the owner's first sign-in, and what `kazma users`
adds, links, lists, gives a new token or removes.

The rules live here, in the core; the command line only words what these return
(kazma_server/cli_users.py), in the catalogue's sentences.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kazma_core.errors import KazmaError
from kazma_core.quota import folder_bytes
from kazma_core.replicas.claims import one_at_a_time
from kazma_core.settings import Settings
from kazma_core.stores.backends import database_url
from kazma_core.stores.types import User
from kazma_core.stores.users_sql import UserStore

if TYPE_CHECKING:  # `kazma serve` signs its owner in before the core (and its graph) is imported
    from kazma_core.core import Core

PLATFORMS = ("telegram", "discord", "slack")
LOGIN_TTL = 86_400
FIRST_OWNER = "first-owner"  # the lock replicas starting on an empty database make the owner under


def platform_identity(platform: str, user_id: str, team: str = "") -> str:
    """The key a chat-app account is linked to a user by: telegram:<id>, discord:<id>, slack:<team>:<id>."""
    return f"{platform}:{team}:{user_id}" if platform == "slack" else f"{platform}:{user_id}"


def checked_identity(identity: str) -> str:
    """An identity as `platform_identity` makes them, or the refusal that shows the three forms."""
    platform, _, rest = identity.partition(":")
    parts = rest.split(":")
    if platform not in PLATFORMS or not all(parts) or identity != platform_identity(platform, parts[-1], parts[0]):
        raise KazmaError(message_id="not_a_platform_identity", identity=identity)
    return identity


async def first_sign_in(settings: Settings, store: UserStore) -> str | None:
    """Make the owner on first start; a fresh one-time sign-in link on every start.

    Replicas started together on an empty database make the owner one at a time (a lock of the
    database): the first makes it and gives its link; one that waited while it did finds it
    made and gives none (None), so a new deployment has one owner and one sign-in link."""
    owner = await store.owner()
    if owner is None:
        async with one_at_a_time(database_url(settings), FIRST_OWNER):
            if await store.owner() is not None:
                return None
            name = "owner" if await store.user_by_name("owner") is None else f"owner-{secrets.token_hex(3)}"
            owner = await store.add_user(name, role="owner")
    token = await store.issue_token(owner.id, "login", ttl=LOGIN_TTL)
    return f"{settings.base_url}/login?token={token}"


@dataclass(frozen=True)
class Usage:
    user: User
    chats: int
    used: int  # bytes kept against the quota
    quota: int


@dataclass(frozen=True)
class Removal:
    user: User
    chats: int
    steps: int
    file_bytes: int


class UserAdmin:
    """`kazma users`: each user with their role, chats and storage; a new user, link, token; a removal."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.store = core.store.users

    async def user(self, name: str) -> User:
        user = await self.store.user_by_name(name)
        if user is None:
            raise KazmaError(message_id="user_missing_list", name=name)
        return user

    async def add(self, name: str, role: str) -> str:
        """A new user, and their API token."""
        if await self.store.user_by_name(name) is not None:
            raise KazmaError(message_id="user_exists", name=name)
        user = await self.store.add_user(name, role)
        return await self.store.issue_token(user.id, "api")

    async def link(self, name: str, identity: str) -> None:
        """A chat-app account speaks as this user from now on."""
        checked_identity(identity)
        user = await self.store.user_by_name(name)
        if user is None:
            raise KazmaError(message_id="user_missing_add", name=name)
        await self.store.link_identity(identity, user.id)

    async def new_token(self, name: str) -> tuple[int, str]:
        """How many older tokens and sign-ins ended, and the user's new API token."""
        user = await self.user(name)
        revoked = await self.store.revoke_tokens(user.id)
        return revoked, await self.store.issue_token(user.id, "api")

    async def usage(self) -> list[Usage]:
        found = []
        for user in await self.store.users():
            chats = await self.core.chats.list(user)
            room = await self.core.turns.quota.room(user.id)
            found.append(Usage(user, len(chats), room.used, room.quota))
        return found

    async def remove(self, name: str, really: bool) -> Removal:
        """Remove a user with their chats, steps, memories and files (the audit trail stays); without
        `really`, only refuse with what would go. The last owner is never removed."""
        user = await self.user(name)
        if user.role == "owner" and await self.store.count_owners() < 2:
            raise KazmaError(message_id="only_owner", name=name)
        chats = await self.core.chats.list(user)
        steps = 0
        for chat in chats:
            steps += (await self.core.snapshots.usage(chat.id))[0]
        folder = self.core.settings.files_of(user.id)
        files = await asyncio.to_thread(folder_bytes, folder)
        if not really:
            raise KazmaError(message_id="remove_needs_yes", name=name, chats=len(chats), steps=steps, kilobytes=files // 1024)
        for chat in chats:
            await self.core.chats.delete(user, chat.id)
        await self.store.delete_user(user.id)
        await asyncio.to_thread(shutil.rmtree, folder, True)
        return Removal(user, len(chats), steps, files)
