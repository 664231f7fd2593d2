"""What the TUI says that no other surface does (the terminal section of kazma_core.catalogue)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.dom import DOMNode

from kazma_core.catalogue.terminal import TERMINAL


def say(key: str, lang: str, **values: Any) -> str:
    return TERMINAL[key].get(lang, **values)


def key_labels(node: DOMNode, lang: str) -> None:
    """The node's key labels in the footer, in the person's language: each binding's description is the
    id of its entry (`key_...`), so BINDINGS hold no words of their own."""
    keys = node._bindings.key_to_bindings
    for key, bindings in keys.items():
        keys[key] = [
            replace(b, description=say(_TEXTUAL.get(b.description, b.description), lang))
            if _TEXTUAL.get(b.description, b.description) in TERMINAL else b
            for b in bindings
        ]


# Textual's own bindings that the footer shows, by their English description
_TEXTUAL = {"palette": "key_palette", "Quit": "key_quit"}
