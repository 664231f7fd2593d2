"""The web surface over real HTTP: pages in English and Arabic, Settings, the language choice, web commands."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kazma_core import catalogue
from kazma_core.catalogue.errors import ERRORS
from kazma_core.catalogue.steps import WORDS as STEP_WORDS
from kazma_core.catalogue.web import WEB as WEB_SENTENCES
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.types import User
from kazma_ui.web import i18n
from kazma_ui.web.settings_api import EDITABLE
from tests.helpers import error_of, new_chat
from tests.http_server import RunningServer, serve_kazma
from tests.web_session import browser_client

WEB = Path(__file__).resolve().parent.parent / "kazma_ui" / "web"
ARABIC = re.compile(r"[\u0600-\u06FF]")
TIME_TRAVEL = [
    "time_travel.enabled", "time_travel.max_snapshots", "time_travel.max_global_snapshots",
    "time_travel.max_snapshot_bytes", "time_travel.max_thread_bytes", "time_travel.max_total_bytes",
    "time_travel.max_per_turn", "time_travel.auto_maintain", "time_travel.retention_days", "time_travel.undo_seconds",
]


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[RunningServer]:
    async with serve_kazma(settings) as running:
        yield running


@pytest.fixture
async def owner(server: RunningServer) -> AsyncIterator[tuple[User, httpx.AsyncClient]]:
    user, token = await server.add_user("olive", role="owner")
    async with server.client(token) as http:
        yield user, http


@pytest.fixture
async def member(server: RunningServer) -> AsyncIterator[tuple[User, httpx.AsyncClient]]:
    user, token = await server.add_user("max")
    async with server.client(token) as http:
        yield user, http


def html_root(page: str) -> tuple[str, str]:
    match = re.search(r'<html lang="(\w+)" dir="(\w+)">', page)
    assert match, page[:200]
    return match.group(1), match.group(2)


# -- Settings --------------------------------------------------------------------------------------


async def test_the_owner_sees_each_time_travel_setting_with_its_running_and_stored_value(
    owner: tuple[User, httpx.AsyncClient],
) -> None:
    response = await owner[1].get("/api/settings")
    assert response.status_code == 200, response.text
    listed = {s["name"]: s for s in response.json()["settings"]}
    assert list(listed) == [*TIME_TRAVEL, "history.checkpoints_per_chat", "limits.user_quota_bytes"] == list(EDITABLE)
    assert listed["time_travel.max_snapshots"] == {
        "name": "time_travel.max_snapshots", "description": "Newest steps kept per conversation", "kind": "int",
        "value": 50, "stored": None, "live": False, "restart_needed": False, "minimum": 1, "maximum": 100_000,
    }
    assert listed["time_travel.enabled"]["kind"] == "bool" and listed["time_travel.enabled"]["value"] is True
    assert {n for n, s in listed.items() if s["live"]} == {
        "time_travel.auto_maintain", "time_travel.retention_days", "limits.user_quota_bytes"}
    assert listed["history.checkpoints_per_chat"]["value"] == 200


async def test_settings_are_forbidden_to_everyone_but_the_owner(
    server: RunningServer, member: tuple[User, httpx.AsyncClient]
) -> None:
    error_of(await member[1].get("/api/settings"), 403, "forbidden")
    error_of(await member[1].put("/api/settings/time_travel.retention_days", json={"value": 3}), 403, "forbidden")
    async with server.client() as anonymous:
        error_of(await anonymous.get("/api/settings"), 401, "unauthorized")
    assert await server.core.store.settings.overrides() == {}
    assert server.core.settings.time_travel.retention_days == 30


async def test_a_live_setting_applies_at_once(server: RunningServer, owner: tuple[User, httpx.AsyncClient]) -> None:
    response = await owner[1].put("/api/settings/time_travel.retention_days", json={"value": 7})
    assert response.status_code == 200, response.text
    assert response.json() | {"description": ""} == {
        "name": "time_travel.retention_days", "description": "", "kind": "int", "value": 7, "stored": 7,
        "live": True, "restart_needed": False, "minimum": 1, "maximum": 36_500,
    }
    assert server.core.settings.time_travel.retention_days == 7
    assert server.core.recorder.settings.retention_days == 7  # what the running parts read, not a copy
    switched = await owner[1].put("/api/settings/time_travel.auto_maintain", json={"value": False})
    assert switched.json()["value"] is False and switched.json()["restart_needed"] is False
    assert server.core.settings.time_travel.auto_maintain is False
    assert await server.core.store.settings.overrides() == {"time_travel.retention_days": 7, "time_travel.auto_maintain": False}


async def test_a_setting_read_at_start_is_stored_and_says_a_restart_is_needed(
    server: RunningServer, owner: tuple[User, httpx.AsyncClient], settings: Settings
) -> None:
    response = await owner[1].put("/api/settings/time_travel.max_snapshots", json={"value": 10})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["value"], body["stored"], body["restart_needed"]) == (50, 10, True)
    assert server.core.settings.time_travel.max_snapshots == 50
    listed = {s["name"]: s for s in (await owner[1].get("/api/settings")).json()["settings"]}
    assert listed["time_travel.max_snapshots"]["restart_needed"] is True
    assert not any(s["restart_needed"] for n, s in listed.items() if n != "time_travel.max_snapshots")
    # The next start reads the stored value.
    assert load_settings(data_dir=str(settings.data_dir)).time_travel.max_snapshots == 10


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("time_travel.max_snapshots", 0, "allowed: 1 to 100000"),
        ("time_travel.max_snapshots", "many", "whole number, not text"),
        ("time_travel.max_snapshots", "10", "whole number, not text"),
        ("time_travel.enabled", 1, "allowed: true or false"),
        ("time_travel.max_snapshots", 2.5, "whole number"),
        ("time_travel.max_snapshots", True, "whole number"),
        ("time_travel.enabled", "maybe", "allowed: true or false"),
        ("time_travel.max_snapshot_bytes", 100, "allowed: 4096 to 1073741824"),
        ("history.checkpoints_per_chat", 1, "allowed: 2 to 100000"),
    ],
)
async def test_an_invalid_value_is_refused_with_the_reason_and_not_stored(
    server: RunningServer, owner: tuple[User, httpx.AsyncClient], name: str, value: Any, reason: str
) -> None:
    refused = error_of(await owner[1].put(f"/api/settings/{name}", json={"value": value}), 400, "invalid_setting")
    assert name in refused["message"] and reason in refused["message"], refused
    assert await server.core.store.settings.overrides() == {}


async def test_a_setting_not_on_the_page_cannot_be_changed_there(
    server: RunningServer, owner: tuple[User, httpx.AsyncClient]
) -> None:
    for name in ("model.api_key", "server.port", "time_travel.nothing", "nonsense"):
        error_of(await owner[1].put(f"/api/settings/{name}", json={"value": 1}), 404, "not_found")
    error_of(await owner[1].put("/api/settings/time_travel.max_snapshots", json={"value": 3, "x": 1}), 422, "invalid_input")
    error_of(await owner[1].put("/api/settings/time_travel.max_snapshots", json={}), 422, "invalid_input")
    assert await server.core.store.settings.overrides() == {}


async def test_the_settings_and_account_routes_are_described_with_typed_bodies(server: RunningServer) -> None:
    async with server.client() as http:
        paths = (await http.get("/openapi.json")).json()["paths"]
    ref = lambda op, status: op["responses"][status]["content"]["application/json"]["schema"]["$ref"]  # noqa: E731
    assert ref(paths["/api/settings"]["get"], "200").endswith("/SettingList")
    # One route per setting, its body as exact as the setting: the description never promises more.
    assert "/api/settings/{name}" not in paths
    change = paths["/api/settings/time_travel.max_snapshots"]["put"]
    assert ref(change, "200").endswith("/SettingOut")
    assert {"400", "401", "403", "404", "422"} <= change["responses"].keys()
    value = change["requestBody"]["content"]["application/json"]["schema"]["properties"]["value"]
    assert value == {"type": "integer", "minimum": 1, "maximum": 100_000}
    switch = paths["/api/settings/time_travel.enabled"]["put"]["requestBody"]["content"]["application/json"]
    assert switch["schema"]["properties"]["value"] == {"type": "boolean"}
    assert ref(paths["/api/me"]["get"], "200").endswith("/Me")
    assert ref(paths["/api/me/lang"]["put"], "200").endswith("/Me")
    assert ref(paths["/api/chats/{thread_id}/commands"]["post"], "200").endswith("/CommandOut")


# -- pages and languages ---------------------------------------------------------------------------------


async def test_a_visitor_who_is_not_signed_in_is_told_how_to_sign_in(server: RunningServer) -> None:
    async with server.client() as http:
        for path in ("/", "/replay", "/settings"):
            page = await http.get(path)
            assert page.status_code == 200
            assert "kazma serve" in page.text and "/login?token=" in page.text
            assert html_root(page.text) == ("en", "ltr")
        expired = await http.get("/?login=expired")
        assert "already used or has expired" in expired.text
        arabic = await http.get("/", headers={"Accept-Language": "ar-EG,ar;q=0.9,en;q=0.5"})
        assert html_root(arabic.text) == ("ar", "rtl")
        assert "سجّل الدخول إلى كازما" in arabic.text


async def test_each_page_renders_in_english_and_in_arabic_right_to_left(server: RunningServer) -> None:
    user = await server.core.store.users.add_user("olive", role="owner")
    async with browser_client(server, user) as browser:
        for path, english, arabic in (
            ("/", "Your chats", "دردشاتك"),
            ("/replay", "Time Travel", "السفر عبر الزمن"),
            ("/settings", "Running value", "القيمة العاملة"),
        ):
            en = await browser.get(path, headers={"Accept-Language": "en-US,en;q=0.9"})
            assert en.status_code == 200, (path, en.text[:300])
            assert html_root(en.text) == ("en", "ltr") and english in en.text
            ar = await browser.get(path, headers={"Accept-Language": "ar"})
            assert html_root(ar.text) == ("ar", "rtl") and arabic in ar.text, path
            assert html_root((await browser.get(f"{path}?lang=ar")).text) == ("ar", "rtl")
        for name in ("kazma.js", "sidebar.js", "chat.js", "replay.js", "settings.js", "kazma.css"):
            static = await browser.get(f"/static/{name}")
            assert static.status_code == 200 and static.content, name


async def test_the_settings_page_tells_a_member_that_it_is_the_owners(server: RunningServer) -> None:
    user = await server.core.store.users.add_user("max")
    async with browser_client(server, user) as browser:
        page = await browser.get("/settings")
        assert page.status_code == 403
        assert "Only the owner" in page.text and "settings.js" not in page.text
        assert 'href="/settings"' not in (await browser.get("/")).text


async def test_a_chosen_language_is_remembered_over_the_browsers(server: RunningServer) -> None:
    user = await server.core.store.users.add_user("olive", role="owner")
    async with browser_client(server, user, **{"Accept-Language": "en"}) as browser:
        assert (await browser.get("/api/me")).json() == {"user_id": user.id, "name": "olive", "role": "owner", "lang": "en"}
        chosen = await browser.put("/api/me/lang", json={"lang": "ar"})
        assert chosen.status_code == 200, chosen.text
        assert chosen.json()["lang"] == "ar"
        assert html_root((await browser.get("/")).text) == ("ar", "rtl")
        assert (await server.core.store.users.user_by_id(user.id)).lang == "ar"  # type: ignore[union-attr]
        error_of(await browser.put("/api/me/lang", json={"lang": "fr"}), 422, "invalid_input")
        browser.headers.pop("X-Kazma-CSRF")
        error_of(await browser.put("/api/me/lang", json={"lang": "en"}), 401, "unauthorized")
    assert (await server.core.store.users.user_by_id(user.id)).lang == "ar"  # type: ignore[union-attr]


def test_every_string_exists_in_both_languages_with_the_same_placeholders() -> None:
    for key, (en, ar) in WEB_SENTENCES.items():
        assert en.strip() and ar.strip(), key
        assert i18n.placeholders(en) == i18n.placeholders(ar), key
        if key not in {"lang_en", "lang_ar", "setting_none"}:
            assert ARABIC.search(ar), key


def test_every_string_the_pages_use_is_in_the_catalogue_and_every_entry_is_used() -> None:
    source = "\n".join(p.read_text() for p in (*WEB.glob("templates/*.html"), *WEB.glob("static/*.js"), WEB / "pages.py"))
    asked = set(re.findall(r"""\bt[nbc]?\(\s*['"]([\w.]+)['"]""", source))
    counted = set(re.findall(r"""\btc\(\s*['"]([\w.]+)['"]""", source))
    named_errors = {key for key in asked if key.startswith("errors.")}  # the catalogue's errors, handed to every page
    assert {key.removeprefix("errors.") for key in named_errors} <= ERRORS.keys()
    # ... and how a tool call went (the tool labels come by id, from the events)
    named_states = {key for key in asked if key.startswith("tool_states.")}
    assert named_states <= catalogue.ALL.keys(), named_states - catalogue.ALL.keys()
    named_errors |= named_states
    # ... and the words of what a step did (the Time Travel page's labels; most by id, `steps.did_${kind}`)
    named_steps = {key for key in asked if key.startswith("steps.")}
    assert {key.removeprefix("steps.") for key in named_steps} <= STEP_WORDS.keys(), named_steps
    named_errors |= named_steps
    assert not asked - named_errors - WEB_SENTENCES.keys(), asked - named_errors - WEB_SENTENCES.keys()
    # Keys built in the scripts from a prefix: `role_${role}`, ...
    families = ("cost_", "decision_", "lives_in_", "model_provider_", "role_", "setting_")
    for family in families:
        assert f"`{family}${{" in source or f'"{family}" +' in source, family
    unused = {
        key for key in WEB_SENTENCES
        if not key.startswith(families) and not re.search(rf"""['"]{re.escape(key)}['"]""", source)
        and re.sub(r"_(zero|one|two|few|many)$", "", key) not in counted  # a counted sentence's plural forms
    }
    assert not unused, unused


