"""What the TUI says that no other surface does (the terminal section of kazma_core.catalogue)."""

from __future__ import annotations

from typing import Any

from kazma_core.catalogue.terminal import TERMINAL
from kazma_core.catalogue.text import Text

SENTENCES: dict[str, Text] = TERMINAL


def say(key: str, lang: str, **values: Any) -> str:
    return SENTENCES[key].get(lang, **values)
