"""The person's language (English or Arabic), and how commands word what they say.

The sentences live in the one catalogue (kazma_core.catalogue: `COMMANDS`, the errors).
An error named by `message_id` is worded from the catalogue; otherwise the English is the
error's own message and the Arabic the catalogue's sentence for its code, filled from the
error's parameters, so the two never drift apart in what they tell a person to do next.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kazma_core.catalogue import ALL, sentence
from kazma_core.catalogue.commands import BAD_COMMAND_AR, COMMANDS
from kazma_core.catalogue.errors import ANY_GATE_AR, ARABIC_BY_CODE, ARABIC_BY_REASON, GATE_AR
from kazma_core.catalogue.text import LANGS, Text, isolate_ltr
from kazma_core.errors import KazmaError
from kazma_ui.step_address import MIN_PREFIX

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


MESSAGES: dict[str, Text] = COMMANDS


def t(key: str, lang: str, **values: Any) -> str:
    return MESSAGES[key].get(lang, **values)


def step_label(turn_index: int, iteration: int, lang: str) -> str:
    return t("step_label", lang, turn=turn_index, step=iteration)


_ENGLISH_LABEL = re.compile(r"turn (\d+), step (\d+)")


def _relabel(text: str, lang: str) -> str:
    """The service names steps in English ("turn 2, step 1"); say it in the person's language."""
    return _ENGLISH_LABEL.sub(lambda m: step_label(int(m.group(1)), int(m.group(2)), lang), text)


def _gates_ar(details: Mapping[str, Any]) -> str:
    gates = details.get("gates") or []
    named = [GATE_AR.format(tool=g.get("tool", "?"), card_id=g.get("card_id", "?")) for g in gates if isinstance(g, Mapping)]
    return "، ".join(named) or ANY_GATE_AR


def _bad_command_ar(err: KazmaError) -> str:
    d = err.details
    template = BAD_COMMAND_AR.get(str(d.get("reason")), ARABIC_BY_CODE["bad_command"])
    return template.format(
        word=d.get("word", ""),
        command=d.get("command") or "",
        usage=" | ".join(d.get("usage") or ["/help"]),
        missing=" ".join(f"<{a}>" for a in d.get("missing") or []),
    )


def _arabic(err: KazmaError) -> str:
    """The error's Arabic sentence from the catalogue, filled from its parameters."""
    if err.code == "bad_command":
        return _bad_command_ar(err)
    candidates = err.details.get("candidates") or []
    values = {
        "gates": _gates_ar(err.details), "count": len(candidates), "min_prefix": MIN_PREFIX,
        "candidates": "؛ ".join(_relabel(str(c), "ar") for c in candidates),
        "code": err.code, "message": err.message, "limit": err.details.get("limit"),
    }
    by_reason = ARABIC_BY_REASON.get(str(err.details.get("reason")))
    if by_reason is not None:
        return by_reason
    return ARABIC_BY_CODE.get(err.code, ARABIC_BY_CODE["other"]).format(**values)


ERROR_CODES = frozenset(ARABIC_BY_CODE) - {"other"}


def error_text(err: KazmaError, lang: str) -> str:
    """The sentence that tells a person what went wrong and what to do next."""
    if err.message_id and f"errors.{err.message_id}" in ALL:
        return sentence(f"errors.{err.message_id}", lang, **err.details)
    if lang != "ar":
        return err.message
    return isolate_ltr(_arabic(err))
