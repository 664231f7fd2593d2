"""Slash commands typed in the web chat: parsed and run by commands/, answered without the model."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from commands.executor import execute
from commands.parser import parse
from commands.service_target import ServiceTarget
from commands.target import CommandContext
from kazma_core.errors import InvalidInput
from kazma_core.stores.types import User
from kazma_ui.web.auth import current_user, surface_of
from kazma_ui.web.i18n import lang_for
from kazma_ui.web.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 404, 413, 422)}
router = APIRouter(prefix="/api/chats", tags=["chats"], responses=ERRORS)
UserDep = Annotated[User, Depends(current_user)]


class CommandText(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Documented, not enforced: any other text is answered 400 with a sentence (send it as a message).
    text: str = Field(
        min_length=1, max_length=4000,
        json_schema_extra={"pattern": r"^\s*/[A-Za-z0-9_]{1,64}(@[A-Za-z0-9_]{1,64})?(\s[\s\S]*)?$"},
    )
    confirmed: bool = False  # the person already said yes to the change this command asked about


class CommandOut(BaseModel):
    kind: Literal["answer", "confirm", "error"]
    text: str
    data: dict[str, Any]
    code: str | None
    ephemeral: bool


@router.post("/{thread_id}/commands", response_model=CommandOut)
async def run_command(request: Request, thread_id: str, body: CommandText, user: UserDep) -> CommandOut:
    """Run /replay, /fork, /replay clear ... in this chat; a refusal is an answer of kind "error"."""
    core = request.app.state.core
    await core.chats.owned(user, thread_id)
    parsed = parse(body.text)
    if parsed is None:
        raise InvalidInput(message_id="not_a_command")
    # A page says which language it shows (X-Kazma-Lang); otherwise the person's choice, then the browser's.
    lang = lang_for(user.lang, request.headers.get("accept-language"), request.headers.get("x-kazma-lang"))
    target = ServiceTarget(request.app.state.rewind, user, surface_of(request, default="web"), thread_id)
    context = CommandContext(target, lang, str(request.base_url), body.confirmed)
    result = await execute(parsed, context)
    return CommandOut(kind=result.kind, text=result.text, data=result.data, code=result.code, ephemeral=result.ephemeral)
