"""The chat API under /api/chats, a contract HTTP clients and the TUI rely on: chats, messages, approvals, events."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated

import orjson
from fastapi import APIRouter, BackgroundTasks, Depends, Header, Query, Request, Response, status
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.sse import AppStatus
from starlette.background import BackgroundTask

from kazma_core.agent.activity import answer_rows_tools
from kazma_core.agent.runtime import TurnResult
from kazma_core.core import Core
from kazma_core.errors import InvalidInput, KazmaError
from kazma_core.memory import give_back
from kazma_core.stores.types import Chat, Place, User
from kazma_ui.paging import MAX_PAGE, PAGE
from kazma_ui.versions import EDIT, REGENERATE, Made, Versions
from kazma_ui.web.auth import current_user, still_signed_in, surface_of
from kazma_ui.web.markdown import answer_html
from kazma_ui.web.schemas import (
    Accepted,
    ApprovalList,
    ChatList,
    ChatOut,
    Decision,
    Done,
    EditedMessage,
    ErrorBody,
    Gate,
    LivesIn,
    NewChat,
    NewMessage,
    Rename,
    Stopped,
    Transcript,
    TranscriptMessage,
    TurnOut,
    TurnVersionsOut,
    VersionChat,
    VersionList,
    VersionOut,
)

log = logging.getLogger(__name__)
ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 502, 503)
}
router = APIRouter(prefix="/api/chats", tags=["chats"], responses=ERRORS)
UserDep = Annotated[User, Depends(current_user)]
# A stopping server ends open streams after uvicorn's graceful timeout, as any other request.
# sse-starlette's own drain watches process-wide state: one server stopping would end the
# streams of every server in the process (the tests run several).
AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
SSE_KEEPALIVE = 15.0  # seconds between keep-alive comments, and between checks that the reader is still signed in


def core_of(request: Request) -> Core:
    return request.app.state.core  # type: ignore[no-any-return]


def versions_of(request: Request) -> Versions:
    return Versions(request.app.state.rewind)


def version_out(made: Made) -> VersionOut:
    r = made.result
    return VersionOut(
        thread_id=made.chat_id, version_of=made.version_of, reply=r.reply, turn_index=r.turn_index,
        status=r.status, gates=[Gate(**g) for g in r.gates],
    )


def chat_out(chat: Chat, place: Place | None = None, versions: int = 1) -> ChatOut:
    lives_in = LivesIn(platform=place.platform, place=place.place, name=place.label) if place else None  # type: ignore[arg-type]
    return ChatOut(
        thread_id=chat.id, title=chat.title, created_at=chat.created_at, turns=chat.last_turn,
        forked_from=chat.forked_from, lives_in=lives_in, versions=versions,  # type: ignore[arg-type]
    )


def turn_out(result: TurnResult) -> TurnOut:
    return TurnOut(
        reply=result.reply, turn_index=result.turn_index, status=result.status,
        gates=[Gate(**g) for g in result.gates],
    )


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ChatOut)
async def create_chat(request: Request, user: UserDep, body: NewChat | None = None) -> ChatOut:
    core = core_of(request)
    await core.turns.quota.refuse_when_full(user.id, fresh=False)  # a new chat adds its title only
    chat = await core.chats.create(user, body.title if body else None)
    return chat_out(chat)


@router.get("", response_model=ChatList)
async def list_chats(
    request: Request, user: UserDep,
    q: Annotated[str, Query(max_length=200, description="Only chats whose title or a message holds these words")] = "",
) -> ChatList:
    core = core_of(request)
    places = await core.store.places.places(user.id)
    if len(request.query_params.getlist("q")) > 1:  # one search at a time: `?q=a&q=b` is not "a b"
        raise InvalidInput(message_id="field_invalid", field="q")
    if q.strip():  # a search lists each chat that matched, older versions too
        found = await core.chats.search(user, q)
        return ChatList(chats=[chat_out(c, places.get(c.id)).model_copy(update={"found": f}) for c, f in found])
    grouped = await versions_of(request).group_chats(user, await core.chats.list(user))
    return ChatList(chats=[chat_out(c, places.get(c.id), n) for c, n in grouped])


@router.patch("/{thread_id}", response_model=ChatOut)
async def rename_chat(request: Request, thread_id: str, body: Rename, user: UserDep) -> ChatOut:
    """Give the chat a new title (on one line, at most 200 characters)."""
    core = core_of(request)
    places = await core.store.places.places(user.id)
    chat = await core.chats.rename(user, thread_id, body.title)
    return chat_out(chat, places.get(chat.id))


@router.post(
    "/{thread_id}/messages",
    response_model=TurnOut,
    responses={202: {"model": Accepted}},
)
async def send_message(
    request: Request, thread_id: str, body: NewMessage, user: UserDep, wait: bool = Query(default=True)
) -> TurnOut | JSONResponse:
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    if wait:
        return turn_out(await core.turns.send(thread_id, body.text))

    started = await core.turns.begin(thread_id, body.text)

    async def run() -> None:
        try:
            await core.turns.finish(started)
        except KazmaError as err:
            core.events.publish(thread_id, "error", err.to_dict())
        except Exception:
            log.exception("background turn in chat %s failed", thread_id)

    task = asyncio.create_task(run())
    request.app.state.tasks.add(task)
    task.add_done_callback(request.app.state.tasks.discard)
    return JSONResponse(Accepted(status="running", thread_id=thread_id).model_dump(), status_code=202)


@router.post("/{thread_id}/stop", response_model=Stopped)
async def stop_turn(request: Request, thread_id: str, user: UserDep) -> Stopped:
    """Stop the chat's running turn at its next step boundary; answers once it has ended."""
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    return Stopped(stopped=await core.chats.stop(thread_id), thread_id=thread_id)


