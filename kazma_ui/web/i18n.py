"""Every sentence of the web pages in English and Arabic, and which of the two a person reads.

The templates and the page scripts take their words from here only (the scripts get the
person's half of `STRINGS` in the page), so a sentence is translated in one place. Which
language a browser asks for is read as the chat apps' locales are (commands.i18n.pick_lang).
`{name}` placeholders are filled by `text` on the server and by `Kazma.t` in the browser.
"""

from __future__ import annotations

import re
from typing import Any

from commands.i18n import LANGS, pick_lang

DIRECTION = {"en": "ltr", "ar": "rtl"}

STRINGS: dict[str, tuple[str, str]] = {
    # the frame of every page
    "app_name": ("Kazma", "كاظمه"),
    "nav_chat": ("Chat", "الدردشة"),
    "nav_replay": ("Time Travel", "السفر عبر الزمن"),
    "nav_settings": ("Settings", "الإعدادات"),
    "signed_in_as": ("Signed in as {name}", "مسجّل الدخول باسم {name}"),
    "language": ("Language", "اللغة"),
    "lang_en": ("English", "English"),
    "lang_ar": ("العربية", "العربية"),
    "confirm": ("Confirm", "تأكيد"),
    # operator alerts, shown to the owner on every page until acknowledged
    "alerts_title": ("Operator alert", "تنبيه للمشغّل"),
    "alert_ack": ("Acknowledge", "تم الاطلاع"),
    "cancel": ("Cancel", "إلغاء"),
    # signing in
    "signin_title": ("Sign in to Kazma", "سجّل الدخول إلى كاظمه"),
    "signin_body": (
        "Kazma is running. To sign in, open the one-time link that “kazma serve” printed when it started "
        "(it looks like {example}). The link works once; restart the server for a new one.",
        "كاظمه تعمل. لتسجيل الدخول، افتح الرابط ذا الاستخدام الواحد الذي طبعه «kazma serve» عند بدئه "
        "(يبدو هكذا: {example}). يعمل الرابط مرة واحدة؛ أعد تشغيل الخادم للحصول على رابط جديد.",
    ),
    "signin_api": (
        "Scripts and the terminal UI use an API token instead: kazma users add NAME. The API is described at /docs.",
        "أما السكربتات وواجهة الطرفية فتستخدم رمز API بدلًا من ذلك: kazma users add NAME. الواجهة البرمجية موصوفة في ‎/docs.",
    ),
    "signin_expired": (
        "That sign-in link was already used or has expired. Restart “kazma serve” to print a new one.",
        "رابط الدخول هذا استُخدم من قبل أو انتهت صلاحيته. أعد تشغيل «kazma serve» ليطبع رابطًا جديدًا.",
    ),
    # the chat
    "chat_title": ("Chat", "الدردشة"),
    "chats": ("Your chats", "دردشاتك"),
    "new_chat": ("New chat", "دردشة جديدة"),
    "no_chats": ("No chats yet. Write a message to start one.", "لا دردشات بعد. اكتب رسالة لتبدأ واحدة."),
    "empty_chat": (
        "Say something to Kazma. Every step of its answer is saved, so you can go back to it on the Time Travel page.",
        "قل شيئًا لكاظمه. كل خطوة من إجابتها تُحفظ، فيمكنك الرجوع إليها في صفحة السفر عبر الزمن.",
    ),
    "forked_from": ("forked from {title}, turn {turn} step {step}", "مُفرَّعة من {title}، الدورة {turn} الخطوة {step}"),
    "forked_from_short": ("forked from {title}", "مُفرَّعة من {title}"),
    "deleted_chat": ("a deleted chat", "دردشة محذوفة"),
    "lives_in_chat": ("in {platform}", "في {platform}"),
    "lives_in_thread": ("in a {platform} thread: {name}", "في سلسلة على {platform}: {name}"),
    "lives_in_topic": ("in a {platform} topic: {name}", "في موضوع على {platform}: {name}"),
    "chat_time_travel": ("Time travel in this chat", "السفر عبر الزمن في هذه الدردشة"),
    "message_label": ("Your message", "رسالتك"),
    "message_placeholder": ("Write a message… (/replay opens this chat’s saved steps)", "اكتب رسالة… (‎/replay يفتح الخطوات المحفوظة لهذه الدردشة)"),
    "send": ("Send", "إرسال"),
    "composer_hint": (
        "Enter sends, Shift+Enter starts a new line. /replay or /fork: this chat’s saved steps. /replay clear: delete them.",
        "Enter يرسل، وShift+Enter يبدأ سطرًا جديدًا. ‎/replay أو ‎/fork: الخطوات المحفوظة لهذه الدردشة. ‎/replay clear: حذفها.",
    ),
    "role_user": ("You", "أنت"),
    "role_assistant": ("Kazma", "كاظمه"),
    "role_system": ("Kazma", "كاظمه"),
    "role_error": ("Not answered", "لم تُجب"),
    "role_command": ("Command", "أمر"),
    "role_tool": ("Tool", "أداة"),
    "working": ("Kazma is working…", "كاظمه تعمل…"),
    "working_steps": ("Kazma is working… steps saved: {count} (latest: {label})", "كاظمه تعمل… الخطوات المحفوظة: {count} (آخرها: {label})"),
    "approval_title": ("Kazma asks before it runs {tool}", "تستأذن كاظمه قبل أن تشغّل {tool}"),
    "approval_expires": ("Expires at {time}", "تنتهي صلاحيتها عند {time}"),
    "approve": ("Approve", "موافقة"),
    "deny": ("Deny", "رفض"),
    "approval_sent": ("Sent: {decision}. Kazma goes on…", "أُرسل: {decision}. تتابع كاظمه…"),
    "decision_approve": ("approved", "موافَق عليها"),
    "decision_deny": ("denied", "مرفوضة"),
    "reloaded_restored": (
        "This chat was restored to an earlier step (here or in another tab); it has been reloaded.",
        "استُعيدت هذه الدردشة إلى خطوة سابقة (هنا أو في تبويب آخر)؛ وأُعيد تحميلها.",
    ),
    "reloaded_deleted": ("This chat was deleted.", "حُذفت هذه الدردشة."),
    "reloaded_undone": (
        "The last restore of this chat was undone (here or in another tab); it has been reloaded.",
        "تم التراجع عن آخر استعادة في هذه الدردشة (هنا أو في تبويب آخر)؛ وأُعيد تحميلها.",
    ),
    "undo": ("Undo", "تراجع"),
    "undone": (
        "Undid the restore: the chat is as it was before it, its messages, memories and steps back.",
        "تم التراجع عن الاستعادة: عادت الدردشة كما كانت قبلها، برسائلها وذكرياتها وخطواتها.",
    ),
    "reloaded": ("This chat changed elsewhere; it has been reloaded.", "تغيّرت هذه الدردشة في مكان آخر؛ وأُعيد تحميلها."),
    "confirm_title": ("Are you sure?", "هل أنت متأكد؟"),
    "nothing_done": ("Nothing was changed.", "لم يتغيّر شيء."),
    "command_needs_chat": ("Start a chat first: this command works on the open chat.", "ابدأ دردشة أولًا: هذا الأمر يعمل على الدردشة المفتوحة."),
    # the Time Travel page
    "replay_title": ("Time Travel", "السفر عبر الزمن"),
    "replay_intro": (
        "Every step of a turn is saved. Read a step, restore the chat to it, fork it into a new chat, or compare two steps.",
        "كل خطوة من الدورة تُحفظ. اقرأ خطوة، أو استعد الدردشة إليها، أو فرّعها إلى دردشة جديدة، أو قارن بين خطوتين.",
    ),
    "pick_chat": ("Conversation", "المحادثة"),
    "chat_option": ("{title} ({count} steps)", "{title} ({count} خطوات)"),
    "no_chats_replay": ("You have no chats yet. Start one in the chat, then come back.", "لا دردشات لك بعد. ابدأ واحدة في الدردشة، ثم عُد."),
    "open_chat": ("Open this chat", "افتح هذه الدردشة"),
    "tab_steps": ("Steps", "الخطوات"),
    "tab_compare": ("Compare", "المقارنة"),
    "no_steps": ("No steps saved in this chat yet.", "لا خطوات محفوظة في هذه الدردشة بعد."),
    "steps_count": ("Saved steps: {count}", "الخطوات المحفوظة: {count}"),
    "turn_heading": ("Turn {turn}", "الدورة {turn}"),
    "step_label": ("turn {turn}, step {step}", "الدورة {turn}، الخطوة {step}"),
    "truncated_mark": ("saved cut", "محفوظة مقصوصة"),
    "truncated_reason": (
        "This step was saved cut, because it was larger than the step size limit. It can be read, but not restored or forked.",
        "حُفظت هذه الخطوة مقصوصة لأنها أكبر من حدّ حجم الخطوة. يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها.",
    ),
    "pick_step": ("Open a step to read its messages.", "افتح خطوة لتقرأ رسائلها."),
    "step_meta": ("{time} · model {model} · {count} messages · {size}", "{time} · النموذج {model} · {count} رسائل · {size}"),
    "step_messages": ("Messages", "الرسائل"),
    "restore_here": ("Restore here", "الاستعادة هنا"),
    "fork": ("Fork", "تفريع"),
    "tool_call": ("calls {call}", "تستدعي {call}"),
    "side_effect": ("Changed outside the chat: {what}", "تغيير خارج الدردشة: {what}"),
    "effect_file_written": ("file written: {path}", "ملف كُتب: {path}"),
    "confirm_restore_title": ("Restore this chat to {label}?", "هل تستعيد هذه الدردشة إلى {label}؟"),
    "takes_back": (
        "Later turns taken back: {turns} (their messages and what Kazma remembered of them). Later steps deleted: {steps}.",
        "الدورات اللاحقة التي تُسحب: {turns} (رسائلها وما تذكّرته كاظمه منها). الخطوات اللاحقة التي تُحذف: {steps}.",
    ),
    "not_undone": (
        "Restoring rewinds the conversation, not the world. These stay done:",
        "الاستعادة تُرجع المحادثة، لا العالم. هذه تبقى منجزة:",
    ),
    "no_side_effects": (
        "The agent changed nothing outside the chat after this step.",
        "لم يغيّر الوكيل شيئًا خارج الدردشة بعد هذه الخطوة.",
    ),
    "restore": ("Restore", "استعادة"),
    "restored": (
        "Restored this chat to {label}. Later steps removed: {removed}. The next message continues from there.",
        "استُعيدت هذه الدردشة إلى {label}. الخطوات اللاحقة المحذوفة: {removed}. تستمر الرسالة التالية من هناك.",
    ),
    "confirm_fork_title": ("Fork {label} into a new chat?", "هل تفرّع {label} إلى دردشة جديدة؟"),
    "confirm_fork": (
        "The new chat is yours and starts from this step; the original is not touched. It opens when you confirm.",
        "الدردشة الجديدة لك وتبدأ من هذه الخطوة؛ والأصل لا يُمسّ. تُفتح حين تؤكد.",
    ),
    "compare_intro": ("Pick two steps of this chat to see what differs.", "اختر خطوتين من هذه الدردشة لترى ما يختلف."),
    "compare_a": ("First step", "الخطوة الأولى"),
    "compare_b": ("Second step", "الخطوة الثانية"),
    "compare_b_chat": ("Second step’s chat", "دردشة الخطوة الثانية"),
    "compare_this_chat": ("{title} (this chat)", "{title} (هذه الدردشة)"),
    "compare_run": ("Compare", "قارن"),
    "compare_counts": (
        "Messages: {added} added, {removed} removed, {changed} changed.",
        "الرسائل: {added} مضافة، {removed} محذوفة، {changed} متغيّرة.",
    ),
    "compare_added": ("Added in the second step", "أُضيف في الخطوة الثانية"),
    "compare_removed": ("Only in the first step", "في الخطوة الأولى فقط"),
    "compare_changed": ("Changed", "تغيّر"),
    "compare_position": ("message {position}", "الرسالة {position}"),
    "compare_fields": ("Plan, model and cost", "الخطة والنموذج والتكلفة"),
    "compare_plan": ("Plan", "الخطة"),
    "compare_model": ("Model", "النموذج"),
    "compare_cost": ("Cost change", "تغيّر التكلفة"),
    "compare_same": ("same", "كما هو"),
    "compare_summary": ("Summary", "الملخص"),
    "compare_need_two": ("This chat needs at least two saved steps to compare.", "تحتاج هذه الدردشة إلى خطوتين محفوظتين على الأقل للمقارنة."),
    # Settings
    "settings_title": ("Settings", "الإعدادات"),
    "settings_intro": (
        "Time travel settings. Live ones apply at once; the others are read when the server starts.",
        "إعدادات السفر عبر الزمن. الفورية منها تُطبَّق حالًا؛ والبقية تُقرأ عند بدء الخادم.",
    ),
    "settings_owner_only": ("Only the owner of this Kazma can see and change its settings.", "لا يرى إعدادات كاظمه هذه ويغيّرها إلا مالكها."),
    "setting_name": ("Setting", "الإعداد"),
    "setting_running": ("Running value", "القيمة العاملة"),
    "setting_stored": ("Stored value", "القيمة المخزّنة"),
    "setting_new": ("New value", "قيمة جديدة"),
    "setting_none": ("—", "—"),
    "setting_live": ("applies at once", "يُطبَّق حالًا"),
    "setting_at_start": ("read at start", "يُقرأ عند البدء"),
    "restart_needed": ("restart needed", "تلزم إعادة التشغيل"),
    "save": ("Save", "حفظ"),
    "true": ("on", "مفعّل"),
    "false": ("off", "معطّل"),
    "saved_live": ("Saved {name}: it applies now.", "حُفظ {name}: يُطبَّق الآن."),
    "saved_restart": ("Saved {name}: restart Kazma to apply it.", "حُفظ {name}: أعد تشغيل كاظمه لتطبيقه."),
    "range": ("{min} to {max}", "من {min} إلى {max}"),
    "setting_time_travel.enabled": ("Save steps at all", "حفظ الخطوات من الأصل"),
    "setting_time_travel.max_snapshots": ("Newest steps kept per conversation", "أحدث الخطوات المحفوظة لكل محادثة"),
    "setting_time_travel.max_global_snapshots": ("Newest steps kept in the whole database", "أحدث الخطوات المحفوظة في قاعدة البيانات كلها"),
    "setting_time_travel.max_snapshot_bytes": ("Largest step stored whole (bytes)", "أكبر خطوة تُخزَّن كاملة (بايت)"),
    "setting_time_travel.max_thread_bytes": ("Bytes of steps kept per conversation", "بايتات الخطوات المحفوظة لكل محادثة"),
    "setting_time_travel.max_total_bytes": ("Bytes of steps kept in the whole database", "بايتات الخطوات المحفوظة في قاعدة البيانات كلها"),
    "setting_time_travel.max_per_turn": ("Steps kept per turn: its first and its newest", "الخطوات المحفوظة لكل دورة: أولاها وأحدثها"),
    "setting_time_travel.auto_maintain": ("Run the daily clean-up", "تشغيل التنظيف اليومي"),
    "setting_time_travel.retention_days": ("The clean-up deletes steps older than this (days)", "يحذف التنظيف الخطوات الأقدم من هذا (أيام)"),
    "setting_time_travel.undo_seconds": (
        "How long a restore can be undone, until the chat's next turn at most (seconds)",
        "المدة التي يمكن فيها التراجع عن استعادة، حتى الدورة التالية في الدردشة على الأكثر (ثوانٍ)",
    ),
    "setting_history.checkpoints_per_chat": ("Chat step history kept per chat", "تاريخ خطوات الدردشة المحفوظ لكل دردشة"),
    # refusals: the English sentence is the server's own message; these are the Arabic ones by code
    "error_network": ("Kazma could not be reached. Check that the server runs, then try again.", "تعذّر الوصول إلى كاظمه. تحقّق من أن الخادم يعمل، ثم حاول مجددًا."),
    "error_turn_running": (
        "A turn is running in this chat. Wait for its answer, then try again.",
        "دورة تجري الآن في هذه الدردشة. انتظر إجابتها، ثم حاول مجددًا.",
    ),
    "error_approval_pending": (
        "An approval is waiting in this chat. Approve or deny it (or let it expire), then try again.",
        "موافقة تنتظر في هذه الدردشة. وافق عليها أو ارفضها (أو دعها تنتهي صلاحيتها)، ثم حاول مجددًا.",
    ),
    "error_snapshot_truncated": (
        "This step was saved cut. It can be read, but not restored or forked: pick another step.",
        "حُفظت هذه الخطوة مقصوصة. يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها: اختر خطوة أخرى.",
    ),
    "error_not_found": (
        "That chat or step is not among yours (it may have been deleted). Reload the page.",
        "هذه الدردشة أو الخطوة ليست بين ما لك (ربما حُذفت). أعد تحميل الصفحة.",
    ),
    "error_store_unavailable": (
        "The saved steps cannot be read right now. Check the disk and snapshots.db, then try again.",
        "يتعذّر قراءة الخطوات المحفوظة الآن. تحقّق من القرص ومن ملف snapshots.db، ثم حاول مجددًا.",
    ),
    "error_approval_closed": (
        "This approval was already closed; nothing was done. Send your request again if you still want it.",
        "هذه الموافقة أُغلقت من قبل؛ لم يُنفَّذ شيء. أرسل طلبك مجددًا إن كنت لا تزال تريده.",
    ),
    "error_turn_failed": (
        "The model could not answer. Check the model settings and that its server is up, then send the message again.",
        "تعذّر على النموذج أن يجيب. تحقّق من إعدادات النموذج ومن أن خادمه يعمل، ثم أرسل الرسالة مجددًا.",
    ),
    "error_unauthorized": ("Your sign-in has ended. Open a new sign-in link.", "انتهى تسجيل دخولك. افتح رابط دخول جديدًا."),
    "error_forbidden": ("Only the owner can do that.", "لا يفعل هذا إلا المالك."),
    "error_invalid_input": ("That was not valid. Check it and try again.", "ما أُرسل غير صالح. راجعه وأعد المحاولة."),
    "error_invalid_setting": ("That value is refused: {reason}", "هذه القيمة مرفوضة: {reason}"),
}

_PLACEHOLDER = re.compile(r"{(\w+)}")


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def catalogue(lang: str) -> dict[str, str]:
    """Every string in one language (what a page hands to its scripts)."""
    index = LANGS.index(lang) if lang in LANGS else 0
    return {key: pair[index] for key, pair in STRINGS.items()}


def text(lang: str, key: str, **values: Any) -> str:
    template = STRINGS[key][LANGS.index(lang) if lang in LANGS else 0]
    return template.format(**values) if values else template


def lang_for(stored: str | None, accept_language: str | None, asked: str | None = None) -> str:
    """The page's language: asked in the address (?lang=), else the user's choice, else the browser's."""
    for choice in (asked, stored):
        if choice in LANGS:
            return choice  # type: ignore[return-value]
    return pick_lang(accept_language)
