"""Ending access, sessions and headers (issue 14), as two users through HTTP and the `kazma` command.

The server is real (uvicorn on loopback); `kazma users ...` runs as its own process on the
same data folder, as an operator runs it next to a running server.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import ssl
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from kazma_core.catalogue import sentence
from kazma_core.settings import Settings
from tests.conftest import Person, make_settings, user_file
from tests.forked import start_kazma
from tests.helpers import error_of, new_chat, say
from tests.http_server import RunningServer, serve_kazma
from tests.web_session import browser_client, login_url

KAZMA = str(Path(sys.executable).parent / "kazma")
CLI_SECONDS = 30.0
HEADERS = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


async def kazma(settings: Settings, *args: str, locale: str = "C.UTF-8") -> tuple[int, str, str]:
    """Run `kazma <args> --data-dir <the folder>` in a process of its own (forked: tests/forked.py), in this
    locale: (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAZMA_", "LC_", "LANG"))}
    env["KAZMA_CONFIG"] = os.environ["KAZMA_CONFIG"]
    env["LANG"] = locale
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        process = await start_kazma([*args, "--data-dir", str(settings.data_dir)], env, out, err)  # tests/forked.py
        returncode = await asyncio.wait_for(process.wait(), CLI_SECONDS)
        return returncode, out.read_text(), err.read_text()


async def me(http: httpx.AsyncClient) -> int:
    return (await http.get("/api/me")).status_code


# -- no way to end access ----------------------------------------------------------------------------


async def test_signing_out_ends_the_web_session_on_the_server(server: RunningServer, ann: Person) -> None:
    async with browser_client(server, ann.user) as browser:
        session = browser.cookies["kazma_session"]
        assert await me(browser) == 200
        without_csrf = await browser.post("/logout", headers={"X-Kazma-CSRF": ""})
        error_of(without_csrf, 401, "unauthorized")
        assert await me(browser) == 200
        out = await browser.post("/logout", follow_redirects=False)
        assert (out.status_code, out.headers["location"]) == (303, "/")
        assert "kazma_session" not in browser.cookies
    async with httpx.AsyncClient(base_url=server.url, trust_env=False, cookies={"kazma_session": session}) as stolen:
        error_of(await stolen.get("/api/me"), 401, "unauthorized")  # the cookie, kept by someone, is worth nothing now
        page = await stolen.get("/")
        assert page.status_code == 200 and 'data-page="signin"' in page.text


async def test_a_new_token_revokes_the_old_ones_and_the_web_sessions(
    server: RunningServer, ann: Person, bob: Person, settings: Settings
) -> None:
    """Broke: `kazma users add carol` again left carol's old tokens valid; no command revoked a token."""
    async with browser_client(server, ann.user) as browser:
        code, out, err = await kazma(settings, "users", "token", "ann")
        assert code == 0, err
        new = out.strip().splitlines()[-1]
        assert "older token" in out and new != ann.token
        error_of(await ann.http.get("/api/me"), 401, "unauthorized")
        assert await me(browser) == 401
    async with server.client(new) as fresh:
        assert (await fresh.get("/api/me")).json()["name"] == "ann"
    assert await me(bob.http) == 200  # bob's token is his own
    again = await kazma(settings, "users", "add", "ann")
    assert again[0] == 1 and "kazma users token ann" in again[2]
    assert (await kazma(settings, "users", "token", "nobody"))[0] == 1


async def test_removing_a_user_takes_their_chats_steps_memories_files_and_keeps_the_audit(
    server: RunningServer, ann: Person, bob: Person, settings: Settings
) -> None:
    chat = await new_chat(bob.http)
    await say(bob.http, chat, "remember: my pin is 1234")
    card = (await say(bob.http, chat, "write diary.txt: dear diary"))["gates"][0]["card_id"]
    await bob.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"})
    first = (await bob.http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"][0]["snapshot_id"]
    assert (await bob.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": first})).status_code == 201
    ann_chat = await new_chat(ann.http)
    await say(ann.http, ann_chat, "remember: I keep mine")
    assert user_file(settings, "bob", "diary.txt").exists()

    asked = await kazma(settings, "users", "remove", "bob")
    assert asked[0] == 1 and "--yes" in asked[2] and "chats (2)" in asked[2]
    assert await me(bob.http) == 200  # nothing went without --yes
    code, out, err = await kazma(settings, "users", "remove", "bob", "--yes")
    assert code == 0, err
    assert out.startswith("Removed bob: 2 chats")

    error_of(await bob.http.get("/api/me"), 401, "unauthorized")
    assert not user_file(settings, "bob", "diary.txt").exists()
    with sqlite3.connect(settings.kazma_db) as db:
        assert db.execute("SELECT count(*) FROM users WHERE name = 'bob'").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM facts WHERE text LIKE '%1234%'").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM transcript WHERE text LIKE '%diary%'").fetchone() == (0,)
    with sqlite3.connect(settings.snapshots_db) as db:
        assert db.execute("SELECT count(*) FROM steps WHERE chat_id = ?", (chat,)).fetchone() == (0,)
    with sqlite3.connect(settings.audit_db) as db:
        assert db.execute("SELECT count(*) FROM audit WHERE chat_id = ?", (chat,)).fetchone()[0] >= 1
    assert [c["thread_id"] for c in (await ann.http.get("/api/chats")).json()["chats"]] == [ann_chat]
    assert "I keep mine" in (await say(ann.http, ann_chat, "what do you know?"))["reply"]
    assert (await kazma(settings, "users", "remove", "bob", "--yes"))[0] == 1  # gone already: said so
    code, out, _ = await kazma(settings, "users", "list")
    header, *users = out.splitlines()
    assert code == 0 and header.split("\t") == ["Name", "Role", "Chats", "Storage used"]
    assert [line.split("\t")[:3] for line in users] == [["ann", "user", "1 chat"]]
    assert re.fullmatch(r"[\d.,]+ (B|KB) of [\d.,]+ (MB|GB)", users[0].split("\t")[3]), users  # "3 KB of 1 GB", not bytes
    # In an Arabic locale the command says the same in Arabic, from the same catalogue as the pages.
    code, out, _ = await kazma(settings, "users", "list", locale="ar_EG.UTF-8")
    header, *users = out.splitlines()
    assert code == 0 and header.split("\t") == ["الاسم", "الدور", "الدردشات", "المساحة المستعملة"]
    assert [line.split("\t")[:3] for line in users] == [["ann", "user", "دردشة واحدة"]]
    code, _, err = await kazma(settings, "users", "remove", "bob", locale="ar_EG.UTF-8")
    assert code == 1 and err.strip() == "kazma: " + sentence("errors.user_missing_list", "ar", name="bob")


async def test_a_session_older_than_the_setting_is_signed_out(tmp_path: Path) -> None:
    """Broke: sessions lasted 30 days whatever the operator wanted."""
    settings = make_settings(tmp_path / "data", security={"session_hours": 2})
    async with serve_kazma(settings) as server:
        user, _ = await server.add_user("ann")
        async with browser_client(server, user) as browser:
            assert await me(browser) == 200
            with sqlite3.connect(settings.kazma_db) as db:  # three hours pass for the session
                db.execute("UPDATE tokens SET created_at = created_at - 3 * 3600 WHERE kind = 'session'")
            error_of(await browser.get("/api/me"), 401, "unauthorized")
            assert 'data-page="signin"' in (await browser.get("/")).text


# -- CSRF cookie not bound to the session -------------------------------------------------------------


async def test_a_csrf_pair_chosen_by_an_attacker_is_refused(server: RunningServer, ann: Person) -> None:
    """Broke: a matching attacker-chosen cookie and header pair was accepted."""
    async with browser_client(server, ann.user) as browser:
        session = browser.cookies["kazma_session"]
    planted = {"Cookie": f"kazma_session={session}; kazma_csrf=attacker", "X-Kazma-CSRF": "attacker"}
    async with httpx.AsyncClient(base_url=server.url, trust_env=False) as attacker:
        error_of(await attacker.post("/api/chats", headers=planted), 401, "unauthorized")
        assert (await ann.http.get("/api/chats")).json()["chats"] == []


# -- no security headers ------------------------------------------------------------------------------


async def test_every_page_and_api_answer_carries_the_security_headers(server: RunningServer, ann: Person) -> None:
    async with browser_client(server, ann.user) as browser:
        answers = [
            await browser.get("/"), await browser.get("/replay"), await browser.get("/api/me"),
            await browser.get("/static/kazma.js"), await browser.get("/openapi.json"), await browser.get("/healthz"),
            await browser.get("/no/such/route"), await browser.post("/api/chats", content=b"x" * (2 << 20)),
            await browser.post("/logout", follow_redirects=False),
        ]
    for answer in answers:
        for name, value in HEADERS.items():
            assert answer.headers.get(name) == value, (answer.request.url, answer.status_code, name)
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, answer.request.url
    assert [a.status_code for a in answers][-2:] == [413, 303]


@pytest.mark.parametrize(("trust_proxy", "secure"), [(True, True), (False, False)])
async def test_cookies_are_secure_behind_a_trusted_https_proxy_only(tmp_path: Path, trust_proxy: bool, secure: bool) -> None:
    """Broke: the session cookie was never `Secure`, so it travelled over plain HTTP behind a TLS proxy."""
    settings = make_settings(tmp_path / "data", security={"trust_proxy": trust_proxy})
    async with serve_kazma(settings) as server:
        user, _ = await server.add_user("ann")
        async with httpx.AsyncClient(trust_env=False) as proxy:
            link = await login_url(server, user)
            answer = await proxy.get(link, headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
            cookies = answer.headers.get_list("set-cookie")
            assert len(cookies) == 2 and all(("; secure" in c.lower()) is secure for c in cookies), cookies
            assert ("strict-transport-security" in answer.headers) is secure
            plain = await proxy.get(await login_url(server, user), follow_redirects=False)
            assert not any("; secure" in c.lower() for c in plain.headers.get_list("set-cookie"))


async def test_cookies_are_secure_when_kazma_serves_https_itself(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = await asyncio.create_subprocess_exec(
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", str(key), "-out", str(cert),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    assert await asyncio.wait_for(made.wait(), CLI_SECONDS) == 0
    async with serve_kazma(make_settings(tmp_path / "data"), tls=(cert, key)) as server:
        assert server.url.startswith("https://")
        user, _ = await server.add_user("ann")
        async with httpx.AsyncClient(trust_env=False, verify=ssl.create_default_context(cafile=str(cert))) as browser:
            answer = await browser.get(await login_url(server, user), follow_redirects=False)
        cookies = answer.headers.get_list("set-cookie")
        assert answer.status_code == 303 and len(cookies) == 2
        assert all("; secure" in c.lower() for c in cookies), cookies
        assert answer.headers["strict-transport-security"].startswith("max-age=")