@router.get("/{thread_id}/messages", response_model=Transcript)
async def read_transcript(
    request: Request, thread_id: str, user: UserDep, background: BackgroundTasks,
    before: Annotated[int | None, Query(ge=1, description="Only messages before this one (its id)")] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE, description="At most this many, the newest of them")] = None,
) -> Transcript:
    """The chat's messages, oldest first: all of them, or with `limit` (and `before`) one page,
    with `more` saying whether older ones come before it."""
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    if before is not None and limit is None:
        limit = PAGE
    rows = await core.store.transcript.transcript(thread_id, before=before, limit=None if limit is None else limit + 1)
    more = limit is not None and len(rows) > limit
    if more:
        rows = rows[1:]
    lease = await core.store.leases.lease(thread_id)
    head = await core.conversation.head(thread_id)
    tools = answer_rows_tools([(r.id, r.turn_index, r.role) for r in rows], head[1] if head else [])
    if len(rows) > MAX_PAGE:  # a whole long transcript: its memory goes back once it is sent
        background.add_task(give_back)
    return Transcript(
        thread_id=thread_id,
        running=lease is not None and lease[1] == "turn",
        messages=[
            TranscriptMessage(
                id=r.id, turn_index=r.turn_index, role=r.role, text=r.text, created_at=r.created_at,
                html=answer_html(r.role, r.text), tools=tools.get(r.id),  # type: ignore[arg-type]
            )
            for r in rows
        ],
        more=more,
    )


@router.post("/{thread_id}/messages/{message_id}/edit", response_model=VersionOut, status_code=status.HTTP_201_CREATED)
async def edit_message(request: Request, thread_id: str, message_id: int, body: EditedMessage, user: UserDep) -> VersionOut:
    """A new version of the conversation: up to the turn before this message of yours, with the
    edited text sent as the next turn. The chat it came from is not touched."""
    made = await versions_of(request).make(user, surface_of(request), thread_id, message_id, EDIT, body.text)
    return version_out(made)


