"""The replay routes of SPEC (plus the restore preview and the undo), each over the one rewind service."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, status
from pydantic import BaseModel, ConfigDict, Field

from commands.render import comparison
from kazma_core.stores.types import User
from kazma_ui.thread_rewind import RewindService
from kazma_ui.web.auth import current_user, surface_of
from kazma_ui.web.i18n import lang_for
from kazma_ui.web.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 503)}
router = APIRouter(prefix="/api/replay", tags=["replay"], responses=ERRORS)
UserDep = Annotated[User, Depends(current_user)]
# What the server takes as a step's address: 8 or more hex characters of its id (documented,
# not enforced here: the rewind service answers any other with invalid_step and a sentence).
STEP_ADDRESS = {"minLength": 8, "pattern": "^[0-9a-fA-F]{8,64}$"}
StepId = Field(min_length=1, max_length=64, json_schema_extra=STEP_ADDRESS)
StepPath = Path(json_schema_extra=STEP_ADDRESS)


class StepRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(min_length=1, max_length=64)
    snapshot_id: str = StepId


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


class ThreadSummary(BaseModel):
    thread_id: str
    title: str
    steps: int
    bytes: int
    last_at: float


class Threads(BaseModel):
    threads: list[ThreadSummary]


class StepInfo(BaseModel):
    snapshot_id: str
    thread_id: str
    turn_index: int
    iteration: int
    label: str
    created_at: float
    model: str
    questions: list[str]
    message_count: int
    size: int
    truncated: bool


class TurnStep(BaseModel):
    step: int
    snapshot_id: str
    label: str
    truncated: bool


class Turn(BaseModel):
    turn_index: int
    questions: list[str]
    steps: list[TurnStep]


class Steps(BaseModel):
    thread_id: str
    snapshots: list[StepInfo]
    turns: list[Turn]


class StepDetail(BaseModel):
    snapshot: StepInfo
    messages: list[dict[str, Any]]
    plan: Any = None
    routing: Any = None
    cost: Any = None
    scratchpad: Any = None
    model: Any = None
    gates: Any = None


class Preview(BaseModel):
    snapshot: StepInfo
    side_effects: list[dict[str, Any]]
    later_steps: int
    later_turns: int
    restorable: bool


class UndoOffer(BaseModel):
    snapshot_id: str
    expires_at: float


class Restored(BaseModel):
    thread_id: str
    snapshot: StepInfo
    turn_index: int
    removed_steps: int
    undo: UndoOffer | None = None


class Back(BaseModel):
    messages: int
    memories: int
    forgotten_again: int
    cards: int
    steps: int


class Undone(BaseModel):
    thread_id: str
    undone_snapshot_id: str
    turn_index: int
    back: Back


class Forked(BaseModel):
    thread_id: str
    title: str
    forked_from: dict[str, Any] | None
    snapshot_id: str | None


class Comparison(BaseModel):
    a: dict[str, Any]
    b: dict[str, Any]
    messages: dict[str, Any]
    plan: dict[str, Any]
    routing: dict[str, Any]
    cost: dict[str, Any]
    model: dict[str, Any]
    text: str


class Cleared(BaseModel):
    thread_id: str
    deleted: int


def rewind_of(request: Request) -> RewindService:
    return request.app.state.rewind  # type: ignore[no-any-return]


@router.get("/threads", response_model=Threads)
async def list_threads(request: Request, user: UserDep) -> Threads:
    return Threads(threads=await rewind_of(request).list_threads(user, surface_of(request)))  # type: ignore[arg-type]


@router.get("/snapshots/{thread_id}", response_model=Steps)
async def list_steps(request: Request, thread_id: str, user: UserDep) -> Any:
    return await rewind_of(request).list_steps(user, surface_of(request), thread_id)


@router.get("/snapshots/{thread_id}/{snapshot_id}", response_model=StepDetail)
async def get_step(request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep) -> Any:
    return await rewind_of(request).get_step(user, surface_of(request), thread_id, snapshot_id)


@router.get("/snapshots/{thread_id}/{snapshot_id}/preview", response_model=Preview)
async def preview_restore(request: Request, thread_id: str, snapshot_id: Annotated[str, StepPath], user: UserDep) -> Any:
    return await rewind_of(request).preview_restore(user, surface_of(request), thread_id, snapshot_id)


@router.post("/restore", response_model=Restored)
async def restore(request: Request, body: StepRef, user: UserDep) -> Any:
    return await rewind_of(request).restore(user, surface_of(request), body.thread_id, body.snapshot_id)


@router.post("/undo", response_model=Undone)
async def undo(request: Request, body: ThreadRef, user: UserDep) -> Any:
    return await rewind_of(request).undo(user, surface_of(request), body.thread_id)


@router.get("/undo/{thread_id}", response_model=UndoOffer | None)
async def undo_offer(request: Request, thread_id: str, user: UserDep) -> Any:
    """Whether the chat's last restore can be undone now (null when not), for a page opened later."""
    await request.app.state.core.chats.owned(user, thread_id)
    return await rewind_of(request).undo_offer(thread_id)


@router.post("/fork", response_model=Forked, status_code=status.HTTP_201_CREATED)
async def fork(request: Request, body: StepRef, user: UserDep) -> Any:
    return await rewind_of(request).fork(user, surface_of(request), body.thread_id, body.snapshot_id)


@router.post("/compare", response_model=Comparison)
async def compare(request: Request, body: CompareRef, user: UserDep) -> Any:
    diff = await rewind_of(request).compare(
        user, surface_of(request), body.thread_id, body.a, body.b, b_chat_id=body.b_thread_id
    )
    # The summary in the reader's language (the structured parts are the same in both).
    return {**diff, "text": comparison(diff, lang_for(user.lang, request.headers.get("accept-language"), request.headers.get("x-kazma-lang")))}


@router.delete("/threads/{thread_id}", response_model=Cleared)
async def clear(request: Request, thread_id: str, user: UserDep) -> Any:
    return await rewind_of(request).clear(user, surface_of(request), thread_id)
