"""Readable views of saved states, one rendering for every surface.

A saved message becomes a view (role, text, tool calls each with its `text`, `said`); the
difference of two steps becomes a structured comparison and a short summary. Every surface
(the page, the terminal, the chat apps) shows these words: a role is named the same
everywhere (`ROLE_NAMES`), a tool call reads "remember (fact: tea)" everywhere, and no Python
or JSON syntax reaches a person. Counts are exact: a list cut short says how many it left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kazma_core.catalogue.steps import ROLES as ROLE_NAMES
from kazma_core.catalogue.steps import WORDS

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


def step_label(turn: Any, step: Any, lang: str = "en") -> str:
    return _say("step_label", lang, turn=turn, step=step)


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


def message_view(message: dict[str, Any]) -> dict[str, Any]:
    """One saved message as a person reads it: role, text, tool calls, side effect, and `said`."""
    data = message.get("data", {})
    view: dict[str, Any] = {"role": ROLES.get(message.get("type", ""), message.get("type", "")), "text": _text(data.get("content", ""))}
    if data.get("tool_calls"):
        view["tool_calls"] = [
            {"name": c.get("name"), "args": c.get("args"), "text": call_text(c.get("name"), c.get("args"))} for c in data["tool_calls"]
        ]
    if data.get("name"):
        view["name"] = data["name"]
    effect = (data.get("additional_kwargs") or {}).get("side_effect")
    if effect:
        view["side_effect"] = effect
    view["said"] = said(view)
    return view


def said(view: Mapping[str, Any]) -> str:
    """A message's words, or the tool calls it makes when it has none ("→ remember (fact: tea)")."""
    if view.get("text"):
        return str(view["text"])
    calls = view.get("tool_calls") or []
    return "; ".join(f"→ {c.get('text') or call_text(c.get('name'), c.get('args'))}" for c in calls)


def message_line(view: Mapping[str, Any], lang: str = "en", limit: int = 80) -> str:
    """ "Kazma: → remember (fact: tea)", the one line a message is shown as in a list."""
    role = role_name(str(view.get("role", "")), lang)
    if view.get("name"):
        role = f"{role} {view['name']}"
    return f"{role}: {isolate(short(said(view), limit), lang)}"


def side_effects(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The world changes recorded in these messages (files written, commands run, messages sent)."""
    return [v["side_effect"] for v in map(message_view, messages) if "side_effect" in v]


def label(info: Mapping[str, Any], lang: str = "en") -> str:
    return step_label(info["turn_index"], info["iteration"], lang)


def short(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare_states(a: dict[str, Any], b: dict[str, Any], a_info: dict[str, Any], b_info: dict[str, Any]) -> dict[str, Any]:
    """Messages added, removed or changed (by position), and the other fields side by side."""
    ma = [message_view(m) for m in a.get("messages", [])]
    mb = [message_view(m) for m in b.get("messages", [])]
    added = [{"position": i, **mb[i]} for i in range(len(ma), len(mb))]
    removed = [{"position": i, **ma[i]} for i in range(len(mb), len(ma))]
    changed = [
        {"position": i, "a": ma[i], "b": mb[i]} for i in range(min(len(ma), len(mb))) if ma[i] != mb[i]
    ]
    cost_a, cost_b = a.get("cost") or {}, b.get("cost") or {}
    return {
        "a": {**a_info, "model": a.get("model"), "label": label(a_info), "message_count": len(ma)},
        "b": {**b_info, "model": b.get("model"), "label": label(b_info), "message_count": len(mb)},
        "messages": {"added": added, "removed": removed, "changed": changed, "same": min(len(ma), len(mb)) - len(changed)},
        "plan": {"a": a.get("plan"), "b": b.get("plan")},
        "routing": {"a": a.get("routing"), "b": b.get("routing")},
        "cost": {k: cost_b.get(k, 0) - cost_a.get(k, 0) for k in sorted(set(cost_a) | set(cost_b))},
        "model": {"a": a.get("model"), "b": b.get("model")},
    }


def render_comparison(diff: Mapping[str, Any], lang: str = "en") -> str:
    """The summary short enough for a chat message, in the reader's language, with exact counts."""
    m = diff["messages"]
    arrow = "←" if lang == "ar" else "→"
    lines = [
        f"{label(diff['a'], lang)} {arrow} {label(diff['b'], lang)}",
        _say("counts", lang, added=len(m["added"]), removed=len(m["removed"]), changed=len(m["changed"])),
    ]
    for sign, kind in (("+", "added"), ("-", "removed")):
        lines += [f"{sign} {message_line(item, lang)}" for item in m[kind][:LISTED]]
        if len(m[kind]) > LISTED:
            lines.append(_say(f"more_{kind}", lang, count=len(m[kind]) - LISTED))
    for item in m["changed"][:3]:
        where = _say("message", lang, position=item["position"] + 1)  # counted from 1 for people
        lines.append(f"~ {where}: {isolate(short(said(item['a']), 35), lang)} {arrow} {isolate(short(said(item['b']), 35), lang)}")
    if len(m["changed"]) > 3:
        lines.append(_say("more_changed", lang, count=len(m["changed"]) - 3))
    if diff["plan"]["a"] != diff["plan"]["b"]:
        lines.append(_say("plan", lang, a=value_text(diff["plan"]["a"], lang), b=value_text(diff["plan"]["b"], lang)))
    if diff["model"]["a"] != diff["model"]["b"]:
        lines.append(_say("model", lang, a=value_text(diff["model"]["a"], lang), b=value_text(diff["model"]["b"], lang)))
    cost = ", ".join(f"{k} {v:+g}" for k, v in diff["cost"].items() if v)
    if cost:
        lines.append(_say("cost", lang, cost=isolate(cost, lang)))
    text = "\n".join(lines)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"
