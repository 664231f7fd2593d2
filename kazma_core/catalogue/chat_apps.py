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
    # files travel too: the three answers to a restore's question when files would change
    "restore_conversation": Text("Conversation", "المحادثة"),
    "restore_files": Text("Files", "الملفات"),
    "restore_both": Text("Both", "كلاهما"),
}
