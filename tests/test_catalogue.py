"""The one catalogue of sentences: every surface's words, in both languages, and errors named by id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commands import registry
from commands.executor import execute
from commands.i18n import error_text
from commands.parser import parse
from commands.service_target import ServiceTarget
from commands.target import CommandContext
from kazma_core import errors
from kazma_core.catalogue import ALL, LISTS, error_sentence, sentence
from kazma_core.errors import NotFound
from tests.conftest import Person
from tests.helpers import error_of, new_chat
from tests.http_server import RunningServer

NOT_YOURS = ALL["errors.chat_not_yours"].en

ARABIC = re.compile(r"[\u0600-\u06FF]")
PLACEHOLDER = re.compile(r"{(\w+)}")
LATIN_ONLY = {"web.lang_en", "web.lang_ar", "web.setting_none", "terminal.approval_closed_as"}
PARAMETERS = re.compile(r"{(\w+)")


def test_every_sentence_of_every_surface_is_in_both_languages_with_the_same_placeholders() -> None:
    sections = {key.split(".")[0] for key in ALL}
    assert sections == {
        "web", "commands", "terminal", "chat_apps", "steps", "roles", "errors", "help", "tools", "tool_states", "sizes", "cli",
    }
    for key, text in ALL.items():
        assert text.en.strip() and text.ar.strip(), key
        assert set(PARAMETERS.findall(text.en)) == set(PARAMETERS.findall(text.ar)), key
        if key not in LATIN_ONLY:
            assert ARABIC.search(text.ar), key


def test_the_product_name_is_spelled_one_way_in_arabic() -> None:
    arabic = "\n".join(text.ar for text in ALL.values())
    assert "كاظمه" not in arabic and "كازما" in arabic


def test_roles_are_named_the_same_on_every_surface() -> None:
    for role in ("user", "assistant", "tool", "system"):
        for lang in ("en", "ar"):
            named = sentence(f"roles.{role}", lang)
            assert sentence(f"web.role_{role}", lang) == named
            assert sentence(f"commands.role_{role}", lang) == named


def test_an_error_named_by_id_is_worded_from_the_catalogue_not_from_its_english() -> None:
    err = NotFound("whatever the English says", message_id="chat_not_yours")
    assert error_text(err, "ar") == sentence("errors.chat_not_yours", "ar")
    assert NotFound(message_id="chat_not_yours").message == NOT_YOURS


def test_an_error_raised_by_id_says_its_english_and_arabic_from_the_same_parameters() -> None:
    """A refusal once said its English where it was raised and its Arabic from a table by code,
    with a regex turning "turn 2, step 1" into Arabic: the two told different things."""
    err = errors.AmbiguousStep(
        message_id="ambiguous_step", address="abcd1234", count=2,
        matches=[{"turn": 2, "step": 1, "id": "abcd1234" + "0" * 24}, {"turn": 3, "step": 0, "id": "abcd1234" + "1" * 24}],
    )
    assert err.message == (
        f"abcd1234 matches 2 steps: turn 2, step 1 (abcd1234{'0' * 24}); turn 3, step 0 (abcd1234{'1' * 24}). Give more characters."
    )
    arabic = error_text(err, "ar")
    assert "الدورة 2، الخطوة 1" in arabic and "الدورة 3، الخطوة 0" in arabic and "turn" not in arabic
    with pytest.raises(TypeError):
        errors.NotFound()  # an error without its sentence cannot be raised


def test_list_parameters_read_in_both_languages_with_the_same_fields() -> None:
    for name, (item, joiner) in LISTS.items():
        assert set(PARAMETERS.findall(item.en)) == set(PARAMETERS.findall(item.ar)), name
        assert joiner.en and joiner.ar, name


def test_every_refusal_a_command_can_meet_is_a_catalogue_sentence_in_both_languages() -> None:
    """Walk the registry: every way a typed command can be wrong names an entry, on every surface."""
    from commands.parser import Usage, parse

    typed = ["/nope", "/replay nope", "/memory", "/memory on", "/fork", "/fork abcdef12 there", "/replay show abcdef12 x",
             "/replay show " + "a" * 100]
    typed += [leaf.typed(tuple("abcdef12" for a in leaf.cmd.args if a.required)) + " extra words" for leaf in registry.leaves()]
    typed += [leaf.typed(()) for leaf in registry.leaves() if any(a.required for a in leaf.cmd.args)]
    seen = set()
    for text in typed:
        parsed = parse(text)
        if not isinstance(parsed, Usage):
            continue
        for surface in registry.SURFACES:
            err = parsed.error(surface)
            assert f"errors.{err.message_id}" in ALL, text
            seen.add(err.message_id)
            for lang in ("en", "ar"):
                said = error_sentence(err.message_id, lang, err.details)
                assert "{" not in said.replace("{value}", ""), (text, lang, said)
            assert ARABIC.search(error_text(err, "ar")), text
    assert seen == {key.removeprefix("errors.") for key in ALL if key.startswith("errors.bad_command.")}


def test_the_registry_says_every_command_in_both_languages_from_the_catalogue() -> None:
    for leaf in registry.leaves():
        for lang in ("en", "ar"):
            for surface in registry.SURFACES:
                assert leaf.description(lang, surface).strip()
        assert ARABIC.search(leaf.description("ar")), leaf.path
    for definition in registry.slash_definitions("discord"):
        assert ARABIC.search(definition["description_ar"]), definition["name"]


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def matches_an_entry(said: str, lang: str) -> bool:
    """Whether a sentence a surface showed is an entry of the catalogue, its placeholders filled."""
    for text in ALL.values():
        template = text.ar if lang == "ar" else text.en
        pattern = re.escape(template)
        pattern = re.sub(r"\\{\w+\\}", "(?s:.+?)", pattern)
        stripped = said.replace("\u2066", "").replace("\u2069", "")
        if re.fullmatch(pattern, stripped):
            return True
    return False


async def test_every_error_the_http_api_answers_is_a_catalogue_sentence(ann: Person, bob: Person) -> None:
    """Each refusal of the replay and chat routes, and the server's own (no such route or method, a body
    that is not JSON, a field FastAPI's validation refuses): its message is its entry's English, filled
    from the body's own parameters, and the entry has an Arabic sentence with the same parameters."""
    chat = await new_chat(ann.http)
    await ann.http.post(f"/api/chats/{chat}/messages", json={"text": "hello"})
    asks = [
        ("GET", f"/api/replay/snapshots/{chat}/zzzz", None), ("GET", f"/api/replay/snapshots/{chat}/abc", None),
        ("GET", f"/api/replay/snapshots/{chat}/{'0' * 8}", None), ("POST", "/api/replay/undo", {"thread_id": chat}),
        ("POST", f"/api/chats/{chat}/messages", {"text": ""}),
        ("POST", f"/api/chats/{chat}/approvals/nope", {"decision": "approve"}),
        ("POST", f"/api/chats/{chat}/approvals/nope", {"decision": "maybe"}),
        ("POST", "/api/replay/restore", {"thread_id": chat, "snapshot_id": "f" * 32}),
        ("GET", "/api/no-such-route", None), ("DELETE", "/api/replay/threads", None),
        ("POST", f"/api/chats/{chat}/messages", {}), ("POST", f"/api/chats/{chat}/messages", {"text": "x", "y": 1}),
        ("POST", f"/api/chats/{chat}/messages", {"text": 3}), ("GET", f"/api/chats/{chat}/messages?limit=0", None),
        ("GET", f"/api/chats/{chat}/messages?limit=5000", None), ("GET", f"/api/chats/{chat}/messages?limit=x", None),
        ("PATCH", f"/api/chats/{chat}", {"title": "t" * 300}), ("POST", f"/api/chats/{chat}/messages", "[not json"),
    ]
    seen = set()
    for method, path, body in asks:
        for who in (ann, bob):
            sent = {"content": body, "headers": {"Content-Type": "application/json"}} if isinstance(body, str) else {"json": body}
            response = await who.http.request(method, path, **sent)
            found = response.json()
            assert response.status_code >= 400, (path, found)
            named = found["message_id"]
            seen.add(named)
            params = {k: v for k, v in found.items() if k not in ("error", "message", "message_id")}
            assert found["message"] == error_sentence(named, "en", params), (path, found)
            assert ARABIC.search(error_sentence(named, "ar", params)), named
            assert "{" not in error_sentence(named, "ar", params), named
    assert {"route_missing", "method_not_allowed", "body_not_json", "field_missing", "field_unknown", "field_not_text",
            "field_too_small", "field_too_big", "field_not_integer", "field_not_a_choice"} <= seen, seen


