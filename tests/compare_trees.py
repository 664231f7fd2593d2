"""Two checkouts of Kazma, answering the same fixed scenario: where do their answers differ?

    git worktree add --detach /work/wt-old 6a25741 && (cd /work/wt-old && make .venv/.installed-stamp)
    python tests/compare_trees.py --old /work/wt-old --new /work/main [--out /tmp/compare] [--repeat] [--brief]

A tree takes about 4 minutes (most of it the CLI's start-ups); --repeat runs four trees.

For each tree: a fresh data folder, `kazma users add` for the owner and a second user, that tree's
`kazma serve` with the built-in offline model, the owner signed in through the printed login link (a
browser's session and CSRF cookies, as tests/web_session.py does) and by API token (the TUI's way),
then the same requests over HTTP: every route of /openapi.json (the script says which it missed), chats
with turns, the time-travel routes and their refusals, about 130 slash commands through
POST /api/chats/{id}/commands in English and Arabic, as the web and as the terminal; then the CLI. Each
answer (status, content type, redirect, body) is kept with what naturally varies replaced by placeholders
in order of first appearance (the same id is the same placeholder): ids, tokens, times, durations,
the data folder, the port. The records go to <out>/<label>.json; the differences are printed per request.

A tree runs with its own code: its `.venv/bin/python` if it has one (`make .venv/.installed-stamp`),
else this interpreter, with the tree first on PYTHONPATH either way; the script checks where
`kazma_server` is imported from and stops if it is not that tree.

--repeat runs each tree twice first and shows old-vs-old and new-vs-new: the scenario must be
deterministic (no differences there) before old-vs-new means anything. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

START_SECONDS = 90.0
REQUEST_SECONDS = 60.0
LONG_MESSAGE = " ".join(f"Sentence {n} of a long message, to see it kept and shown whole." for n in range(1, 121))


# -- what varies, replaced ----------------------------------------------------------------------------

# 2026-12-03T13:38:04.5+00:00, 2026-12-03 13:38 UTC (the CLI's), 20261203T133904Z (a backup's name)
TIME = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d| UTC)?|\d{8}T\d{6}Z"
TOKEN_WORD = r"(?<=token=)[A-Za-z0-9_\-]{16,}"
SCAN = re.compile(
    rf"(?P<time>{TIME})"
    r"|(?P<sha>\b[0-9a-f]{64}\b)"  # a file's sha256: a database holds ids and times
    r"|(?P<pid>(?<=process )\d+)"
    r"|(?P<took>(?<=Took )\d+(?:\.\d+)? s\b)"
    r"|(?P<bundle>(?<=\.kazma \()\d+ [KMG]?B(?=\)))"  # a compressed bundle: its ids and times vary
    r"|(?P<cli_token>^[A-Za-z0-9_\-]{43}$)"  # an API token, alone on its line as the CLI prints it
    r"|(?P<uuid>\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)"
    rf"|(?P<token>{TOKEN_WORD})"
    # not a static file's version (?v=<hash of its content>): the same files give the same hash
    r"|(?P<hex>(?<![0-9A-Za-z])(?<!v=)[0-9a-f]{8,32}(?![0-9A-Za-z]))",
    re.M,
)
TIME_KEY = re.compile(r"(^|_)(at|time|expires|since|until|when|ts|date|started|ended|stamp)$")
DURATION_KEY = re.compile(r"(duration|elapsed|_ms$|seconds$|took)")
# a step's stored size: its checkpoint holds times whose written length varies by a byte or two
SIZE_KEY = re.compile(r"^(size|bytes)$")


@dataclass
class Normaliser:
    """Replaces what differs from run to run by placeholders; one per run, so ids keep their number."""

    literals: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)

    def known_token(self, token: str) -> None:
        self.tokens.setdefault(token, f"<TOKEN{len(self.tokens) + 1}>")

    def _id(self, value: str) -> str:
        if value not in self.ids:
            self.ids[value] = f"<ID{len(self.ids) + 1}>"
        return self.ids[value]

    def _hex(self, word: str) -> str:
        if len(word) in (12, 32):  # a chat's, a step's or a user's id (32), a card's (12)
            return self._id(word)
        for full, name in self.ids.items():  # a step's address: the first characters of its id
            if full.startswith(word):
                return f"{name[:-1]}:{len(word)}>"
        return word

    def text(self, text: str) -> str:
        for token, name in self.tokens.items():
            text = text.replace(token, name)
        for literal, name in sorted(self.literals.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(literal, name)

        def one(match: re.Match[str]) -> str:
            kind, value = match.lastgroup, match.group()
            if kind == "time":
                return "<TIME>"
            if kind in ("sha", "pid", "took", "bundle"):
                return f"<{kind.upper()}>"
            if kind == "cli_token":
                self.known_token(value)
                return self.tokens[value]
            if kind == "uuid":
                return self._id(value)
            if kind == "token":
                self.known_token(value)
                return self.tokens[value]
            return self._hex(value)

        return SCAN.sub(one, text) if text else text

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if TIME_KEY.search(key) and value > 1e8:
                return "<TIME>"
            if DURATION_KEY.search(key):
                return "<DURATION>"
            if SIZE_KEY.search(key):
                return "<SIZE>"
            return value
        if isinstance(value, str):
            return self.text(value)
        return value


# -- a tree's processes -------------------------------------------------------------------------------


@dataclass
class Tree:
    root: Path
    python: str
    home: Path  # this run's temporary folder: the data folder, backups, the config that is not there

    @property
    def data(self) -> Path:
        return self.home / "data"

    def env(self, lang: str = "en") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KAZMA_", "LC_", "LANG", "PYTHONPATH"))}
        locale = "ar_EG.UTF-8" if lang == "ar" else "C.UTF-8"
        return {**env, "PYTHONPATH": str(self.root), "KAZMA_CONFIG": str(self.home / "none.toml"),
                "PYTHONUNBUFFERED": "1", "LANG": locale, "HOME": str(self.home), "COLUMNS": "100"}

    def command(self, *argv: str) -> list[str]:
        runner = "import sys; from kazma_server.cli import main; sys.argv[0] = 'kazma'; sys.exit(main())"
        return [self.python, "-c", runner, *argv]

    def check_code(self) -> str:
        where = subprocess.run(
            [self.python, "-c", "import kazma_server, kazma_core; print(kazma_server.__file__); print(kazma_core.__file__)"],
            env=self.env(), cwd=self.home, capture_output=True, text=True, check=True,
        ).stdout.split()
        if not all(Path(w).resolve().is_relative_to(self.root.resolve()) for w in where):
            raise SystemExit(f"{self.root}: its code is not the one imported ({where})")
        return where[0]


def tree_of(root: Path, home: Path) -> Tree:
    own = root / ".venv" / "bin" / "python"
    return Tree(root.resolve(), str(own) if own.exists() else sys.executable, home)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the records --------------------------------------------------------------------------------------


@dataclass
class Recorder:
    norm: Normaliser
    records: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, record: dict[str, Any]) -> None:
        name = self.norm.text(name)  # a step's address in a command's name reads as its placeholder
        n = self.names[name] = self.names.get(name, 0) + 1
        self.records.append({"name": name if n == 1 else f"{name} #{n}", **record})

    def answer(self, name: str, response: httpx.Response) -> Any:
        """Keep a response as it reads; return its JSON (raw), when it is JSON."""
        kind = response.headers.get("content-type", "")
        raw: Any = None
        body: Any
        if "json" in kind:
            try:
                raw = response.json()
                body = self.norm.value(raw)
            except ValueError:
                body = self.norm.text(response.text)
        else:
            body = self.norm.text(response.text)
        record: dict[str, Any] = {"request": f"{response.request.method} {self.norm.text(str(response.request.url.raw_path, 'ascii'))}",
                                  "status": response.status_code, "content_type": kind, "body": body}
        if "location" in response.headers:
            record["location"] = self.norm.text(response.headers["location"])
        if response.status_code == 405 and "allow" in response.headers:
            record["allow"] = response.headers["allow"]
        self.add(name, record)
        return raw

    def cli(self, name: str, argv: list[str], done: subprocess.CompletedProcess[str]) -> None:
        self.add(name, {"request": "kazma " + self.norm.text(" ".join(argv)), "status": done.returncode,
                        "content_type": "cli", "body": {"stdout": self.norm.text(done.stdout),
                                                        "stderr": self.norm.text(done.stderr)}})


@dataclass
class Client:
    """One person's way in: a browser's cookies (web) or an API token (the terminal)."""

    http: httpx.AsyncClient
    rec: Recorder
    who: str

    async def call(self, name: str, method: str, path: str, lang: str = "en", **kwargs: Any) -> Any:
        headers = {"Accept-Language": lang, **({"X-Kazma-Lang": lang} if lang == "ar" else {}), **kwargs.pop("headers", {})}
        response = await self.http.request(method, path, headers=headers, **kwargs)
        return self.rec.answer(f"{self.who} {lang} {name}", response)


def run_cli(tree: Tree, rec: Recorder, name: str, *argv: str, lang: str = "en") -> str:
    done = subprocess.run(tree.command(*argv), env=tree.env(lang), cwd=tree.home, capture_output=True, text=True,
                          timeout=REQUEST_SECONDS, check=False)
    rec.cli(f"cli {lang} {name}", list(argv), done)
    return done.stdout


def last_line(out: str) -> str:
    return out.strip().splitlines()[-1].strip()


@contextlib.contextmanager
def serving(tree: Tree, rec: Recorder) -> Iterator[tuple[str, str]]:
    """`kazma serve` on the tree's data folder: its address and the login link it printed."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    rec.norm.literals[base] = "<BASE>"
    rec.norm.literals[f"127.0.0.1:{port}"] = "<HOST>"
    log = tree.home / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(tree.command("serve", "--data-dir", str(tree.data), "--port", str(port)),
                                   env=tree.env(), cwd=tree.home, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with httpx.Client(base_url=base, trust_env=False) as http:
            deadline = time.monotonic() + START_SECONDS
            while True:
                if process.poll() is not None:
                    raise SystemExit(f"kazma serve of {tree.root} ended:\n{log.read_text()[-3000:]}")
                if time.monotonic() > deadline:
                    raise SystemExit(f"kazma serve of {tree.root} did not start:\n{log.read_text()[-3000:]}")
                with contextlib.suppress(httpx.TransportError):
                    if http.get("/healthz").status_code == 200:
                        break
                time.sleep(0.1)
        lines = log.read_text().splitlines()
        link = next(w for line in lines if "/login?token=" in line for w in line.split() if "/login?token=" in w)
        rec.norm.known_token(link.split("token=")[1])
        rec.add("serve prints", {"request": "kazma serve", "status": None, "content_type": "cli",
                                 "body": [rec.norm.text(line) for line in lines[:2]]})
        yield base, link
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


# -- the scenario -------------------------------------------------------------------------------------


def commands(step: str, other_step: str, fork_chat: str) -> list[tuple[str, bool]]:
    """The slash commands sent as each surface and language: (text, confirmed)."""
    return [
        ("/help", False), ("/start", False), ("/help@KazmaBot", False), ("/HELP", False),
        ("/replay", False), ("/replay list", False), (f"/replay show {step}", False), ("/replay show", False),
        ("/replay show zz", False), ("/replay show deadbeef00", False), (f"/replay {step}", False),
        (f"/replay restore {step}", False), (f"/replay restore {step} files", False),
        (f"/replay restore {step} both force", False), (f"/replay restore {step} sideways", False),
        (f"/replay compare {step} {other_step}", False), (f"/replay compare {step} {fork_chat}:{other_step}", False),
        (f"/replay compare {step}", False), ("/replay undo", False), ("/replay clear", False), ("/fork", False),
        (f"/fork {step}", False), (f"/fork {step} here", False), ("/stop", False), ("/memory", False),
        ("/frobnicate", False), ("/replay frobnicate", False), ("/fork " + "a" * 300, False),
        (f"/replay restore {step}", True), ("/replay undo", True), ("/memory off", False),
    ]


async def chat(c: Client, name: str, title: str | None = None, lang: str = "en") -> str:
    made = await c.call(f"new chat {name}", "POST", "/api/chats", lang=lang, json={"title": title} if title else None)
    return str(made["thread_id"])


async def say(c: Client, name: str, chat_id: str, text: str, lang: str = "en") -> Any:
    return await c.call(f"say {name}", "POST", f"/api/chats/{chat_id}/messages", lang=lang, json={"text": text})


def scenario(tree: Tree, rec: Recorder) -> set[tuple[str, str]]:
    """Everything asked of one tree; the routes asked, as (OpenAPI path, method)."""
    run_cli(tree, rec, "help", "--help")
    run_cli(tree, rec, "help", "--help", lang="ar")
    for sub in (["serve"], ["users"], ["users", "list"], ["backup"], ["migrate"], ["maintain"], ["tui"], ["slack-manifest"]):
        run_cli(tree, rec, " ".join(sub) + " --help", *sub, "--help")
    run_cli(tree, rec, "no command")
    run_cli(tree, rec, "unknown command", "frobnicate")
    run_cli(tree, rec, "users list empty", "users", "list", "--data-dir", str(tree.data))
    owner_token = last_line(run_cli(tree, rec, "users add owner", "users", "add", "owner", "--role", "owner", "--data-dir", str(tree.data)))
    bob_token = last_line(run_cli(tree, rec, "users add bob", "users", "add", "bob", "--data-dir", str(tree.data)))
    for token in (owner_token, bob_token):
        rec.norm.known_token(token)
    run_cli(tree, rec, "users add bob again", "users", "add", "bob", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users add carol", "users", "add", "carol", "--data-dir", str(tree.data), lang="ar")
    run_cli(tree, rec, "users link", "users", "link", "bob", "telegram:123", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users link bad", "users", "link", "bob", "fax:1", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users list", "users", "list", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users list", "users", "list", "--data-dir", str(tree.data), lang="ar")
    run_cli(tree, rec, "users remove no yes", "users", "remove", "carol", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users remove", "users", "remove", "carol", "--yes", "--data-dir", str(tree.data))
    run_cli(tree, rec, "users remove missing", "users", "remove", "nobody", "--yes", "--data-dir", str(tree.data))
    run_cli(tree, rec, "slack-manifest", "slack-manifest", "--url", "https://kazma.example", "--data-dir", str(tree.data))
    run_cli(tree, rec, "tui no token", "tui", "--data-dir", str(tree.data))

    with serving(tree, rec) as (base, link):
        other_port = free_port()
        rec.norm.literals[f"--port {other_port}"] = "--port <PORT>"
        run_cli(tree, rec, "serve twice", "serve", "--data-dir", str(tree.data), "--port", str(other_port))
        run_cli(tree, rec, "maintain while serving", "maintain", "--data-dir", str(tree.data))
        spec = asyncio.run(over_http(rec, base, link, owner_token, bob_token))
        routes = {(path, method) for path, methods in spec["paths"].items() for method in methods}
    run_cli(tree, rec, "users list after", "users", "list", "--data-dir", str(tree.data))
    run_cli(tree, rec, "maintain", "maintain", "--data-dir", str(tree.data))
    run_cli(tree, rec, "backup create", "backup", "create", "--data-dir", str(tree.data), "--out", str(tree.home / "backup"))
    run_cli(tree, rec, "migrate export", "migrate", "export", str(tree.home / "bundle.kazma"), "--data-dir", str(tree.data))
    run_cli(tree, rec, "migrate import busy", "migrate", "import", str(tree.home / "bundle.kazma"), "--data-dir", str(tree.data))
    run_cli(tree, rec, "backup restore missing", "backup", "restore", str(tree.home / "nothing"), "--data-dir", str(tree.data))
    return routes


async def over_http(rec: Recorder, base: str, link: str, owner_token: str, bob_token: str) -> Any:
    """The HTTP part: as nobody, as the owner's browser, as the owner's terminal and as another user."""
    async with contextlib.AsyncExitStack() as stack:
        def client(who: str, **headers: str) -> Client:
            http = httpx.AsyncClient(base_url=base, trust_env=False, headers=headers, timeout=REQUEST_SECONDS)
            stack.push_async_callback(http.aclose)
            return Client(http, rec, who)

        anon = client("anon")
        web = client("web")
        tui = client("tui", Authorization=f"Bearer {owner_token}", **{"X-Kazma-Surface": "tui"})
        bob = client("bob", Authorization=f"Bearer {bob_token}")
        spec = await http_routes(anon, web, tui, bob, link)
        await chats_and_turns(web, tui, bob)
    return spec


async def http_routes(anon: Client, web: Client, tui: Client, bob: Client, link: str) -> Any:
    """The pages, signing in, the account, alerts and settings: the routes around the chats."""
    spec = await anon.call("openapi", "GET", "/openapi.json")
    for path in ("/healthz", "/", "/replay", "/settings", "/docs", "/api/chats", "/api/me", "/nowhere", "/static/nothing.js"):
        await anon.call(path, "GET", path)
    await anon.call("login bad token", "GET", "/login?token=nonsense", follow_redirects=False)
    await anon.call("login no token", "GET", "/login", follow_redirects=False)
    await web.call("login", "GET", link, follow_redirects=False)
    await web.call("login reused", "GET", link, follow_redirects=False)
    web.http.headers["X-Kazma-CSRF"] = web.http.cookies["kazma_csrf"]
    for lang in ("en", "ar"):
        for path in ("/", "/replay", "/settings", "/docs"):
            await web.call(path, "GET", path, lang=lang)
    for c in (web, tui, bob):
        await c.call("me", "GET", "/api/me")
    await web.call("choose lang", "PUT", "/api/me/lang", json={"lang": "ar"})
    await web.call("me after choosing", "GET", "/api/me")
    await web.call("choose lang bad", "PUT", "/api/me/lang", json={"lang": "fr"})
    await web.call("choose lang back", "PUT", "/api/me/lang", json={"lang": "en"})
    await web.call("wrong method", "PUT", "/api/chats")
    await web.call("no csrf", "POST", "/api/chats", headers={"X-Kazma-CSRF": "wrong"})
    await web.call("not json", "POST", "/api/chats", content=b"{", headers={"Content-Type": "application/json"})

    for lang in ("en", "ar"):
        await web.call("alerts", "GET", "/api/alerts", lang=lang)
        await bob.call("alerts", "GET", "/api/alerts", lang=lang)
        await web.call("ack missing alert", "POST", "/api/alerts/12345/ack", lang=lang)
        await web.call("ack bad alert", "POST", "/api/alerts/nope/ack", lang=lang)
    listed = await web.call("settings", "GET", "/api/settings")
    await web.call("settings", "GET", "/api/settings", lang="ar")
    await bob.call("settings", "GET", "/api/settings", lang="ar")
    await bob.call("change setting", "PUT", "/api/settings/limits.max_message_chars", json={"value": 5000})
    for lang in ("en", "ar"):
        await web.call("change unknown setting", "PUT", "/api/settings/nope.nothing", lang=lang, json={"value": 1})
        for one in listed["settings"]:
            name, value = one["name"], one["value"]
            path = f"/api/settings/{name}"
            await web.call(f"set {name} same", "PUT", path, lang=lang, json={"value": value})
            bad: list[Any] = ["7", 1.5, -1, 10**12, None] if not isinstance(value, bool) else ["yes", 1, None]
            if not isinstance(value, bool):
                bad.append(True)
            for wrong in bad:
                await web.call(f"set {name} to {wrong!r}", "PUT", path, lang=lang, json={"value": wrong})
            await web.call(f"set {name} no value", "PUT", path, lang=lang, json={})
            await web.call(f"set {name} extra", "PUT", path, lang=lang, json={"value": value, "more": 1})
    await web.call("settings after", "GET", "/api/settings")
    return spec


async def chats_and_turns(web: Client, tui: Client, bob: Client) -> None:
    """Chats, turns, transcripts, the time-travel routes and the slash commands, with their refusals."""
    sums = await chat(web, "sums", "Sums")
    for text in ("hello", "calc 1+1", "calc 2*(3+4)", "steps 3", "remember: the sky is blue", "what do you know?"):
        await say(web, text, sums, text)
    notes = await chat(web, "notes")
    await say(web, "write", notes, "write notes.txt: hello world")
    cards = await web.call("approvals", "GET", f"/api/chats/{notes}/approvals")
    for card in cards["approvals"]:
        await web.call("approve", "POST", f"/api/chats/{notes}/approvals/{card['card_id']}", json={"decision": "approve"})
    await say(web, "write again", notes, "write notes.txt: second words")
    cards = await web.call("approvals again", "GET", f"/api/chats/{notes}/approvals")
    for card in cards["approvals"]:
        await web.call("bad decision", "POST", f"/api/chats/{notes}/approvals/{card['card_id']}", json={"decision": "maybe"})
        await web.call("deny", "POST", f"/api/chats/{notes}/approvals/{card['card_id']}", json={"decision": "deny"})
    await web.call("decide missing card", "POST", f"/api/chats/{notes}/approvals/000000000000", json={"decision": "approve"})
    await say(web, "write third", notes, "write other.txt: more")
    long = await chat(web, "long")
    await say(web, "long message", long, LONG_MESSAGE)
    await say(web, "divide by zero", long, "calc 10/0")
    await say(web, "bad calc", long, "calc import os")
    await say(web, "big", long, "big 3")
    arabic = await chat(web, "arabic", "محادثة", lang="ar")
    await say(web, "arabic hello", arabic, "مرحبا", lang="ar")
    await say(web, "arabic calc", arabic, "calc 3*3", lang="ar")
    await web.call("empty message", "POST", f"/api/chats/{arabic}/messages", lang="ar", json={"text": "  "})
    await web.call("too long message", "POST", f"/api/chats/{arabic}/messages", lang="ar", json={"text": "x" * 200_000})
    await web.call("message extra field", "POST", f"/api/chats/{arabic}/messages", json={"text": "hi", "x": 1})

    # A turn not waited for, and its events on the chat's stream until the turn ends.
    async with web.http.stream("GET", f"/api/chats/{long}/events") as stream:
        await web.call("say without waiting", "POST", f"/api/chats/{long}/messages?wait=false", json={"text": "steps 2"})
        # each type's events in order; two types may interleave either way (a step is saved while
        # the answer's last words stream), so the order between types is not kept
        events: dict[str, list[Any]] = {}
        kind = ""
        async with asyncio.timeout(REQUEST_SECONDS):
            async for line in stream.aiter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    events.setdefault(kind, []).append(web.rec.norm.value(json.loads(line[5:])))
                    if kind == "turn":
                        break
        web.rec.add("web en events of a turn", {"request": f"GET /api/chats/{web.rec.norm.text(long)}/events",
                                                "status": stream.status_code, "content_type": stream.headers.get("content-type"),
                                                "body": events})
    await web.call("stop nothing running", "POST", f"/api/chats/{long}/stop")
    await bob.call("events of a chat not yours", "GET", f"/api/chats/{long}/events")

    for lang in ("en", "ar"):
        await web.call("chats", "GET", "/api/chats", lang=lang)
        await tui.call("chats", "GET", "/api/chats", lang=lang)
        await bob.call("chats", "GET", "/api/chats", lang=lang)
        await web.call("search", "GET", "/api/chats?q=sky", lang=lang)
        await web.call("search two", "GET", "/api/chats?q=a&q=b", lang=lang)
        await web.call("search long", "GET", "/api/chats?q=" + "w" * 300, lang=lang)
        for chat_id in (sums, notes, long, arabic):
            await web.call("transcript", "GET", f"/api/chats/{chat_id}/messages", lang=lang)
    await web.call("transcript page", "GET", f"/api/chats/{sums}/messages?limit=3")
    await web.call("transcript older page", "GET", f"/api/chats/{sums}/messages?limit=3&before=5")
    await web.call("transcript before", "GET", f"/api/chats/{sums}/messages?before=4")
    await web.call("transcript bad limit", "GET", f"/api/chats/{sums}/messages?limit=0")
    await web.call("rename", "PATCH", f"/api/chats/{sums}", json={"title": "Sums and facts"})
    await web.call("rename two lines", "PATCH", f"/api/chats/{sums}", json={"title": "a\nb"})
    await web.call("rename too long", "PATCH", f"/api/chats/{sums}", json={"title": "t" * 500}, lang="ar")
    await web.call("new chat long title", "POST", "/api/chats", json={"title": "t" * 201})

    for who in (bob,):  # another person's chat: every chat route refuses
        await who.call("transcript not yours", "GET", f"/api/chats/{sums}/messages")
        await who.call("say not yours", "POST", f"/api/chats/{sums}/messages", json={"text": "hi"})
        await who.call("rename not yours", "PATCH", f"/api/chats/{sums}", json={"title": "mine"})
        await who.call("stop not yours", "POST", f"/api/chats/{sums}/stop")
        await who.call("versions not yours", "GET", f"/api/chats/{sums}/versions")
        await who.call("approvals not yours", "GET", f"/api/chats/{notes}/approvals")
        await who.call("decide not yours", "POST", f"/api/chats/{notes}/approvals/000000000000", json={"decision": "deny"})
        await who.call("edit not yours", "POST", f"/api/chats/{sums}/messages/1/edit", json={"text": "x"})
        await who.call("regenerate not yours", "POST", f"/api/chats/{sums}/messages/2/regenerate")
        await who.call("command not yours", "POST", f"/api/chats/{sums}/commands", json={"text": "/help"})
        await who.call("delete not yours", "DELETE", f"/api/chats/{sums}")
        await who.call("forget not yours", "POST", f"/api/chats/{sums}/forget")
        await who.call("steps not yours", "GET", f"/api/replay/snapshots/{sums}")
        await who.call("message points not yours", "GET", f"/api/replay/messages/{sums}")
        await who.call("clear not yours", "DELETE", f"/api/replay/threads/{sums}", lang="ar")
        await who.call("undo offer not yours", "GET", f"/api/replay/undo/{sums}")
    await web.call("transcript missing chat", "GET", "/api/chats/nochat/messages")
    await web.call("say missing chat", "POST", "/api/chats/nochat/messages", json={"text": "hi"}, lang="ar")

    # -- time travel ------------------------------------------------------------------------------
    for lang in ("en", "ar"):
        await web.call("threads", "GET", "/api/replay/threads", lang=lang)
    steps: dict[str, list[str]] = {}
    for chat_id in (sums, notes, long, arabic):
        listed = await web.call("steps", "GET", f"/api/replay/snapshots/{chat_id}")
        steps[chat_id] = [s["snapshot_id"] for s in listed["snapshots"]]
        for step in steps[chat_id]:
            await web.call("step", "GET", f"/api/replay/snapshots/{chat_id}/{step}")
            await web.call("step preview", "GET", f"/api/replay/snapshots/{chat_id}/{step}/preview")
        points = await web.call("message points", "GET", f"/api/replay/messages/{chat_id}")
        for point in points["messages"][:4]:
            await web.call("message point", "GET", f"/api/replay/messages/{chat_id}/{point['message_id']}")
    first, second, last = steps[sums][0], steps[sums][1], steps[sums][-1]
    await web.call("step paged", "GET", f"/api/replay/snapshots/{sums}/{last}?limit=2")
    await web.call("step paged before", "GET", f"/api/replay/snapshots/{sums}/{last}?limit=2&before=3", lang="ar")
    await web.call("step by address", "GET", f"/api/replay/snapshots/{sums}/{last[:8]}")
    await web.call("step address too short", "GET", f"/api/replay/snapshots/{sums}/abcd")
    await web.call("step missing", "GET", f"/api/replay/snapshots/{sums}/deadbeef00", lang="ar")
    await web.call("step not hex", "GET", f"/api/replay/snapshots/{sums}/zzzzzzzzzz")
    await web.call("step of another chat", "GET", f"/api/replay/snapshots/{notes}/{last}")
    await web.call("message point missing", "GET", f"/api/replay/messages/{sums}/99999")
    await bob.call("step not yours", "GET", f"/api/replay/snapshots/{sums}/{last}")
    await bob.call("preview not yours", "GET", f"/api/replay/snapshots/{sums}/{last}/preview")
    await bob.call("message point not yours", "GET", f"/api/replay/messages/{sums}/1")

    for lang in ("en", "ar"):
        await web.call("compare", "POST", "/api/replay/compare", lang=lang, json={"thread_id": sums, "a": first, "b": last})
    await web.call("compare missing", "POST", "/api/replay/compare", json={"thread_id": sums, "a": first, "b": "deadbeef00"})
    await web.call("compare bad body", "POST", "/api/replay/compare", json={"thread_id": sums, "a": first})
    await bob.call("compare not yours", "POST", "/api/replay/compare", json={"thread_id": sums, "a": first, "b": last})

    await web.call("restore both points", "POST", "/api/replay/restore", json={"thread_id": sums, "snapshot_id": second, "message_id": 1})
    await web.call("restore no point", "POST", "/api/replay/restore", json={"thread_id": sums}, lang="ar")
    await web.call("restore bad what", "POST", "/api/replay/restore", json={"thread_id": sums, "snapshot_id": second, "what": "all"})
    await web.call("restore missing step", "POST", "/api/replay/restore", json={"thread_id": sums, "snapshot_id": "deadbeef00"})
    await bob.call("restore not yours", "POST", "/api/replay/restore", json={"thread_id": sums, "snapshot_id": second})
    await web.call("undo nothing", "POST", "/api/replay/undo", json={"thread_id": sums}, lang="ar")
    await web.call("undo offer none", "GET", f"/api/replay/undo/{sums}")
    await web.call("restore", "POST", "/api/replay/restore", json={"thread_id": sums, "snapshot_id": second})
    await web.call("transcript after restore", "GET", f"/api/chats/{sums}/messages")
    await web.call("undo offer", "GET", f"/api/replay/undo/{sums}")
    await web.call("steps after restore", "GET", f"/api/replay/snapshots/{sums}")
    await bob.call("undo not yours", "POST", "/api/replay/undo", json={"thread_id": sums})
    await web.call("undo", "POST", "/api/replay/undo", json={"thread_id": sums})
    await web.call("undo again", "POST", "/api/replay/undo", json={"thread_id": sums})
    await web.call("transcript after undo", "GET", f"/api/chats/{sums}/messages")
    await web.call("restore to a message", "POST", "/api/replay/restore", json={"thread_id": sums, "message_id": 3})
    await web.call("undo it", "POST", "/api/replay/undo", json={"thread_id": sums})
    note_steps = steps[notes]
    await web.call("restore files", "POST", "/api/replay/restore", json={"thread_id": notes, "snapshot_id": note_steps[0], "what": "both"})
    await web.call("undo files", "POST", "/api/replay/undo", json={"thread_id": notes, "force": True})

    fork = await web.call("fork", "POST", "/api/replay/fork", json={"thread_id": sums, "snapshot_id": second})
    await web.call("fork from a message", "POST", "/api/replay/fork", json={"thread_id": sums, "message_id": 1}, lang="ar")
    await web.call("fork with files", "POST", "/api/replay/fork", json={"thread_id": notes, "snapshot_id": note_steps[-1], "files": True})
    await web.call("fork missing step", "POST", "/api/replay/fork", json={"thread_id": sums, "snapshot_id": "deadbeef00"})
    await bob.call("fork not yours", "POST", "/api/replay/fork", json={"thread_id": sums, "snapshot_id": second})
    fork_id = fork["thread_id"] if isinstance(fork, dict) and "thread_id" in fork else sums
    await say(web, "in the fork", fork_id, "calc 5+5")
    fork_steps = await web.call("fork steps", "GET", f"/api/replay/snapshots/{fork_id}")
    fork_last = fork_steps["snapshots"][-1]["snapshot_id"]
    await web.call("compare across a fork", "POST", "/api/replay/compare",
                   json={"thread_id": sums, "a": last, "b": fork_last, "b_thread_id": fork_id})
    await web.call("compare across unrelated", "POST", "/api/replay/compare",
                   json={"thread_id": sums, "a": last, "b": steps[notes][0], "b_thread_id": notes})

    transcript = await web.call("transcript to edit", "GET", f"/api/chats/{sums}/messages")
    mine = [m["id"] for m in transcript["messages"] if m["role"] == "user"]
    answers = [m["id"] for m in transcript["messages"] if m["role"] == "assistant"]
    await web.call("edit", "POST", f"/api/chats/{sums}/messages/{mine[1]}/edit", json={"text": "calc 40+2"})
    await web.call("edit an answer", "POST", f"/api/chats/{sums}/messages/{answers[0]}/edit", json={"text": "x"})
    await web.call("edit empty", "POST", f"/api/chats/{sums}/messages/{mine[1]}/edit", json={"text": ""}, lang="ar")
    await web.call("edit missing", "POST", f"/api/chats/{sums}/messages/99999/edit", json={"text": "x"})
    await web.call("regenerate", "POST", f"/api/chats/{sums}/messages/{answers[1]}/regenerate")
    await web.call("regenerate a question", "POST", f"/api/chats/{sums}/messages/{mine[0]}/regenerate", lang="ar")
    for lang in ("en", "ar"):
        await web.call("versions", "GET", f"/api/chats/{sums}/versions", lang=lang)
    await web.call("chats with versions", "GET", "/api/chats")

    # -- slash commands -------------------------------------------------------------------------
    cmd_chat = await chat(web, "commands")
    for text in ("calc 1+2", "remember: tea is hot", "steps 2"):
        await say(web, text, cmd_chat, text)
    cmd_steps = [s["snapshot_id"] for s in (await web.call("command chat steps", "GET", f"/api/replay/snapshots/{cmd_chat}"))["snapshots"]]
    step, other = cmd_steps[0][:8], cmd_steps[-1][:8]
    for c in (web, tui):
        for lang in ("en", "ar"):
            for text, confirmed in commands(step, other, fork_id):
                await c.call(f"command {c.rec.norm.text(text)[:60]}{' (confirmed)' if confirmed else ''}", "POST",
                             f"/api/chats/{cmd_chat}/commands", lang=lang, json={"text": text, "confirmed": confirmed})
    await web.call("command not a command", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": "hello"})
    await web.call("command empty", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": ""}, lang="ar")
    await web.call("command missing chat", "POST", "/api/chats/nochat/commands", json={"text": "/help"})
    await tui.call("command fork confirmed", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": f"/fork {step}", "confirmed": True})
    await tui.call("command compare across", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": f"/replay compare {step} {other}"})
    await tui.call("command clear confirmed", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": "/replay clear", "confirmed": True})
    await tui.call("command reset", "POST", f"/api/chats/{cmd_chat}/commands", json={"text": "/reset"}, lang="ar")
    await web.call("transcript after commands", "GET", f"/api/chats/{cmd_chat}/messages")

    # -- clearing, forgetting, deleting ---------------------------------------------------------
    await web.call("clear steps", "DELETE", f"/api/replay/threads/{long}")
    await web.call("steps after clear", "GET", f"/api/replay/snapshots/{long}")
    await web.call("clear again", "DELETE", f"/api/replay/threads/{long}", lang="ar")
    await web.call("clear missing chat", "DELETE", "/api/replay/threads/nochat")
    await web.call("forget", "POST", f"/api/chats/{arabic}/forget")
    await web.call("transcript after forget", "GET", f"/api/chats/{arabic}/messages")
    await web.call("delete", "DELETE", f"/api/chats/{long}")
    await web.call("delete again", "DELETE", f"/api/chats/{long}", lang="ar")
    await web.call("threads at the end", "GET", "/api/replay/threads")
    await web.call("chats at the end", "GET", "/api/chats")
    await web.call("logout", "POST", "/logout", follow_redirects=False)
    await web.call("chats after logout", "GET", "/api/chats")


def asked_routes(records: list[dict[str, Any]], routes: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The OpenAPI routes some request of the scenario reached."""
    patterns = [(re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(p)) + "$"), p, m) for p, m in routes]
    asked: set[tuple[str, str]] = set()
    for record in records:
        method, _, target = str(record["request"]).partition(" ")
        path = target.split("?")[0]
        for pattern, p, m in patterns:
            if m.upper() == method and pattern.match(path):
                asked.add((p, m))
    return asked


# -- running and comparing ----------------------------------------------------------------------------


def run_tree(root: Path, out: Path, label: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix=f"kazma-compare-{label}-") as home:
        tree = tree_of(root, Path(home))
        code = tree.check_code()
        norm = Normaliser(literals={str(tree.home): "<HOME>", str(tree.root): "<TREE>"})
        rec = Recorder(norm)
        try:
            routes = scenario(tree, rec)
        finally:  # what was asked so far, to read when the scenario stopped half-way
            (out / f"{label}.partial.json").write_text(json.dumps(rec.records, ensure_ascii=False, indent=1))
        missed = sorted(routes - asked_routes(rec.records, routes))
        (out / f"{label}.json").write_text(json.dumps(
            {"tree": str(root), "code": code, "records": rec.records, "routes": len(routes), "missed_routes": missed},
            ensure_ascii=False, indent=1))
        print(f"{label}: {len(rec.records)} requests against {root} (code from {code}); "
              f"{len(routes)} OpenAPI routes, not asked: {missed or 'none'}")
        shutil.rmtree(tree.data, ignore_errors=True)
        return rec.records


def show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def changed_words(a: str, b: str, context: int = 6) -> list[str]:
    """Where two long lines differ (a page's embedded strings, one JSON line): each change with a few
    words around it, not the whole line twice."""
    import difflib

    def readable(line: str) -> str:  # a page's JSON writes Arabic as \\u0643...: shown as letters
        return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), line)

    words_a, words_b = re.findall(r"\S+\s*", readable(a)), re.findall(r"\S+\s*", readable(b))
    shown: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes():
        if op != "equal":
            before = "".join(words_a[max(0, i1 - context):i1])
            after = "".join(words_a[i2:i2 + context])
            shown.append(f"    …{before}[-{''.join(words_a[i1:i2])}-]{{+{''.join(words_b[j1:j2])}+}}{after}…")
    return shown


def differences(a: list[dict[str, Any]], b: list[dict[str, Any]], a_name: str, b_name: str, brief: bool = False) -> int:
    """Print each request whose answer differs (a line of the body's diff); the number that differ."""
    import difflib

    by_name = {r["name"]: r for r in b}
    differ = 0
    for one in a:
        other = by_name.pop(one["name"], None)
        if other == one:
            continue
        differ += 1
        print(f"\n=== {one['name']}: {one['request']}")
        if other is None:
            print(f"  only in {a_name}")
            continue
        for key in ("request", "status", "content_type", "location", "allow"):
            if one.get(key) != other.get(key):
                print(f"  {key}: {a_name} {one.get(key)!r} | {b_name} {other.get(key)!r}")
        if one["body"] != other["body"]:
            lines_a, lines_b = show(one["body"]).splitlines(), show(other["body"]).splitlines()
            lines = list(difflib.unified_diff(lines_a, lines_b, a_name, b_name, n=1, lineterm=""))
            if any(len(line) > 400 for line in lines):  # a long line changed: its changed words only
                matcher = difflib.SequenceMatcher(None, lines_a, lines_b, autojunk=False)
                lines = [f"  {a_name} line {i1 + 1}, {b_name} line {j1 + 1}:\n" + "\n".join(
                             changed_words("\n".join(lines_a[i1:i2]), "\n".join(lines_b[j1:j2])))
                         for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]
            print("\n".join("  " + line for line in (lines[:40] if brief else lines)))
    for name in by_name:
        differ += 1
        print(f"\n=== {name}: only in {b_name}")
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--old", required=True, type=Path, help="the old tree (a checkout)")
    parser.add_argument("--new", required=True, type=Path, help="the new tree (a checkout)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kazma-compare", help="where the JSON records go")
    parser.add_argument("--repeat", action="store_true", help="run each tree twice first: the scenario must repeat exactly")
    parser.add_argument("--only", choices=("old", "new"), help="run one tree only (to try the scenario)")
    parser.add_argument("--brief", action="store_true", help="at most 40 lines of each body's difference")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only:
        run_tree(args.old if args.only == "old" else args.new, args.out, args.only)
        return 0
    old = run_tree(args.old, args.out, "old")
    new = run_tree(args.new, args.out, "new")
    if args.repeat:
        for label, first, root in (("old", old, args.old), ("new", new, args.new)):
            again = run_tree(root, args.out, f"{label}-again")
            print(f"\n##### {label} vs {label} again: the scenario repeated")
            print(f"{differences(first, again, label, label + '-again', args.brief)} of {len(first)} requests differ")
    print("\n##### old vs new")
    differ = differences(old, new, "old", "new", args.brief)
    print(f"\n{len(old)} requests; {len(old) - differ} answered the same, {differ} differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
