"""The person's language (English or Arabic), and every sentence commands say in both.

English error sentences are the errors' own messages (the canonical wording); Arabic
ones are templates filled from the error's details, so the two never drift apart in
what they tell a person to do next.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kazma_core.chats import NOT_YOURS
from kazma_core.errors import KazmaError
from kazma_ui.thread_rewind import MIN_PREFIX

LANGS = ("en", "ar")
DEFAULT_LANG = "en"


@dataclass(frozen=True)
class Text:
    """One sentence in both languages; `{name}` placeholders are filled by `get`."""

    en: str
    ar: str

    def get(self, lang: str, **values: Any) -> str:
        template = self.ar if lang == "ar" else self.en
        return template.format(**values) if values else template


def pick_lang(value: str | None) -> str:
    """"ar" or "en" from a platform locale ("ar-EG", "en_US") or an Accept-Language header."""
    if not isinstance(value, str):
        return DEFAULT_LANG
    best, best_q = DEFAULT_LANG, 0.0
    for part in value.split(","):
        tag, _, params = part.partition(";")
        primary = re.split(r"[-_]", tag.strip().lower(), maxsplit=1)[0]
        if primary not in LANGS:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, number = param.partition("=")
            if key.strip().lower() == "q":
                q = _quality(number)
        if q > best_q:
            best, best_q = primary, q
    return best


def _quality(number: str) -> float:
    """An Accept-Language weight (0 to 1); a malformed one counts as 0, never as a preference."""
    if not re.fullmatch(r"\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*", number):
        return 0.0
    return float(number)


MESSAGES: dict[str, Text] = {
    "step_label": Text("turn {turn}, step {step}", "الدورة {turn}، الخطوة {step}"),
    "no_steps": Text("No steps saved in this chat yet.", "لا خطوات محفوظة في هذه الدردشة بعد."),
    "steps_header": Text("This chat’s saved steps, turn by turn ({count}):", "الخطوات المحفوظة لهذه الدردشة، دورةً بدورة ({count}):"),
    "turn_header": Text("Turn {turn}: {questions}", "الدورة {turn}: {questions}"),
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
        "الدورات اللاحقة التي تُسحب: {turns} (رسائلها وما تذكّرته كاظمه منها). الخطوات اللاحقة التي تُحذف: {steps}.",
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
    "restored_undo": Text(
        "Restored the wrong step? {undo} puts everything back, until the next message.",
        "استعدت الخطوة الخطأ؟ يعيد {undo} كل شيء، حتى الرسالة التالية.",
    ),
    "undone": Text(
        "Undid the last restore: the chat is as it was before it. Back: {messages} messages, {memories} memories, "
        "{steps} steps.",
        "تراجعت عن آخر استعادة: عادت الدردشة كما كانت قبلها. عاد: {messages} رسائل، {memories} ذكريات، {steps} خطوات.",
    ),
    "confirm_fork": Text(
        "Fork {label} ({short_id}) into a new chat, owned by you? The original is not touched.",
        "هل تفرّع {label} ({short_id}) إلى دردشة جديدة تملكها أنت؟ الأصل لا يُمسّ.",
    ),
    "forked": Text(
        "Forked {label} into a new chat, “{title}”. Open it: {link}",
        "فُرّعت {label} إلى دردشة جديدة، «{title}». افتحها: {link}",
    ),
    "fork_intro": Text(
        "Forked from “{source}”, {label}. This is a new chat of its own: talk here to continue it "
        "(the original is not touched). On the web: {link}",
        "مُفرَّعة من «{source}»، {label}. هذه دردشة جديدة مستقلة: تحدّث هنا لمتابعتها (الأصل لا يُمسّ). على الويب: {link}",
    ),
    "fork_intro_mention": Text(
        "Forked from “{source}”, {label}. This is a new chat of its own: mention Kazma here to continue it "
        "(the original is not touched). On the web: {link}",
        "مُفرَّعة من «{source}»، {label}. هذه دردشة جديدة مستقلة: اذكر كاظمه هنا لمتابعتها (الأصل لا يُمسّ). على الويب: {link}",
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
        "لا يُسمح لكاظمه بفتح سلاسل أو مواضيع هنا: اطلب من أحد المشرفين منحها هذا الإذن لتحصل على واحد في المرة القادمة.",
    ),
    "no_thread_failed": Text(
        "{platform} did not open a thread for it just now; try /fork again later for one.",
        "لم يفتح {platform} سلسلة لها الآن؛ جرّب /fork لاحقًا لتحصل على واحدة.",
    ),
    "confirm_clear": Text(
        "Delete this chat’s saved steps ({count})? They cannot be brought back; the conversation itself stays.",
        "هل تحذف الخطوات المحفوظة لهذه الدردشة ({count})؟ لا يمكن إرجاعها؛ وتبقى المحادثة نفسها.",
    ),
    "cleared": Text("Deleted this chat’s saved steps: {deleted}.", "حُذفت الخطوات المحفوظة لهذه الدردشة: {deleted}."),
    "reset_done": Text(
        "Conversation reset: the next message starts afresh. The saved steps are kept (/replay list).",
        "أُعيد ضبط المحادثة: تبدأ الرسالة التالية من جديد. وتبقى الخطوات المحفوظة (/replay list).",
    ),
    "confirm_memory_off": Text(
        "Turn memory off in this chat? Kazma forgets what it learned here, and the chat’s saved steps are deleted. "
        "This cannot be undone.",
        "هل توقف الذاكرة في هذه الدردشة؟ تنسى كاظمه ما تعلمته هنا، وتُحذف الخطوات المحفوظة للدردشة. لا يمكن التراجع عن ذلك.",
    ),
    "memory_off_done": Text(
        "Memory is off in this chat: Kazma forgot what it learned here and deleted the chat’s saved steps.",
        "الذاكرة متوقفة في هذه الدردشة: نسيت كاظمه ما تعلمته هنا وحذفت الخطوات المحفوظة للدردشة.",
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
    "role_user": Text("user", "المستخدم"),
    "role_assistant": Text("assistant", "المساعد"),
    "role_tool": Text("tool", "أداة"),
    "role_system": Text("system", "النظام"),
    "effect_file_written": Text("file written", "ملف كُتب"),
    "help_header": Text("Commands:", "الأوامر:"),
}


def t(key: str, lang: str, **values: Any) -> str:
    return MESSAGES[key].get(lang, **values)


def step_label(turn_index: int, iteration: int, lang: str) -> str:
    return t("step_label", lang, turn=turn_index, step=iteration)


_ENGLISH_LABEL = re.compile(r"turn (\d+), step (\d+)")


def _relabel(text: str, lang: str) -> str:
    """The service names steps in English ("turn 2, step 1"); say it in the person's language."""
    return _ENGLISH_LABEL.sub(lambda m: step_label(int(m.group(1)), int(m.group(2)), lang), text)


