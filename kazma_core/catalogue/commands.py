"""What slash commands say on every surface (chat apps, the terminal, the web chat's commands)."""

from __future__ import annotations

from kazma_core.catalogue.steps import ROLES
from kazma_core.catalogue.text import Text

COMMANDS: dict[str, Text] = {
    "restored_undo": Text(
        "Restored the wrong step? {undo} puts everything back, until the next message.",
        "استعدت الخطوة الخطأ؟ يعيد {undo} كل شيء، حتى الرسالة التالية.",
    ),
    "undone": Text(
        "Undid the last restore: the chat is as it was before it. Back: {messages} messages, {memories} memories, "
        "{steps} steps.",
        "تراجعت عن آخر استعادة: عادت الدردشة كما كانت قبلها. عاد: {messages} رسائل، {memories} ذكريات، {steps} خطوات.",
    ),
    "fork_intro": Text(
        "Forked from “{source}”, {label}. This is a new chat of its own: talk here to continue it "
        "(the original is not touched). On the web: {link}",
        "مُفرَّعة من «{source}»، {label}. هذه دردشة جديدة مستقلة: تحدّث هنا لمتابعتها (الأصل لا يُمسّ). على الويب: {link}",
    ),
    "fork_intro_mention": Text(
        "Forked from “{source}”, {label}. This is a new chat of its own: mention Kazma here to continue it "
        "(the original is not touched). On the web: {link}",
        "مُفرَّعة من «{source}»، {label}. هذه دردشة جديدة مستقلة: اذكر كازما هنا لمتابعتها (الأصل لا يُمسّ). على الويب: {link}",
    ),
    "forked_into_thread": Text(
        "Forked {label} into a new chat, “{title}”: it continues in the thread “{name}”. On the web: {link}",
        "فُرّعت {label} إلى دردشة جديدة، «{title}»: تستمر في السلسلة «{name}». على الويب: {link}",
    ),
    "forked_into_topic": Text(
        "Forked {label} into a new chat, “{title}”: it continues in the topic “{name}”. On the web: {link}",
        "فُرّعت {label} إلى دردشة جديدة، «{title}»: تستمر في الموضوع «{name}». على الويب: {link}",
    ),
    "forked_no_thread": Text(
        "Forked {label} into a new chat, “{title}”. {why} Continue it on the web: {link}",
        "فُرّعت {label} إلى دردشة جديدة، «{title}». {why} تابعها على الويب: {link}",
    ),
    "no_thread_dm": Text(
        "{platform} has no threads in direct messages, so it has no thread here.",
        "لا سلاسل في الرسائل المباشرة على {platform}، فلا سلسلة لها هنا.",
    ),
    "no_thread_no_topics": Text(
        "This chat has no topics, so it has no topic here: turn topics on for this group (or for the bot, in a private chat) to get one next time.",
        "لا مواضيع في هذه الدردشة، فلا موضوع لها هنا: فعّل المواضيع لهذه المجموعة (أو للبوت في الدردشة الخاصة) لتحصل على واحد في المرة القادمة.",
    ),
    "no_thread_no_permission": Text(
        "Kazma may not open threads or topics here: ask an admin to give it that permission to get one next time.",
        "لا يُسمح لكازما بفتح سلاسل أو مواضيع هنا: اطلب من أحد المشرفين منحها هذا الإذن لتحصل على واحد في المرة القادمة.",
    ),
    "no_thread_failed": Text(
        "{platform} did not open a thread for it just now; try /fork again later for one.",
        "لم يفتح {platform} سلسلة لها الآن؛ جرّب /fork لاحقًا لتحصل على واحدة.",
    ),
    "step_label": Text("turn {turn}, step {step}", "الدورة {turn}، الخطوة {step}"),
    "no_steps": Text("No steps saved in this chat yet.", "لا خطوات محفوظة في هذه الدردشة بعد."),
    "steps_header": Text("This chat’s saved steps, turn by turn ({count}):", "الخطوات المحفوظة لهذه الدردشة، دورةً بدورة ({count}):"),
    "turn_header": Text("Turn {turn}: {questions}", "الدورة {turn}: {questions}"),
    "gap": Text(
        "  … steps {first}–{last} not kept (a long turn keeps every step up to the 20th, then every 10th, and the last)",
        "  … الخطوات {first}–{last} لم تُحفظ (تحفظ الدورة الطويلة كل خطوة حتى العشرين، ثم كل عاشرة، والأخيرة)",
    ),
    "cut_why": Text(
        "Saved cut: it added more than the step size limit, so long texts were cut. Once a large tool result is in the chat, "
        "later steps hold it too. Restore or fork a step before it.",
        "محفوظة مقصوصة: أضافت أكثر من حدّ حجم الخطوة، فقُصّت النصوص الطويلة. وحين تدخل نتيجة أداة كبيرة في الدردشة، "
        "تحملها الخطوات اللاحقة أيضًا. استعد خطوة قبلها أو فرّعها.",
    ),
    "cut": Text("(saved cut: can be read, not restored)", "(حُفظت مقصوصة: تُقرأ ولا تُستعاد)"),
    "older_hidden": Text(
        "Older turns not shown here: {count}. All steps: {link}",
        "دورات أقدم لا تظهر هنا: {count}. كل الخطوات: {link}",
    ),
    "page_steps": Text(
        "Saved steps in this chat: {count}. Open them on the Time Travel page to restore, fork or compare: {link}",
        "الخطوات المحفوظة في هذه الدردشة: {count}. افتحها في صفحة السفر عبر الزمن للاستعادة أو التفريع أو المقارنة: {link}",
    ),
    "page_none": Text(
        "No steps saved in this chat yet. The Time Travel page: {link}",
        "لا خطوات محفوظة في هذه الدردشة بعد. صفحة السفر عبر الزمن: {link}",
    ),
    "confirm_restore": Text("Restore this chat to {label} ({short_id})?", "هل تستعيد هذه الدردشة إلى {label} ({short_id})؟"),
    "takes_back": Text(
        "Later turns taken back: {turns} (their messages and what Kazma remembered of them). Later steps deleted: {steps}.",
        "الدورات اللاحقة التي تُسحب: {turns} (رسائلها وما تذكّرته كازما منها). الخطوات اللاحقة التي تُحذف: {steps}.",
    ),
    "not_undone": Text(
        "Restoring rewinds the conversation, not the world. These stay done:",
        "الاستعادة تُرجع المحادثة، لا العالم. هذه تبقى منجزة:",
    ),
    "no_side_effects": Text(
        "The agent changed nothing outside the chat after this step.",
        "لم يغيّر الوكيل شيئًا خارج الدردشة بعد هذه الخطوة.",
    ),
    "restored": Text(
        "Restored this chat to {label}. Later steps removed: {removed}. The next message continues from there.",
        "استُعيدت هذه الدردشة إلى {label}. الخطوات اللاحقة المحذوفة: {removed}. تستمر الرسالة التالية من هناك.",
    ),
    "confirm_fork": Text(
        "Fork {label} ({short_id}) into a new chat, owned by you? The original is not touched.",
        "هل تفرّع {label} ({short_id}) إلى دردشة جديدة تملكها أنت؟ الأصل لا يُمسّ.",
    ),
    "confirm_fork_start": Text(
        "Fork from before this chat’s first message: a new, empty chat owned by you, that remembers where it came from? "
        "The original is not touched.",
        "هل تفرّع من قبل أول رسالة في هذه الدردشة: دردشة جديدة فارغة تملكها أنت، تذكر من أين جاءت؟ الأصل لا يُمسّ.",
    ),
    "start_label": Text("from before the first message", "من قبل الرسالة الأولى"),
    "forked": Text(
        "Forked {label} into a new chat, “{title}”. Open it: {link}",
        "فُرّعت {label} إلى دردشة جديدة، «{title}». افتحها: {link}",
    ),
    "confirm_clear": Text(
        "Delete this chat’s saved steps ({count})? They cannot be brought back; the conversation itself stays.",
        "هل تحذف الخطوات المحفوظة لهذه الدردشة ({count})؟ لا يمكن إرجاعها؛ وتبقى المحادثة نفسها.",
    ),
    "cleared": Text("Deleted this chat’s saved steps: {deleted}.", "حُذفت الخطوات المحفوظة لهذه الدردشة: {deleted}."),
    "stopped": Text(
        "Stopped the running turn. What it saved so far stays; send a message to go on.",
        "أُوقفت الدورة الجارية. يبقى ما حفظته حتى الآن؛ أرسل رسالة لتتابع.",
    ),
    "nothing_running": Text("Nothing is running in this chat: there was nothing to stop.", "لا شيء يجري في هذه الدردشة: لم يكن هناك ما يُوقف."),
    "reset_done": Text(
        "Conversation reset: the next message starts afresh. The saved steps are kept (/replay list).",
        "أُعيد ضبط المحادثة: تبدأ الرسالة التالية من جديد. وتبقى الخطوات المحفوظة (/replay list).",
    ),
    "confirm_memory_off": Text(
        "Turn memory off in this chat? Kazma forgets what it learned here, and the chat’s saved steps are deleted. "
        "This cannot be undone.",
        "هل توقف الذاكرة في هذه الدردشة؟ تنسى كازما ما تعلمته هنا، وتُحذف الخطوات المحفوظة للدردشة. لا يمكن التراجع عن ذلك.",
    ),
    "memory_off_done": Text(
        "Memory is off in this chat: Kazma forgot what it learned here and deleted the chat’s saved steps.",
        "الذاكرة متوقفة في هذه الدردشة: نسيت كازما ما تعلمته هنا وحذفت الخطوات المحفوظة للدردشة.",
    ),
    "show_header": Text("{label} · {short_id} · model {model}", "{label} · {short_id} · النموذج {model}"),
    "show_messages": Text("Messages ({count}):", "الرسائل ({count}):"),
    "earlier_messages": Text("… {count} earlier messages not shown.", "… {count} رسائل سابقة لا تظهر."),
    "show_cut": Text(
        "This step was saved cut: it can be read, but not restored or forked.",
        "حُفظت هذه الخطوة مقصوصة: يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها.",
    ),
    "plan": Text("Plan: {plan}", "الخطة: {plan}"),
    "routing": Text("Routing: {routing}", "التوجيه: {routing}"),
    "cost": Text("Cost: {cost}", "التكلفة: {cost}"),
    "compare_counts": Text(
        "Messages: {added} added, {removed} removed, {changed} changed.",
        "الرسائل: {added} مضافة، {removed} محذوفة، {changed} متغيّرة.",
    ),
    "compare_plan": Text("Plan: {a} → {b}", "الخطة: {a} ← {b}"),
    "compare_model": Text("Model: {a} → {b}", "النموذج: {a} ← {b}"),
    # Who said a message: the names every surface uses.
    **{f"role_{role}": Text(en, ar) for role, (en, ar) in ROLES.items()},
    "effect_file_written": Text("file written", "ملف كُتب"),
    "help_header": Text("Commands:", "الأوامر:"),
    # files travel too: a restore that puts back what the chat's tools wrote
    "takes_back_files_only": Text(
        "The conversation stays as it is; only the files the chat's tools changed after this step go back.",
        "تبقى المحادثة كما هي؛ لا يعود إلا ما غيّرته أدوات الدردشة من ملفات بعد هذه الخطوة.",
    ),
    "files_would_change": Text("These files go back as they were at this step:", "تعود هذه الملفات كما كانت في هذه الخطوة:"),
    "files_choose": Text(
        "The chat's tools changed these files after this step. Restore the conversation, the files, or both:",
        "غيّرت أدوات الدردشة هذه الملفات بعد هذه الخطوة. استعد المحادثة، أو الملفات، أو كليهما:",
    ),
    "file_restored": Text("back to its content at the step", "يعود إلى محتواه في الخطوة"),
    "file_removed": Text("removed (made after the step)", "يُزال (أُنشئ بعد الخطوة)"),
    "file_changed_since": Text("(changed since by something else)", "(غيّره شيء آخر منذ ذلك)"),
    "restored_files": Text("Files put back: {count}.", "الملفات المُعادة: {count}."),
}
