"""Which bots `kazma serve` starts: each adapter whose credentials are set.

Replicas sharing a PostgreSQL database run the exclusive adapters (Telegram polling, the
Discord gateway, Slack's Socket Mode) on the leader only (kazma_core/replicas/leader.py);
Slack's HTTP mode and Telegram's webhook run on every replica. On SQLite (one process)
every configured adapter runs, as there is no other replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging

from bots.base import Adapter, supervise
from bots.gateway import Gateway
from kazma_core.core import Core
from kazma_core.replicas.leader import Leadership
from kazma_core.stores.backends import database_url
from kazma_ui.thread_rewind import RewindService

log = logging.getLogger(__name__)

# settings section: module with build(gateway, settings) -> Adapter | None (None when not configured).
# A module (and its platform's SDK, a second or more of imports each) is imported only when its
# section is configured: most servers run one bot or none.
ADAPTERS = {"telegram": "bots.telegram_bot", "discord": "bots.discord_bot", "slack": "bots.slack_bot"}
LEADERSHIP = "chat-apps"


def configured(core: Core, rewind: RewindService) -> list[Adapter]:
    adapters: list[Adapter] = []
    for section, module_name in ADAPTERS.items():
        if not getattr(core.settings, section).configured:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name != module_name:
                raise
            continue
        adapter = module.build(Gateway(core, rewind), core.settings)
        if adapter is not None:
            adapters.append(adapter)
    return adapters


def chat_apps_leadership(core: Core) -> Leadership | None:
    """The leader lease of the exclusive bots when replicas share a database; None on SQLite."""
    if not database_url(core.settings):
        return None
    server = core.settings.server
    return Leadership(core.replicas, LEADERSHIP, ttl=server.leader_seconds, renew=server.leader_renew_seconds,
                      check=server.leader_check_seconds)


class Bots:
    """The running bots of one server process."""

    def __init__(self, adapters: list[Adapter], leadership: Leadership | None = None) -> None:
        self.adapters = adapters
        self.leadership = leadership
        self.tasks: list[asyncio.Task[None]] = []

    def for_path(self, path: str) -> Adapter | None:
        return next((a for a in self.adapters if a.http_path == path), None)

    def start(self) -> None:
        led = [a for a in self.adapters if a.exclusive] if self.leadership is not None else []
        for adapter in self.adapters:
            if adapter not in led:
                self.tasks.append(asyncio.create_task(self._run(adapter), name=f"bot-{adapter.name}"))
        if self.leadership is not None and led:
            names = ", ".join(a.name for a in led)
            log.info("the %s bot(s) run on the replica that leads %s", names, self.leadership.name)
            work = functools.partial(self._run_all, led)
            self.tasks.append(asyncio.create_task(self.leadership.lead(work), name="bots-leader"))

    @staticmethod
    async def _run(adapter: Adapter) -> None:
        log.info("starting the %s bot", adapter.name)
        await supervise(adapter)

    async def _run_all(self, adapters: list[Adapter]) -> None:
        await asyncio.gather(*(self._run(a) for a in adapters))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.tasks.clear()
