"""The web pages (chat, Time Travel, Settings), rendered in the person's language.

Pages are templates plus small scripts under static/ that talk to the JSON API, so the
front end has no build step. A page signs in with the session cookie only: a browser
never sends a bearer token.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from kazma_core.catalogue.errors import ERRORS, LISTS
from kazma_core.catalogue.steps import WORDS as STEP_WORDS
from kazma_core.catalogue.tools import TOOL_DONE, TOOL_LABELS, TOOL_STATES
from kazma_core.stores.types import User
from kazma_ui.web.i18n import DIRECTION, catalogue, lang_for, text
from kazma_ui.web.sessions import SESSION_COOKIE, session_seconds

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
router = APIRouter(include_in_schema=False)


# A run of left-to-right text (a command, a path, an address, a name) inside an Arabic sentence.
_LTR_RUN = re.compile(r"[\u200e]?(?:[A-Za-z0-9_./:?=…+<>-]+)(?: [A-Za-z0-9_./:?=…+<>-]+)*")


def isolated(lang: str, sentence: str) -> Markup:
    """A sentence for a page's body: in Arabic each left-to-right run sits in its own <bdi>,
    so "/replay clear" or "kazma serve" keeps its order inside the right-to-left line."""
    if lang != "ar":
        return escape(sentence)
    out, last = [], 0
    for match in _LTR_RUN.finditer(sentence):
        if not re.search(r"[A-Za-z]", match.group(0)):
            continue
        whole = match.group(0)
        run = whole.lstrip("\u200e").rstrip(".:,;")  # a sentence's own stop stays outside
        out.append(escape(sentence[last : match.start()]))
        out.append(Markup('<bdi dir="ltr">{}</bdi>').format(run))
        last = match.start() + len(whole) - len(whole.lstrip("\u200e")) + len(run)
    out.append(escape(sentence[last:]))
    return Markup("").join(out)


@cache
def static_url(name: str) -> str:
    """The file's address with its content hash, so a browser never runs an old script."""
    digest = hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest()[:12]
    return f"/static/{name}?v={digest}"


async def signed_in(request: Request) -> User | None:
    session = request.cookies.get(SESSION_COOKIE)
    if not session:
        return None
    store = request.app.state.core.store.users
    return await store.user_for_token(session, "session", max_age=session_seconds(request))  # type: ignore[no-any-return]


def render(request: Request, template: str, page: str, user: User | None, status: int = 200, **extra: Any) -> HTMLResponse:
    lang = lang_for(user.lang if user else None, request.headers.get("accept-language"), request.query_params.get("lang"))
    config = {
        "lang": lang,
        "page": page,
        # The page's sentences, and the errors named by id (filled from an error's parameters).
        "strings": {
            **catalogue(lang), **{f"errors.{key}": text.get(lang) for key, text in ERRORS.items()},
            # Tool calls in people's words, as the events and the transcript's `tools` name them.
            **{f"tools.{key}": text.get(lang) for key, text in TOOL_LABELS.items()},
            **{f"tool_states.{key}": text.get(lang) for key, text in TOOL_STATES.items()},
            **{f"tools_done.{key}": text.get(lang) for key, text in TOOL_DONE.items()},
            # what a step did, in the step words (the Time Travel page labels its steps with them)
            **{f"steps.{key}": pair[1 if lang == "ar" else 0] for key, pair in STEP_WORDS.items() if key.startswith("did_")},
        },
        # How a list parameter of an error reads: each item's template, and what joins them.
        "lists": {name: [item.get(lang), joiner.get(lang)] for name, (item, joiner) in LISTS.items()},
        "user": {"name": user.name, "role": user.role} if user else None,
    }
    context = {
        "lang": lang,
        "dir": DIRECTION[lang],
        "page": page,
        "user": user,
        "config": config,
        "static": static_url,
        "t": lambda key, **values: text(lang, key, **values),
        "tb": lambda key, **values: isolated(lang, text(lang, key, **values)),  # body text, directions isolated
        **extra,
    }
    response = TEMPLATES.TemplateResponse(request, template, context, status_code=status)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Vary"] = "Accept-Language, Cookie"
    return response


def sign_in(request: Request) -> HTMLResponse:
    example = f"{str(request.base_url).rstrip('/')}/login?token=…"
    expired = request.query_params.get("login") == "expired"
    return render(request, "signin.html", "signin", None, example=example, expired=expired)


@router.get("/", response_class=HTMLResponse)
async def chat_page(request: Request) -> HTMLResponse:
    user = await signed_in(request)
    return render(request, "chat.html", "chat", user) if user else sign_in(request)


@router.get("/replay", response_class=HTMLResponse)
async def replay_page(request: Request) -> HTMLResponse:
    user = await signed_in(request)
    return render(request, "replay.html", "replay", user) if user else sign_in(request)


@router.get("/settings", response_class=HTMLResponse)
async def settings_page(request: Request) -> HTMLResponse:
    user = await signed_in(request)
    if user is None:
        return sign_in(request)
    return render(request, "settings.html", "settings", user, status=200 if user.role == "owner" else 403)