def test_the_language_comes_from_the_address_then_the_stored_choice_then_the_browser() -> None:
    assert i18n.pick_lang("ar-EG,ar;q=0.9,en;q=0.5") == "ar"
    assert i18n.pick_lang("en-GB,ar;q=0.3") == "en"
    assert i18n.pick_lang("fr-FR,fr;q=0.9") == "en"
    assert i18n.pick_lang("fr, ar;q=0.2") == "ar"
    assert i18n.pick_lang(None) == "en"
    assert i18n.lang_for("", "ar", None) == "ar"
    assert i18n.lang_for("en", "ar", None) == "en"
    assert i18n.lang_for("en", "en", "ar") == "ar"
    assert i18n.lang_for("en", None, "xx") == "en"


# -- slash commands in the web chat ------------------------------------------------------------------


async def test_replay_and_fork_in_the_web_chat_answer_with_the_count_and_a_link(
    server: RunningServer, member: tuple[User, httpx.AsyncClient]
) -> None:
    http = member[1]
    chat = await new_chat(http)
    assert (await http.post(f"/api/chats/{chat}/messages", json={"text": "steps 2"})).status_code == 200
    for typed in ("/replay", "/replay list", "/fork", "/fork abcdef12", "/replay compare a b"):
        answer = await http.post(f"/api/chats/{chat}/commands", json={"text": typed})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["kind"] == "answer", (typed, body)
        assert body["data"]["steps"] == 3
        assert body["data"]["link"] == f"{server.url}/replay?thread={chat}"
        assert "3" in body["text"] and body["data"]["link"] in body["text"]
    transcript = (await http.get(f"/api/chats/{chat}/messages")).json()["messages"]
    assert len(transcript) == 2  # the model never saw the commands


