"""Readable views of saved states, one rendering for every surface.

A saved message becomes a view (role, text, tool calls each with its `text`, `said`); the
difference of two steps becomes a structured comparison and a short summary. Every surface
(the page, the terminal, the chat apps) shows these words: a role is named the same
everywhere (`ROLE_NAMES`), a tool call reads "remember (fact: tea)" everywhere, and no Python
or JSON syntax reaches a person. Counts are exact: a list cut short says how many it left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kazma_core.catalogue.steps import ROLES as ROLE_NAMES
from kazma_core.catalogue.steps import WORDS
from kazma_core.catalogue.tools import TOOL_DONE, TOOL_LABELS
from kazma_core.stores.snapshots import StepInfo
from kazma_ui.rewind_results import (
    ChangedMessage,
    ComparedStep,
    Comparison,
    MessageChanges,
    MessageView,
    PlacedMessage,
    SideEffect,
    Sides,
    ToolCallView,
)

ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
TEXT_LIMIT = 1500
LISTED = 5  # messages listed per kind in a summary; the rest are counted


# Right-to-left text isolates what reads left to right (a message, a call, a label of digits),
# so plain-text surfaces (chat apps, the terminal) keep its order inside an Arabic line.
FSI, PDI = "\u2068", "\u2069"


def _say(key: str, lang: str, **values: Any) -> str:
    template = WORDS[key][1 if lang == "ar" else 0]
    return template.format(**values) if values else template


def isolate(text: str, lang: str) -> str:
    return f"{FSI}{text}{PDI}" if lang == "ar" else text


def role_name(role: str, lang: str = "en") -> str:
    pair = ROLE_NAMES.get(role)
    return pair[1 if lang == "ar" else 0] if pair else role


def step_label(turn: int, step: int, lang: str = "en") -> str:
    return _say("step_label", lang, turn=turn, step=step)


def step_action(did: dict[str, Any] | None, lang: str = "en") -> str:
    """What a step did, in words ("calculated", "asked to approve writing notes.txt"); "" when not known.
    Tools are named in people's words (catalogue/tools.py), never by their names in the code."""
    kind = (did or {}).get("kind")
    if kind == "used":
        tools = [str(name) for name in (did or {}).get("tools") or []]
        return _say("did_joiner", lang).join(TOOL_DONE.get(name, TOOL_DONE["other"]).get(lang) for name in tools)
    if not kind or f"did_{kind}" not in WORDS:
        return ""
    values = {k: ", ".join(map(str, v)) if isinstance(v, list) else isolate(str(v), lang) for k, v in (did or {}).items() if k != "kind"}
    if kind == "approval":
        values["tool"] = TOOL_LABELS.get(str(did.get("tool")), TOOL_LABELS["other"]).get(lang) if did else ""
    try:
        return _say(f"did_{kind}", lang, **values)
    except KeyError:
        return ""


