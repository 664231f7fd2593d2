"""`kazma users list`, `kazma users token NAME` and `kazma users remove NAME --yes`: who has access, and ending it.

The rules are the core's (`kazma_core.users.UserAdmin`); these commands word what it returns."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from kazma_core.sizes import human_size
from kazma_core.users import UserAdmin
from kazma_server.cli_data import data_folder
from kazma_server.cli_words import cli_lang, count, say

T = TypeVar("T")


def register(users: Any, shared: argparse.ArgumentParser) -> None:
    """Add the commands to `kazma users`."""
    listing = users.add_parser("list", parents=[shared], help=say("help_users_list"))
    listing.set_defaults(func=cmd_users_list)
    token = users.add_parser("token", parents=[shared], help=say("help_users_token"))
    token.add_argument("name", help=say("help_users_name"))
    token.set_defaults(func=cmd_users_token)
    remove = users.add_parser("remove", parents=[shared], help=say("help_users_remove"))
    remove.add_argument("name", help=say("help_users_name"))
    remove.add_argument("--yes", action="store_true", help=say("help_users_remove_yes"))
    remove.set_defaults(func=cmd_users_remove)


def administer(args: argparse.Namespace, work: Callable[[UserAdmin], Awaitable[T]]) -> T:
    """`work` done by the core's user administration, on the deployment of the command's --data-dir."""

    from kazma_core.core import Core  # with its graph, only for a command that runs

    async def run() -> T:
        core = await Core.open(settings)
        try:
            return await work(UserAdmin(core))
        finally:
            await core.close()

    with data_folder(args) as settings:
        return asyncio.run(run())


def cmd_users_list(args: argparse.Namespace) -> int:
    found = administer(args, lambda admin: admin.usage())
    if not found:
        print(say("no_users"))
        return 0
    lang = cli_lang()
    print(say("users_header"))
    for one in found:
        storage = say("users_storage", used=human_size(one.used, lang), quota=human_size(one.quota, lang))
        print(f"{one.user.name}\t{one.user.role}\t{count('chats', one.chats)}\t{storage}")
    return 0


def cmd_users_token(args: argparse.Namespace) -> int:
    revoked, token = administer(args, lambda admin: admin.new_token(args.name))
    print(say("new_token", name=args.name, ended=count("ended_tokens", revoked)))
    print(token)
    return 0


def cmd_users_remove(args: argparse.Namespace) -> int:
    gone = administer(args, lambda admin: admin.remove(args.name, args.yes))
    print(say(
        "removed", name=args.name, chats=count("chats", gone.chats), steps=count("saved_steps", gone.steps),
        files=human_size(gone.file_bytes, cli_lang()),
    ))
    print(say("audit_kept"))
    return 0
