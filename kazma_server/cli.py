"""The `kazma` command: serve, users (add, token, link, remove), tui, slack-manifest, and the data commands."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
from typing import Any

from kazma_core.errors import KazmaError, SettingsError
from kazma_core.replicas.datalock import DataFolderLock, taken_back_on_failure
from kazma_core.settings import Settings, ensure_data_dir, load_settings, prepare_data_dir
from kazma_core.stores.backends import database_url, ensure_ready, opened
from kazma_core.stores.engine import DatabaseError, NewerSchema
from kazma_core.users import first_sign_in
from kazma_server import cli_data, cli_users
from kazma_server.cli_users import administer
from kazma_server.cli_words import Parser, cli_lang, refused, say

SHUTDOWN_GRACE = 3
# The collector looks for cycles once this many objects were made since it last did (Python's
# default: 700). Each turn leaves LangGraph's run (its loop, channels and tasks) as a cycle, and the
# default made a full pass over a grown server's heap every ~200 turns: 65-90 ms each, the turns
# behind it waiting (p99 of 20 chats at once 210 ms -> 110, and 0.5 ms of CPU a turn -> 0.15).
GC_YOUNG = 10_000


def _server_options(args: argparse.Namespace) -> dict[str, Any]:
    server: dict[str, Any] = {}
    if getattr(args, "host", None):
        server["host"] = args.host
    if getattr(args, "port", None):
        server["port"] = args.port
    return {"server": server} if server else {}


async def _login_url(settings: Settings) -> str | None:
    async with opened(settings) as stores:
        return await first_sign_in(settings, stores.app.users)


def cmd_serve(args: argparse.Namespace) -> int:
    settings = load_settings(data_dir=args.data_dir, **_server_options(args))
    # Kazma's own lines (bots starting or retrying, the clean-up) with time and level, next to uvicorn's.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for chatty in ("httpx", "httpcore", "apscheduler.scheduler", "apscheduler.executors.default"):
        logging.getLogger(chatty).setLevel(logging.WARNING)  # request lines would carry bot tokens
    with taken_back_on_failure(settings.data_dir, settings.workspace) as made:
        # A database server that cannot be used is the real problem whatever else is wrong: said
        # first, before the folder is looked at (its lock would hide it behind "another server").
        in_folder = not database_url(settings)
        if not in_folder:
            asyncio.run(ensure_ready(settings, serving=True))
        ensure_data_dir(settings)
        # Before anything is written in the folder: a second server on it stops here, naming the first.
        with DataFolderLock.serving(settings.data_dir) as serving:  # released however start-up ends
            prepare_data_dir(settings)  # a folder of the first layout is converted under the lock
            if in_folder:
                # kazma.db that cannot be used stops here, in one line; the steps' or the audit
                # trail's is served without (its requests answer 503, /healthz names it).
                asyncio.run(ensure_ready(settings, serving=True))
            url = asyncio.run(_login_url(settings))
            print(say("starting", url=settings.base_url, data_dir=settings.data_dir, provider=settings.model.provider))
            print(say("owner_elsewhere") if url is None else say("sign_in", url=url), flush=True)
            # The web app, the core and its graph (most of a start's CPU: FastAPI, LangChain, LangGraph)
            # are imported once the sign-in line is out: the owner reads it while they load.
            import uvicorn

            from kazma_server.app import create_app

            # Open event streams (web tabs, the TUI) would hold a stop for ever: give them a few seconds.
            config = uvicorn.Config(
                create_app(settings, serving), host=settings.server.host, port=settings.server.port, log_level="info",
                access_log=settings.server.access_log,  # off unless asked: a line per request costs CPU on the loop
                timeout_graceful_shutdown=SHUTDOWN_GRACE,
                # uvloop and httptools (dependencies) when they are installed, else asyncio's loop and h11.
                loop="auto", http="auto",
                proxy_headers=False,  # X-Forwarded-Proto is Kazma's to believe or not (security.trust_proxy)
            )
            server = uvicorn.Server(config)
            # What start-up made (modules, the app) lives as long as the server: out of the collector's passes.
            gc.collect()
            gc.freeze()
            gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
            try:
                server.run()  # a start that fails (the port taken, the core not opening) exits here
            finally:
                made.kept = server.started  # once it has served, what is in the folder is its users'
    return 0


def cmd_users_add(args: argparse.Namespace) -> int:
    token = administer(args, lambda admin: admin.add(args.name, args.role))
    print(say("api_token", name=args.name))
    print(token)
    return 0


def cmd_users_link(args: argparse.Namespace) -> int:
    administer(args, lambda admin: admin.link(args.name, args.identity))
    print(say("linked", identity=args.identity, name=args.name))
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from kazma_ui.tui.app import KazmaTui

    url = args.url or os.environ.get("KAZMA_URL") or load_settings(data_dir=args.data_dir).base_url
    token = args.token or os.environ.get("KAZMA_TOKEN")
    if not token:
        raise KazmaError(message_id="tui_token_missing")
    KazmaTui(url, token).run()
    return 0


def cmd_slack_manifest(args: argparse.Namespace) -> int:
    import json

    from bots.slack_manifest import manifest

    url = args.url or load_settings(data_dir=args.data_dir).base_url
    print(json.dumps(manifest(url, socket_mode=args.socket_mode), indent=2, ensure_ascii=False))
    return 0


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="kazma", description=say("help_kazma"))
    sub = top.add_subparsers(dest="command", required=True)
    # What every command takes: the data folder its settings (and, on SQLite, its stores) are in.
    shared = Parser(add_help=False)
    shared.add_argument("--data-dir", help=say("help_data_dir"))

    serve = sub.add_parser("serve", parents=[shared], help=say("help_serve"))
    serve.add_argument("--host", help=say("help_serve_host"))
    serve.add_argument("--port", type=int, help=say("help_serve_port"))
    serve.set_defaults(func=cmd_serve)

    users = sub.add_parser("users", help=say("help_users")).add_subparsers(dest="users_command", required=True)
    add = users.add_parser("add", parents=[shared], help=say("help_users_add"))
    add.add_argument("name", help=say("help_users_name"))
    add.add_argument("--role", default="user", choices=("user", "owner"), help=say("help_users_add_role"))
    add.set_defaults(func=cmd_users_add)
    link = users.add_parser("link", parents=[shared], help=say("help_users_link"))
    link.add_argument("name", help=say("help_users_name"))
    link.add_argument("identity", help=say("help_users_link_identity"))
    link.set_defaults(func=cmd_users_link)

    slack = sub.add_parser("slack-manifest", parents=[shared], help=say("help_slack_manifest"))
    slack.add_argument("--url", help=say("help_slack_manifest_url"))
    slack.add_argument("--socket-mode", action="store_true", help=say("help_slack_manifest_socket_mode"))
    slack.set_defaults(func=cmd_slack_manifest)

    tui = sub.add_parser("tui", parents=[shared], help=say("help_tui"))
    tui.add_argument("--url", help=say("help_tui_url"))
    tui.add_argument("--token", help=say("help_tui_token"))
    tui.set_defaults(func=cmd_tui)
    cli_users.register(users, shared)
    cli_data.register(sub, shared)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except SettingsError as err:
        print(f"kazma: {refused(err)}", file=sys.stderr)
        return 2
    except DatabaseError as err:
        # The database named by the settings cannot be used: one line that says which and why.
        print(f"kazma: {err.line(cli_lang())}", file=sys.stderr)
        return 2
    except NewerSchema as err:
        print(f"kazma: {err.line(cli_lang())}", file=sys.stderr)
        return 2
    except KazmaError as err:
        print(f"kazma: {refused(err)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
