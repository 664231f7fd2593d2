"""The one catalogue of sentences: every surface's words, in both languages, and errors named by id."""

from __future__ import annotations

import re

from commands.i18n import error_text
from kazma_core.catalogue import ALL, sentence
from kazma_core.chats import NOT_YOURS
from kazma_core.errors import NotFound
from tests.conftest import Person
from tests.helpers import error_of, new_chat

ARABIC = re.compile(r"[\u0600-\u06FF]")
PLACEHOLDER = re.compile(r"{(\w+)}")
LATIN_ONLY = {"web.lang_en", "web.lang_ar", "web.setting_none", "terminal.approval_closed_as"}


def test_every_sentence_of_every_surface_is_in_both_languages_with_the_same_placeholders() -> None:
    sections = {key.split(".")[0] for key in ALL}
    assert sections == {"web", "commands", "terminal", "chat_apps", "steps", "roles", "errors"}
    for key, text in ALL.items():
        assert text.en.strip() and text.ar.strip(), key
        assert set(PLACEHOLDER.findall(text.en)) == set(PLACEHOLDER.findall(text.ar)), key
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
    assert ALL["errors.chat_not_yours"].en == NOT_YOURS


async def test_an_api_error_carries_its_message_id(ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http)
    body = error_of(await bob.http.get(f"/api/chats/{chat}/messages"), 404, "not_found")
    assert body["message_id"] == "chat_not_yours" and body["message"] == NOT_YOURS
