"""The server process of `kazma serve`: the web app, with the chat-app bots and the scheduler beside it.

The web app (`kazma_ui.web.app`) owns the core's lifecycle and the HTTP routes; this module
starts what runs beside them once the core is open and recovered, and stops it before the
core closes: each configured bot, and the daily clean-up. A chat app that talks HTTP to
Kazma (Slack in HTTP mode) gets its route here, since only this process has the bots.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request, Response

from bots.runner import Bots, chat_apps_leadership, configured
from kazma_core.errors import NotFound
from kazma_core.maintenance import Maintenance
from kazma_core.replicas.datalock import DataFolderLock
from kazma_core.schedule import start_scheduler, stop_scheduler
from kazma_core.settings import Settings
from kazma_ui.web.app import create_web_app

PLATFORM_PATHS = ("/slack/events",)


@contextlib.asynccontextmanager
async def _bots_and_scheduler(app: FastAPI) -> AsyncIterator[None]:
    app.state.bots = Bots(configured(app.state.core, app.state.rewind), chat_apps_leadership(app.state.core))
    app.state.bots.start()
    app.state.maintenance = Maintenance.of(app.state.core)
    app.state.scheduler = start_scheduler(app.state.maintenance)
    try:
        yield
    finally:
        await stop_scheduler(app.state.scheduler, app.state.maintenance)
        await app.state.bots.stop()


async def platform_events(request: Request) -> Response:
    """Chat-app requests in HTTP mode, forwarded to the adapter that serves this path."""
    adapter = request.app.state.bots.for_path(request.url.path)
    if adapter is None:
        raise NotFound(message_id="no_chat_app_here")
    return await adapter.http(request)  # type: ignore[no-any-return]


def create_app(settings: Settings, serving_lock: DataFolderLock | None = None) -> FastAPI:
    """The whole server; ``serving_lock`` is the folder's server lock when the caller (`kazma serve`) took it already."""
    app = create_web_app(settings, serving_lock, beside=_bots_and_scheduler)
    for path in PLATFORM_PATHS:
        app.add_api_route(path, platform_events, methods=["POST"], include_in_schema=False)
    return app
