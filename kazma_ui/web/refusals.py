"""The web server's own refusals, worded like a KazmaError's: a route or method it lacks, a body it
cannot read, a field FastAPI's (pydantic's) validation refuses, a fault. Each answer carries its code,
its catalogue sentence's id and parameters, and that sentence in English, so a page words it in the
person's language as it does every other refusal."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse

from kazma_core.catalogue import error_sentence
from kazma_core.catalogue.errors import ERRORS


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
