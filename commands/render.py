"""Plain-text answers built from the rewind service's results, in the person's language."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from commands.i18n import MESSAGES, step_label, t
from kazma_ui import step_views

# Discord's 2000-character message is the smallest of the surfaces; a text that fits
# it can be sent whole everywhere.
TEXT_LIMIT = 1900
LINE_LIMIT = 160
QUESTION_LIMIT = 60


def short(text: Any, limit: int = LINE_LIMIT) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_id(step_id: str) -> str:
    return step_id[:8]


def label(info: Mapping[str, Any], lang: str) -> str:
    return step_label(info["turn_index"], info["iteration"], lang)


def _value(value: Any, lang: str = "en") -> str:
    if value in ({}, [], (), None, ""):
        return "—"
    return step_views.value_text(value, lang)


def _cost(cost: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {_value(v)}" for k, v in cost.items())


def message_line(view: Mapping[str, Any], lang: str) -> str:
    """One saved message as "Kazma: → remember (fact: tea)": the rendering every surface shares."""
    return step_views.message_line(view, lang, LINE_LIMIT)


def step_list(listing: Mapping[str, Any], lang: str, link: str) -> tuple[str, list[dict[str, Any]]]:
    """The chat's steps turn by turn, newest turns kept when they do not all fit."""
    turns: list[dict[str, Any]] = []
    blocks: list[list[str]] = []
    for turn in listing["turns"]:
        steps = [
            {**s, "short_id": short_id(s["snapshot_id"]), "label": step_label(turn["turn_index"], s["step"], lang)}
            for s in turn["steps"]
        ]
        turns.append({**turn, "steps": steps})
        questions = short(" / ".join(turn["questions"]), QUESTION_LIMIT)
        lines = [t("turn_header", lang, turn=turn["turn_index"], questions=questions)]
        previous: int | None = None
        for s in steps:
            if previous is not None and s["step"] > previous + 1:  # the long-turn rule left these out
                lines.append(t("gap", lang, first=previous + 1, last=s["step"] - 1))
            lines.append(f"  {s['label']} · {s['short_id']}" + (f" {t('cut', lang)}" if s["truncated"] else ""))
            previous = s["step"]
        blocks.append(lines)
    header = t("steps_header", lang, count=len(listing["snapshots"]))
    sizes = [sum(len(line) + 1 for line in block) for block in blocks]
    older = t("older_hidden", lang, count=len(blocks), link=link)
    first = 0  # the oldest turns go first when the list does not fit
    if len(header) + sum(sizes) > TEXT_LIMIT:
        while first < len(blocks) - 1 and len(header) + sum(sizes[first:]) + len(older) + 1 > TEXT_LIMIT:
            first += 1
    lines = [header, *(line for block in blocks[first:] for line in block)]
    if any(s["truncated"] for turn in turns[first:] for s in turn["steps"]):
        lines.append(t("cut_why", lang))
    if first:
        lines.append(t("older_hidden", lang, count=first, link=link))
    return fit("\n".join(lines)), turns


def side_effect_line(effect: Mapping[str, Any], lang: str) -> str:
    kind = str(effect.get("kind", ""))
    key = f"effect_{kind}"
    name = MESSAGES[key].get(lang) if key in MESSAGES else kind
    return short(f"• {name} ({effect.get('tool', '?')}): {_value(effect.get('args') or {})}")


def restore_question(preview: Mapping[str, Any], lang: str) -> str:
    snap = preview["snapshot"]
    lines = [
        t("confirm_restore", lang, label=label(snap, lang), short_id=short_id(snap["snapshot_id"])),
        t("takes_back", lang, turns=preview["later_turns"], steps=preview["later_steps"]),
    ]
    effects: Sequence[Mapping[str, Any]] = preview["side_effects"]
    if effects:
        lines.append(t("not_undone", lang))
        lines += [side_effect_line(e, lang) for e in effects[:10]]
    else:
        lines.append(t("no_side_effects", lang))
    return fit("\n".join(lines))


def restored(done: Mapping[str, Any], lang: str) -> str:
    """A restore's confirmation, with how to undo it while it can be."""
    text = t("restored", lang, label=label(done["snapshot"], lang), removed=done["removed_steps"])
    if done.get("undo"):
        text += " " + t("restored_undo", lang, undo="/replay undo")
    return text


def undone(done: Mapping[str, Any], lang: str) -> str:
    back = done["back"]
    return t("undone", lang, messages=back["messages"], memories=back["memories"], steps=back["steps"])


def step_view(step: Mapping[str, Any], lang: str) -> str:
    """A step's messages (the newest that fit), plan, routing and cost."""
    snap = step["snapshot"]
    head = [t("show_header", lang, label=label(snap, lang), short_id=short_id(snap["snapshot_id"]), model=snap["model"] or "?")]
    if snap["truncated"]:
        head.append(t("show_cut", lang))
    tail = [
        t("plan", lang, plan=_value(step.get("plan") or [])),
        t("routing", lang, routing=_value(step.get("routing") or {})),
        t("cost", lang, cost=_cost(step.get("cost") or {})),
    ]
    messages = [message_line(m, lang) for m in step["messages"]]
    kept: list[str] = []
    budget = TEXT_LIMIT - len("\n".join([*head, *tail])) - 200
    for line in reversed(messages):
        if budget - len(line) - 1 < 0:
            break
        kept.insert(0, line)
        budget -= len(line) + 1
    body = [t("show_messages", lang, count=len(messages))]
    if len(kept) < len(messages):
        body.append(t("earlier_messages", lang, count=len(messages) - len(kept)))
    return fit("\n".join([*head, *body, *kept, *tail]))


def comparison(diff: Mapping[str, Any], lang: str) -> str:
    """The comparison summary of the rewind service's rendering, in the person's language."""
    return fit(step_views.render_comparison(diff, lang))


def fit(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"