def _gates_ar(details: Mapping[str, Any]) -> str:
    gates = details.get("gates") or []
    named = [f"{g.get('tool', '?')} (البطاقة {g.get('card_id', '?')})" for g in gates if isinstance(g, Mapping)]
    return "، ".join(named) or "بطاقة موافقة"


def _candidates_ar(details: Mapping[str, Any]) -> str:
    return "؛ ".join(_relabel(str(c), "ar") for c in details.get("candidates") or [])


_NOTHING_TO_UNDO_AR = {
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
}


def _not_found_ar(err: KazmaError) -> str:
    undo = _NOTHING_TO_UNDO_AR.get(str(err.details.get("reason")))
    if undo is not None:
        return undo
    if err.message == NOT_YOURS:
        return "لا توجد دردشة كهذه بين دردشاتك. تحقّق من معرّف الدردشة، أو اعرض دردشاتك."
    return "لا توجد خطوة محفوظة بهذا المعرّف في هذه الدردشة (ربما حُذفت). يعرض /replay list الخطوات."


_BAD_COMMAND_AR: dict[str, str] = {
    "unknown_command": "/{word} ليس أمرًا هنا. أرسل /help لترى الأوامر.",
    "missing_subcommand": "ينقص الأمرَ كلمة. استخدم: {usage}.",
    "unknown_subcommand": "/{command} {word} ليس أمرًا. استخدم: {usage}.",
    "missing_argument": "ينقص الأمرَ {missing}. استخدم: {usage}.",
    "extra_argument": "كلمات زائدة بعد الأمر. استخدم: {usage}.",
    "too_long": "هذا أطول من أن يكون معرّف خطوة. استخدم: {usage}، مع معرّف يعرضه /replay list.",
    "bad_choice": "«{word}» ليست كلمة يقبلها هذا الأمر. استخدم: {usage}.",
}


