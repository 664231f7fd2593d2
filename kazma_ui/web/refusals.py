"""How the web server answers what went wrong (`answer_errors`): a KazmaError as its body, and its
own refusals worded like one (a route or method it lacks, a body it cannot read, a field FastAPI's
(pydantic's) validation refuses, a fault). Each answer carries its code, its catalogue sentence's id
and parameters, and that sentence in English, so a page words it in the person's language as it
does every other refusal."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kazma_core.catalogue import error_sentence
from kazma_core.catalogue.errors import ERRORS
from kazma_core.errors import KazmaError, StoreUnavailable, without_paths
from kazma_ui.web.guard import security_headers

log = logging.getLogger(__name__)


def refusal(code: str, message_id: str, status: int, headers: Mapping[str, str] | None = None, **params: Any) -> JSONResponse:
    """A refusal of the web server's own, shaped as a KazmaError's: its code, its catalogue sentence and parameters."""
    body = {"error": code, "message": error_sentence(message_id, "en", params), "message_id": message_id, **params}
    return JSONResponse(body, status_code=status, headers=headers)


# pydantic's error types, grouped by the sentence that tells a person how to fix the field
_FIELD_SENTENCES = {
    "missing": "field_missing", "extra_forbidden": "field_unknown",
    "string_type": "field_not_text", "string_unicode": "field_not_text",
    "int_type": "field_not_integer", "int_parsing": "field_not_integer", "int_from_float": "field_not_integer",
    "float_type": "field_not_number", "float_parsing": "field_not_number",
    "bool_type": "field_not_bool", "bool_parsing": "field_not_bool",
    "dict_type": "field_not_object", "model_type": "field_not_object", "model_attributes_type": "field_not_object",
    "list_type": "field_not_list",
    "string_too_short": "field_too_short", "string_too_long": "field_too_long",
    "greater_than_equal": "field_too_small", "greater_than": "field_not_above",
    "less_than_equal": "field_too_big", "less_than": "field_not_below",
    "literal_error": "field_not_a_choice", "enum": "field_not_a_choice",
}
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def invalid_field(error: Any) -> tuple[str, dict[str, Any]]:
    """The catalogue sentence (and its parameters) for the first field FastAPI's validation refused."""
    kind = error.get("type", "")
    if kind == "json_invalid":
        return "body_not_json", {}
    field = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "request"
    ctx = error.get("ctx") or {}
    # A model's own check names its sentence as the error's type (PydanticCustomError(<errors id>, ...)).
    message_id = _FIELD_SENTENCES.get(kind) or (kind if kind in ERRORS else "field_invalid")
    params: dict[str, Any] = {"field": field}
    if message_id == "field_too_short":
        params["min_length"] = ctx.get("min_length")
    elif message_id == "field_too_long":
        params["max_length"] = ctx.get("max_length")
    elif message_id in ("field_too_small", "field_not_above"):
        params["least"] = ctx.get("ge", ctx.get("gt"))
    elif message_id in ("field_too_big", "field_not_below"):
        params["most"] = ctx.get("le", ctx.get("lt"))
    elif message_id == "field_not_a_choice":
        params["choices"] = _QUOTED.findall(str(ctx.get("expected", "")))
    return message_id, params


async def kazma_error(request: Request, err: KazmaError) -> JSONResponse:
    if isinstance(err, StoreUnavailable):
        # A store failing a request (a file unreadable, the database away: DatabaseError, from
        # either engine) is reported at once, and its later requests refused fast until it is back.
        log.warning("a store failed under %s %s: %s", request.method, request.url.path, err)
        await request.app.state.health.check()
    body = err.to_dict()
    body["message"] = without_paths(err.message)
    return JSONResponse(body, status_code=err.status)


async def server_error(request: Request, err: Exception) -> JSONResponse:
    """A fault of Kazma's own: the answer says nothing of the server (uvicorn logs the traceback, as
    Starlette raises the error again after this answer). Sent from outside the other middleware, so
    it sets the security headers itself."""
    headers = {name.decode(): value.decode() for name, value in security_headers(request.scope)}
    return refusal("internal_error", "internal_error", 500, headers=headers)


async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
    if err.status_code == 400:  # FastAPI could not read the body at all (not UTF-8, not JSON)
        return refusal("invalid_input", "body_unreadable", 422)
    if err.status_code in (404, 405):
        code = "not_found" if err.status_code == 404 else "method_not_allowed"
        return refusal(code, "route_missing" if err.status_code == 404 else code, err.status_code, headers=err.headers)
    return JSONResponse({"error": "http_error", "message": str(err.detail)}, status_code=err.status_code, headers=err.headers)


async def invalid_request(request: Request, err: RequestValidationError) -> JSONResponse:
    message_id, params = invalid_field(err.errors()[0] if err.errors() else {})
    return refusal("invalid_input", message_id, 422, **params)


def answer_errors(app: FastAPI) -> None:
    """Every error a request meets answered in Kazma's shape, from the catalogue."""
    app.add_exception_handler(KazmaError, kazma_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, server_error)
    app.add_exception_handler(StarletteHTTPException, http_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, invalid_request)  # type: ignore[arg-type]
