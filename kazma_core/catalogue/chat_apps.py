"""What the chat-app adapters say around the agent: buttons, the approval question."""

from __future__ import annotations

from kazma_core.catalogue.text import Text

CHAT_APPS: dict[str, Text] = {
    "approve": Text("Approve", "موافقة"),
    "deny": Text("Deny", "رفض"),
    "confirm": Text("Yes, do it", "نعم، نفّذ"),
    "cancel": Text("Cancel", "إلغاء"),
    "ask": Text("Kazma wants to run {tool} with {args}. Approve?", "تريد كازما تشغيل {tool} بالقيم {args}. هل توافق؟"),
    "cancelled": Text("Cancelled: nothing changed.", "أُلغي: لم يتغيّر شيء."),
    "owner_only": Text("Only this chat's owner can answer its approvals.", "لا يجيب عن موافقات هذه المحادثة إلا مالكها."),
    # -- a new chat's title, by where it was started (h25); stored as the chat's title, in English
    "title_telegram": Text("Telegram: {name}", "تيليجرام: {name}"),
    "title_discord_dm": Text("Discord: {name}", "ديسكورد: {name}"),
    "title_discord_channel": Text("{server} #{channel}", "{server}، القناة #{channel}"),
    "title_discord_server": Text("Discord", "ديسكورد"),
    "title_discord_channel_unnamed": Text("channel", "قناة"),
    "title_slack_dm": Text("Slack DM", "رسالة خاصة على Slack"),
    "title_slack_channel_named": Text("Slack #{channel}", "Slack، القناة #{channel}"),
    "title_slack_channel": Text("Slack channel", "قناة على Slack"),
    "title_slack_thread": Text("Slack thread", "سلسلة على Slack"),
    "title_other": Text("{platform} chat", "دردشة {platform}"),
    # -- end of a new chat's title (h25)
}