@router.post("/{thread_id}/messages/{message_id}/regenerate", response_model=VersionOut, status_code=status.HTTP_201_CREATED)
async def regenerate_answer(request: Request, thread_id: str, message_id: int, user: UserDep) -> VersionOut:
    """A new version of the conversation with this answer's question asked again."""
    made = await versions_of(request).make(user, surface_of(request), thread_id, message_id, REGENERATE)
    return version_out(made)


@router.get("/{thread_id}/versions", response_model=VersionList)
async def list_versions(request: Request, thread_id: str, user: UserDep) -> VersionList:
    """Each turn where versions of this conversation differ: a chat holding each, and which this is;
    and every chat of the conversation, oldest first, each with where it was made from."""
    versions = versions_of(request)
    turns = await versions.turn_versions(user, thread_id)
    places = await core_of(request).store.places.places(user.id)
    chats = [
        VersionChat(**chat_out(c, places.get(c.id)).model_dump(), version_of=v.version_of if v else None,
                    turn_index=v.turn_index if v else None)
        for c, v in await versions.conversation_chats(user, thread_id)
    ]
    return VersionList(
        turns=[TurnVersionsOut(turn_index=t.turn_index, versions=t.versions, current=t.current) for t in turns], chats=chats,
    )


@router.get("/{thread_id}/approvals", response_model=ApprovalList)
async def list_approvals(request: Request, thread_id: str, user: UserDep) -> ApprovalList:
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    await core.turns.settle_expired(thread_id)
    cards = await core.store.cards.cards(thread_id)
    return ApprovalList(approvals=[Gate(**c.to_dict()) for c in cards])


@router.post("/{thread_id}/approvals/{card_id}", response_model=TurnOut)
async def decide_approval(request: Request, thread_id: str, card_id: str, body: Decision, user: UserDep) -> TurnOut:
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    return turn_out(await core.turns.decide(thread_id, card_id, body.decision, user.id))


@router.delete("/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_chat(request: Request, thread_id: str, user: UserDep) -> Response:
    await core_of(request).chats.delete(user, thread_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{thread_id}/forget", response_model=Done)
async def forget_chat(request: Request, thread_id: str, user: UserDep) -> Done:
    await core_of(request).chats.forget(user, thread_id)
    return Done()


@router.get("/{thread_id}/events", response_class=EventSourceResponse)
async def chat_events(
    request: Request, thread_id: str, user: UserDep,
    last_event_id: Annotated[
        str | None, Header(alias="Last-Event-ID", description="The id of the last event this client saw, to resume after it")
    ] = None,
) -> EventSourceResponse:
    """The chat's events as they happen. A client that reconnects with the `Last-Event-ID` it
    saw gets what it missed first, or a `reload` event when that is no longer kept."""
    core = core_of(request)
    await core.chats.owned(user, thread_id)
    # Subscribed before the answer's headers go out: a client that has them misses nothing after.
    held = contextlib.AsyncExitStack()
    events = await held.enter_async_context(core.events.subscribe(thread_id, last_event_id))

    async def stream() -> AsyncIterator[ServerSentEvent]:
        while True:
            try:
                event = await asyncio.wait_for(anext(events), SSE_KEEPALIVE)
            except TimeoutError:
                if not await still_signed_in(request):
                    return  # signed out, token replaced, user removed: the stream ends too
                continue
            data = event.data
            if event.type == "message" and (html := answer_html(data.get("role", ""), data.get("text", ""))) is not None:
                data = {**data, "html": html}  # an answer comes rendered, as its transcript row does
            yield ServerSentEvent(orjson.dumps(data).decode(), event=event.type, id=event.id)

    # The subscription ends with the answer, whichever way that ends (the reader left, or was signed out).
    return EventSourceResponse(stream(), ping=SSE_KEEPALIVE, sep="\n", background=BackgroundTask(held.aclose))
