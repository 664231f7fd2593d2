"""Which bots `kazma serve` starts: each adapter whose credentials are set."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from bots.base import Adapter, supervise
from bots.gateway import Gateway
from kazma_core.core import Core
from kazma_ui.thread_rewind import RewindService

log = logging.getLogger(__name__)

# module: each has build(gateway, settings) -> Adapter | None (None when not configured)
ADAPTERS = ("bots.telegram_bot", "bots.discord_bot", "bots.slack_bot")


def configured(core: Core, rewind: RewindService) -> list[Adapter]:
    adapters: list[Adapter] = []
    for module_name in ADAPTERS:
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


class Bots:
    """The running bots of one server process."""

    def __init__(self, adapters: list[Adapter]) -> None:
        self.adapters = adapters
        self.tasks: list[asyncio.Task[None]] = []

    def for_path(self, path: str) -> Adapter | None:
        return next((a for a in self.adapters if a.http_path == path), None)

    def start(self) -> None:
        for adapter in self.adapters:
            log.info("starting the %s bot", adapter.name)
            self.tasks.append(asyncio.create_task(supervise(adapter), name=f"bot-{adapter.name}"))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.tasks.clear()
