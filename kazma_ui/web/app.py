"""The FastAPI application: core lifecycle, routers, pages; its error shapes are `refusals.answer_errors`.

What runs beside it in the server process (the chat-app bots, the scheduler) is started by
the process that composes them (`kazma_server.app`), through `beside`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from kazma_core.core import Core
from kazma_core.health import StoreHealth, Watched
from kazma_core.replicas.datalock import DataFolderLock
from kazma_core.settings import Settings, prepare_data_dir
from kazma_ui.thread_rewind import RewindService
from kazma_ui.web import account_api, alerts_api, chat_api, commands_api, pages, replay_api, sessions, settings_api
from kazma_ui.web.guard import Guard
from kazma_ui.web.refusals import answer_errors

log = logging.getLogger(__name__)
FAVICON = pages.STATIC_DIR / "favicon.svg"
# What runs beside the app in its process: entered once the core is open and recovered
# (app.state.core, app.state.rewind), left before the core closes.
Beside = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def swagger_assets() -> Path:
    """Swagger UI's files as the swagger-ui-py package ships them: /docs needs no network."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The swagger-ui-py package is missing: reinstall Kazma (pip install -e .).")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def _lifespan(settings: Settings, serving_lock: DataFolderLock | None, beside: Beside | None) -> Callable[[FastAPI], Any]:
    """The core's life in the app: opened, recovered and watched while the app serves, closed after."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        prepare_data_dir(settings)
        # One server per data folder; and while it serves, a restore or an import refuses to run.
        with contextlib.ExitStack() as held:
            held.enter_context(serving_lock or DataFolderLock.serving(settings.data_dir))
            held.enter_context(DataFolderLock.shared(settings.data_dir))
            async with _serving(app):
                yield

    @contextlib.asynccontextmanager
    async def _serving(app: FastAPI) -> AsyncIterator[None]:
        app.state.core = await Core.open(settings)
        app.state.rewind = RewindService(app.state.core)
        await app.state.core.recover()
        await app.state.rewind.recover()
        app.state.tasks = set()
        core = app.state.core
        app.state.health = StoreHealth(
            [Watched("chats", core.store.db), Watched("steps", core.snapshots.db), Watched("audit", core.audit.db)], core.store.alerts
        )
        for duty in (app.state.health.watch(), app.state.core.sweep()):
            task = asyncio.create_task(duty)
            app.state.tasks.add(task)
            task.add_done_callback(app.state.tasks.discard)
        try:
            async with beside(app) if beside is not None else contextlib.nullcontext():
                yield
        finally:
            for task in list(app.state.tasks):
                task.cancel()
            await asyncio.gather(*app.state.tasks, return_exceptions=True)
            await app.state.core.close()

    return lifespan


# The server's own routes beside the API's: its health, its metrics, its API description and icon.
service = APIRouter(include_in_schema=False)


@service.get("/docs")
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI from this server's own files, started by static/docs.js: no inline script, no CDN."""
    return pages.TEMPLATES.TemplateResponse(request, "docs.html", {"static": pages.static_url})


@service.get("/favicon.ico")
async def favicon() -> FileResponse:
    return FileResponse(FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


@service.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    """Each store, read afresh: 200 when all read back, 503 (naming the damaged ones) otherwise."""
    states = await request.app.state.health.check()
    healthy = all(state.ok for state in states.values())
    body = {
        "status": "ok" if healthy else "damaged",
        "stores": {name: {"ok": s.ok, "problem": s.problem} for name, s in states.items()},
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


@service.get("/metrics")
async def metrics() -> PlainTextResponse:
    return PlainTextResponse(generate_latest().decode(), media_type=CONTENT_TYPE_LATEST)


def _limits_described(app: FastAPI, settings: Settings) -> None:
    """The API description, with the limits this server runs with written in."""
    described = app.openapi

    def openapi() -> dict[str, Any]:
        first = app.openapi_schema is None
        schema = described()
        if first:
            text = schema["components"]["schemas"]["NewMessage"]["properties"]["text"]
            text["maxLength"] = settings.limits.max_message_chars
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_web_app(settings: Settings, serving_lock: DataFolderLock | None = None, beside: Beside | None = None) -> FastAPI:
    """The app; ``serving_lock`` is the folder's server lock when the caller (`kazma serve`) took it already."""
    app = FastAPI(
        title="Kazma", version="0.1.0", lifespan=_lifespan(settings, serving_lock, beside), docs_url=None, redoc_url=None
    )
    answer_errors(app)
    _limits_described(app, settings)
    for router in (service, chat_api.router, commands_api.router, replay_api.router, settings_api.router,
                   account_api.router, alerts_api.router, sessions.router, pages.router):
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=pages.STATIC_DIR), name="static")
    app.mount("/docs-assets", StaticFiles(directory=swagger_assets()), name="docs-assets")
    app.add_middleware(Guard, limit=settings.limits.max_body_bytes, trust_proxy=settings.security.trust_proxy)
    return app
