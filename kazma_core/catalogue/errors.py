"""Every refusal's sentence, by its id (`KazmaError.message_id`), filled from the error's parameters.

An error is raised with an id and its parameters (`NotFound(message_id="step_not_found",
address=given)`); its English `message` and every surface's wording in the person's
language are this entry filled with them. A parameter that is a list reads as `LISTS` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
        "That is the chat's first message: before it the chat was empty, so there is no step to show. "
        "Pick a later message, or fork from this one for an empty chat.",
        "تلك أول رسالة في الدردشة: كانت الدردشة قبلها فارغة، فلا خطوة لعرضها. اختر رسالة لاحقة، أو فرّع منها لدردشة فارغة.",
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
    # -- the web server's own refusals (h25): a route or method it lacks, a body it cannot read,
    # -- a body over the limit, a field FastAPI's validation refuses (by pydantic's error type), a fault
    "route_missing": Text(
        "There is no such route. The API is described at /docs.", "لا يوجد مسار كهذا. الواجهة البرمجية موصوفة في /docs."
    ),
    "method_not_allowed": Text(
        "This route does not take that method. The API is described at /docs.",
        "لا يأخذ هذا المسار تلك الطريقة. الواجهة البرمجية موصوفة في /docs.",
    ),
    "body_unreadable": Text(
        "The request body could not be read. Send a JSON object.", "تعذّرت قراءة جسم الطلب. أرسل كائن JSON."
    ),
    "body_not_json": Text(
        "The request body is not valid JSON. Send a JSON object.", "جسم الطلب ليس JSON صالحًا. أرسل كائن JSON."
    ),
    "length_not_a_number": Text(
        "The Content-Length header is not a number. Send a valid request.",
        "ترويسة Content-Length ليست رقمًا. أرسل طلبًا صالحًا.",
    ),
    "body_too_large": Text(
        "A request body may have at most {limit} bytes (setting {setting}); this one has {size} bytes. Send less at a time.",
        "لجسم الطلب {limit} بايت على الأكثر (الإعداد {setting})؛ وفي هذا {size} بايت. أرسل أقل في كل مرة.",
    ),
    "body_too_large_streamed": Text(
        "A request body may have at most {limit} bytes (setting {setting}); this one is larger than that. Send less at a time.",
        "لجسم الطلب {limit} بايت على الأكثر (الإعداد {setting})؛ وهذا أكبر من ذلك. أرسل أقل في كل مرة.",
    ),
    "field_missing": Text("{field}: it is missing. Add it and send again.", "{field}: هذا الحقل ناقص. أضفه وأرسل مجددًا."),
    "field_unknown": Text(
        "{field}: this request takes no such field. Leave it out and send again.",
        "{field}: لا يأخذ هذا الطلب حقلًا كهذا. احذفه وأرسل مجددًا.",
    ),
    "field_not_text": Text("{field}: it must be text. Fix it and send again.", "{field}: يجب أن يكون نصًا. صحّحه وأرسل مجددًا."),
    "field_not_integer": Text(
        "{field}: it must be a whole number. Fix it and send again.", "{field}: يجب أن يكون عددًا صحيحًا. صحّحه وأرسل مجددًا."
    ),
    "field_not_number": Text("{field}: it must be a number. Fix it and send again.", "{field}: يجب أن يكون رقمًا. صحّحه وأرسل مجددًا."),
    "field_not_bool": Text(
        "{field}: it must be true or false. Fix it and send again.", "{field}: يجب أن يكون true أو false. صحّحه وأرسل مجددًا."
    ),
    "field_not_object": Text(
        "{field}: it must be a JSON object. Fix it and send again.", "{field}: يجب أن يكون كائن JSON. صحّحه وأرسل مجددًا."
    ),
    "field_not_list": Text("{field}: it must be a list. Fix it and send again.", "{field}: يجب أن يكون قائمة. صحّحه وأرسل مجددًا."),
    "field_too_short": Text(
        "{field}: it needs at least {min_length} characters. Fix it and send again.",
        "{field}: يحتاج إلى {min_length} حرفًا على الأقل. صحّحه وأرسل مجددًا.",
    ),
    "field_too_long": Text(
        "{field}: it may have at most {max_length} characters. Fix it and send again.",
        "{field}: له {max_length} حرفًا على الأكثر. صحّحه وأرسل مجددًا.",
    ),
    "field_too_small": Text(
        "{field}: it must be at least {least}. Fix it and send again.", "{field}: يجب ألا يقل عن {least}. صحّحه وأرسل مجددًا."
    ),
    "field_too_big": Text(
        "{field}: it must be at most {most}. Fix it and send again.", "{field}: يجب ألا يزيد على {most}. صحّحه وأرسل مجددًا."
    ),
    "field_not_above": Text(
        "{field}: it must be more than {least}. Fix it and send again.", "{field}: يجب أن يزيد على {least}. صحّحه وأرسل مجددًا."
    ),
    "field_not_below": Text(
        "{field}: it must be less than {most}. Fix it and send again.", "{field}: يجب أن يقل عن {most}. صحّحه وأرسل مجددًا."
    ),
    "field_not_a_choice": Text(
        "{field}: it must be one of {choices}. Fix it and send again.", "{field}: يجب أن يكون واحدًا من {choices}. صحّحه وأرسل مجددًا."
    ),
    "field_invalid": Text("{field}: it is not valid. Fix it and send again.", "{field}: قيمته غير صالحة. صحّحه وأرسل مجددًا."),
    "internal_error": Text(
        "Something went wrong on the server; it is logged. Try again, and tell the owner of this Kazma if it keeps happening.",
        "حدث خطأ في الخادم وسُجّل. حاول مجددًا، وأخبر مالك كازما هذه إن تكرّر.",
    ),
    "no_chat_app_here": Text(
        "No chat app on this server takes requests here.", "لا يستقبل أي تطبيق دردشة على هذا الخادم طلبات هنا."
    ),
    # -- end of the web server's own refusals (h25)
    # an error that names no sentence of its own (a server answering without one): its code and message
    "other": Text("That failed ({code}): {message}", "تعذّر ذلك ({code}): {message}"),
}

# -- the command line's refusals (h25): users, the terminal's token, backups and migration bundles.
# An archive's sentences say which kind it is ("The backup PATH", "The bundle PATH"): one entry per
# kind (`backup_...`, `bundle_...`), each written from the shared sentences below.
_ARCHIVE_NOUNS = {"backup": ("The backup {path}", "النسخة الاحتياطية {path}"), "bundle": ("The bundle {path}", "حزمة النقل {path}")}
_ARCHIVE_SENTENCES = {
    "manifest_unreadable": (
        "{where} is damaged: its manifest cannot be read. Nothing was changed.", "{where} تالفة: تتعذّر قراءة بيانها. لم يتغيّر شيء."
    ),
    "wrong_kind": (
        "{where} is not a {expected} (its manifest says {said}). Nothing was changed.",
        "{where} ليست من نوع {expected} (يقول بيانها {said}). لم يتغيّر شيء.",
    ),
    "bad_version": (
        "{where} is damaged: its format version {version} is not valid. Nothing was changed.",
        "{where} تالفة: رقم صيغتها {version} غير صالح. لم يتغيّر شيء.",
    ),
    "too_new": (
        "{where} was written by a newer Kazma ({theirs}, format {version}); this Kazma ({ours}) reads format {readable} "
        "or older. Upgrade Kazma, then try again. Nothing was changed.",
        "{where} كتبتها كازما أحدث ({theirs}، الصيغة {version})؛ وكازما هذه ({ours}) تقرأ الصيغة {readable} أو أقدم. "
        "حدّث كازما، ثم حاول مجددًا. لم يتغيّر شيء.",
    ),
    "manifest_incomplete": (
        "{where} is damaged: its manifest lacks a field. Nothing was changed.", "{where} تالفة: ينقص بيانَها حقل. لم يتغيّر شيء."
    ),
    "unsound_database": (
        "{where} is damaged: {name} is not a sound SQLite database ({result}). Nothing was changed.",
        "{where} تالفة: {name} ليست قاعدة بيانات SQLite سليمة ({result}). لم يتغيّر شيء.",
    ),
}
_ONE_ARCHIVE = {
    "backup_no_manifest": (
        "{where} has no {manifest}: it is not a Kazma backup folder, or it is incomplete.",
        "ليس في {where} ملف {manifest}: ليست مجلد نسخة احتياطية لكازما، أو أنها ناقصة.",
    ),
    "backup_member_missing": (
        "{where} is damaged: {name} is missing. Nothing was restored; use another backup.",
        "{where} تالفة: {name} مفقود. لم يُستعَد شيء؛ استخدم نسخة احتياطية أخرى.",
    ),
    "backup_checksum": (
        "{where} is damaged: {name} does not match the checksum in its manifest. Nothing was restored; use another backup.",
        "{where} تالفة: لا يطابق {name} البصمة المذكورة في بيانها. لم يُستعَد شيء؛ استخدم نسخة احتياطية أخرى.",
    ),
    "bundle_no_manifest": (
        "{where} has no {manifest}: it is not a Kazma migration bundle. Nothing was imported.",
        "ليس في {where} ملف {manifest}: ليست حزمة نقل لكازما. لم يُستورَد شيء.",
    ),
    "bundle_member_missing": (
        "{where} is damaged: {name} is missing. Nothing was imported; export it again.",
        "{where} تالفة: {name} مفقود. لم يُستورَد شيء؛ صدّرها مجددًا.",
    ),
    "bundle_checksum": (
        "{where} is damaged: {name} does not match the checksum in its manifest. Nothing was imported; export it again.",
        "{where} تالفة: لا يطابق {name} البصمة المذكورة في بيانها. لم يُستورَد شيء؛ صدّرها مجددًا.",
    ),
    "bundle_unreadable": (
        "{where} is damaged ({problem}). Nothing was imported; export it again.",
        "{where} تالفة ({problem}). لم يُستورَد شيء؛ صدّرها مجددًا.",
    ),
    "bundle_settings_unreadable": (
        "{where} is damaged: {name} cannot be read. Nothing was imported.", "{where} تالفة: تتعذّر قراءة {name}. لم يُستورَد شيء."
    ),
    "bundle_settings_not_object": (
        "{where} is damaged: {name} is not an object. Nothing was imported.", "{where} تالفة: {name} ليس كائنًا. لم يُستورَد شيء."
    ),
}
ERRORS.update({
    **{
        f"{kind}_{key}": Text(en.replace("{where}", noun[0]), ar.replace("{where}", noun[1]))
        for kind, noun in _ARCHIVE_NOUNS.items() for key, (en, ar) in _ARCHIVE_SENTENCES.items()
    },
    **{
        key: Text(en.replace("{where}", _ARCHIVE_NOUNS[key.split("_")[0]][0]), ar.replace("{where}", _ARCHIVE_NOUNS[key.split("_")[0]][1]))
        for key, (en, ar) in _ONE_ARCHIVE.items()
    },
    "bundle_member_not_file": Text(
        "{name} in the bundle is not a file. Nothing was imported.", "{name} في الحزمة ليس ملفًا. لم يُستورَد شيء."
    ),
    "bundle_file_missing": Text(
        "There is no file {file}. Give the path of a bundle written by `kazma migrate export`.",
        "لا يوجد ملف {file}. أعطِ مسار حزمة كتبها `kazma migrate export`.",
    ),
    "backup_copy_changed": Text(
        "Copying {name} out of {path} changed it (a disk error?). Nothing was restored.",
        "غيّر نسخُ {name} من {path} محتواه (خطأ في القرص؟). لم يُستعَد شيء.",
    ),
    "lease_live": Text(
        "A {purpose} is still running in chat {chat} (held by {holder}). Let it finish, or wait {seconds} s for its lease "
        "to expire, then try again. Nothing was changed.",
        "ما زالت عملية {purpose} تجري في الدردشة {chat} (يمسكها {holder}). دعها تنتهي، أو انتظر {seconds} ث حتى تنتهي مهلتها، "
        "ثم حاول مجددًا. لم يتغيّر شيء.",
    ),
    "import_folder_not_empty": Text(
        "{data_dir} already holds a Kazma ({name}). An import goes into an empty data folder only: pass --data-dir with a "
        "new folder, or move this one away first. Nothing was changed.",
        "في {data_dir} كازما من قبل ({name}). لا يكون الاستيراد إلا إلى مجلد بيانات فارغ: مرّر --data-dir بمجلد جديد، "
        "أو انقل هذا المجلد أولًا. لم يتغيّر شيء.",
    ),
    "import_database_not_empty": Text(
        "The database of {setting} already holds a Kazma ({rows} rows in {table}). An import goes into an empty database "
        "only: name a new one, or drop its schemas {app_schema}, {steps_schema} and {audit_schema} first. Nothing was changed.",
        "في قاعدة بيانات {setting} كازما من قبل ({rows} صفًا في {table}). لا يكون الاستيراد إلا إلى قاعدة بيانات فارغة: "
        "سمِّ واحدة جديدة، أو احذف مخططاتها {app_schema} و{steps_schema} و{audit_schema} أولًا. لم يتغيّر شيء.",
    ),
    "file_exists": Text(
        "{file} already exists. Choose another file name, or remove it first.",
        "{file} موجود من قبل. اختر اسم ملف آخر، أو احذفه أولًا.",
    ),
    "user_exists": Text(
        "There is a user '{name}' already. To give them a new token (and end the old ones): kazma users token {name}",
        "يوجد مستخدم باسم '{name}' من قبل. لتعطيه رمزًا جديدًا (وتُنهي القديمة): kazma users token {name}",
    ),
    "user_missing_add": Text(
        "There is no user '{name}'. Create it first: kazma users add {name}",
        "لا يوجد مستخدم باسم '{name}'. أنشئه أولًا: kazma users add {name}",
    ),
    "user_missing_list": Text(
        "There is no user '{name}'. `kazma users list` shows who there is.",
        "لا يوجد مستخدم باسم '{name}'. يعرض `kazma users list` من هناك.",
    ),
    "not_a_platform_identity": Text(
        "'{identity}' is not a platform identity: use telegram:<id>, discord:<id> or slack:<team>:<id>.",
        "'{identity}' ليست هوية منصة: استخدم telegram:<id> أو discord:<id> أو slack:<team>:<id>.",
    ),
    "tui_token_missing": Text(
        "Give an API token: kazma tui --token TOKEN (or set KAZMA_TOKEN). Create one with: kazma users add NAME",
        "أعطِ رمز API: kazma tui --token TOKEN (أو اضبط KAZMA_TOKEN). أنشئ واحدًا بـ: kazma users add NAME",
    ),
    "only_owner": Text(
        "{name} is the only owner of this Kazma. Make another owner first (kazma users add NAME --role owner), then remove this one.",
        "{name} هو المالك الوحيد لكازما هذه. اجعل مستخدمًا آخر مالكًا أولًا (kazma users add NAME --role owner)، ثم احذف هذا.",
    ),
    "remove_needs_yes": Text(
        "This would remove {name}: their chats ({chats}) with their memories, saved steps ({steps}), {kilobytes} KB of "
        "files, tokens and linked chat apps. The audit trail is kept. Run it again with --yes to do it.",
        "سيحذف هذا {name}: دردشاته ({chats}) مع ذكرياتها، وخطواته المحفوظة ({steps})، و{kilobytes} ك.ب من الملفات، والرموز "
        "وتطبيقات الدردشة المربوطة. يبقى سجل التدقيق. شغّله مجددًا مع --yes لتنفيذه.",
    ),
})
# -- end of the command line's refusals (h25)

# -- a turn's notes (h25): what the transcript (and the model, in the history) reads when a turn
# -- ended without its answer. Stored in English with the turn, as the words of the model are.
ERRORS.update({
    "turn_interrupted": Text(
        "Kazma stopped during this turn. Send the message again.", "توقّفت كازما أثناء هذه الدورة. أرسل الرسالة مجددًا."
    ),
    "note_no_answer": Text("(No answer: {reason})", "(لا إجابة: {reason})"),
    "note_tool_not_run": Text("Not done: the turn ended before this tool ran.", "لم يُنفَّذ: انتهت الدورة قبل أن تعمل هذه الأداة."),
})
# -- end of a turn's notes (h25)

# How a parameter that is a list reads inside a sentence: each item (a dict's fields, or a
# word as {value}) filled into the first Text, the items joined by the second.
LISTS: dict[str, tuple[Text, Text]] = {
    "matches": (Text("turn {turn}, step {step} ({id})", "الدورة {turn}، الخطوة {step} ({id})"), Text("; ", "؛ ")),
    "usage": (Text("{value}", "{value}"), Text(" | ", " | ")),
    "missing": (Text("<{value}>", "<{value}>"), Text(" ", " ")),
    "files": (Text("{value}", "{value}"), Text(", ", "، ")),
    "choices": (Text("“{value}”", "«{value}»"), Text(", ", "، ")),  # a field's choices (h25)
}

# -- settings, the data folder, the databases and the chat apps at start (h25setup): what the
# -- owner reads on the command line or in the server's log.
_SETTING_PROBLEMS = {
    # what is wrong, by the kind of refusal pydantic found (settings._PROBLEMS); its own English is never shown
    "setting_invalid": Text("invalid setting {setting}: the value is not accepted", "قيمة غير مقبولة للإعداد {setting}: القيمة غير مقبولة"),
    "setting_not_integer": Text(
        "invalid setting {setting}: it takes a whole number", "قيمة غير مقبولة للإعداد {setting}: يأخذ عددًا صحيحًا",
    ),
    "setting_not_number": Text("invalid setting {setting}: it takes a number", "قيمة غير مقبولة للإعداد {setting}: يأخذ رقمًا"),
    "setting_not_text": Text("invalid setting {setting}: it takes text", "قيمة غير مقبولة للإعداد {setting}: يأخذ نصًّا"),
    "setting_empty": Text("invalid setting {setting}: it cannot be empty", "قيمة غير مقبولة للإعداد {setting}: لا يمكن أن يكون فارغًا"),
    "setting_out_of_range": Text(
        "invalid setting {setting}: it is out of range", "قيمة غير مقبولة للإعداد {setting}: إنه خارج المدى المسموح",
    ),
    "setting_not_a_choice": Text(
        "invalid setting {setting}: it is none of the choices", "قيمة غير مقبولة للإعداد {setting}: ليس أيًّا من الخيارات",
    ),
    "setting_not_section": Text(
        "invalid setting {setting}: it is a section of settings, not one value",
        "قيمة غير مقبولة للإعداد {setting}: إنه قسم من الإعدادات، لا قيمة واحدة",
    ),
    "setting_not_bool": Text(
        "invalid setting {setting}: a number is needed, not true or false",
        "قيمة غير مقبولة للإعداد {setting}: يلزم رقم، لا true أو false",
    ),
    "setting_switch": Text("invalid setting {setting}: it is a switch", "قيمة غير مقبولة للإعداد {setting}: إنه مفتاح تشغيل وإيقاف"),
    "setting_whole_number_not_bool": Text(
        "invalid setting {setting}: it takes a whole number, not true or false",
        "قيمة غير مقبولة للإعداد {setting}: يأخذ عددًا صحيحًا، لا true أو false",
    ),
    "setting_renew_not_shorter": Text(
        "invalid setting {setting}: the leader must renew its row before it expires, more often than "
        "server.leader_seconds ({leader})",
        "قيمة غير مقبولة للإعداد {setting}: على القائد أن يجدّد صفّه قبل أن تنتهي مدّته، أي أقصر من "
        "server.leader_seconds ({leader})",
    ),
    "setting_whole_number_not_text": Text(
        "invalid setting {setting}: it takes a whole number, not text",
        "قيمة غير مقبولة للإعداد {setting}: يأخذ عددًا صحيحًا، لا نصًّا",
    ),
}
# What the setting allows, said after the problem: each problem above with each of these
_SETTING_ALLOWS = {
    "": Text("", ""),
    "_range": Text("; allowed: {low} to {high}", "؛ المسموح: من {low} إلى {high}"),
    "_choices": Text("; allowed: {allowed}", "؛ المسموح: {allowed}"),
    "_bool": Text("; allowed: true or false", "؛ المسموح: true أو false"),
}
ERRORS.update({
    f"{problem}{allows}": Text(text.en + suffix.en, text.ar + suffix.ar)
    for problem, text in _SETTING_PROBLEMS.items() for allows, suffix in _SETTING_ALLOWS.items()
})
_STOP_KAZMA = (
    "Stop it first (for example `systemctl stop kazma` or `docker compose stop kazma`), then run the {doing} again.",
    "أوقفها أولًا (مثلًا `systemctl stop kazma` أو `docker compose stop kazma`)، ثم أعد {doing}.",
)
_DOING = {"restore": ("restore", "الاستعادة"), "import": ("import", "الاستيراد")}
ERRORS.update({
    f"folder_in_use_{doing}{who}": Text(
        f"Kazma is running on {{data_dir}}{who_en}. " + _STOP_KAZMA[0].replace("{doing}", en),
        f"كازما تعمل على {{data_dir}}{who_ar}. " + _STOP_KAZMA[1].replace("{doing}", ar),
    )
    for doing, (en, ar) in _DOING.items()
    for who, who_en, who_ar in (
        ("_pid", " (process {pid})", " (العملية {pid})"),
        ("", " (a kazma command such as maintain or backup create)", " (أمر من أوامر kazma مثل maintain أو backup create)"),
    )
})
ERRORS.update({
    "setting_unknown": Text(
        "unknown setting {setting}: remove it or check its spelling", "إعداد غير معروف {setting}: احذفه أو تحقّق من تهجئته",
    ),
    "setting_unknown_pick": Text(
        "unknown setting {setting}: pick one of {names}", "إعداد غير معروف {setting}: اختر واحدًا من {names}",
    ),
    "data_dir_unwritable": Text(
        "invalid setting data_dir = '{path}': the folder cannot be written ({reason}); "
        "choose a writable folder with --data-dir or KAZMA_DATA_DIR",
        "قيمة غير مقبولة للإعداد data_dir = '{path}': لا يمكن الكتابة في المجلد ({reason})؛ "
        "اختر مجلدًا قابلًا للكتابة بـ --data-dir أو KAZMA_DATA_DIR",
    ),
    "folder_being_written": Text(
        "A restore or an import is writing {data_dir}. Wait until it has finished, then start again.",
        "استعادة أو استيراد يكتب في {data_dir}. انتظر حتى ينتهي، ثم ابدأ مجددًا.",
    ),
    "server_running": Text(
        "Another Kazma server is running on {data_dir}. Stop it first, or give this one another data folder "
        "with --data-dir or KAZMA_DATA_DIR.",
        "خادم كازما آخر يعمل على {data_dir}. أوقفه أولًا، أو أعطِ هذا مجلد بيانات آخر بـ --data-dir أو KAZMA_DATA_DIR.",
    ),
    "server_running_pid": Text(
        "Another Kazma server is running on {data_dir} (process {pid}). Stop it first, or give this one another "
        "data folder with --data-dir or KAZMA_DATA_DIR.",
        "خادم كازما آخر يعمل على {data_dir} (العملية {pid}). أوقفه أولًا، أو أعطِ هذا مجلد بيانات آخر بـ --data-dir "
        "أو KAZMA_DATA_DIR.",
    ),
    "conversion_failed": Text(
        "Kazma could not convert {legacy} into kazma.db ({reason}). The old files are untouched. Free some disk "
        "space or fix the file, then start Kazma again; or start this version on a copy of the data folder to look closer.",
        "تعذّر على كازما تحويل {legacy} إلى kazma.db ({reason}). الملفات القديمة لم تُمسّ. حرّر بعض المساحة على القرص "
        "أو أصلح الملف، ثم شغّل كازما مجددًا؛ أو شغّل هذه النسخة على نسخة من مجلد البيانات لتفحصه عن قرب.",
    ),
    # Why a database cannot be used (DatabaseError.line): after its name on a command's line.
    "db_problem": Text("{problem}", "تعذّر استعماله: {problem}"),  # the engine's own words (the driver's, a probe's)
    "db_file_missing": Text("the file is missing", "الملف مفقود"),
    "db_needed": Text(
        "{reason}. Kazma cannot start without it: fix it (a damaged file: put back your latest backup, "
        "`kazma backup restore PATH`), then start again.",
        "{reason}. لا تبدأ كازما بدونه: أصلحه (ملف تالف: أعد آخر نسخة احتياطية لديك، `kazma backup restore PATH`)، "
        "ثم ابدأ مجددًا.",
    ),
    # what a PostgreSQL server's failure was, in words that name no host (/healthz, a 503, the operator's line)
    "pg_slow": Text("the PostgreSQL server did not answer in time", "لم يُجب خادم PostgreSQL في الوقت المحدد"),
    "pg_away": Text("the PostgreSQL server cannot be reached", "لا يمكن الوصول إلى خادم PostgreSQL"),
    "pg_failed": Text("the PostgreSQL server failed the request ({kind})", "أخفق خادم PostgreSQL في تنفيذ الطلب ({kind})"),
    "pg_schema_missing": Text("the schema {schema} is missing", "المخطط {schema} مفقود"),
    # what the operator reads (the log, the alert) when the health check finds a store's database wrong
    "pg_store_away": Text(
        "{label} cannot be used ({problem}). Requests that need it answer 503 until the PostgreSQL server of {setting} "
        "answers again; Kazma goes on by itself then, with nothing to restart.",
        "لا يمكن استعمال {label} ({problem}). تُجاب الطلبات التي تحتاجه بـ 503 حتى يُجيب خادم PostgreSQL في {setting} "
        "مجددًا؛ وتستأنف كازما عملها وحدها حينها، دون إعادة تشغيل.",
    ),
    "store_damaged_steps": Text(
        "{label} is damaged ({problem}). Saved steps cannot be listed, restored or forked; chats go on. Stop Kazma, move "
        "snapshots.db aside (steps are never backed up) and start again: a new, empty one is made.",
        "{label} تالف ({problem}). لا يمكن عرض الخطوات المحفوظة أو استعادتها أو تفريعها؛ والدردشات مستمرة. أوقف كازما، وانقل "
        "snapshots.db جانبًا (الخطوات لا تُنسخ احتياطيًّا أبدًا) وابدأ مجددًا: يُنشأ ملف جديد فارغ.",
    ),
    "store_damaged_audit": Text(
        "{label} is damaged ({problem}). Restores, forks and clears cannot be recorded; chats go on. Stop Kazma, move "
        "{label} aside (or put back the copy in your latest backup folder) and start again.",
        "{label} تالف ({problem}). لا يمكن تسجيل الاستعادات والتفريعات والمسح؛ والدردشات مستمرة. أوقف كازما، وانقل "
        "{label} جانبًا (أو أعد النسخة التي في آخر مجلد نسخ احتياطي لديك) وابدأ مجددًا.",
    ),
    "store_damaged_chats": Text(
        "{label} is damaged ({problem}). Stop Kazma and put back your latest backup (`kazma backup restore PATH`), "
        "which holds {label}; then start again.",
        "{label} تالف ({problem}). أوقف كازما وأعد آخر نسخة احتياطية لديك (`kazma backup restore PATH`)، "
        "وفيها {label}؛ ثم ابدأ مجددًا.",
    ),
    # the clean-up's operator alerts (stored in English, as the log says them; the Arabic beside them)
    "alert_cleanup_failed": Text(
        "The daily clean-up of saved steps failed ({error}). Check the disk and {where}, then run `kazma maintain` to try again.",
        "فشل التنظيف اليومي للخطوات المحفوظة ({error}). تحقّق من القرص ومن {where}، ثم شغّل `kazma maintain` لتحاول مجددًا.",
    ),
    "alert_rows_left": Text(
        "The clean-up deleted {deleted} saved steps, but {left} of them are still in {where}. Check the disk and {where}, "
        "then run `kazma maintain` again.",
        "حذف التنظيف {deleted} خطوة محفوظة، لكن {left} منها ما زالت في {where}. تحقّق من القرص ومن {where}، "
        "ثم شغّل `kazma maintain` مجددًا.",
    ),
    "alert_text_left": Text(
        "The clean-up deleted saved steps, but text of {left} deleted messages is still in snapshots.db or its WAL. "
        "Close any program that has the file open, then run `kazma maintain`: it checks again.",
        "حذف التنظيف خطوات محفوظة، لكن نص {left} رسالة محذوفة ما زال في snapshots.db أو في WAL الخاص به. "
        "أغلق أيّ برنامج يفتح الملف، ثم شغّل `kazma maintain`: فهو يتحقّق مجددًا.",
    ),
    "alert_text_left_held": Text(
        "The clean-up deleted saved steps, but text of {left} deleted messages is still in snapshots.db or its WAL. "
        "A program holds snapshots.db open (a SQLite browser, a backup or replication tool), so SQLite could not "
        "write the cleared pages back. Close any program that has the file open, then run `kazma maintain`: it checks again.",
        "حذف التنظيف خطوات محفوظة، لكن نص {left} رسالة محذوفة ما زال في snapshots.db أو في WAL الخاص به. "
        "برنامج يفتح snapshots.db (متصفح SQLite، أو أداة نسخ احتياطي أو نسخ متماثل)، فلم يستطع SQLite "
        "إعادة كتابة الصفحات المُفرغة. أغلق أيّ برنامج يفتح الملف، ثم شغّل `kazma maintain`: فهو يتحقّق مجددًا.",
    ),
    "pg_conflicts": Text(
        "the PostgreSQL server refused it for conflicts with others", "رفضه خادم PostgreSQL لتعارضه مع معاملات أخرى",
    ),
    "pg_url_scheme": Text(
        "{setting} must start with postgresql:// (it is {url}).", "يجب أن يبدأ {setting} بـ postgresql:// (قيمته {url}).",
    ),
    "pg_url_invalid": Text(
        "{setting} is not a valid PostgreSQL URL ({reason}). Fix it and start again.",
        "{setting} ليس عنوان PostgreSQL صالحًا ({reason}). صحّحه وابدأ مجددًا.",
    ),
    "pg_unreachable": Text(
        "Kazma cannot use the PostgreSQL server of {setting} {url}: {reason}",
        "لا تستطيع كازما استعمال خادم PostgreSQL في {setting} {url}: {reason}",
    ),
    "newer_schema": Text(
        "{where} is at schema version {found}, made by a newer Kazma (this one knows {known}). "
        "Run that newer Kazma, or restore a backup made by this version.",
        "{where} في إصدار المخطط {found}، صنعته كازما أحدث (هذه تعرف حتى {known}). "
        "شغّل كازما الأحدث تلك، أو استعد نسخة احتياطية صنعها هذا الإصدار.",
    ),
    "newer_file": Text("{label}", "الملف {label}"),
    "newer_pg_schema": Text(
        "PostgreSQL schema {schema} of the database {setting} names", "مخطط PostgreSQL ‏{schema} في قاعدة البيانات التي يسمّيها {setting}",
    ),
    # a chat app that cannot start (the server's log says it, and the bot is tried again)
    "slack_no_mode": Text(
        "Slack needs KAZMA_SLACK__SIGNING_SECRET for HTTP mode, or KAZMA_SLACK__APP_TOKEN for Socket Mode.",
        "يحتاج Slack إلى KAZMA_SLACK__SIGNING_SECRET لوضع HTTP، أو KAZMA_SLACK__APP_TOKEN لوضع Socket Mode.",
    ),
    "slack_socket_slow": Text(
        "Slack's Socket Mode websocket did not open within {seconds} s.", "لم يُفتح اتصال Socket Mode مع Slack خلال {seconds} ث.",
    ),
    "slack_socket_lost": Text(
        "Slack's Socket Mode connection was lost and did not come back.", "انقطع اتصال Socket Mode مع Slack ولم يعد.",
    ),
    "slack_refused": Text("Slack refused {method} ({error}): check {setting}.", "رفض Slack ‏{method} ({error}): تحقّق من {setting}."),
    "slack_unreachable": Text("Slack cannot be reached at {url} ({error}).", "لا يمكن الوصول إلى Slack على {url} ({error})."),
    "telegram_no_updater": Text(
        "The Telegram application was built without an updater.", "بُني تطبيق Telegram بلا مُحدِّث (updater).",
    ),
    "telegram_unreachable": Text(
        "Telegram at {url} could not be used: {error}. Check the network and KAZMA_TELEGRAM__BASE_URL.",
        "تعذّر استعمال Telegram على {url}: {error}. تحقّق من الشبكة ومن KAZMA_TELEGRAM__BASE_URL.",
    ),
    "telegram_token_rejected": Text(
        "Telegram rejected the bot token at {url}. Check KAZMA_TELEGRAM__TOKEN (from @BotFather).",
        "رفض Telegram رمز البوت على {url}. تحقّق من KAZMA_TELEGRAM__TOKEN (من @BotFather).",
    ),
    "telegram_no_http": Text(
        "The Telegram bot takes no requests through the web server.", "بوت Telegram لا يستقبل طلبات عبر خادم الويب.",
    ),
    "telegram_webhook_settings": Text(
        "Telegram webhook mode needs KAZMA_TELEGRAM__WEBHOOK_URL (the public https address) and "
        "KAZMA_TELEGRAM__WEBHOOK_SECRET (so nobody else can post updates); set both, or use polling.",
        "يحتاج وضع webhook في Telegram إلى KAZMA_TELEGRAM__WEBHOOK_URL (العنوان العام بـ https) و"
        "KAZMA_TELEGRAM__WEBHOOK_SECRET (كي لا يرسل غيرك تحديثات)؛ اضبط الاثنين، أو استعمل polling.",
    ),
})
LISTS.update({
    "names": (Text("{value}", "{value}"), Text(", ", "، ")),  # the settings an unknown one could have been
    "allowed": (Text("{value}", "{value}"), Text(" | ", " | ")),  # the values a setting allows
})
# -- end of settings, the data folder, the databases and the chat apps at start (h25setup)


@dataclass(frozen=True)
class Said:
    """A sentence of this section by its id, with its parameters: kept or sent as such (an operator alert),
    and worded in the language of whoever reads it, when it is read."""

    message_id: str
    params: dict[str, Any] = field(default_factory=dict)

    def text(self, lang: str) -> str:
        return ERRORS[self.message_id].get(lang, **self.params)