async def test_a_refused_field_is_named_in_both_languages(ann: Person) -> None:
    """A 422 once said pydantic's own English ("text: Field required"); it is a catalogue sentence naming the field."""
    chat = await new_chat(ann.http)
    found = error_of(await ann.http.post(f"/api/chats/{chat}/approvals/x", json={"decision": "maybe"}), 422, "invalid_input")
    assert found["message"] == "decision: it must be one of “approve”, “deny”. Fix it and send again."
    assert error_sentence(found["message_id"], "ar", {k: found[k] for k in ("field", "choices")}) == (
        "decision: يجب أن يكون واحدًا من «approve»، «deny». صحّحه وأرسل مجددًا."
    )
    missing = error_of(await ann.http.post(f"/api/chats/{chat}/messages", json={}), 422, "invalid_input")
    assert (missing["message_id"], missing["field"]) == ("field_missing", "text")


async def test_every_command_answer_on_each_surface_is_a_catalogue_sentence(server: RunningServer, ann: Person) -> None:
    """Walk the registry: every command offered on each surface (the web chat's and the TUI's command
    route, the chat apps through their handlers), asked and confirmed, in both languages. Every refusal
    is a whole sentence of the catalogue, and every answer opens with one (filled), so no surface shows
    English written at the raise or a translation kept elsewhere."""
    chat = await new_chat(ann.http)
    for text in ("hello", "calc 1+1"):
        await ann.http.post(f"/api/chats/{chat}/messages", json={"text": text})
    ids = [s.id[:8] for s in await server.core.snapshots.list_steps(chat)]
    values = {"step": ids[0], "a": ids[0], "b": ids[-1]}
    shown: list[tuple[str, str, str, str]] = []
    for lang in ("en", "ar"):
        for surface in registry.SURFACES:
            for leaf in registry.leaves(surface):
                for args in (tuple(values[a.name] for a in leaf.cmd.args if a.required), ("zz",) * len(leaf.cmd.args)):
                    typed = leaf.typed(args)
                    for confirmed in (False, True):
                        if surface in ("web", "tui"):
                            response = await ann.http.post(
                                f"/api/chats/{chat}/commands", json={"text": typed, "confirmed": confirmed},
                                headers={"X-Kazma-Lang": lang, "X-Kazma-Surface": surface},
                            )
                            answer = response.json()
                            kind, said = answer["kind"], answer["text"]
                        else:
                            target = ServiceTarget(server.app.state.rewind, ann.user, surface, chat)
                            parsed = parse(typed)
                            assert parsed is not None, typed
                            result = await execute(parsed, CommandContext(target, lang, server.url + "/", confirmed))
                            kind, said = result.kind, result.text
                        shown.append((lang, surface, typed, said if kind == "error" else said.split("\n")[0]))
    missing = [x for x in shown if not matches_an_entry(x[3], x[0])]
    assert not missing, missing[:5]
    assert {x[1] for x in shown} == set(registry.SURFACES)