async def test_replay_clear_in_the_web_chat_asks_first_then_deletes_the_steps(
    server: RunningServer, member: tuple[User, httpx.AsyncClient]
) -> None:
    http = member[1]
    chat = await new_chat(http)
    await http.post(f"/api/chats/{chat}/messages", json={"text": "calc 1+1"})
    asked = (await http.post(f"/api/chats/{chat}/commands", json={"text": "/replay clear"})).json()
    assert asked["kind"] == "confirm" and asked["data"]["confirm"] == "/replay clear"
    assert len(await server.core.snapshots.list_steps(chat)) == 2
    done = (await http.post(f"/api/chats/{chat}/commands", json={"text": "/replay clear", "confirmed": True})).json()
    assert done["kind"] == "answer" and done["data"]["deleted"] == 2
    assert await server.core.snapshots.list_steps(chat) == []


async def test_a_web_command_answers_in_the_persons_language_and_only_in_their_own_chats(
    server: RunningServer, member: tuple[User, httpx.AsyncClient], owner: tuple[User, httpx.AsyncClient]
) -> None:
    chat = await new_chat(member[1])
    await server.core.store.users.set_user_lang(member[0].id, "ar")
    arabic = (await member[1].post(f"/api/chats/{chat}/commands", json={"text": "/replay"})).json()
    assert ARABIC.search(arabic["text"]), arabic
    error_of(await owner[1].post(f"/api/chats/{chat}/commands", json={"text": "/replay clear", "confirmed": True}), 404, "not_found")
    error_of(await member[1].post(f"/api/chats/{chat}/commands", json={"text": "hello"}), 400, "invalid_input")
    unknown = (await member[1].post(f"/api/chats/{chat}/commands", json={"text": "/nope"})).json()
    assert unknown["kind"] == "error" and unknown["code"] == "bad_command"


