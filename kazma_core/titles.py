"""Chat titles: the placeholder a chat starts with, the title its first message gives it, and
the titles of forks, each short enough to be read whole in a chat list."""

from __future__ import annotations

import re

UNTITLED = "New chat"  # stored until the first message names the chat; each surface says it in its language
MAX_TITLE = 200  # what a person may type as a title
FITS = 60  # characters a chat list shows whole on one line or two
FORK_MARK = " (fork)"


def shortened(text: str, most: int = FITS) -> str:
    """The text on one line, at most `most` characters, cut at a word when it must be cut."""
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= most:
        return flat
    cut = flat[: most - 1]
    space = cut.rfind(" ")
    if space >= most // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:!?،؛") + "…"


def title_from(message: str) -> str:
    """A chat's title from its first message."""
    return shortened(message) or UNTITLED


def fork_title(source_title: str) -> str:
    """A fork's title: its source's, shortened so that the mark that it is a fork stays in view
    (a fork of a fork says so twice, so the two read apart)."""
    return shortened(source_title, FITS - len(FORK_MARK)) + FORK_MARK