# -- no surface words a refusal outside the catalogue (h25) -------------------------------------------

PRODUCT = ("kazma_core", "kazma_ui", "kazma_server", "commands", "bots")


def _error_classes() -> set[str]:
    import importlib
    import pkgutil

    for package in PRODUCT:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not info.name.endswith(("discord_bot", "slack_bot", "telegram_bot")) or importlib.util.find_spec(info.name):
                importlib.import_module(info.name)
    found: set[str] = set()
    todo = [errors.KazmaError]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return found


def _sources() -> list[tuple[str, str]]:
    from pathlib import Path

    here = Path(__file__).resolve().parent.parent
    return [(str(p.relative_to(here)), p.read_text()) for package in PRODUCT for p in sorted((here / package).rglob("*.py"))]


def _is_words(node: object) -> bool:
    """A sentence written in the source: a string, an f-string, or one joined from them."""
    import ast

    if isinstance(node, ast.BinOp):
        return _is_words(node.left) or _is_words(node.right)
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def test_every_error_is_raised_by_its_catalogue_id_never_with_english_written_at_the_raise() -> None:
    """A refusal raised as `KazmaError("There is no user ...")` was English on every surface: the CLI,
    the pages in Arabic, the chat apps. Each is raised with `message_id=` and its parameters: also a
    setting refused, a data folder or a database that cannot be used, and a chat app that cannot start."""
    import ast

    classes = _error_classes()
    written = []
    for path, source in _sources():
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            named = any(k.arg in ("message_id", None) for k in node.keywords)
            if name in classes and not named and any(_is_words(arg) for arg in node.args):
                written.append(f"{path}:{node.lineno} {name}")
            # a database's reason (DatabaseError's reason_id) is a sentence of the catalogue too
            ids = [k.value for k in node.keywords if k.arg in ("message_id", "reason_id") and isinstance(k.value, ast.Constant)]
            for given in ids:
                assert f"errors.{given.value}" in ALL, f"{path}:{node.lineno} names no entry: {given.value}"
    assert not written, written


