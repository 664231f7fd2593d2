"""What each tool of the agent is called in people's words, and how a tool call went.

A chat shows each tool call of a turn by these words (the `tool` event's `label`, and the
transcript's `tools`); the id `tools.<tool name>` is the event's `label_id`.
"""

from __future__ import annotations

from kazma_core.catalogue.text import Text

# -- tool labels (issue 23): one per tool of kazma_core/agent/tools.py, and one for any other name
TOOL_LABELS: dict[str, Text] = {
    "remember": Text("Remember a fact", "تذكّر معلومة"),
    "forget": Text("Forget a fact", "نسيان معلومة"),
    "calculator": Text("Calculate", "حساب"),
    "note": Text("Take a note", "تدوين ملاحظة"),
    "write_file": Text("Write a file", "كتابة ملف"),
    "sleep": Text("Wait a moment", "انتظار لحظة"),
    "big": Text("Make a long text", "إنشاء نص طويل"),
    "other": Text("Use a tool", "استخدام أداة"),
}

# -- what a step that used the tool did, after the step's label ("turn 2, step 1 · calculated")
TOOL_DONE: dict[str, Text] = {
    "remember": Text("remembered a fact", "تذكّر معلومة"),
    "forget": Text("forgot a fact", "نسي معلومة"),
    "calculator": Text("calculated", "أجرى حسابًا"),
    "note": Text("took a note", "دوّن ملاحظة"),
    "write_file": Text("wrote a file", "كتب ملفًا"),
    "sleep": Text("waited", "انتظر"),
    "big": Text("made a long text", "أنشأ نصًا طويلًا"),
    "other": Text("used a tool", "استخدم أداة"),
}

# -- how a tool call went, after its label
TOOL_STATES: dict[str, Text] = {
    "running": Text("working…", "قيد العمل…"),
    "done": Text("done", "تمّ"),
    "failed": Text("failed", "فشل"),
    "more": Text("Show all {count} characters", "عرض الأحرف كلها ({count})"),
}


def label_id(tool: str) -> str:
    """The catalogue id of a tool's label (`tools.<name>`; `tools.other` for a name it does not know)."""
    return f"tools.{tool if tool in TOOL_LABELS else 'other'}"
