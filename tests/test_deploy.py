"""The deployment files that can be checked here (Docker cannot run on these machines)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from fastapi.routing import APIRoute

from kazma_core.settings import load_settings
from kazma_ui.web import chat_api

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def test_the_example_configuration_is_a_valid_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAZMA_CONFIG", str(DEPLOY / "kazma.example.toml"))
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_SERVER__HOST", "0.0.0.0")  # as the image sets it
    settings = load_settings()
    assert settings.data_dir == (tmp_path / "data").resolve()
    assert (settings.server.host, settings.server.port) == ("0.0.0.0", 8765)
    assert settings.time_travel.auto_maintain and settings.time_travel.retention_days == 30
    assert settings.history.checkpoints_per_chat == 200


# The compose files and nginx.conf ------------------------------------------------------------
# Checked as Docker and nginx would read them, as far as that goes offline: YAML with Compose's
# ${...} variables filled in, and nginx's blocks with its rule for which location serves a path.
VARIABLE = re.compile(r"\$\{(\w+)(?::([?-])([^}]*))?\}")
ENV = {"POSTGRES_PASSWORD": "s3cret"}


def compose(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


def interpolated(value: str, env: Mapping[str, str]) -> str:
    """`value` with Compose's ${NAME}, ${NAME:-default} and ${NAME:?message} filled from `env`."""

    def fill(found: re.Match[str]) -> str:
        name, kind, rest = found.groups()
        if env.get(name):
            return env[name]
        if kind == "?":
            raise LookupError(f"{name}: {rest}")
        return rest or ""

    return VARIABLE.sub(fill, value)


def mounted(service: dict[str, Any]) -> dict[str, str]:
    """Each folder of the container a volume is mounted on, and that volume (or host path)."""
    sources: dict[str, str] = {}
    for volume in service["volumes"]:
        source, target = volume.split(":")[:2]
        sources[target] = source
    return sources


def environment(service: dict[str, Any], env: Mapping[str, str] = ENV) -> dict[str, str]:
    return {name: interpolated(str(value), env) for name, value in service["environment"].items()}


