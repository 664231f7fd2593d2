"""The FastAPI application: core lifecycle, error shapes, sign-in, routers, pages.

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

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from kazma_core.core import Core, prepare_data_dir
from kazma_core.datalock import DataFolderLock
from kazma_core.errors import KazmaError, StoreUnavailable, without_paths
from kazma_core.health import StoreHealth, Watched
from kazma_core.settings import Settings
from kazma_ui.thread_rewind import RewindService
from kazma_ui.web import account_api, alerts_api, chat_api, commands_api, pages, replay_api, sessions, settings_api
from kazma_ui.web.guard import Guard, security_headers
from kazma_ui.web.refusals import invalid_field, refusal

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


def create_web_app(settings: Settings, serving_lock: DataFolderLock | None = None, beside: Beside | None = None) -> FastAPI:
    """The app; ``serving_lock`` is the folder's server lock when the caller (`kazma serve`) took it already."""

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
            [Watched("chats", core.store.db), Watched("steps", core.snapshots.db), Watched("audit", core.audit.db)], core.store
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

    app = FastAPI(title="Kazma", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        """Swagger UI from this server's own files, started by static/docs.js: no inline script, no CDN."""
        return pages.TEMPLATES.TemplateResponse(request, "docs.html", {"static": pages.static_url})

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    @app.exception_handler(KazmaError)
    async def kazma_error(request: Request, err: KazmaError) -> JSONResponse:
        if isinstance(err, StoreUnavailable):
            # A store failing a request (a file unreadable, the database away: DatabaseError, from
            # either engine) is reported at once, and its later requests refused fast until it is back.
            log.warning("a store failed under %s %s: %s", request.method, request.url.path, err)
            await request.app.state.health.check()
        body = err.to_dict()
        body["message"] = without_paths(err.message)
        return JSONResponse(body, status_code=err.status)

    @app.exception_handler(Exception)
    async def server_error(request: Request, err: Exception) -> JSONResponse:
        """A fault of Kazma's own: the answer says nothing of the server (uvicorn logs the traceback, as
        Starlette raises the error again after this answer). Sent from outside the other middleware, so
        it sets the security headers itself."""
        headers = {name.decode(): value.decode() for name, value in security_headers(request.scope)}
        return refusal("internal_error", "internal_error", 500, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        if err.status_code == 400:  # FastAPI could not read the body at all (not UTF-8, not JSON)
            return refusal("invalid_input", "body_unreadable", 422)
        if err.status_code in (404, 405):
            code = "not_found" if err.status_code == 404 else "method_not_allowed"
            return refusal(code, "route_missing" if err.status_code == 404 else code, err.status_code, headers=err.headers)
        return JSONResponse({"error": "http_error", "message": str(err.detail)}, status_code=err.status_code, headers=err.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, err: RequestValidationError) -> JSONResponse:
        message_id, params = invalid_field(err.errors()[0] if err.errors() else {})
        return refusal("invalid_input", message_id, 422, **params)

    @app.get("/healthz", include_in_schema=False)
    async def healthz(request: Request) -> JSONResponse:
        """Each store, read afresh: 200 when all read back, 503 (naming the damaged ones) otherwise."""
        states = await request.app.state.health.check()
        healthy = all(state.ok for state in states.values())
        body = {
            "status": "ok" if healthy else "damaged",
            "stores": {name: {"ok": s.ok, "problem": s.problem} for name, s in states.items()},
        }
        return JSONResponse(body, status_code=200 if healthy else 503)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest().decode(), media_type=CONTENT_TYPE_LATEST)

    described = app.openapi

    def openapi() -> dict[str, Any]:
        """The description, with the limits this server runs with written in."""
        first = app.openapi_schema is None
        schema = described()
        if first:
            text = schema["components"]["schemas"]["NewMessage"]["properties"]["text"]
            text["maxLength"] = settings.limits.max_message_chars
        return schema

    app.openapi = openapi  # type: ignore[method-assign]

    app.include_router(chat_api.router)
    app.include_router(commands_api.router)
    app.include_router(replay_api.router)
    app.include_router(settings_api.router)
    app.include_router(account_api.router)
    app.include_router(alerts_api.router)
    app.include_router(sessions.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC_DIR), name="static")
    app.mount("/docs-assets", StaticFiles(directory=swagger_assets()), name="docs-assets")
    app.add_middleware(Guard, limit=settings.limits.max_body_bytes, trust_proxy=settings.security.trust_proxy)
    return app