def test_no_answer_body_carries_a_message_written_outside_the_catalogue() -> None:
    """The web server's own refusals (404, 405, a body that is not JSON, a fault, a body over the limit)
    once wrote their English into the JSON; every "message" of a body is a catalogue sentence."""
    import ast

    written = []
    for path, source in _sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "message" and _is_words(value):
                        written.append(f"{path}:{node.lineno}")
    assert not written, written


def test_the_terminal_footer_labels_its_keys_from_the_catalogue_in_the_persons_language() -> None:
    """The footer said "New chat", "Approve", "Yes" in English to a person reading Arabic."""
    from kazma_ui.tui.app import KazmaTui
    from kazma_ui.tui.widgets.approval_card import ApprovalCard
    from kazma_ui.tui.widgets.confirm import ConfirmDialog

    for lang in ("en", "ar"):
        nodes = [KazmaTui("http://127.0.0.1:9", "token", lang=lang), ConfirmDialog("?", lang),
                 ApprovalCard({"card_id": "c", "tool": "write_file", "args": {}}, lang)]
        shown = [b.description for node in nodes for bs in node._bindings.key_to_bindings.values() for b in bs if b.show]
        assert len(shown) >= 6
        for label in shown:
            assert label in {text.get(lang) for key, text in ALL.items() if key.startswith("terminal.key_")}, (lang, label)


# -- the command line's help and a refused setting (h31) ----------------------------------------------


def _helps(parser: object) -> list[str]:
    """Every sentence `kazma ... --help` prints of its own: descriptions, options, subcommands."""
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    said = [parser.description] if parser.description else []
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            said.append(action.help)
        if isinstance(action, argparse._SubParsersAction):
            said += [choice.help for choice in action._choices_actions if choice.help]
            said += [text for sub in dict.fromkeys(action.choices.values()) for text in _helps(sub)]
    return said


@pytest.mark.parametrize(("locale", "lang"), [("C.UTF-8", "en"), ("ar_EG.UTF-8", "ar")])
def test_every_help_text_of_the_kazma_command_is_a_catalogue_sentence_in_the_locales_language(
    monkeypatch: pytest.MonkeyPatch, locale: str, lang: str,
) -> None:
    """`kazma --help` and each command's help were English written beside argparse, whatever the locale."""
    from kazma_server.cli import parser

    monkeypatch.setenv("LC_ALL", locale)
    said = _helps(parser())
    entries = {text.get(lang) for key, text in ALL.items() if key.startswith("cli.help_")}
    assert len(said) > 30
    assert not [text for text in said if text not in entries]


@pytest.mark.parametrize("command", [["users", "list"], ["serve"], ["maintain"], ["tui"], ["backup", "create"]])
def test_a_commands_help_lists_its_help_option_first_as_argparse_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str],
) -> None:
    """With its words moved into the catalogue, -h came after --data-dir in every command that takes the
    data folder ("usage: kazma users list [--data-dir DATA_DIR] [-h]"), unlike before and unlike argparse."""
    from kazma_server.cli import parser

    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    with pytest.raises(SystemExit):
        parser().parse_args([*command, "--help"])
    usage, options = capsys.readouterr().out.split("options:\n")
    assert usage.startswith(f"usage: kazma {' '.join(command)} [-h] [--data-dir DATA_DIR]")
    assert options.splitlines()[0].split() == ["-h,", "--help", "show", "this", "help", "and", "exit"]


