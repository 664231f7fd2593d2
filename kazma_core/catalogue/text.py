"""A sentence in both of Kazma's languages, and how plain text keeps directions apart in Arabic."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

LANGS = ("en", "ar")

# A command or a step id reads left to right; inside an Arabic sentence each is isolated
# (U+2066 LEFT-TO-RIGHT ISOLATE ... U+2069) so "/replay list" does not turn into "replay list/".
# Links are left alone: the chat apps find them by their text.
_LTR_RUN = re.compile(
    r"(?<![\w/:.?=])(?:/[a-z]+(?: (?:list|show|compare|clear|restore|off|here|<\w+>))*(?![\w/])|[0-9a-f]{8,32}\b)"
)
LRI, PDI = "\u2066", "\u2069"


def isolate_ltr(text: str) -> str:
    """Arabic text with each command and step id isolated as left-to-right."""
    return _LTR_RUN.sub(lambda m: f"{LRI}{m.group(0)}{PDI}", text)


@dataclass(frozen=True)
class Text:
    """One sentence in both languages; `{name}` placeholders are filled by `get`."""

    en: str
    ar: str

    def get(self, lang: str, **values: Any) -> str:
        if lang != "ar":
            return self.en.format(**values) if values else self.en
        return isolate_ltr(self.ar.format(**values) if values else self.ar)
