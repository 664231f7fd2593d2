"""Every sentence of the web pages in English and Arabic, and which of the two a person reads.

The templates and the page scripts take their words from here only (the scripts get the
person's half of the web section in the page); the sentences themselves are the web section of the
one catalogue (kazma_core.catalogue.web), so a sentence is translated in one place. Which
language a browser asks for is read as the chat apps' locales are (commands.i18n.pick_lang).
`{name}` placeholders are filled by `text` on the server and by `Kazma.t` in the browser.
"""

from __future__ import annotations

import re
from typing import Any

from commands.i18n import pick_lang
from kazma_core.catalogue.text import LANGS
from kazma_core.catalogue.web import WEB

DIRECTION = {"en": "ltr", "ar": "rtl"}

_PLACEHOLDER = re.compile(r"{(\w+)}")


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def catalogue(lang: str) -> dict[str, str]:
    """Every string in one language (what a page hands to its scripts)."""
    index = LANGS.index(lang) if lang in LANGS else 0
    return {key: pair[index] for key, pair in WEB.items()}


def text(lang: str, key: str, **values: Any) -> str:
    template = WEB[key][LANGS.index(lang) if lang in LANGS else 0]
    return template.format(**values) if values else template


def lang_for(stored: str | None, accept_language: str | None, asked: str | None = None) -> str:
    """The page's language: asked in the address (?lang=), else the user's choice, else the browser's."""
    for choice in (asked, stored):
        if choice in LANGS:
            return choice
    return pick_lang(accept_language)
