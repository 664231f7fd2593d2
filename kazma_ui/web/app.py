"""The FastAPI application: core lifecycle, error shapes, sign-in, routers, pages."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bots.runner import Bots, configured
from kazma_core.core import Core
from kazma_core.datalock import DataFolderLock
from kazma_core.errors import KazmaError, NotFound
from kazma_core.maintenance import Maintenance
from kazma_core.schedule import start_scheduler, stop_scheduler
from kazma_core.settings import Settings, ensure_data_dir
from kazma_ui.thread_rewind import RewindService
from kazma_ui.web import account_api, alerts_api, chat_api, commands_api, pages, replay_api, settings_api
from kazma_ui.web.auth import CSRF_COOKIE, SESSION_COOKIE

SESSION_SECONDS = 30 * 86_400
FAVICON = pages.STATIC_DIR / "favicon.svg"


def swagger_assets() -> Path:
    """Swagger UI's files as the swagger-ui-py package ships them: /docs needs no network."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The swagger-ui-py package is missing: reinstall Kazma (pip install -e .).")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def create_app(settings: Settings) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ensure_data_dir(settings)
        # Held while serving: `kazma backup restore` and `kazma migrate import` refuse to run under it.
        with DataFolderLock.shared(settings.data_dir):
            async with _serving(app):
                yield

    @contextlib.asynccontextmanager
    async def _serving(app: FastAPI) -> AsyncIterator[None]:
        app.state.core = await Core.open(settings)
        app.state.rewind = RewindService(app.state.core)
        await app.state.core.recover()
        await app.state.rewind.recover()
        app.state.tasks = set()
        app.state.bots = Bots(configured(app.state.core, app.state.rewind))
        app.state.bots.start()
        app.state.maintenance = Maintenance.of(app.state.core)
        app.state.scheduler = start_scheduler(app.state.maintenance)
        try:
            yield
        finally:
            await stop_scheduler(app.state.scheduler, app.state.maintenance)
            await app.state.bots.stop()
            for task in list(app.state.tasks):
                task.cancel()
            await asyncio.gather(*app.state.tasks, return_exceptions=True)
            await app.state.core.close()

    app = FastAPI(title="Kazma", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title="Kazma API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js", swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/favicon.ico",
        )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    @app.post("/slack/events", include_in_schema=False)
    async def platform_events(request: Request) -> Response:
        """Chat-app requests in HTTP mode, forwarded to the adapter that serves this path."""
        adapter = request.app.state.bots.for_path(request.url.path)
        if adapter is None:
            raise NotFound("No chat app on this server takes requests here.")
        return await adapter.http(request)  # type: ignore[no-any-return]

    @app.exception_handler(KazmaError)
    async def kazma_error(request: Request, err: KazmaError) -> JSONResponse:
        return JSONResponse(err.to_dict(), status_code=err.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(err.status_code, "http_error")
        message = {
            404: "There is no such route. The API is described at /docs.",
            405: "This route does not take that method. The API is described at /docs.",
        }.get(err.status_code, str(err.detail))
        return JSONResponse({"error": code, "message": message}, status_code=err.status_code, headers=err.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            return JSONResponse(
                {"error": "invalid_input", "message": "The request body is not valid JSON. Send a JSON object."},
                status_code=422,
            )
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        return JSONResponse(
            {"error": "invalid_input", "message": f"{where}: {first.get('msg', 'invalid')}. Fix it and send again."},
            status_code=422,
        )

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest().decode(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/login", include_in_schema=False)
    async def login(request: Request, token: str = "") -> RedirectResponse:
        """Trade the one-time login token printed by `kazma serve` for a session cookie."""
        store = request.app.state.core.store
        user = await store.user_for_token(token, "login", consume=True) if token else None
        if user is None:
            return RedirectResponse("/?login=expired", status_code=303)
        session = await store.issue_token(user.id, "session", ttl=SESSION_SECONDS)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, session, max_age=SESSION_SECONDS, httponly=True, samesite="lax")
        response.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(24), max_age=SESSION_SECONDS, samesite="strict")
        return response

    app.include_router(chat_api.router)
    app.include_router(commands_api.router)
    app.include_router(replay_api.router)
    app.include_router(settings_api.router)
    app.include_router(account_api.router)
    app.include_router(alerts_api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC_DIR), name="static")
    app.mount("/docs-assets", StaticFiles(directory=swagger_assets()), name="docs-assets")
    return app
