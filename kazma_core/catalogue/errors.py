"""Every refusal's sentence, by its id (`KazmaError.message_id`), filled from the error's parameters.

An error is raised with an id and its parameters (`NotFound(message_id="step_not_found",
address=given)`); its English `message` and every surface's wording in the person's
language are this entry filled with them. A parameter that is a list reads as `LISTS` says.
"""

from __future__ import annotations

from kazma_core.catalogue.text import Text

_PENDING_AR = "موافقة تنتظر في هذه الدردشة. وافق عليها أو ارفضها (أو دعها تنتهي صلاحيتها)، ثم حاول مجددًا."
_STEP_GONE_AR = "لا توجد خطوة محفوظة بهذا المعرّف في هذه الدردشة (ربما حُذفت). يعرض /replay list الخطوات."
_TURN_RUNNING_AR = "دورة تجري الآن في هذه الدردشة. انتظر إجابتها (أو أوقفها)، ثم حاول مجددًا."
_NOT_A_STEP_AR = (
    "هذا ليس معرّف خطوة ('{address}'): أعطِ {min_length} أحرف أو أكثر من معرّفها (0-9 وa-f)، كما يعرضه /replay list."
)

ERRORS: dict[str, Text] = {
    "chat_not_yours": Text(
        "There is no such chat among yours. Check the chat id, or list your chats.",
        "لا توجد دردشة كهذه بين دردشاتك. تحقّق من معرّف الدردشة، أو اعرض دردشاتك.",
    ),
    "chat_missing": Text(
        "There is no such chat. Check the chat id, or list your chats.",
        "لا توجد دردشة كهذه. تحقّق من معرّف الدردشة، أو اعرض دردشاتك.",
    ),
    "chat_missing_start": Text(
        "There is no such chat. List your chats, or start a new one.",
        "لا توجد دردشة كهذه. اعرض دردشاتك، أو ابدأ واحدة جديدة.",
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
    # a chat's turn and its approvals
    "turn_running": Text("A turn is running in this chat. Wait for its answer (or stop it), then try again.", _TURN_RUNNING_AR),
    "turn_running_preview": Text("A turn is running in this chat. Wait for its answer, then try again.", _TURN_RUNNING_AR),
    "approval_pending": Text(
        "An approval is waiting in this chat. Approve or deny it (or let it expire), then try again.", _PENDING_AR
    ),
    "approval_pending_reset": Text(
        "An approval is waiting in this chat. Approve or deny it (or let it expire), then reset again.", _PENDING_AR
    ),
    "approval_pending_send": Text(
        "An approval is waiting in this chat. Approve or deny it (or let it expire), then send again.", _PENDING_AR
    ),
    "approval_missing": Text(
        "There is no such approval in this chat. List the chat's approvals to see its cards.",
        "لا توجد موافقة كهذه في هذه الدردشة. اعرض موافقات الدردشة لترى بطاقاتها.",
    ),
    "approval_closed": Text(
        "This approval is already {status}; nothing was done. Send your request again if you still want it.",
        "هذه الموافقة أُغلقت من قبل ({status})؛ لم يُنفَّذ شيء. أرسل طلبك مجددًا إن كنت لا تزال تريده.",
    ),
    "bad_decision": Text('The decision must be "approve" or "deny".', "يجب أن يكون القرار approve أو deny."),
    "empty_message": Text("A message needs some text. Type it, then send.", "تحتاج الرسالة إلى نص. اكتبه، ثم أرسله."),
    "turn_failed": Text(
        "The model could not answer ({cause}). Check the model settings and that its server is up, then send the message again.",
        "تعذّر على النموذج أن يجيب ({cause}). تحقّق من إعدادات النموذج ومن أن خادمه يعمل، ثم أرسل الرسالة مجددًا.",
    ),
    "steps_unreadable": Text(
        "The saved steps cannot be read right now ({cause}). Check the disk and {store}, then try again.",
        "يتعذّر قراءة الخطوات المحفوظة الآن ({cause}). تحقّق من القرص ومن {store}، ثم حاول مجددًا.",
    ),
    "lease_lost": Text(
        "Another Kazma server took this chat over while this turn ran (this server lost its hold on it). "
        "Nothing more of the turn was saved: send the message again.",
        "تولّى خادم آخر لكازما هذه الدردشة أثناء هذه الدورة، فلم يُحفظ منها شيء بعد ذلك. أرسل الرسالة مجددًا.",
    ),
    # chats and their memories
    "title_too_long": Text("A chat title has at most {max} characters.", "لعنوان الدردشة {max} حرفًا على الأكثر."),
    "title_empty": Text("A chat title needs some words. Type a title, or keep the one it has.", "يحتاج عنوان الدردشة إلى كلمات. اكتب عنوانًا، أو أبقِ العنوان الذي لها."),
    "memory_missing": Text(
        "There is no such memory in this chat. List the chat's memories to see them.",
        "لا توجد ذكرى كهذه في هذه الدردشة. اعرض ذكريات الدردشة لتراها.",
    ),
    # limits
    "message_too_long": Text(
        "This message has {length} characters; the limit is {limit} (setting limits.max_message_chars). "
        "Shorten it or send it in parts.",
        "هذه الرسالة ({length} حرفًا) أطول من الحدّ ({limit} حرفًا، الإعداد limits.max_message_chars). "
        "اختصرها أو أرسلها على أجزاء.",
    ),
    "quota_exceeded": Text(
        "Your storage is full: {used_kb} KB used of {quota_kb} KB (setting limits.user_quota_bytes). Delete chats "
        "or files you no longer need, or ask the owner of this Kazma to raise the limit.",
        "امتلأت مساحة التخزين الخاصة بك: {used_kb} ك.ب مستخدمة من {quota_kb} ك.ب (الإعداد limits.user_quota_bytes). "
        "احذف دردشات أو ملفات لم تعد تحتاجها، أو اطلب من مالك كازما رفع الحدّ.",
    ),
    # naming a step
    "not_a_step": Text(
        "'{address}' is not a step id. Use the id shown by /replay list ({min_length} or more of its characters).",
        _NOT_A_STEP_AR,
    ),
    "step_too_short": Text("'{address}' is too short: give at least {min_length} characters of the step id.", _NOT_A_STEP_AR),
    "step_not_found": Text(
        "No saved step of this chat starts with {address}. /replay list shows the steps.",
        "لا توجد خطوة محفوظة بالمعرّف {address} في هذه الدردشة (ربما حُذفت). يعرض /replay list الخطوات.",
    ),
    # a step of a fork's source named inside the fork (issue 23)
    "step_in_source": Text(
        "{address} is a step of the chat this one was forked from, not of this one. To compare with it, "
        "give it as {chat}:{address}; to restore or fork it, open that chat.",
        "الخطوة {address} من الدردشة التي فُرّعت منها هذه، لا من هذه. لتقارن بها، "
        "اكتبها هكذا {chat}:{address}؛ ولتستعيدها أو تفرّعها، افتح تلك الدردشة.",
    ),
    "ambiguous_step": Text(
        "{address} matches {count} steps: {matches}. Give more characters.",
        "هذا الجزء من المعرّف ({address}) يطابق {count} خطوات: {matches}. أعطِ أحرفًا أكثر.",
    ),
    "step_deleted": Text("That step was deleted meanwhile. /replay list shows the steps.", _STEP_GONE_AR),
    "steps_deleted": Text("One of the two steps was deleted meanwhile. /replay list shows the steps.", _STEP_GONE_AR),
    # the rewind service's refusals
    "snapshot_truncated": Text(
        "turn {turn}, step {step} was saved cut, because it (or an earlier step it shares messages with) added more "
        "than the step size limit. It can be read, but not restored or forked: pick another step.",
        "حُفظت الدورة {turn}، الخطوة {step} مقصوصة لأنها (أو خطوة سابقة تشاركها رسائلها) أضافت أكثر من حدّ حجم الخطوة. "
        "يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها: اختر خطوة أخرى.",
    ),
    "group_admins_only": Text(
        "Only this chat's owner or the group's admins can restore or clear it. "
        "You can fork a step into a chat of your own instead.",
        "لا يستطيع استعادة هذه الدردشة أو حذف خطواتها إلا مالكها أو مشرفو المجموعة. "
        "يمكنك بدلًا من ذلك تفريع خطوة إلى دردشة خاصة بك.",
    ),
    "other_lineage": Text(
        "Those two chats are not of one lineage: compare a fork with the chat it came from, or two forks of one chat.",
        "هاتان الدردشتان ليستا من سلالة واحدة: قارن تفريعًا بالدردشة التي جاء منها، أو تفريعين لدردشة واحدة.",
    ),
    # why there is nothing to undo, by the state of the chat's last restore
    "undo_none": Text(
        "This chat has no restore to undo. An undo is offered right after a restore, until the chat's next turn.",
        "لا استعادة للتراجع عنها في هذه الدردشة. يُتاح التراجع بعد الاستعادة مباشرة، حتى الدورة التالية في الدردشة.",
    ),
    "undo_undone": Text(
        "The last restore of this chat was undone already. /replay list shows the steps you can restore.",
        "تم التراجع عن آخر استعادة في هذه الدردشة من قبل. يعرض /replay list الخطوات التي يمكنك استعادتها.",
    ),
    "undo_turn": Text(
        "The last restore of this chat can no longer be undone: the chat moved on since (a new turn or a reset). "
        "/replay list shows the steps you can restore or fork.",
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: تقدّمت الدردشة منذ ذلك (دورة جديدة أو إعادة ضبط). "
        "يعرض /replay list الخطوات التي يمكنك استعادتها أو تفريعها.",
    ),
    "undo_forgotten": Text(
        "The last restore of this chat can no longer be undone: what it took back was forgotten "
        "(the chat was forgotten, a memory deleted, or memory turned off).",
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: نُسي ما سحبته "
        "(نُسيت الدردشة، أو حُذفت ذكرى، أو أُوقفت الذاكرة).",
    ),
    "undo_expired": Text(
        "The last restore of this chat can no longer be undone: its time to undo ran out "
        "(setting time_travel.undo_seconds). /replay list shows the steps you can restore.",
        "لم يعد ممكنًا التراجع عن آخر استعادة في هذه الدردشة: انتهت مهلة التراجع "
        "(الإعداد time_travel.undo_seconds). يعرض /replay list الخطوات التي يمكنك استعادتها.",
    ),
    # signing in, and who may see what
    "token_invalid": Text(
        "That token is not valid (it may have been replaced or revoked). Ask the owner for a new one: kazma users token NAME",
        "هذا الرمز غير صالح (ربما استُبدل أو أُلغي). اطلب من المالك رمزًا جديدًا: kazma users token NAME",
    ),
    "csrf_missing": Text(
        "This request lacks its CSRF token. Reload the page and try again.",
        "ينقص هذا الطلبَ رمزُ CSRF الخاص به. أعد تحميل الصفحة وحاول مجددًا.",
    ),
    "csrf_missing_sign_out": Text(
        "This request lacks its CSRF token. Reload the page and sign out again.",
        "ينقص هذا الطلبَ رمزُ CSRF الخاص به. أعد تحميل الصفحة وسجّل الخروج مجددًا.",
    ),
    "sign_in_first": Text(
        "Sign in first: open the login link that kazma serve printed, or send Authorization: Bearer <token>.",
        "سجّل الدخول أولًا: افتح رابط الدخول الذي طبعه kazma serve، أو أرسل Authorization: Bearer <token>.",
    ),
    "owner_only": Text(
        "Only the owner of this Kazma can see or change this. Sign in as the owner.",
        "لا يرى هذا أو يغيّره إلا مالك كازما هذه. سجّل الدخول بصفتك المالك.",
    ),
    "not_a_command": Text(
        "That is not a slash command: send it as a message instead.",
        "هذا ليس أمرًا بشرطة مائلة: أرسله رسالةً بدلًا من ذلك.",
    ),
    "alert_missing": Text(
        "There is no such alert. GET /api/alerts lists them.",
        "لا يوجد تنبيه كهذا. يعرضها GET /api/alerts.",
    ),
    "setting_missing": Text(
        "There is no setting {name} on this page. The ones here: {editable}.",
        "لا يوجد إعداد {name} في هذه الصفحة. الموجود هنا: {editable}.",
    ),
    # the terminal's server, as it reaches it
    "server_unreachable": Text(
        "Cannot reach the Kazma server at {url} ({kind}). Is it running?",
        "يتعذّر الوصول إلى خادم كازما على {url} ({kind}). هل يعمل؟",
    ),
    "stream_closed": Text("The server at {url} closed the chat stream.", "أغلق الخادم على {url} بثّ الدردشة."),
    "no_explanation": Text(
        "The server answered {answered} without an explanation. Check that the URL is Kazma's.",
        "أجاب الخادم بـ {answered} دون تفسير. تحقّق من أن العنوان عنوان كازما.",
    ),
    "not_event_stream": Text(
        "The server did not answer with an event stream ({cause}). Check that the URL is Kazma's.",
        "لم يُجب الخادم ببثّ أحداث ({cause}). تحقّق من أن العنوان عنوان كازما.",
    ),
    # a slash command that is not right, by the reason the parser gives
    "bad_command.unknown_command": Text(
        "/{word} is not a command here. Send /help to see the commands.",
        "/{word} ليس أمرًا هنا. أرسل /help لترى الأوامر.",
    ),
    "bad_command.missing_subcommand": Text(
        "/{command} needs one more word. Use: {usage}.", "ينقص الأمرَ /{command} كلمة. استخدم: {usage}."
    ),
    "bad_command.unknown_subcommand": Text(
        "/{command} {word} is not a command. Use: {usage}.", "/{command} {word} ليس أمرًا. استخدم: {usage}."
    ),
    "bad_command.missing_argument": Text("Missing {missing}. Use: {usage}.", "ينقص الأمرَ {missing}. استخدم: {usage}."),
    "bad_command.extra_argument": Text(
        "Too many words for this command. Use: {usage}.", "كلمات زائدة بعد الأمر. استخدم: {usage}."
    ),
    "bad_command.too_long": Text(
        "That is too long for a step id. Use: {usage}, with an id shown by /replay list.",
        "هذا أطول من أن يكون معرّف خطوة. استخدم: {usage}، مع معرّف يعرضه /replay list.",
    ),
    "bad_command.bad_choice": Text(
        "“{word}” is not a word this command takes. Use: {usage}.", "«{word}» ليست كلمة يأخذها هذا الأمر. استخدم: {usage}."
    ),
    # rewind from a message, and versions made by an edit or a regenerate (issue 22)
    "message_not_found": Text(
        "This chat has no such message. Reload the chat to see its messages.",
        "لا توجد رسالة كهذه في هذه الدردشة. أعد تحميل الدردشة لترى رسائلها.",
    ),
    "message_step_gone": Text(
        "The saved step of that point (turn {turn}) is no longer kept: only the newest steps are. "
        "Edit or regenerate a message there to start a version from its messages instead.",
        "لم تعد الخطوة المحفوظة لتلك النقطة (الدورة {turn}) محفوظة: تُحفظ أحدث الخطوات فقط. "
        "عدّل رسالة هناك أو أعد توليدها لتبدأ نسخة من رسائلها بدلًا من ذلك.",
    ),
    "step_or_message": Text(
        "Give either snapshot_id (a step) or message_id (a message of the chat), not both.",
        "أعطِ إمّا snapshot_id (خطوة) أو message_id (رسالة من الدردشة)، لا كليهما.",
    ),
    # -- chat apps: acting on a message of the chat (h22apps) --
    "message_step_gone_here": Text(
        "The saved step of that message (turn {turn}) is no longer kept: only the newest steps are. "
        "Pick a later message, or see the steps still kept with /replay list.",
        "لم تعد الخطوة المحفوظة لتلك الرسالة (الدورة {turn}) محفوظة: تُحفظ أحدث الخطوات فقط. "
        "اختر رسالة لاحقة، أو اعرض الخطوات المحفوظة بـ ‎/replay list‎.",
    ),
    "message_first": Text(
        "That is the chat's first message: there is no saved step before it. Start a new chat instead, or pick a later message.",
        "تلك أول رسالة في الدردشة: لا خطوة محفوظة قبلها. ابدأ دردشة جديدة بدلًا من ذلك، أو اختر رسالة لاحقة.",
    ),
    "nothing_before_first": Text(
        "There is nothing before the first message to go back to. Fork from it for an empty chat, or start a new chat.",
        "لا شيء قبل الرسالة الأولى للرجوع إليه. فرّع منها لدردشة فارغة، أو ابدأ دردشة جديدة.",
    ),
    "edit_person_only": Text(
        "Only your own messages can be edited. To ask for another answer, regenerate it.",
        "تُعدَّل رسائلك أنت فقط. لتطلب إجابة أخرى، أعد توليدها.",
    ),
    "regenerate_answer_only": Text(
        "Only an answer can be regenerated. To change your message, edit it.",
        "تُعاد توليد الإجابات فقط. لتغيّر رسالتك، عدّلها.",
    ),
    "no_question": Text(
        "That answer has no question of yours to ask again. Send a new message instead.",
        "ليس لهذه الإجابة سؤال منك يُطرح مجددًا. أرسل رسالة جديدة بدلًا من ذلك.",
    ),
    # files travel too: a restore or a fork that puts a step's files back in a person's folder
    "files_changed": Text(
        "Something other than this chat changed {files} since its tools last wrote them, so nothing was restored. "
        "Look at the files first; to overwrite them with the step's version, restore again with force.",
        "غيّر شيءٌ غيرُ هذه الدردشة {files} منذ كتبتها أدواتها آخر مرة، فلم يُستعَد شيء. "
        "انظر في الملفات أولًا؛ ولتكتب فوقها نسخة الخطوة، استعد مجددًا مع الفرض (force).",
    ),
    "files_changed_undo": Text(
        "Something other than this chat changed {files} since the restore, so nothing was undone. "
        "Look at the files first; to put back what they held before the restore, undo again with force.",
        "غيّر شيءٌ غيرُ هذه الدردشة {files} منذ الاستعادة، فلم يُتراجَع عن شيء. "
        "انظر في الملفات أولًا؛ ولتعيد ما كانت عليه قبل الاستعادة، تراجع مجددًا مع الفرض (force).",
    ),
    "bad_what": Text(
        'A restore takes "conversation", "files" or "both", not "{what}".',
        'تأخذ الاستعادة "conversation" أو "files" أو "both"، لا "{what}".',
    ),
    "files_owner_only": Text(
        "Only the owner of this chat can restore its files (they are in the owner's folder). "
        "Restore the conversation only, or fork the chat with its files into yours.",
        "لا يستعيد ملفات هذه الدردشة إلا مالكها (فهي في مجلد المالك). "
        "استعد المحادثة وحدها، أو انسخ الدردشة مع ملفاتها إلى مجلدك.",
    ),
    # an error that names no sentence of its own (a server answering without one): its code and message
    "other": Text("That failed ({code}): {message}", "تعذّر ذلك ({code}): {message}"),
}

# How a parameter that is a list reads inside a sentence: each item (a dict's fields, or a
# word as {value}) filled into the first Text, the items joined by the second.
LISTS: dict[str, tuple[Text, Text]] = {
    "matches": (Text("turn {turn}, step {step} ({id})", "الدورة {turn}، الخطوة {step} ({id})"), Text("; ", "؛ ")),
    "usage": (Text("{value}", "{value}"), Text(" | ", " | ")),
    "missing": (Text("<{value}>", "<{value}>"), Text(" ", " ")),
    "files": (Text("{value}", "{value}"), Text(", ", "، ")),
}