# one bad value of each kind pydantic tells apart, through the environment as an owner sets it
BAD_SETTINGS = {
    "KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS": "many", "KAZMA_SERVER__PORT": "0", "KAZMA_MODEL__PROVIDER": "nope",
    "KAZMA_MODEL__TEMPERATURE": "warm", "KAZMA_TIME_TRAVEL__ENABLED": "maybe", "KAZMA_SERVER__HOST": "",
    "KAZMA_MODEL__TIMEOUT_SECONDS": "0",
}


@pytest.mark.parametrize(("name", "value"), BAD_SETTINGS.items())
def test_a_refused_setting_says_which_and_what_it_expects_in_the_catalogues_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, value: str,
) -> None:
    """A bad setting's refusal carried pydantic's own English ("input should be a valid integer, unable
    to parse string as an integer"), in English even to an owner reading Arabic."""
    from kazma_core.errors import SettingsError
    from kazma_core.settings import load_settings

    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as refused:
        load_settings(data_dir=str(tmp_path))
    err = refused.value
    setting = name.removeprefix("KAZMA_").lower().replace("__", ".")
    assert err.message_id != "setting_invalid", err.message  # a kind of its own, saying what is expected
    for lang in ("en", "ar"):
        said = error_text(err, lang)
        assert setting in said and "input should" not in said.lower() and matches_an_entry(said, lang), said
    assert ARABIC.search(error_text(err, "ar"))


async def test_the_advice_for_a_store_found_wrong_is_a_catalogue_sentence_in_both_languages(tmp_path: Path) -> None:
    """What the operator reads when the health check finds a database wrong was English written in the engines."""
    from kazma_core.stores.postgres import PostgresDB
    from kazma_core.stores.sqlite import SqliteDB

    sqlite_db = SqliteDB(tmp_path / "kazma.db", [])
    postgres_db = PostgresDB("postgresql://127.0.0.1:9/kazma", "kazma", [])  # never asked: only worded
    try:
        for lang in ("en", "ar"):
            for role in ("chats", "steps", "audit"):
                said = sqlite_db.found_wrong(role, "file is not a database").text(lang)
                assert matches_an_entry(said, lang) and "kazma.db" in said, said
            said = postgres_db.found_wrong("chats", "the PostgreSQL server cannot be reached").text(lang)
            assert matches_an_entry(said, lang) and "PostgreSQL schema kazma" in said, said
        assert ARABIC.search(sqlite_db.found_wrong("steps", "x").text("ar"))
    finally:
        await sqlite_db.close()
        await postgres_db.close()


def _written_words(node: object) -> str:
    """The words a string, f-string or a join of them writes in the source (placeholders left out)."""
    import ast

    if isinstance(node, ast.BinOp):
        return _written_words(node.left) + " " + _written_words(node.right)
    if isinstance(node, ast.JoinedStr):
        return " ".join(_written_words(part) for part in node.values)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def test_the_kazma_command_prints_and_helps_only_in_catalogue_sentences() -> None:
    """The command's help texts were English written beside argparse; what it prints, and each
    help, description or usage it gives argparse, is read from the catalogue's `cli` section
    (the program's name before a refusal, "kazma: ", is not a sentence)."""
    import ast

    written = []
    for path, source in _sources():
        if not path.startswith("kazma_server"):
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            said = [arg for arg in node.args if name == "print"]
            said += [k.value for k in node.keywords if k.arg in ("help", "description", "usage", "epilog")]
            words = " ".join(_written_words(value) for value in said).replace("kazma:", "")
            if re.search(r"[A-Za-z\u0600-\u06FF]{2,}", words):
                written.append(f"{path}:{node.lineno} {words.strip()!r}")
    assert not written, written


def test_an_operator_alert_is_a_catalogue_sentence() -> None:
    """The clean-up's alerts (shown to the owner on every page, printed by `kazma maintain`) were
    English written where they were raised; each is a catalogue sentence with its Arabic beside it."""
    import ast

    written = []
    for path, source in _sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "raise_alert":
                message = node.args[2] if len(node.args) > 2 else None
                if message is not None and _is_words(message):
                    written.append(f"{path}:{node.lineno}")
    assert not written, written
