"""The Settings page's JSON routes: the time-travel settings, running and stored, for the owner only."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, ValidationError

from kazma_core.agent.graph import SYSTEM_PROMPT
from kazma_core.errors import KazmaError, NotFound
from kazma_core.settings import Settings, is_live, refused_setting, setting_names, validate_override
from kazma_core.stores.types import User
from kazma_ui.web.auth import current_owner
from kazma_ui.web.refusals import invalid_field
from kazma_ui.web.schemas import ErrorBody

EDITABLE: tuple[str, ...] = (
    *(name for name in setting_names() if name.startswith("time_travel.")),
    "history.checkpoints_per_chat",
    "limits.user_quota_bytes",
)
ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 403, 404, 413, 422)}
router = APIRouter(prefix="/api/settings", tags=["settings"], responses=ERRORS)

Value = bool | int | float | str


class SettingOut(BaseModel):
    name: str
    description: str
    kind: Literal["bool", "int"]
    value: Value
    stored: Value | None
    live: bool
    restart_needed: bool
    minimum: int | None
    maximum: int | None


class ModelOut(BaseModel):
    """The model Kazma talks to, as the owner reads it; its key is never sent (set at start, in config)."""

    provider: Literal["offline", "openai", "anthropic"]
    name: str
    base_url: str  # "" for the offline model
    system_prompt: str
    live: bool = False  # the model is chosen when the server starts


class SettingList(BaseModel):
    settings: list[SettingOut]
    model: ModelOut | None = None


class InvalidRequest(KazmaError):
    code = "invalid_input"
    status = 422


class NewValue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Value


OwnerDep = Annotated[User, Depends(current_owner)]


def _field(name: str) -> Any:
    section, _, key = name.partition(".")
    return Settings.model_fields[section].annotation.model_fields[key]  # type: ignore[union-attr]


def _bound(field: Any, attr: str) -> int | None:
    return next((getattr(m, attr) for m in field.metadata if getattr(m, attr, None) is not None), None)


def running(settings: Settings, name: str) -> Any:
    section, _, key = name.partition(".")
    return getattr(getattr(settings, section), key)


def setting_out(settings: Settings, stored: dict[str, Any], name: str) -> SettingOut:
    field = _field(name)
    value = running(settings, name)
    saved = stored.get(name)
    return SettingOut(
        name=name,
        description=field.description or name,
        kind="bool" if field.annotation is bool else "int",
        value=value,
        stored=saved,
        live=is_live(name),
        restart_needed=name in stored and saved != value,
        minimum=_bound(field, "ge"),
        maximum=_bound(field, "le"),
    )


@router.get("", response_model=SettingList)
async def list_settings(request: Request, user: OwnerDep) -> SettingList:
    core = request.app.state.core
    stored = await core.store.settings.overrides()
    model = core.settings.model
    return SettingList(
        settings=[setting_out(core.settings, stored, name) for name in EDITABLE],
        model=ModelOut(
            provider=model.provider, name=model.name, system_prompt=SYSTEM_PROMPT,
            base_url="" if model.provider == "offline" else _without_secrets(model.base_url),
        ),
    )


def _without_secrets(url: str) -> str:
    """An address as shown: a user name or password written into it is left out."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc, query=""))


def _documented_body(name: str) -> dict[str, Any]:
    """The request body of one setting's route, as exact as its field: a switch, or a whole number in range."""
    field = _field(name)
    if field.annotation is bool:
        value: dict[str, Any] = {"type": "boolean"}
    else:
        value = {"type": "integer", "minimum": _bound(field, "ge"), "maximum": _bound(field, "le")}
    schema = {"type": "object", "properties": {"value": value}, "required": ["value"], "additionalProperties": False}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


async def _new_value(request: Request) -> Any:
    try:
        return NewValue.model_validate_json(await request.body()).value
    except ValidationError as err:
        message_id, params = invalid_field(err.errors()[0])
        raise InvalidRequest(message_id=message_id, **params) from None


def _strict(name: str, value: Any) -> None:
    """A number is a JSON number and a switch a JSON true or false: text is not read as either."""
    if _field(name).annotation is bool:
        if not isinstance(value, bool):
            raise refused_setting("setting_switch", name, value)
    elif isinstance(value, (bool, str)):
        # validate_override reads true as 1 and "7" as 7: a switch or text sent to a number is a mistake.
        raise refused_setting("setting_whole_number_not_bool" if isinstance(value, bool) else "setting_whole_number_not_text", name, value)


async def change_setting(request: Request, name: str, user: User) -> SettingOut:
    """Validate and store a new value; a live setting applies at once, the others at the next start."""
    if name not in EDITABLE:
        raise NotFound(message_id="setting_missing", name=name, editable=", ".join(EDITABLE))
    raw = await _new_value(request)
    _strict(name, raw)
    value = validate_override(name, raw)
    core = request.app.state.core
    await core.store.settings.set_override(name, value)
    if is_live(name):
        section, _, key = name.partition(".")
        setattr(getattr(core.settings, section), key, value)
    return setting_out(core.settings, await core.store.settings.overrides(), name)


def _route(name: str) -> None:
    async def change_one(request: Request, user: OwnerDep) -> SettingOut:
        return await change_setting(request, name, user)

    change_one.__doc__ = f"Change {name}: a live setting applies at once, the others at the next start."
    router.add_api_route(
        f"/{name}", change_one, methods=["PUT"], response_model=SettingOut, openapi_extra=_documented_body(name),
        operation_id=f"change_{name.replace('.', '_')}",
    )


# One route per setting, so the OpenAPI description says exactly what each one takes.
for _name in EDITABLE:
    _route(_name)


@router.put("/{name}", response_model=SettingOut, include_in_schema=False)
async def change_unknown_setting(request: Request, name: str, user: OwnerDep) -> SettingOut:
    return await change_setting(request, name, user)
