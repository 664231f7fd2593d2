"""The Settings page's JSON routes: the time-travel settings, running and stored, for the owner only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict

from kazma_core.errors import NotFound, SettingsError
from kazma_core.settings import Settings, is_live, setting_names, validate_override
from kazma_core.stores.app_sqlite import User
from kazma_ui.web.auth import current_owner
from kazma_ui.web.schemas import ErrorBody

EDITABLE: tuple[str, ...] = (
    *(name for name in setting_names() if name.startswith("time_travel.")),
    "history.checkpoints_per_chat",
)
ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 403, 404, 422)}
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


class SettingList(BaseModel):
    settings: list[SettingOut]


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
    stored = await core.store.overrides()
    return SettingList(settings=[setting_out(core.settings, stored, name) for name in EDITABLE])


@router.put("/{name}", response_model=SettingOut)
async def change_setting(request: Request, name: str, body: NewValue, user: OwnerDep) -> SettingOut:
    """Validate and store a new value; a live setting applies at once, the others at the next start."""
    if name not in EDITABLE:
        raise NotFound(f"There is no setting {name} on this page. The ones here: {', '.join(EDITABLE)}.")
    if _field(name).annotation is not bool and isinstance(body.value, bool):
        # validate_override reads true as 1: a switch sent to a number is a mistake, not 1.
        raise SettingsError(f"invalid setting {name} = {body.value!r}: it takes a whole number, not true or false")
    value = validate_override(name, body.value)
    core = request.app.state.core
    await core.store.set_override(name, value)
    if is_live(name):
        section, _, key = name.partition(".")
        setattr(getattr(core.settings, section), key, value)
    return setting_out(core.settings, await core.store.overrides(), name)
