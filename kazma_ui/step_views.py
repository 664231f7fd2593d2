"""Readable views of saved states: a step's messages, and the difference between two steps."""

from __future__ import annotations

from typing import Any

ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
TEXT_LIMIT = 1500


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def message_view(message: dict[str, Any]) -> dict[str, Any]:
    """One saved message as a person reads it: role, text, tool calls, side effect."""
    data = message.get("data", {})
    view: dict[str, Any] = {"role": ROLES.get(message.get("type", ""), message.get("type", "")), "text": _text(data.get("content", ""))}
    if data.get("tool_calls"):
        view["tool_calls"] = [{"name": c.get("name"), "args": c.get("args")} for c in data["tool_calls"]]
    if data.get("name"):
        view["name"] = data["name"]
    effect = (data.get("additional_kwargs") or {}).get("side_effect")
    if effect:
        view["side_effect"] = effect
    return view


def side_effects(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The world changes recorded in these messages (files written, commands run, messages sent)."""
    return [v["side_effect"] for v in map(message_view, messages) if "side_effect" in v]


def label(info: dict[str, Any]) -> str:
    return f"turn {info['turn_index']}, step {info['iteration']}"


def _said(view: dict[str, Any]) -> str:
    """A message's words, or the tool calls it makes when it has none."""
    if view.get("text"):
        return str(view["text"])
    calls = view.get("tool_calls") or []
    return "calls " + ", ".join(
        f"{c['name']}(" + ", ".join(f"{k}={v}" for k, v in (c.get("args") or {}).items()) + ")" for c in calls
    )


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
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
        "a": {**a_info, "model": a.get("model"), "label": label(a_info)},
        "b": {**b_info, "model": b.get("model"), "label": label(b_info)},
        "messages": {"added": added, "removed": removed, "changed": changed},
        "plan": {"a": a.get("plan"), "b": b.get("plan")},
        "routing": {"a": a.get("routing"), "b": b.get("routing")},
        "cost": {k: cost_b.get(k, 0) - cost_a.get(k, 0) for k in sorted(set(cost_a) | set(cost_b))},
        "model": {"a": a.get("model"), "b": b.get("model")},
    }


def render_comparison(diff: dict[str, Any]) -> str:
    """A plain-text summary short enough for a chat message."""
    m = diff["messages"]
    lines = [
        f"{diff['a']['label']} → {diff['b']['label']}",
        f"Messages: {len(m['added'])} added, {len(m['removed'])} removed, {len(m['changed'])} changed.",
    ]
    for item in m["added"][:5]:
        lines.append(f"+ {item['role']}: {_short(_said(item))}")
    for item in m["removed"][:5]:
        lines.append(f"- {item['role']}: {_short(_said(item))}")
    for item in m["changed"][:3]:
        lines.append(f"~ #{item['position']}: {_short(_said(item['a']), 35)} → {_short(_said(item['b']), 35)}")
    if diff["plan"]["a"] != diff["plan"]["b"]:
        lines.append(f"Plan: {diff['plan']['a']} → {diff['plan']['b']}")
    if diff["model"]["a"] != diff["model"]["b"]:
        lines.append(f"Model: {diff['model']['a']} → {diff['model']['b']}")
    cost = ", ".join(f"{k} {v:+g}" for k, v in diff["cost"].items() if v)
    if cost:
        lines.append(f"Cost: {cost}")
    text = "\n".join(lines)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"
