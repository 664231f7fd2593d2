"""The words of a saved step as every surface shows it: who said a message, the comparison summary."""

from __future__ import annotations

# How each surface names who said a message (English, Arabic).
ROLES: dict[str, tuple[str, str]] = {
    "user": ("You", "أنت"),
    "assistant": ("Kazma", "كازما"),
    "tool": ("Tool", "أداة"),
    "system": ("System", "النظام"),
    # transcript rows of a turn that ended without an answer
    "error": ("Not answered", "لم تُجب"),
    "stopped": ("Stopped", "أُوقفت"),
}

# The summary's own words (English, Arabic); {placeholders} are filled by `_say`.
WORDS: dict[str, tuple[str, str]] = {
    "step_label": ("turn {turn}, step {step}", "الدورة {turn}، الخطوة {step}"),
    # what a step did (kazma_core.time_travel.step_did), shown after its label on every surface
    # a tool step: what each of its tools did (catalogue/tools.py TOOL_DONE), joined by this
    "did_joiner": (", ", "، "),
    "did_answered": ("answered", "أجاب"),
    "did_approval": ("asked to approve “{tool}”", "طلب الموافقة على «{tool}»"),
    "did_approval_write": ("asked to approve writing {path}", "طلب الموافقة على كتابة {path}"),
    "did_stopped": ("stopped", "توقّف"),
    "did_no_answer": ("ended without an answer", "انتهى دون إجابة"),
    "did_working": ("worked on it", "عمل عليها"),
    "step_older_folded": ("{count} earlier messages", "{count} رسائل سابقة"),
    "counts": ("Messages: {added} added, {removed} removed, {changed} changed.", "الرسائل: {added} مضافة، {removed} محذوفة، {changed} متغيّرة."),
    "more_added": ("… and {count} more added", "… و{count} أخرى مضافة"),
    "more_removed": ("… and {count} more removed", "… و{count} أخرى محذوفة"),
    "more_changed": ("… and {count} more changed", "… و{count} أخرى متغيّرة"),
    "message": ("message {position}", "الرسالة {position}"),
    "plan": ("Plan: {a} → {b}", "الخطة: {a} ← {b}"),
    "model": ("Model: {a} → {b}", "النموذج: {a} ← {b}"),
    "cost": ("Cost: {cost}", "التكلفة: {cost}"),
    "none": ("none", "لا شيء"),
    "yes": ("yes", "نعم"),
    "no": ("no", "لا"),
}
