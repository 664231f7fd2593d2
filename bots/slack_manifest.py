"""The Slack app manifest: the app Slack knows declares every slash command the adapter answers.

Slack learns an app's slash commands from its configuration, not from the app at run time;
`kazma slack-manifest` prints this for a person to paste at api.slack.com/apps.
"""

from __future__ import annotations

from typing import Any

from bots.slack_bot import HTTP_PATH
from commands import registry


def manifest(base_url: str, socket_mode: bool = False, name: str = "Kazma") -> dict[str, Any]:
    """A Slack app manifest with every slash command the registry offers on Slack, and its message shortcuts."""
    events = f"{base_url.rstrip('/')}{HTTP_PATH}"
    at = {} if socket_mode else {"url": events}
    commands = []
    for spec in registry.slash_definitions("slack"):
        hint = " | ".join(u.removeprefix(f"/{spec['name']}").strip() for u in spec["usage"].split(" | ")).strip(" |")
        commands.append({"command": f"/{spec['name']}", "description": spec["description"], "should_escape": False,
                         **({"usage_hint": hint} if hint else {}), **at})
    request_url = {} if socket_mode else {"request_url": events}
    # On a message's menu: its callback_id is what the adapter listens for (commands.registry.MESSAGE_ACTIONS).
    shortcuts = [{"name": a.name.en, "type": "message", "callback_id": a.key, "description": a.name.en}
                 for a in registry.MESSAGE_ACTIONS]
    return {
        "display_information": {"name": name},
        "features": {"bot_user": {"display_name": name, "always_online": True}, "slash_commands": commands,
                     "shortcuts": shortcuts},
        "oauth_config": {"scopes": {"bot": ["app_mentions:read", "chat:write", "commands", "im:history", "im:read",
                                            "im:write", "users:read"]}},
        "settings": {
            "event_subscriptions": {**request_url, "bot_events": ["app_mention", "message.im"]},
            "interactivity": {"is_enabled": True, **request_url},
            "socket_mode_enabled": socket_mode,
        },
    }