def _bad_command_ar(err: KazmaError) -> str:
    d = err.details
    template = _BAD_COMMAND_AR.get(str(d.get("reason")), "الأمر غير صحيح. أرسل /help لترى الأوامر.")
    return template.format(
        word=d.get("word", ""),
        command=d.get("command") or "",
        usage=" | ".join(d.get("usage") or ["/help"]),
        missing=" ".join(f"<{a}>" for a in d.get("missing") or []),
    )


_ARABIC: dict[str, Callable[[KazmaError], str]] = {
    "turn_running": lambda e: "دورة تجري الآن في هذه الدردشة. انتظر إجابتها (أو أوقفها)، ثم حاول مجددًا.",
    "approval_pending": lambda e: (
        f"موافقة تنتظر في هذه الدردشة: {_gates_ar(e.details)}. "
        "وافق عليها أو ارفضها (أو دعها تنتهي صلاحيتها)، ثم حاول مجددًا."
    ),
    "snapshot_truncated": lambda e: (
        "حُفظت هذه الخطوة مقصوصة لأنها أكبر من حدّ حجم الخطوة. "
        "يمكن قراءتها، لكن لا يمكن استعادتها أو تفريعها: اختر خطوة أخرى."
    ),
    "not_found": _not_found_ar,
    "ambiguous_step": lambda e: (
        f"هذا الجزء من المعرّف يطابق {len(e.details.get('candidates') or [])} خطوات: {_candidates_ar(e.details)}. "
        "أعطِ أحرفًا أكثر."
    ),
    "invalid_step": lambda e: (
        f"هذا ليس معرّف خطوة: أعطِ {MIN_PREFIX} أحرف أو أكثر من معرّفها (0-9 وa-f)، كما يعرضه /replay list."
    ),
    "store_unavailable": lambda e: (
        "يتعذّر قراءة الخطوات المحفوظة الآن. تحقّق من القرص ومن ملف snapshots.db، ثم حاول مجددًا."
    ),
    "invalid_input": lambda e: (
        "هاتان الدردشتان ليستا من سلالة واحدة: قارن تفريعًا بالدردشة التي جاء منها، أو تفريعين لدردشة واحدة."
        if e.details.get("reason") == "other_lineage"
        else "ما أُرسل غير صالح. راجعه وأعد المحاولة."
    ),
    "approval_closed": lambda e: "هذه الموافقة أُغلقت من قبل؛ لم يُنفَّذ شيء. أرسل طلبك مجددًا إن كنت لا تزال تريده.",
    "turn_failed": lambda e: (
        "تعذّر على النموذج أن يجيب. تحقّق من إعدادات النموذج ومن أن خادمه يعمل، ثم أرسل الرسالة مجددًا."
    ),
    "forbidden": lambda e: (
        "لا يستطيع استعادة هذه الدردشة أو حذف خطواتها إلا مالكها أو مشرفو المجموعة. "
        "يمكنك بدلًا من ذلك تفريع خطوة إلى دردشة خاصة بك."
    ),
    "bad_command": _bad_command_ar,
}

ERROR_CODES = frozenset(_ARABIC)


def error_text(err: KazmaError, lang: str) -> str:
    """The sentence that tells a person what went wrong and what to do next."""
    if lang != "ar":
        return err.message
    arabic = _ARABIC.get(err.code)
    if arabic is None:
        return f"تعذّر ذلك ({err.code}): {err.message}"
    return arabic(err)