@dataclass
class Block:
    """An nginx block: its name and arguments, its simple directives in order, its inner blocks."""

    name: str
    args: list[str]
    directives: list[tuple[str, list[str]]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    def values(self, name: str) -> list[list[str]]:
        return [args for directive, args in self.directives if directive == name]

    def value(self, name: str) -> str:
        (args,) = self.values(name)
        return " ".join(args)

    def inner(self, name: str) -> list[Block]:
        return [block for block in self.blocks if block.name == name]


def parse_nginx(text: str) -> Block:
    tokens = iter(re.findall(r'"[^"]*"|[{};]|[^\s{};]+', re.sub(r"#[^\n]*", "", text)))

    def block(name: str, args: list[str]) -> Block:
        parsed, words = Block(name, args), list[str]()
        for token in tokens:
            if token == "}":
                return parsed
            if token == ";":
                parsed.directives.append((words[0], words[1:]))
            elif token == "{":
                parsed.blocks.append(block(words[0], words[1:]))
            else:
                words.append(token.strip('"'))
                continue
            words = []
        return parsed

    return block("main", [])


def location_for(server: Block, path: str) -> Block:
    """The location nginx serves `path` from: an exact match; else the first regex that matches,
    unless the longest matching prefix is marked `^~`; else that longest prefix."""
    locations = server.inner("location")
    for exact in locations:
        if exact.args == ["=", path]:
            return exact
    prefixes = [loc for loc in locations if loc.args[0] not in ("=", "~", "~*") and path.startswith(loc.args[-1])]
    longest = max(prefixes, key=lambda loc: len(loc.args[-1]), default=None)
    if longest is None or longest.args[0] != "^~":
        for regex in (loc for loc in locations if loc.args[0] in ("~", "~*")):
            if re.search(regex.args[1], path, re.IGNORECASE if regex.args[0] == "~*" else 0):
                return regex
    if longest is None:
        raise LookupError(f"no location of nginx.conf serves {path}")
    return longest


def seconds(nginx_time: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
    return int(nginx_time[:-1]) * units[nginx_time[-1]] if nginx_time[-1] in units else int(nginx_time)


NGINX = parse_nginx((DEPLOY / "nginx.conf").read_text())
(SERVER,) = NGINX.inner("server")
REPLICAS = ("kazma-1", "kazma-2")


def test_the_one_machine_compose_runs_one_kazma_on_sqlite() -> None:
    single = compose("compose.yaml")
    assert set(single["services"]) == {"kazma"}
    kazma = single["services"]["kazma"]
    assert "KAZMA_DATABASE__URL" not in kazma["environment"]
    assert kazma["ports"] == ["127.0.0.1:8765:8765"]


def test_both_replicas_are_pointed_at_the_compose_database() -> None:
    services = compose("compose.postgres.yaml")["services"]
    assert set(services) == {"postgres", *REPLICAS, "proxy"}
    database = environment(services["postgres"])
    for name in REPLICAS:
        url = urlsplit(environment(services[name])["KAZMA_DATABASE__URL"])
        assert (url.scheme, url.hostname, url.port) == ("postgresql", "postgres", 5432)
        assert (url.username, url.password, url.path) == (
            database["POSTGRES_USER"], database["POSTGRES_PASSWORD"], "/" + database["POSTGRES_DB"])
        assert services[name]["depends_on"] == {"postgres": {"condition": "service_healthy"}}


def test_the_postgres_compose_refuses_to_start_without_a_password() -> None:
    services = compose("compose.postgres.yaml")["services"]
    for name in ("postgres", *REPLICAS):
        with pytest.raises(LookupError, match="POSTGRES_PASSWORD"):
            environment(services[name], env={})


def test_each_replica_has_a_data_folder_of_its_own_and_all_share_the_workspace() -> None:
    loaded = compose("compose.postgres.yaml")
    workspace = str(load_settings(data_dir="/data").workspace)  # the image's KAZMA_DATA_DIR
    mounts = {name: mounted(loaded["services"][name]) for name in REPLICAS}
    assert mounts["kazma-1"]["/data"] != mounts["kazma-2"]["/data"]
    assert mounts["kazma-1"][workspace] == mounts["kazma-2"][workspace]
    named = {mount[target] for mount in mounts.values() for target in ("/data", workspace)}
    assert named <= set(loaded["volumes"])


def test_a_replica_environment_is_a_valid_kazma_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replica = environment(compose("compose.postgres.yaml")["services"]["kazma-1"])
    for name, value in replica.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KAZMA_CONFIG", str(DEPLOY / "kazma.example.toml"))  # where the volume puts it
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    settings = load_settings()
    assert settings.security.trust_proxy
    assert settings.base_url == "http://127.0.0.1:8765"
    assert settings.database.url.get_secret_value().startswith("postgresql://kazma:")


def test_only_the_proxy_is_reachable_from_outside() -> None:
    services = compose("compose.postgres.yaml")["services"]
    assert services["proxy"]["ports"] == ["127.0.0.1:8765:80"]
    assert "./nginx.conf:/etc/nginx/conf.d/default.conf:ro" in services["proxy"]["volumes"]
    assert all("ports" not in services[name] for name in ("postgres", *REPLICAS))
    assert SERVER.value("listen") == "80"


def test_the_proxy_sends_requests_to_every_replica_with_no_sticky_sessions() -> None:
    port = re.search(r"KAZMA_SERVER__PORT=(\d+)", (DEPLOY / "Dockerfile").read_text())  # where the image listens
    assert port is not None
    upstreams = {block.args[0]: block for block in NGINX.inner("upstream")}
    for location in SERVER.inner("location"):
        target = urlsplit(location.value("proxy_pass"))
        upstream = upstreams[target.netloc]
        assert {args[0] for args in upstream.values("server")} == {f"{name}:{port[1]}" for name in REPLICAS}
        assert not {"ip_hash", "hash", "sticky"} & {name for name, _ in upstream.directives}


def test_a_chat_event_stream_passes_the_proxy_unbuffered_and_stays_open() -> None:
    (route,) = [r for r in chat_api.router.routes if isinstance(r, APIRoute) and r.endpoint is chat_api.chat_events]
    stream = location_for(SERVER, route.path.replace("{thread_id}", "3f2a9c"))
    assert stream.value("proxy_buffering") == "off"
    assert seconds(stream.value("proxy_read_timeout")) >= 20 * chat_api.SSE_KEEPALIVE
    assert location_for(SERVER, "/api/chats/3f2a9c/messages") is not stream


def test_a_turn_answered_in_its_request_is_waited_for() -> None:
    """POST /api/chats/{id}/messages answers when the turn ends: nginx's default 60 s would cut it."""
    assert seconds(location_for(SERVER, "/api/chats/3f2a9c/messages").value("proxy_read_timeout")) >= 600
