"""What the terminal UI says that no other surface does."""

from __future__ import annotations

from kazma_core.catalogue.text import Text

TERMINAL: dict[str, Text] = {
    "cancelled": Text("Cancelled: nothing was changed.", "أُلغي: لم يتغيّر شيء."),
    "forked_open": Text(
        "Forked {label} into a new chat, “{title}”, which is open now. The original is not touched.",
        "فُرّعت {label} إلى دردشة جديدة، «{title}»، وهي مفتوحة الآن. الأصل لا يُمسّ.",
    ),
    "reloaded_restored": Text(
        "This chat was restored on another surface{to}; the view was reloaded.",
        "استُعيدت هذه الدردشة من واجهة أخرى{to}؛ وأُعيد تحميل العرض.",
    ),
    "restored_to": Text(" (to step {short_id})", " (إلى الخطوة {short_id})"),
    "reloaded_deleted": Text(
        "The chat you had open was deleted on another surface; this one is open now. Ctrl+N starts a new chat.",
        "حُذفت الدردشة التي كانت مفتوحة من واجهة أخرى؛ وهذه مفتوحة الآن. اضغط Ctrl+N لبدء دردشة جديدة.",
    ),
    "reloaded_forgotten": Text(
        "What Kazma learned in this chat was forgotten on another surface; the view was reloaded.",
        "نُسي ما تعلمته كازما في هذه الدردشة من واجهة أخرى؛ وأُعيد تحميل العرض.",
    ),
    "reloaded_reset": Text(
        "This chat was reset on another surface; the view was reloaded.",
        "أُعيد ضبط هذه الدردشة من واجهة أخرى؛ وأُعيد تحميل العرض.",
    ),
    "reloaded": Text("The chat was reloaded from the server.", "أُعيد تحميل الدردشة من الخادم."),
    "saved_step": Text("saved {label} · {short_id}", "حُفظت {label} · {short_id}"),
    "working": Text("working… (/stop stops it)", "تعمل… (‎/stop يوقفها)"),
    "approval_closed_as": Text("{tool}: {status}.", "{tool}: {status}."),
    "not_sent": Text(
        "Not sent: the server cannot be reached. Your text is still in the input; press Enter again once it is back.",
        "لم يُرسل: يتعذّر الوصول إلى الخادم. نصّك باقٍ في سطر الإدخال؛ اضغط Enter مجددًا حين يعود.",
    ),
    "reconnecting": Text(
        "{reason} Reconnecting in {seconds} s (attempt {attempt}); what you type is kept.",
        "{reason} إعادة الاتصال بعد {seconds} ث (المحاولة {attempt})؛ ما تكتبه محفوظ.",
    ),
    "stream_failed": Text("The chat stream failed unexpectedly (see the log).", "انقطع بثّ الدردشة على غير المتوقع (انظر السجل)."),
    "approval_needed": Text("Approval needed: {call}  [a] approve  [d] deny", "موافقة مطلوبة: {call}  [a] موافقة  [d] رفض"),
    "yes": Text("Yes (y)", "نعم (y)"),
    "no": Text("No (n)", "لا (n)"),
    "placeholder": Text("Message, or a command (/help)", "رسالة، أو أمر (/help)"),
    "forked_from": Text("forked from {source}", "مُفرَّعة من {source}"),
    "forked_from_step": Text("forked from {source}, {label}", "مُفرَّعة من {source}، {label}"),
    "deleted_chat": Text("a deleted chat ({short_id})", "دردشة محذوفة ({short_id})"),
    "keys": Text(
        "Keys: Tab moves between the chat list, the chat and the input; Enter opens the chosen chat; "
        "Ctrl+N starts a new chat; on an approval card, a approves and d denies; Ctrl+Q quits.",
        "المفاتيح: Tab للتنقل بين قائمة الدردشات والدردشة وسطر الإدخال؛ Enter لفتح الدردشة المختارة؛ "
        "Ctrl+N لدردشة جديدة؛ على بطاقة الموافقة، a للموافقة وd للرفض؛ Ctrl+Q للخروج.",
    ),
    # -- the footer's key labels (h25): a binding's description names its entry (kazma_ui.tui.sentences.key_labels)
    "key_new_chat": Text("New chat", "دردشة جديدة"),
    "key_approve": Text("Approve", "موافقة"),
    "key_deny": Text("Deny", "رفض"),
    "key_yes": Text("Yes", "نعم"),
    "key_no": Text("No", "لا"),
    "key_cancel": Text("Cancel", "إلغاء"),
    "key_palette": Text("palette", "الأوامر"),
    "key_quit": Text("Quit", "خروج"),
    # -- end of the footer's key labels (h25)
}
