"""Who is signed in, and the language they read Kazma in."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict

from kazma_core.stores.types import User
from kazma_ui.web.auth import current_user
from kazma_ui.web.i18n import lang_for
from kazma_ui.web.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (401, 413, 422)}
router = APIRouter(prefix="/api/me", tags=["account"], responses=ERRORS)
UserDep = Annotated[User, Depends(current_user)]


class Me(BaseModel):
    user_id: str
    name: str
    role: str
    lang: Literal["en", "ar"]  # the language the pages use: the stored choice, else the browser's


class LangChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lang: Literal["en", "ar"]


def me(request: Request, user: User, stored: str) -> Me:
    lang = lang_for(stored, request.headers.get("accept-language"))
    return Me(user_id=user.id, name=user.name, role=user.role, lang=lang)  # type: ignore[arg-type]


@router.get("", response_model=Me)
async def read_me(request: Request, user: UserDep) -> Me:
    return me(request, user, user.lang)


@router.put("/lang", response_model=Me)
async def choose_lang(request: Request, body: LangChoice, user: UserDep) -> Me:
    await request.app.state.core.store.users.set_user_lang(user.id, body.lang)
    return me(request, user, body.lang)
