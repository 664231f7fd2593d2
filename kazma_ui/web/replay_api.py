"""The replay routes of SPEC (plus the restore preview and the undo), each over the one rewind service.

Their answers are the service's own results (`kazma_ui/rewind_results.py`), which carry the
SPEC's names (thread_id, snapshot_id, snapshot) as their JSON names.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, status
from pydantic import BaseModel, ConfigDict, Field

from commands.render import comparison
from kazma_core.stores.types import User
from kazma_ui.rewind_results import (
    ChatWithSteps,
    Cleared,
    Comparison,
    Forked,
    RestorePreview,
    Restored,
    StepDetail,
    StepList,
    Undone,
    UndoOffer,
)
from kazma_ui.paging import MAX_PAGE
from kazma_ui.step_address import MAX_ADDRESS, MIN_PREFIX
from kazma_ui.thread_rewind import RewindService
from kazma_ui.web.auth import current_user, surface_of
from kazma_ui.web.i18n import lang_for
from kazma_ui.web.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 503)}
router = APIRouter(prefix="/api/replay", tags=["replay"], responses=ERRORS)
UserDep = Annotated[User, Depends(current_user)]
# What the server takes as a step's address: 8 or more hex characters of its id (documented,
# not enforced here: the rewind service answers any other with invalid_step and a sentence).
STEP_ADDRESS: dict[str, Any] = {"minLength": MIN_PREFIX, "pattern": f"^[0-9a-fA-F]{{{MIN_PREFIX},{MAX_ADDRESS}}}$"}
StepId = Field(min_length=1, max_length=MAX_ADDRESS, json_schema_extra=STEP_ADDRESS)
StepPath = Path(json_schema_extra=STEP_ADDRESS)


class StepRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, max_length=64)
    snapshot_id: str = StepId


class RestoreRef(StepRef):
    """A restore: the step, and what it takes back (the conversation, as the SPEC's restore did, the
    files the chat's tools wrote, or both); `force` overwrites files something else changed since."""

    what: Literal["conversation", "files", "both"] = "conversation"
    force: bool = False


class ForkRef(StepRef):
    """A fork; with `files`, the step's files go into the forker's own folder too."""

    files: bool = False
    force: bool = False


class UndoRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, max_length=64)
    force: bool = False  # put the files back even where something else changed them since the restore


class CompareRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, max_length=64)
    a: str = StepId
    b: str = StepId
    # b is a step of this chat: a fork of thread_id, its source, or another fork of one chat
    b_thread_id: str | None = Field(default=None, min_length=1, max_length=64)


class ThreadRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, max_length=64)


class ThreadList(BaseModel):
    """GET /api/replay/threads: the conversations that have steps."""

    threads: list[ChatWithSteps]


def rewind_of(request: Request) -> RewindService:
    return request.app.state.rewind  # type: ignore[no-any-return]


@router.get("/threads", response_model=ThreadList)
async def list_threads(request: Request, user: UserDep) -> ThreadList:
    return ThreadList(threads=await rewind_of(request).list_chats(user, surface_of(request)))


@router.get("/snapshots/{thread_id}", response_model=StepList)
async def list_steps(request: Request, thread_id: str, user: UserDep) -> StepList:
    return await rewind_of(request).list_steps(user, surface_of(request), thread_id)


@router.get("/snapshots/{thread_id}/{snapshot_id}", response_model=StepDetail)
async def get_step(
    request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep,
    before: Annotated[int | None, Query(ge=0, description="Only the step's messages before this position (from 0)")] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE, description="At most this many, the newest of them")] = None,
) -> StepDetail:
    """The step with its messages: all of them, or with `limit` (and `before`) one page; `first`
    is the position of the page's first message, `more` says older ones come before it, and
    `added_from` where the messages new since the chat's previous step begin."""
    return await rewind_of(request).get_step(
        user, surface_of(request), thread_id, snapshot_id, before=before, limit=limit
    )


@router.get("/snapshots/{thread_id}/{snapshot_id}/preview", response_model=RestorePreview)
async def preview_restore(
    request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep
) -> RestorePreview:
    return await rewind_of(request).preview_restore(user, surface_of(request), thread_id, snapshot_id)


@router.post("/restore", response_model=Restored)
async def restore(request: Request, body: RestoreRef, user: UserDep) -> Restored:
    return await rewind_of(request).restore(
        user, surface_of(request), body.thread_id, body.snapshot_id, what=body.what, force=body.force
    )


@router.post("/undo", response_model=Undone)
async def undo(request: Request, body: UndoRef, user: UserDep) -> Undone:
    return await rewind_of(request).undo(user, surface_of(request), body.thread_id, force=body.force)


@router.get("/undo/{thread_id}", response_model=UndoOffer | None)
async def undo_offer(request: Request, thread_id: str, user: UserDep) -> UndoOffer | None:
    """Whether the chat's last restore can be undone now (null when not), for a page opened later."""
    await request.app.state.core.chats.owned(user, thread_id)
    return await rewind_of(request).undo_offer(thread_id)


@router.post("/fork", response_model=Forked, status_code=status.HTTP_201_CREATED)
async def fork(request: Request, body: ForkRef, user: UserDep) -> Forked:
    return await rewind_of(request).fork(
        user, surface_of(request), body.thread_id, body.snapshot_id, files=body.files, force=body.force
    )


@router.post("/compare", response_model=Comparison)
async def compare(request: Request, body: CompareRef, user: UserDep) -> Comparison:
    diff = await rewind_of(request).compare(
        user, surface_of(request), body.thread_id, body.a, body.b, b_chat_id=body.b_thread_id
    )
    # The summary in the reader's language (the structured parts are the same in both).
    lang = lang_for(user.lang, request.headers.get("accept-language"), request.headers.get("x-kazma-lang"))
    return diff.model_copy(update={"text": comparison(diff, lang)})


@router.delete("/threads/{thread_id}", response_model=Cleared)
async def clear(request: Request, thread_id: str, user: UserDep) -> Cleared:
    return await rewind_of(request).clear(user, surface_of(request), thread_id)
