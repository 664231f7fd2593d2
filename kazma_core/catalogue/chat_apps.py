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
    # -- acting on a message of the chat (a reply with /fork or /replay, a message command or shortcut) --
    "message_fork": Text("Fork from here", "تفرّع من هنا"),
    "message_rewind": Text("Rewind to here", "ارجع إلى هنا"),
    "message_unknown": Text(
        "Kazma has no record of that message in this chat, so it cannot tell which step it is. Reply to a "
        "message of this chat that Kazma saw or sent, or use /replay list to pick a step.",
        "لا تعرف كازما تلك الرسالة في هذه المحادثة، فلا تعرف أي خطوة هي. ردّ على رسالة من هذه المحادثة رأتها "
        "كازما أو أرسلتها، أو استعمل ‎/replay list‎ لتختار خطوة.",
    ),
    "help_on_message_telegram": Text(
        "Reply to a message with /replay (go back to it), /fork (branch from it) or /replay show: no step id needed.",
        "ردّ على رسالة بـ ‎/replay‎ (للرجوع إليها) أو ‎/fork‎ (للتفرّع منها) أو ‎/replay show‎: لا حاجة إلى رقم الخطوة.",
    ),
    "help_on_message_discord": Text(
        "On any message: Apps › Rewind to here or Fork from here, no step id needed.",
        "على أي رسالة: التطبيقات › Rewind to here أو Fork from here، دون رقم خطوة.",
    ),
    "help_on_message_slack": Text(
        "On any message: More actions › Rewind to here or Fork from here, no step id needed.",
        "على أي رسالة: إجراءات أخرى › Rewind to here أو Fork from here، دون رقم خطوة.",
    ),
    "rewound_message": Text(
        "⏪ Rewound: a restore took this answer back. /replay undo brings it back.",
        "⏪ أُرجِعت: أعادت استعادةٌ هذه الإجابة إلى الوراء. ‎/replay undo‎ يعيدها.",
    ),
    # files travel too: the three answers to a restore's question when files would change
    "restore_conversation": Text("Conversation", "المحادثة"),
    "restore_files": Text("Files", "الملفات"),
    "restore_both": Text("Both", "كلاهما"),
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
