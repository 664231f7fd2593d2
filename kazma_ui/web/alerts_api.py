"""Operator alerts (a clean-up whose deletion did not take, a failed pass), for the owner only.

Shown until acknowledged: the list answers the ones not yet acknowledged unless asked for all.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel

from kazma_core.errors import NotFound
from kazma_core.stores.alerts_sql import AlertStore
from kazma_core.stores.types import User
from kazma_ui.web.auth import current_owner
from kazma_ui.web.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (401, 403, 404, 413, 422)}
router = APIRouter(prefix="/api/alerts", tags=["alerts"], responses=ERRORS)


class AlertOut(BaseModel):
    id: int
    kind: str
    # The catalogue's English sentence, filled; a page words it in the person's language from
    # message_id (an errors sentence) and params, as it does an error body (none on an alert from before).
    message: str
    message_id: str | None
    params: dict[str, Any]
    created_at: float
    acknowledged_at: float | None


class AlertList(BaseModel):
    alerts: list[AlertOut]


OwnerDep = Annotated[User, Depends(current_owner)]
# An alert's id is a SQLite row id: a larger number can name no alert (and SQLite cannot even bind it).
AlertId = Annotated[int, Path(ge=1, le=2**63 - 1)]


def store_of(request: Request) -> AlertStore:
    return request.app.state.core.store.alerts  # type: ignore[no-any-return]


@router.get("", response_model=AlertList)
async def list_alerts(request: Request, owner: OwnerDep, include_acknowledged: bool = False) -> AlertList:
    """Newest first: the alerts not yet acknowledged (all of them with include_acknowledged=true)."""
    alerts = await store_of(request).alerts(include_acknowledged)
    return AlertList(alerts=[AlertOut(**a.to_dict()) for a in alerts])


@router.post("/{alert_id}/ack", response_model=AlertOut)
async def acknowledge(request: Request, alert_id: AlertId, owner: OwnerDep) -> AlertOut:
    """Mark an alert seen; acknowledging it again keeps the first time."""
    alert = await store_of(request).acknowledge_alert(alert_id)
    if alert is None:
        raise NotFound(message_id="alert_missing")
    return AlertOut(**alert.to_dict())