def value_text(value: Any, lang: str = "en") -> str:
    """A value as words: strings bare, lists joined, mappings as "name: value", nothing as "none"."""
    if value is None or value in ({}, [], (), ""):
        return _say("none", lang)
    if isinstance(value, bool):
        return _say("yes" if value else "no", lang)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {value_text(v, lang)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return ", ".join(value_text(v, lang) for v in value)
    return str(value)


def call_text(name: Any, args: Mapping[str, Any] | None, lang: str = "en") -> str:
    """A tool call as a person reads it: "remember (fact: tea)"."""
    return f"{name} ({value_text(args, lang)})" if args else str(name)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def message_view(message: Mapping[str, Any]) -> MessageView:
    """One saved message as a person reads it: role, text, tool calls, side effect, and `said`."""
    data = message.get("data", {})
    calls = [
        ToolCallView(name=c.get("name"), args=c.get("args"), text=call_text(c.get("name"), c.get("args")))
        for c in data.get("tool_calls") or []
    ]
    effect = (data.get("additional_kwargs") or {}).get("side_effect")
    kind = message.get("type", "")
    text = _text(data.get("content", ""))
    return MessageView(
        role=ROLES.get(kind, kind), text=text, tool_calls=calls or None, name=data.get("name") or None,
        side_effect=SideEffect.model_validate(effect) if effect else None, said=said(text, calls),
    )


def said(text: str, calls: Sequence[ToolCallView] | None) -> str:
    """A message's words, or the tool calls it makes when it has none ("→ remember (fact: tea)")."""
    if text:
        return text
    return "; ".join(f"→ {c.text}" for c in calls or ())


def message_line(view: MessageView, lang: str = "en", limit: int = 80) -> str:
    """ "Kazma: → remember (fact: tea)", the one line a message is shown as in a list."""
    role = role_name(view.role, lang)
    if view.name:
        role = f"{role} {view.name}"
    return f"{role}: {isolate(short(view.said, limit), lang)}"


def side_effects(messages: list[dict[str, Any]]) -> list[SideEffect]:
    """The world changes recorded in these messages (files written, commands run, messages sent)."""
    return [v.side_effect for v in map(message_view, messages) if v.side_effect is not None]


def short(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compared(info: StepInfo, state: Mapping[str, Any], messages: int) -> ComparedStep:
    return ComparedStep(
        step_id=info.id, chat_id=info.chat_id, turn_index=info.turn_index, iteration=info.iteration,
        created_at=info.created_at, model=state.get("model"), questions=info.questions, message_count=messages,
        size=info.size, truncated=info.truncated, label=step_label(info.turn_index, info.iteration),
    )


def _placed(position: int, view: MessageView) -> PlacedMessage:
    return PlacedMessage(position=position, **dict(view))


def compare_states(a: Mapping[str, Any], b: Mapping[str, Any], a_info: StepInfo, b_info: StepInfo) -> Comparison:
    """Messages added, removed or changed (by position), the other fields side by side, and the summary."""
    ma = [message_view(m) for m in a.get("messages", [])]
    mb = [message_view(m) for m in b.get("messages", [])]
    added = [_placed(i, mb[i]) for i in range(len(ma), len(mb))]
    removed = [_placed(i, ma[i]) for i in range(len(mb), len(ma))]
    changed = [ChangedMessage(position=i, a=ma[i], b=mb[i]) for i in range(min(len(ma), len(mb))) if ma[i] != mb[i]]
    cost_a, cost_b = a.get("cost") or {}, b.get("cost") or {}
    diff = Comparison(
        a=_compared(a_info, a, len(ma)),
        b=_compared(b_info, b, len(mb)),
        messages=MessageChanges(added=added, removed=removed, changed=changed, same=min(len(ma), len(mb)) - len(changed)),
        plan=Sides(a=a.get("plan"), b=b.get("plan")),
        routing=Sides(a=a.get("routing"), b=b.get("routing")),
        cost={k: cost_b.get(k, 0) - cost_a.get(k, 0) for k in sorted(set(cost_a) | set(cost_b))},
        model=Sides(a=a.get("model"), b=b.get("model")),
        text="",
    )
    return diff.model_copy(update={"text": render_comparison(diff)})


def render_comparison(diff: Comparison, lang: str = "en") -> str:
    """The summary short enough for a chat message, in the reader's language, with exact counts."""
    m = diff.messages
    arrow = "←" if lang == "ar" else "→"
    lines = [
        f"{step_label(diff.a.turn_index, diff.a.iteration, lang)} {arrow} {step_label(diff.b.turn_index, diff.b.iteration, lang)}",
        _say("counts", lang, added=len(m.added), removed=len(m.removed), changed=len(m.changed)),
    ]
    for sign, kind, items in (("+", "added", m.added), ("-", "removed", m.removed)):
        lines += [f"{sign} {message_line(item, lang)}" for item in items[:LISTED]]
        if len(items) > LISTED:
            lines.append(_say(f"more_{kind}", lang, count=len(items) - LISTED))
    for item in m.changed[:3]:
        where = _say("message", lang, position=item.position + 1)  # counted from 1 for people
        lines.append(f"~ {where}: {isolate(short(item.a.said, 35), lang)} {arrow} {isolate(short(item.b.said, 35), lang)}")
    if len(m.changed) > 3:
        lines.append(_say("more_changed", lang, count=len(m.changed) - 3))
    if diff.plan.a != diff.plan.b:
        lines.append(_say("plan", lang, a=value_text(diff.plan.a, lang), b=value_text(diff.plan.b, lang)))
    if diff.model.a != diff.model.b:
        lines.append(_say("model", lang, a=value_text(diff.model.a, lang), b=value_text(diff.model.b, lang)))
    cost = ", ".join(f"{k} {v:+g}" for k, v in diff.cost.items() if v)
    if cost:
        lines.append(_say("cost", lang, cost=isolate(cost, lang)))
    text = "\n".join(lines)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"