# -- /docs and the answers of the API ------------------------------------------------------------------


async def test_the_api_docs_have_the_strict_policy_of_every_page_and_no_inline_script(server: RunningServer) -> None:
    """Broke: /docs was served with 'unsafe-inline' and a CDN in its Content-Security-Policy, although
    Swagger UI's files are this server's own."""
    async with httpx.AsyncClient(base_url=server.url, trust_env=False) as http:
        docs, page = await http.get("/docs"), await http.get("/")
        assert docs.status_code == 200 and page.status_code == 200
        policy = docs.headers["content-security-policy"]
        assert policy == page.headers["content-security-policy"]
        assert "unsafe" not in policy and "http" not in policy and "blob:" not in policy, policy
        assert "script-src 'self';" in policy and "style-src 'self';" in policy
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", docs.text, re.S)
        assert scripts and all('src="/' in attrs and not body.strip() for attrs, body in scripts), scripts
        for src in re.findall(r'(?:src|href)="(/[^"]+)"', docs.text):
            assert (await http.get(src)).status_code == 200, src  # every asset from this server


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("DELETE", "/api/chats", "GET, POST"),
    ("PUT", "/api/chats/abc/messages", "GET, POST"),
    ("GET", "/api/replay/fork", "POST"),
    ("POST", "/docs", "GET"),
])
async def test_a_method_a_route_does_not_take_is_answered_405_naming_every_method_it_takes(
    member: tuple[User, httpx.AsyncClient], method: str, path: str, allowed: str
) -> None:
    """Broke: DELETE /api/chats answered `Allow: POST`, though GET /api/chats lists the chats."""
    answer = await member[1].request(method, path)
    error_of(answer, 405, "method_not_allowed")
    assert answer.headers["allow"] == allowed
