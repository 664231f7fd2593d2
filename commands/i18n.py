"""The person's language (English or Arabic), and how commands word what they say.

The sentences live in the one catalogue (kazma_core.catalogue: `COMMANDS`, the errors).
An error names its sentence by `message_id` and carries its parameters, so both languages
are filled from the same values and never drift apart in what they tell a person to do.
"""

from __future__ import annotations

import re
from typing import Any

from kazma_core.catalogue import ALL, error_sentence, sentence
from kazma_core.catalogue.commands import COMMANDS
from kazma_core.catalogue.text import LANGS
from kazma_core.errors import KazmaError

DEFAULT_LANG = "en"


def pick_lang(value: str | None) -> str:
    """"ar" or "en" from a platform locale ("ar-EG", "en_US") or an Accept-Language header."""
    if not isinstance(value, str):
        return DEFAULT_LANG
    best, best_q = DEFAULT_LANG, 0.0
    for part in value.split(","):
        tag, _, params = part.partition(";")
        primary = re.split(r"[-_]", tag.strip().lower(), maxsplit=1)[0]
        if primary not in LANGS:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, number = param.partition("=")
            if key.strip().lower() == "q":
                q = _quality(number)
        if q > best_q:
            best, best_q = primary, q
    return best


def _quality(number: str) -> float:
    """An Accept-Language weight (0 to 1); a malformed one counts as 0, never as a preference."""
    if not re.fullmatch(r"\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*", number):
        return 0.0
    return float(number)


def t(key: str, lang: str, **values: Any) -> str:
    return COMMANDS[key].get(lang, **values)


def step_label(turn_index: int, iteration: int, lang: str) -> str:
    return t("step_label", lang, turn=turn_index, step=iteration)


def error_text(err: KazmaError, lang: str) -> str:
    """The sentence that tells a person what went wrong and what to do next, from the error's
    message id and parameters; an error that names none (a server's answer without one) is
    said as it came, in Arabic with its code."""
    if err.message_id and f"errors.{err.message_id}" in ALL:
        return error_sentence(err.message_id, lang, err.details)
    if lang != "ar":
        return err.message
    return sentence("errors.other", lang, code=err.code, message=err.message)
