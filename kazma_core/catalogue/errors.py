"""Errors named by their sentence (`KazmaError.message_id`), filled from the error's parameters."""

from __future__ import annotations

from kazma_core.catalogue.text import Text

ERRORS: dict[str, Text] = {
    "chat_not_yours": Text(
        "There is no such chat among yours. Check the chat id, or list your chats.",
        "لا توجد دردشة كهذه بين دردشاتك. تحقّق من معرّف الدردشة، أو اعرض دردشاتك.",
    ),
    "store_down": Text(
        "Kazma cannot reach its data right now (a store is damaged or its database is out of reach), so this "
        "was not done. Try again in a minute; if it keeps failing, tell the owner of this Kazma (/healthz "
        "names the store).",
        "يتعذّر على كازما الوصول إلى بياناتها الآن (مخزن تالف أو قاعدة بياناته بعيدة المنال)، فلم يُنفَّذ هذا. "
        "حاول مجددًا بعد دقيقة؛ وإن تكرّر الإخفاق فأخبر مالك كازما هذه (يسمّي /healthz المخزن).",
    ),
    "turn_stopped": Text(
        "Stopped before Kazma answered, as you asked. Send a message to go on.",
        "أُوقفت قبل أن تجيب كازما، كما طلبت. أرسل رسالة لتتابع.",
    ),
}


# In Arabic, each error code's sentence (in English an error's own message is the sentence);
# {placeholders} are filled from the error's parameters by commands.i18n.error_text.
ARABIC_BY_CODE: dict[str, str] = {
    "turn_running": "دورة تجري الآن في هذه الدردشة. انتظر إجابتها (أو أوقفها)، ثم حاول مجددًا.",
    "lease_lost": "تولّى خادم آخر لكازما هذه الدردشة أثناء هذه الدورة، فلم يُحفظ منها شيء بعد ذلك. أرسل الرسالة مجددًا.",
    "approval_pending": "موافقة تنتظر في هذه الدردشة: {gates}. وافق عليها أو ارفضها (أو دعها تنتهي صلاحيتها)، ثم حاول مجددًا.",
    "snapshot_truncated": (
        "حُفظت هذه الخطوة مقصوصة لأنها (أو خطوة سابقة تشاركها رسائلها) أضافت أكثر من حدّ حجم الخطوة. "
        "يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها: اختر خطوة أخرى."
    ),
    "not_found": "لا توجد خطوة محفوظة بهذا المعرّف في هذه الدردشة (ربما حُذفت). يعرض /replay list الخطوات.",
    "ambiguous_step": "هذا الجزء من المعرّف يطابق {count} خطوات: {candidates}. أعطِ أحرفًا أكثر.",
    "invalid_step": "هذا ليس معرّف خطوة: أعطِ {min_prefix} أحرف أو أكثر من معرّفها (0-9 وa-f)، كما يعرضه /replay list.",
    "store_unavailable": "يتعذّر قراءة الخطوات المحفوظة الآن. تحقّق من القرص ومن ملف snapshots.db، ثم حاول مجددًا.",
    "invalid_input": "ما أُرسل غير صالح. راجعه وأعد المحاولة.",
    "approval_closed": "هذه الموافقة أُغلقت من قبل؛ لم يُنفَّذ شيء. أرسل طلبك مجددًا إن كنت لا تزال تريده.",
    "turn_failed": "تعذّر على النموذج أن يجيب. تحقّق من إعدادات النموذج ومن أن خادمه يعمل، ثم أرسل الرسالة مجددًا.",
    "forbidden": (
        "لا يستطيع استعادة هذه الدردشة أو حذف خطواتها إلا مالكها أو مشرفو المجموعة. "
        "يمكنك بدلًا من ذلك تفريع خطوة إلى دردشة خاصة بك."
    ),
    "bad_command": "الأمر غير صحيح. أرسل /help لترى الأوامر.",
    "message_too_long": (
        "هذه الرسالة أطول من الحدّ ({limit} حرفًا، الإعداد limits.max_message_chars). اختصرها أو أرسلها على أجزاء."
    ),
    "quota_exceeded": (
        "امتلأت مساحة التخزين الخاصة بك (الإعداد limits.user_quota_bytes). "
        "احذف دردشات أو ملفات لم تعد تحتاجها، أو اطلب من مالك كازما رفع الحدّ."
    ),
    "too_large": "الطلب أكبر من الحدّ (الإعداد limits.max_body_bytes). أرسل أقل في كل مرة.",
    "other": "تعذّر ذلك ({code}): {message}",
}
# An error's Arabic sentence by the reason it gives (details["reason"]), where one code has several.
ARABIC_BY_REASON: dict[str, str] = {
    "undo_none": "لا استعادة للتراجع عنها في هذه الدردشة. يُتاح التراجع بعد الاستعادة مباشرة، حتى الدورة التالية في الدردشة.",
    "undo_undone": "تم التراجع عن آخر استعادة في هذه الدردشة من قبل. يعرض /replay list الخطوات التي يمكنك استعادتها.",
    "undo_turn": (
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: تقدّمت الدردشة منذ ذلك (دورة جديدة أو إعادة ضبط). "
        "يعرض /replay list الخطوات التي يمكنك استعادتها أو تفريعها."
    ),
    "undo_forgotten": (
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: نُسي ما سحبته "
        "(نُسيت الدردشة، أو حُذفت ذكرى، أو أُوقفت الذاكرة)."
    ),
    "undo_expired": (
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: انتهت مهلة التراجع "
        "(الإعداد time_travel.undo_seconds). يعرض /replay list الخطوات التي يمكنك استعادتها."
    ),
    "other_lineage": "هاتان الدردشتان ليستا من سلالة واحدة: قارن تفريعًا بالدردشة التي جاء منها، أو تفريعين لدردشة واحدة.",
}
GATE_AR = "{tool} (البطاقة {card_id})"
ANY_GATE_AR = "بطاقة موافقة"
