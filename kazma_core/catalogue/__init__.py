"""Every sentence Kazma says, in English and Arabic: one catalogue for every surface.

The sections are one module each (the web pages, slash commands, what help says of each
command, the terminal, the chat apps, a saved step's words, the errors); each surface reads
its section from here and nothing else holds a translation. `sentence("web.send", "ar")`
reads any of them by its id, and `ALL` lists every one, so a single test checks that each
exists in both languages with the same placeholders. An error names its sentence by `message_id` (kazma_core.errors) and carries
its parameters; a surface fills the sentence in the person's language from those.

Adding a sentence is one entry in its section, both languages with the same placeholders:
a refusal goes into `errors.ERRORS` and is raised as `NotFound(message_id="...", **params)`
(its English `message` is filled from the entry, the JSON body carries the id and params);
a list parameter reads as `errors.LISTS` says; a command's help text goes into `help.HELP`.
"""

from __future__ import annotations

from typing import Any

from kazma_core.catalogue.chat_apps import CHAT_APPS
from kazma_core.catalogue.chat_manage import SIZES
from kazma_core.catalogue.cli import CLI
from kazma_core.catalogue.commands import COMMANDS
from kazma_core.catalogue.errors import ERRORS, LISTS
from kazma_core.catalogue.help import HELP
from kazma_core.catalogue.steps import ROLES, WORDS
from kazma_core.catalogue.terminal import TERMINAL
from kazma_core.catalogue.text import LANGS, Text, isolate_ltr
from kazma_core.catalogue.tools import TOOL_LABELS, TOOL_STATES
from kazma_core.catalogue.web import WEB

ALL: dict[str, Text] = {
    **{f"web.{key}": Text(*pair) for key, pair in WEB.items()},
    **{f"commands.{key}": text for key, text in COMMANDS.items()},
    **{f"terminal.{key}": text for key, text in TERMINAL.items()},
    **{f"chat_apps.{key}": text for key, text in CHAT_APPS.items()},
    **{f"steps.{key}": Text(*pair) for key, pair in WORDS.items()},
    **{f"roles.{key}": Text(*pair) for key, pair in ROLES.items()},
    **{f"errors.{key}": text for key, text in ERRORS.items()},
    **{f"help.{key}": text for key, text in HELP.items()},
    **{f"tools.{key}": text for key, text in TOOL_LABELS.items()},
    **{f"tool_states.{key}": text for key, text in TOOL_STATES.items()},
    **{f"sizes.{key}": text for key, text in SIZES.items()},
    **{f"cli.{key}": text for key, text in CLI.items()},
}

__all__ = ["ALL", "LANGS", "LISTS", "Text", "counted", "error_sentence", "isolate_ltr", "sentence"]


def sentence(message_id: str, lang: str, **values: Any) -> str:
    """The sentence with this id, in this language, its placeholders filled."""
    return ALL[message_id].get(lang, **values)


def plural_form(count: int, lang: str) -> str:
    """The language's plural form of a whole number (CLDR's, as the pages' Intl.PluralRules says it):
    English one or other; Arabic zero, one, two, few (3-10), many (11-99) or other, by the last two digits."""
    if lang != "ar":
        return "one" if count == 1 else "other"
    if count in (0, 1, 2):
        return ("zero", "one", "two")[count]
    return "few" if 3 <= count % 100 <= 10 else "many" if 11 <= count % 100 <= 99 else "other"


def counted(message_id: str, count: int, lang: str, **values: Any) -> str:
    """A sentence that counts: `<id>_zero` (for none, in either language), `<id>_one`, `<id>_few`...
    for the number's plural form when the catalogue has it, else `<id>` itself, with {count} filled."""
    form = f"{message_id}_{'zero' if count == 0 else plural_form(count, lang)}"
    return sentence(form if form in ALL else message_id, lang, count=count, **values)


def _listed(name: str, value: Any, lang: str) -> Any:
    """A list parameter as it reads in a sentence of this language (`LISTS`); any other value as it is."""
    if name not in LISTS or not isinstance(value, (list, tuple)):
        return value
    item, joiner = (t.ar if lang == "ar" else t.en for t in LISTS[name])
    return joiner.join(item.format(**v) if isinstance(v, dict) else item.format(value=v) for v in value)


def error_sentence(message_id: str, lang: str, params: dict[str, Any]) -> str:
    """An error's sentence (`errors.<message_id>`) in this language, filled from its parameters."""
    return sentence(f"errors.{message_id}", lang, **{name: _listed(name, v, lang) for name, v in params.items()})
