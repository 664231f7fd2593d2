"""The replay routes of SPEC (plus the restore preview and the undo), each over the one rewind service.

Their answers are the service's own results (`kazma_ui/rewind_results.py`), which carry the
SPEC's names (thread_id, snapshot_id, snapshot) as their JSON names.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, BackgroundTasks, Depends, Path, Query, Request, status
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from commands.render import comparison
from kazma_core.catalogue import sentence
from kazma_core.memory import give_back
from kazma_core.stores.types import User
from kazma_ui.message_point import MessagePoint
from kazma_ui.paging import MAX_PAGE
from kazma_ui.rewind_results import (
    ChatWithSteps,
    Cleared,
    Comparison,
    Forked,
    Restored,
    RestorePreview,
    StepDetail,
    StepList,
    Undone,
    UndoOffer,
)
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


class PointRef(BaseModel):
    """A restore's or fork's point: a step (`snapshot_id`) or a transcript message (`message_id`,
    a row's `id`: right after an answer or a note, right before a person's message)."""

    # One of the two, as the schema says (neither may be null).
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"oneOf": [{"required": ["snapshot_id"]}, {"required": ["message_id"]}]},
    )
    thread_id: str = Field(min_length=1, max_length=64)
    snapshot_id: str = Field(default=None, min_length=1, max_length=MAX_ADDRESS, json_schema_extra=STEP_ADDRESS)  # type: ignore[assignment]
    message_id: int = Field(default=None, ge=1)  # type: ignore[assignment]

    @model_validator(mode="after")
    def one_point(self) -> PointRef:
        if (self.snapshot_id is None) == (self.message_id is None):
            # named by its sentence's id: the refusal says it in the person's language (web/refusals.py)
            raise PydanticCustomError("step_or_message", sentence("errors.step_or_message", "en"))
        return self

    def point(self) -> tuple[str | None, int | None]:
        return self.snapshot_id, self.message_id


class MessagePointOut(BaseModel):
    """Where rewinding to or forking from a transcript message goes: its step (null before the
    first message, `empty`), or `kept: false` when that step is no longer kept."""

    message_id: int
    turn_index: int | None
    snapshot_id: str | None
    empty: bool
    kept: bool


class MessagePoints(BaseModel):
    thread_id: str
    messages: list[MessagePointOut]


def point_out(point: MessagePoint) -> MessagePointOut:
    return MessagePointOut(
        message_id=point.message.id, turn_index=point.turn_index,
        snapshot_id=point.step.id if point.step else None, empty=point.empty, kept=point.kept,
    )


class RestoreRef(PointRef):
    """A restore: the step, and what it takes back (the conversation, as the SPEC's restore did, the
    files the chat's tools wrote, or both); `force` overwrites files something else changed since."""

    what: Literal["conversation", "files", "both"] = "conversation"
    force: bool = False


class ForkRef(PointRef):
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
    request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep, background: BackgroundTasks,
    before: Annotated[int | None, Query(ge=0, description="Only the step's messages before this position (from 0)")] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE, description="At most this many, the newest of them")] = None,
) -> StepDetail:
    """The step with its messages: all of them, or with `limit` (and `before`) one page; `first`
    is the position of the page's first message, `more` says older ones come before it, and
    `added_from` where the messages new since the chat's previous step begin."""
    step = await rewind_of(request).get_step(
        user, surface_of(request), thread_id, snapshot_id, before=before, limit=limit
    )
    if len(step.messages) > MAX_PAGE:  # a whole long step: its memory goes back once it is sent
        background.add_task(give_back)
    return step


@router.get("/snapshots/{thread_id}/{snapshot_id}/preview", response_model=RestorePreview)
async def preview_restore(
    request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep
) -> RestorePreview:
    return await rewind_of(request).preview_restore(user, surface_of(request), thread_id, snapshot_id)


@router.post("/restore", response_model=Restored)
async def restore(request: Request, body: RestoreRef, user: UserDep) -> Restored:
    """Restore to a step, or to a transcript message's point (`message_id`): its conversation,
    its files (`what`), or both."""
    address, message_id = body.point()
    return await rewind_of(request).restore(
        user, surface_of(request), body.thread_id, address, message_id=message_id, what=body.what, force=body.force
    )


@router.get("/messages/{thread_id}", response_model=MessagePoints)
async def message_points(request: Request, thread_id: str, user: UserDep) -> MessagePoints:
    """For each transcript message, the step rewinding to or forking from it goes to."""
    points = await rewind_of(request).message_points(user, surface_of(request), thread_id)
    return MessagePoints(thread_id=thread_id, messages=[point_out(p) for p in points])


@router.get("/messages/{thread_id}/{message_id}", response_model=MessagePointOut)
async def message_point(request: Request, thread_id: str, message_id: int, user: UserDep) -> MessagePointOut:
    return point_out(await rewind_of(request).message_point(user, surface_of(request), thread_id, message_id))


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
    """Fork a step, or a transcript message's point (`message_id`; before the first message: an
    empty chat); with `files`, the step's files go into the forker's folder."""
    address, message_id = body.point()
    return await rewind_of(request).fork(
        user, surface_of(request), body.thread_id, address, message_id=message_id, files=body.files, force=body.force
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
