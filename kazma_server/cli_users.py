"""`kazma users list`, `kazma users token NAME` and `kazma users remove NAME --yes`: who has access, and ending it."""

from __future__ import annotations

import argparse
import asyncio
import shutil
from typing import Any

from kazma_core.catalogue import sentence
from kazma_core.core import Core
from kazma_core.errors import KazmaError
from kazma_core.quota import folder_bytes
from kazma_core.settings import Settings
from kazma_core.sizes import human_size
from kazma_core.stores.app_sql import SqlAppStore
from kazma_core.stores.backends import app_db
from kazma_core.stores.interfaces import AppStore
from kazma_core.stores.types import User
from kazma_server.cli_data import data_folder


def register(users: Any) -> None:
    """Add the commands to `kazma users`."""
    listing = users.add_parser("list", help="every user: role, chats and the storage they use")
    listing.add_argument("--data-dir")
    listing.set_defaults(func=cmd_users_list)
    token = users.add_parser("token", help="give a user a new API token; every older token and sign-in stops working")
    token.add_argument("name")
    token.add_argument("--data-dir")
    token.set_defaults(func=cmd_users_token)
    remove = users.add_parser("remove", help="remove a user with their chats, steps, memories and files")
    remove.add_argument("name")
    remove.add_argument("--yes", action="store_true", help="do it (without it, only say what would go)")
    remove.add_argument("--data-dir")
    remove.set_defaults(func=cmd_users_remove)


async def _user(store: AppStore, name: str) -> User:
    user = await store.user_by_name(name)
    if user is None:
        raise KazmaError(message_id="user_missing_list", name=name)
    return user


async def _list(settings: Settings) -> list[str]:
    core = await Core.open(settings)
    try:
        lines = []
        for user in await core.store.users():
            chats = await core.chats.list(user)
            room = await core.turns.quota.room(user.id)
            storage = sentence("terminal.users_storage", "en", used=human_size(room.used), quota=human_size(room.quota))
            lines.append(f"{user.name}\t{user.role}\t{len(chats)} chat{'s' if len(chats) != 1 else ''}\t{storage}")
        if not lines:
            return ["No users yet: `kazma serve` makes the owner on its first start."]
        return [sentence("terminal.users_header", "en"), *lines]
    finally:
        await core.close()


def cmd_users_list(args: argparse.Namespace) -> int:
    with data_folder(args) as settings:
        lines = asyncio.run(_list(settings))
    print("\n".join(lines))
    return 0


async def _new_token(settings: Settings, name: str) -> tuple[int, str]:
    store = SqlAppStore(app_db(settings))
    try:
        user = await _user(store, name)
        revoked = await store.revoke_tokens(user.id)
        return revoked, await store.issue_token(user.id, "api")
    finally:
        await store.close()


def cmd_users_token(args: argparse.Namespace) -> int:
    with data_folder(args) as settings:
        revoked, token = asyncio.run(_new_token(settings, args.name))
    ended = f"{revoked} older token{'s' if revoked != 1 else ''} and sign-ins" if revoked else "no older tokens"
    print(f"New API token for {args.name} ({ended} ended; send it as Authorization: Bearer <token>):")
    print(token)
    return 0


async def _remove(settings: Settings, name: str, really: bool) -> list[str]:
    core = await Core.open(settings)
    try:
        user = await _user(core.store, name)
        if user.role == "owner" and await core.store.count_owners() < 2:
            raise KazmaError(message_id="only_owner", name=name)
        chats = await core.chats.list(user)
        steps = 0
        for chat in chats:
            steps += (await core.snapshots.usage(chat.id))[0]
        folder = settings.files_of(user.id)
        files = await asyncio.to_thread(folder_bytes, folder)
        what = (
            f"{name}: {len(chats)} chat{'s' if len(chats) != 1 else ''} with their memories, "
            f"{steps} saved step{'s' if steps != 1 else ''}, {human_size(files)} of files, tokens and linked chat apps"
        )
        if not really:
            raise KazmaError(message_id="remove_needs_yes", name=name, chats=len(chats), steps=steps, kilobytes=files // 1024)
        for chat in chats:
            await core.chats.delete(user, chat.id)
        await core.store.delete_user(user.id)
        await asyncio.to_thread(shutil.rmtree, folder, True)
        return [f"Removed {what}.", "The audit trail of their restores and forks is kept."]
    finally:
        await core.close()


def cmd_users_remove(args: argparse.Namespace) -> int:
    with data_folder(args) as settings:
        lines = asyncio.run(_remove(settings, args.name, args.yes))
    print("\n".join(lines))
    return 0
