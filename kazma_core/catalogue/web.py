"""The web pages' sentences (templates and page scripts), English then Arabic.

`{name}` placeholders are filled on the server and by `Kazma.t` in the browser; a key ending
in _zero/_one/_two/_few/_many is a plural form of the key before it (`Kazma.tc`).
"""

from __future__ import annotations

from kazma_core.catalogue.chat_manage import WEB_MANAGE
from kazma_core.catalogue.steps import ROLES

WEB: dict[str, tuple[str, str]] = {
    "reloaded_undone": (
        "The last restore of this chat was undone (here or in another tab); it has been reloaded.",
        "تم التراجع عن آخر استعادة في هذه الدردشة (هنا أو في تبويب آخر)؛ وأُعيد تحميلها.",
    ),
    "undo": ("Undo", "تراجع"),
    "undone": (
        "Undid the restore: the chat is as it was before it, its messages, memories and steps back.",
        "تم التراجع عن الاستعادة: عادت الدردشة كما كانت قبلها، برسائلها وذكرياتها وخطواتها.",
    ),
    "compare_b_chat": ("Second step’s chat", "دردشة الخطوة الثانية"),
    "compare_this_chat": ("{title} (this chat)", "{title} (هذه الدردشة)"),
    "setting_time_travel.undo_seconds": (
        "How long a restore can be undone, until the chat's next turn at most (seconds)",
        "المدة التي يمكن فيها التراجع عن استعادة، حتى الدورة التالية في الدردشة على الأكثر (ثوانٍ)",
    ),
    "sign_out": ("Sign out", "تسجيل الخروج"),
    "lives_in_chat": ("in {platform}", "في {platform}"),
    "lives_in_thread": ("in a {platform} thread: {name}", "في سلسلة على {platform}: {name}"),
    "lives_in_topic": ("in a {platform} topic: {name}", "في موضوع على {platform}: {name}"),
    "setting_limits.user_quota_bytes": (
        "Storage each user may use: conversations, saved steps and files (bytes)",
        "مساحة التخزين المسموحة لكل مستخدم: المحادثات والخطوات المحفوظة والملفات (بايت)",
    ),
    # the frame of every page
    "app_name": ("Kazma", "كازما"),
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
    "signin_title": ("Sign in to Kazma", "سجّل الدخول إلى كازما"),
    "signin_body": (
        "Kazma is running. To sign in, open the one-time link that “kazma serve” printed when it started "
        "(it looks like {example}). The link works once; restart the server for a new one.",
        "كازما تعمل. لتسجيل الدخول، افتح الرابط ذا الاستخدام الواحد الذي طبعه «kazma serve» عند بدئه "
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
        "قل شيئًا لكازما. كل خطوة من إجابتها تُحفظ، فيمكنك الرجوع إليها في صفحة السفر عبر الزمن.",
    ),
    "forked_from": ("forked from {title}, turn {turn} step {step}", "مُفرَّعة من {title}، الدورة {turn} الخطوة {step}"),
    "forked_from_short": ("forked from {title}", "مُفرَّعة من {title}"),
    "deleted_chat": ("a deleted chat", "دردشة محذوفة"),
    "chat_time_travel": ("Time travel in this chat", "السفر عبر الزمن في هذه الدردشة"),
    "message_label": ("Your message", "رسالتك"),
    "message_placeholder": ("Write a message… (/replay opens this chat’s saved steps)", "اكتب رسالة…"),
    "send": ("Send", "إرسال"),
    "stop": ("Stop", "إيقاف"),
    "stopping": ("Stopping at the next step…", "يجري الإيقاف عند الخطوة التالية…"),
    "wait_or_stop": (
        "Kazma is still answering. Wait for the answer, or press Stop; your text stays here.",
        "ما زالت كازما تجيب. انتظر الإجابة، أو اضغط إيقاف؛ ويبقى نصّك هنا.",
    ),
    "composer_hint": (
        "Enter sends, Shift+Enter starts a new line. /replay or /fork: this chat’s saved steps. /replay clear: delete them.",
        "Enter يرسل، وShift+Enter يبدأ سطرًا جديدًا. ‎/replay أو ‎/fork: الخطوات المحفوظة لهذه الدردشة. ‎/replay clear: حذفها.",
    ),
    **{f"role_{role}": names for role, names in ROLES.items()},  # named the same on every surface
    "role_command": ("Command", "أمر"),
    "working": ("Kazma is working…", "كازما تعمل…"),
    "working_steps": ("Kazma is working… steps saved: {count} (latest: {label})", "كازما تعمل… الخطوات المحفوظة: {count} (آخرها: {label})"),
    "approval_title": ("Kazma asks before it runs {tool}", "تستأذن كازما قبل أن تشغّل {tool}"),
    "approval_expires": ("Expires at {time}", "تنتهي صلاحيتها عند {time}"),
    "approve": ("Approve", "موافقة"),
    "deny": ("Deny", "رفض"),
    "approval_sent": ("Sent: {decision}. Kazma goes on…", "أُرسل: {decision}. تتابع كازما…"),
    "decision_approve": ("approved", "موافَق عليها"),
    "decision_deny": ("denied", "مرفوضة"),
    "reloaded_restored": (
        "This chat was restored to an earlier step (here or in another tab); it has been reloaded.",
        "استُعيدت هذه الدردشة إلى خطوة سابقة (هنا أو في تبويب آخر)؛ وأُعيد تحميلها.",
    ),
    "reloaded_deleted": ("This chat was deleted.", "حُذفت هذه الدردشة."),
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
    "chat_option": ("{title} ({count} steps)", "{title} ({count} خطوة)"),
    "chat_option_one": ("{title} (1 step)", "{title} (خطوة واحدة)"),
    "chat_option_two": ("{title} (2 steps)", "{title} (خطوتان)"),
    "chat_option_few": ("{title} ({count} steps)", "{title} ({count} خطوات)"),
    "chat_option_zero": ("{title} (no steps)", "{title} (لا خطوات)"),
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
        "This step was saved cut, because it or an earlier step it shares messages with added more than the step size "
        "limit. It can be read, but not restored or forked.",
        "حُفظت هذه الخطوة مقصوصة لأنها، أو خطوة سابقة تشاركها رسائلها، أضافت أكثر من حدّ حجم الخطوة. "
        "يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها.",
    ),
    "gap_one": (
        "Step {from} not kept: in a long turn every step up to the 20th is kept, then every 10th, and the last.",
        "الخطوة {from} لم تُحفظ: في الدورة الطويلة تُحفظ كل خطوة حتى العشرين، ثم كل عاشرة، والأخيرة.",
    ),
    "gap_many": (
        "Steps {from}–{to} not kept: in a long turn every step up to the 20th is kept, then every 10th, and the last.",
        "الخطوات {from}–{to} لم تُحفظ: في الدورة الطويلة تُحفظ كل خطوة حتى العشرين، ثم كل عاشرة، والأخيرة.",
    ),
    "cut_explained": (
        "Steps marked “saved cut” added more than the step size limit, so their long texts were cut: they can be read, "
        "not restored or forked. Once a large tool result is in a conversation, every later step holds it too. "
        "Restore or fork a step before it, or raise “Largest step stored whole” in Settings for the steps to come.",
        "الخطوات الموسومة «محفوظة مقصوصة» أضافت أكثر من حدّ حجم الخطوة، فقُصّت نصوصها الطويلة: تُقرأ، ولا تُستعاد ولا تُفرَّع. "
        "وحين تدخل نتيجة أداة كبيرة في المحادثة، تحملها كل خطوة بعدها أيضًا. "
        "استعد خطوة قبلها أو فرّعها، أو ارفع «أكبر خطوة تُخزَّن كاملة» في الإعدادات للخطوات القادمة.",
    ),
    "step_gone": (
        "That step is no longer saved: a restore, a clean-up or a newer step removed it. The list is up to date now; pick another step.",
        "لم تعد هذه الخطوة محفوظة: أزالتها استعادة أو تنظيف أو خطوة أحدث. القائمة محدَّثة الآن؛ اختر خطوة أخرى.",
    ),
    "replay_changed_elsewhere": (
        "This chat was restored elsewhere (another tab, the terminal or a chat app); the steps below are up to date.",
        "استُعيدت هذه الدردشة من مكان آخر (تبويب آخر أو الطرفية أو تطبيق دردشة)؛ والخطوات أدناه محدَّثة.",
    ),
    "replay_chat_deleted": (
        "The chat you were looking at was deleted; another one is shown.",
        "حُذفت الدردشة التي كنت تنظر فيها؛ وتظهر أخرى.",
    ),
    "branches": ("Branches", "الفروع"),
    "branches_intro": (
        "This chat, the chats forked from it and theirs. Pick one to see its steps.",
        "هذه الدردشة، والدردشات المفرَّعة منها وما تفرّع منها. اختر واحدة لترى خطواتها.",
    ),
    "branch_from": ("from {label}", "من {label}"),
    "branch_steps": ("{count} steps", "{count} خطوة"),
    "branch_steps_one": ("1 step", "خطوة واحدة"),
    "branch_steps_two": ("2 steps", "خطوتان"),
    "branch_steps_few": ("{count} steps", "{count} خطوات"),
    "branch_steps_zero": ("no steps", "لا خطوات"),
    "pick_step": ("Open a step to read its messages.", "افتح خطوة لتقرأ رسائلها."),
    "step_meta": ("{time} · model {model} · {count} messages · {size}", "{time} · النموذج {model} · {count} رسائل · {size}"),
    "step_messages": ("Messages", "الرسائل"),
    "step_older": (
        "{count} earlier messages: scroll up to read them.", "{count} رسائل أقدم: مرّر إلى الأعلى لقراءتها.",
    ),
    "step_added": ("new in this step", "جديدة في هذه الخطوة"),
    # a step's view opens on what it added; the conversation before it is folded behind one control
    "step_fold_show": ("Show the {count} earlier messages", "اعرض {count} رسالة سابقة"),
    "step_fold_show_one": ("Show the earlier message", "اعرض الرسالة السابقة"),
    "step_fold_show_two": ("Show the 2 earlier messages", "اعرض الرسالتين السابقتين"),
    "step_fold_show_few": ("Show the {count} earlier messages", "اعرض {count} رسائل سابقة"),
    "step_fold_hide": ("Hide the earlier messages", "أخفِ الرسائل السابقة"),
    "step_added_none": ("This step added no messages.", "لم تُضف هذه الخطوة أي رسالة."),
    # a conversation's versions (made by Edit and Regenerate) on the Time Travel page
    "version_pick": ("Version", "النسخة"),
    "version_changed_at": ("changed at turn {turn}", "تغيّرت عند الدورة {turn}"),
    "branches_intro_versions": (
        "The versions of this conversation (made by Edit and Regenerate), the chats forked from them and theirs. "
        "Pick one to see its steps; Compare takes a step of any of them.",
        "نسخ هذه المحادثة (التي صنعها التعديل وإعادة التوليد)، والدردشات المفرَّعة منها وما تفرّع منها. "
        "اختر واحدة لترى خطواتها؛ وتقبل المقارنةُ خطوةً من أيٍّ منها.",
    ),
    "restore_here": ("Restore here", "الاستعادة هنا"),
    "fork": ("Fork", "تفريع"),
    "tool_call": ("calls {call}", "تستدعي {call}"),
    "side_effect": ("Changed outside the chat: {what}", "تغيير خارج الدردشة: {what}"),
    "effect_file_written": ("file written: {path}", "ملف كُتب: {path}"),
    "confirm_restore_title": ("Restore this chat to {label}?", "هل تستعيد هذه الدردشة إلى {label}؟"),
    "takes_back": (
        "Later turns taken back: {turns} (their messages and what Kazma remembered of them). Later steps set aside: {steps}; "
        "Undo, offered once it is done, puts them all back for a while.",
        "الدورات اللاحقة التي تُسحب: {turns} (رسائلها وما تذكّرته كازما منها). الخطوات اللاحقة التي تُنحّى جانبًا: {steps}؛ "
        "ويعيدها كلها التراجعُ المعروض بعد الاستعادة، لبعض الوقت.",
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
    "compare_intro": (
        "Pick two steps to see what differs: the first from this chat, the second from it, from another version of it, "
        "from a fork of it or the chat it was forked from.",
        "اختر خطوتين لترى ما يختلف: الأولى من هذه الدردشة، والثانية منها أو من نسخة أخرى منها أو من تفريع لها "
        "أو من الدردشة التي فُرّعت منها.",
    ),
    "compare_a": ("First step", "الخطوة الأولى"),
    "compare_b": ("Second step", "الخطوة الثانية"),
    "compare_run": ("Compare", "قارن"),
    "compare_counts": (
        "Messages: {added} added, {removed} removed, {changed} changed.",
        "الرسائل: {added} مضافة، {removed} محذوفة، {changed} متغيّرة.",
    ),
    "compare_fields": ("Plan, model and cost", "الخطة والنموذج والتكلفة"),
    "compare_plan": ("Plan", "الخطة"),
    "compare_model": ("Model", "النموذج"),
    "compare_cost": ("Cost change", "تغيّر التكلفة"),
    "compare_same": ("same", "كما هو"),
    "compare_same_one": ("Message {from} is the same in both.", "الرسالة {from} هي نفسها في الخطوتين."),
    "compare_same_many": ("Messages {from}–{to} are the same in both.", "الرسائل {from}–{to} هي نفسها في الخطوتين."),
    "compare_identical": ("The two steps hold the same messages.", "تحمل الخطوتان الرسائل نفسها."),
    "value_none": ("none", "لا شيء"),
    "value_yes": ("yes", "نعم"),
    "value_no": ("no", "لا"),
    "compare_need_two": ("This chat needs at least two saved steps to compare.", "تحتاج هذه الدردشة إلى خطوتين محفوظتين على الأقل للمقارنة."),
    # Settings
    "settings_title": ("Settings", "الإعدادات"),
    "settings_intro": (
        "Time travel settings. Live ones apply at once; the others are read when the server starts.",
        "إعدادات السفر عبر الزمن. الفورية منها تُطبَّق حالًا؛ والبقية تُقرأ عند بدء الخادم.",
    ),
    "settings_owner_only": ("Only the owner of this Kazma can see and change its settings.", "لا يرى إعدادات كازما هذه ويغيّرها إلا مالكها."),
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
    "saved_restart": ("Saved {name}: restart Kazma to apply it.", "حُفظ {name}: أعد تشغيل كازما لتطبيقه."),
    "range": ("{min} to {max}", "من {min} إلى {max}"),
    "setting_refused_range": (
        "Not saved: this setting takes a whole number from {min} to {max}. Enter one in that range and save again.",
        "لم يُحفظ: يأخذ هذا الإعداد عددًا صحيحًا من {min} إلى {max}. أدخل عددًا ضمن ذلك وأعد الحفظ.",
    ),
    "setting_refused_switch": ("Not saved: this setting is on or off. Tick the box or clear it, then save.", "لم يُحفظ: هذا الإعداد إمّا مفعّل أو معطّل. علّم المربع أو أزل العلامة، ثم احفظ."),
    "setting_refused": ("Not saved: that value is not allowed here. Check it and save again.", "لم يُحفظ: هذه القيمة غير مسموحة هنا. راجعها وأعد الحفظ."),
    "setting_time_travel.enabled": ("Save steps at all", "حفظ الخطوات من الأصل"),
    "setting_time_travel.max_snapshots": ("Newest steps kept per conversation", "أحدث الخطوات المحفوظة لكل محادثة"),
    "setting_time_travel.max_global_snapshots": ("Newest steps kept in the whole database", "أحدث الخطوات المحفوظة في قاعدة البيانات كلها"),
    "setting_time_travel.max_snapshot_bytes": (
        "Largest step stored whole: what a step adds, its new messages and own fields, not the messages it shares "
        "with earlier steps; a step adding more is stored cut (bytes)",
        "أكبر خطوة تُخزَّن كاملة: ما تضيفه الخطوة، أي رسائلها الجديدة وحقولها، لا الرسائل التي تشارك فيها خطوات سابقة؛ "
        "والخطوة التي تضيف أكثر تُخزَّن مقصوصة (بايت)",
    ),
    "setting_time_travel.max_thread_bytes": ("Bytes of steps kept per conversation beyond its messages now", "بايتات الخطوات المحفوظة لكل محادثة زيادةً على رسائلها الحالية"),
    "setting_time_travel.max_total_bytes": ("Bytes of steps kept in the whole database beyond the chats' messages now", "بايتات الخطوات المحفوظة في قاعدة البيانات كلها زيادةً على رسائل المحادثات الحالية"),
    "setting_time_travel.max_per_turn": ("Steps kept per turn: its first and its newest", "الخطوات المحفوظة لكل دورة: أولاها وأحدثها"),
    "setting_time_travel.auto_maintain": ("Run the daily clean-up", "تشغيل التنظيف اليومي"),
    "setting_time_travel.retention_days": ("The clean-up deletes steps older than this (days)", "يحذف التنظيف الخطوات الأقدم من هذا (أيام)"),
    "setting_history.checkpoints_per_chat": ("Chat step history kept per chat", "تاريخ خطوات الدردشة المحفوظ لكل دردشة"),
    # refusals the page words itself: the server out of reach, a setting refused without a sentence of its own
    "error_network": ("Kazma could not be reached. Check that the server runs, then try again.", "تعذّر الوصول إلى كازما. تحقّق من أن الخادم يعمل، ثم حاول مجددًا."),
    "error_invalid_setting": ("That value is refused: {reason}", "هذه القيمة مرفوضة: {reason}"),
    # files travel too: the restore dialog's choice of what to restore, and its list of files
    "restore_what": ("What to restore", "ما الذي يُستعاد"),
    "restore_conversation": ("Conversation", "المحادثة"),
    "restore_files": ("Files", "الملفات"),
    "restore_both": ("Both", "كلاهما"),
    "files_would_change": (
        "The chat's tools changed these files after this step; restoring files puts them back as they were then:",
        "غيّرت أدوات الدردشة هذه الملفات بعد هذه الخطوة؛ استعادة الملفات تعيدها كما كانت حينها:",
    ),
    "file_restored": ("goes back to its content at this step", "يعود إلى محتواه في هذه الخطوة"),
    "file_removed": ("is removed (made after this step)", "يُزال (أُنشئ بعد هذه الخطوة)"),
    "file_changed_since": ("changed since by something else", "غيّره شيء آخر منذ ذلك"),
    "file_diff": ("What changes", "ما الذي يتغيّر"),
    "files_changed_title": ("Overwrite files changed by something else?", "هل تكتب فوق ملفات غيّرها شيء آخر؟"),
    "overwrite_files": ("Overwrite them", "اكتب فوقها"),
    "restored_files": ("Files put back: {count}.", "الملفات المُعادة: {count}."),
    # -- the chat's messages as they are drawn: Markdown, streaming, tool activity, approval cards (issue 23) --
    "copy_code": ("Copy", "نسخ"),
    "copied": ("Copied", "نُسخ"),
    "copy_failed": ("Could not copy: select the text instead", "تعذّر النسخ: حدّد النص بدلًا من ذلك"),
    "tool_arguments": ("Asked with", "طُلب بهذه القيم"),
    "tool_result": ("Result", "النتيجة"),
    "tool_result_cut": (
        "The first {shown} of {count} characters; the whole result is in this turn's steps:",
        "أول {shown} من {count} حرفًا؛ النتيجة كاملة في خطوات هذه الدورة:",
    ),
    "answer_stopped": ("stopped here", "توقّفت هنا"),
    "stopped_while_answering": (
        "Stopped while Kazma was answering, as you asked; what it had said stays above. Send a message to go on.",
        "توقّفت كازما أثناء إجابتها كما طلبت؛ ويبقى ما قالته أعلاه. أرسل رسالة للمتابعة.",
    ),
    "approval_write_title": ("Kazma asks to write a file", "تستأذن كازما في كتابة ملف"),
    "approval_write_where": ("It will write {size} to {path} in your files:", "ستكتب {size} في {path} ضمن ملفاتك:"),
    "approval_write_empty": ("It will write an empty file {path} in your files.", "ستكتب ملفًا فارغًا {path} ضمن ملفاتك."),
    # a message's actions in the chat (issue 22: message_actions.js), and its versions
    "msg_copy": ("Copy", "نسخ"),
    "msg_copied": ("Copied", "نُسخ"),
    "msg_edit": ("Edit", "تعديل"),
    "msg_regenerate": ("Regenerate", "إعادة التوليد"),
    "msg_rewind": ("Rewind to here", "الرجوع إلى هنا"),
    "msg_fork": ("Fork from here", "التفريع من هنا"),
    "msg_actions": ("Message actions", "إجراءات الرسالة"),
    "msg_save_edit": ("Send as a new version", "أرسل كنسخة جديدة"),
    "msg_cancel_edit": ("Cancel", "إلغاء"),
    "msg_edit_label": ("Edited message", "الرسالة المعدّلة"),
    "msg_edit_note": (
        "Sending makes a new version of the conversation from here ({new}/{m}); the original stays as version {n}/{m}, "
        "one click away with ‹ ›. Ctrl+Enter sends, Esc cancels.",
        "يصنع الإرسال نسخة جديدة من المحادثة من هنا ({new}/{m})؛ وتبقى الأصلية النسخة {n}/{m}، "
        "على بعد نقرة بـ ‹ ›. يرسل Ctrl+Enter، ويلغي Esc.",
    ),
    "confirm_regenerate_title": ("Regenerate this answer?", "هل تعيد توليد هذه الإجابة؟"),
    "confirm_regenerate": (
        "Kazma answers the same question again in a new version of the conversation ({new}/{m}). The current answer "
        "stays as version {n}/{m}, one click away with ‹ ›; nothing is deleted.",
        "تجيب كازما عن السؤال نفسه من جديد في نسخة جديدة من المحادثة ({new}/{m}). وتبقى الإجابة الحالية النسخة "
        "{n}/{m}، على بعد نقرة بـ ‹ ›؛ ولا يُحذف شيء.",
    ),
    "msg_not_kept": (
        "The saved step of this point is no longer kept: Rewind and Fork are not offered here. Edit or Regenerate still work.",
        "لم تعد الخطوة المحفوظة لهذه النقطة محفوظة: لا يُعرض الرجوع والتفريع هنا. يبقى التعديل وإعادة التوليد متاحين.",
    ),
    "msg_working": ("Making a new version…", "تُصنع نسخة جديدة…"),
    "confirm_rewind_title": ("Rewind this chat to here?", "هل ترجع هذه الدردشة إلى هنا؟"),
    "confirm_rewind_before": (
        "The chat goes back to right before this message.", "ترجع الدردشة إلى ما قبل هذه الرسالة مباشرة.",
    ),
    "confirm_rewind_after": ("The chat goes back to right after this message.", "ترجع الدردشة إلى ما بعد هذه الرسالة مباشرة."),
    "confirm_fork_here_title": ("Fork a new chat from here?", "هل تفرّع دردشة جديدة من هنا؟"),
    "confirm_fork_empty": (
        "The new chat is yours and starts empty, before the first message; the original is not touched. It opens when you confirm.",
        "الدردشة الجديدة لك وتبدأ فارغة، قبل الرسالة الأولى؛ والأصل لا يُمسّ. تُفتح حين تؤكد.",
    ),
    "rewound": (
        "Rewound this chat. Later steps removed: {removed}. The next message continues from there.",
        "رجعت هذه الدردشة. الخطوات اللاحقة المحذوفة: {removed}. تستمر الرسالة التالية من هناك.",
    ),
    "versions_switch": ("Version {n} of {m}", "النسخة {n} من {m}"),
    "versions_prev": ("Previous version", "النسخة السابقة"),
    "versions_next": ("Next version", "النسخة التالية"),
    # chat management (issue 23): its own module
    **WEB_MANAGE,
}
