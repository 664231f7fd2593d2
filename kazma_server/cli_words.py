"""The language the `kazma` command speaks, and its sentences (the catalogue's `cli` section).

The locale's language (LC_ALL, else LC_MESSAGES, else LANG, as POSIX orders them), read as a
chat app's locale is (`commands.i18n.pick_lang`): Arabic for ar_EG.UTF-8, English otherwise.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from commands.i18n import DEFAULT_LANG, error_text, pick_lang
from kazma_core.catalogue import counted, sentence
from kazma_core.errors import KazmaError


def cli_lang() -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if value := os.environ.get(name):
            return pick_lang(value)
    return DEFAULT_LANG


def say(key: str, **values: Any) -> str:
    return sentence(f"cli.{key}", cli_lang(), **values)


def count(key: str, n: int, **values: Any) -> str:
    return counted(f"cli.{key}", n, cli_lang(), **values)


def refused(err: KazmaError) -> str:
    """An error's sentence in the command's language."""
    return error_text(err, cli_lang())


class Parser(argparse.ArgumentParser):
    """argparse's parser with its -h, --help said in the catalogue's words (the subcommands' parsers
    are of this class too). The words argparse writes itself ("usage:", a refused argument) stay
    its own English: it offers them only through gettext, which has no Arabic of them."""

    def __init__(self, **kwargs: Any) -> None:
        # argparse's own -h, first as argparse puts it (before a parent's --data-dir), in our words
        super().__init__(**kwargs)
        for action in self._actions:
            if isinstance(action, argparse._HelpAction):
                action.help = say("help_help")
