"""Chat management's sentences (issue 23): search, rename, delete, the phone's chat drawer,
dark mode, keyboard shortcuts and sizes, for the web pages and the terminal, English then Arabic."""

from __future__ import annotations

from kazma_core.catalogue.text import Text

WEB_MANAGE: dict[str, tuple[str, str]] = {
    "search_chats": ("Search chats", "ابحث في الدردشات"),
    "no_match": ("No chat holds those words.", "لا دردشة فيها هذه الكلمات."),
    "rename_chat": ("Rename", "إعادة التسمية"),
    "rename_chat_named": ("Rename “{title}”", "أعد تسمية «{title}»"),
    "delete_chat": ("Delete", "حذف"),
    "delete_chat_named": ("Delete “{title}”", "احذف «{title}»"),
    "delete_title": ("Delete “{title}”?", "هل تحذف «{title}»؟"),
    "delete_body": ("What should go?", "ما الذي يُحذف؟"),
    "delete_choice_chat": (
        "The whole chat: its messages, its saved steps and what Kazma learned in it.",
        "الدردشة كلها: رسائلها وخطواتها المحفوظة وما تعلّمته كازما فيها.",
    ),
    "delete_choice_learned": (
        "Only what Kazma learned in it (and its saved steps); the messages stay.",
        "ما تعلّمته كازما فيها فقط (وخطواتها المحفوظة)؛ وتبقى الرسائل.",
    ),
    "delete_confirm": ("Delete", "احذف"),
    "deleted_chat_done": ("Deleted “{title}”.", "حُذفت «{title}»."),
    "forgot_chat": ("Kazma forgot what it learned in this chat; its messages stay.", "نسيت كازما ما تعلّمته في هذه الدردشة؛ وتبقى رسائلها."),
    "keys_help": (
        "Keys: Ctrl+Shift+O a new chat · Shift+Esc the message box · Esc stops the answer · Ctrl+K searches the chats · "
        "Enter sends, Shift+Enter a new line.",
        "المفاتيح: Ctrl+Shift+O دردشة جديدة · Shift+Esc مربع الرسالة · Esc يوقف الإجابة · Ctrl+K يبحث في الدردشات · "
        "Enter يرسل، وShift+Enter سطر جديد.",
    ),
    "model_heading": ("Model", "النموذج"),
    "model_at_start": (
        "Chosen when Kazma starts, from its configuration (see the README): change it there, then restart. The key is never shown.",
        "يُختار عند بدء كازما، من إعداداتها (انظر ملف README): غيّره هناك، ثم أعد التشغيل. لا يُعرض المفتاح أبدًا.",
    ),
    "model_provider": ("Provider", "المزوّد"),
    "model_name": ("Model name", "اسم النموذج"),
    "model_base_url": ("Server address", "عنوان الخادم"),
    "model_system_prompt": ("System prompt", "موجّه النظام"),
    "model_provider_offline": ("Offline (built in, for trying Kazma)", "دون اتصال (مدمج، لتجربة كازما)"),
    "model_provider_openai": ("OpenAI-compatible", "متوافق مع OpenAI"),
    "model_provider_anthropic": ("Anthropic", "أنثروبيك (Anthropic)"),
    # Compare's words (issue 23, point 9)
    "cost_input_tokens": ("Tokens read", "الرموز المقروءة"),
    "cost_output_tokens": ("Tokens written", "الرموز المكتوبة"),
    "cost_model_calls": ("Model calls", "نداءات النموذج"),
    "show_all": ("Show all ({count} characters)", "اعرض الكل ({count} حرفًا)"),
    "show_less": ("Show less", "اعرض أقل"),
    "theme": ("Theme", "المظهر"),
    "theme_auto": ("As the browser", "كالمتصفح"),
    "theme_light": ("Light", "فاتح"),
    "theme_dark": ("Dark", "داكن"),
}

# A size, as kazma_core.sizes.human_size and the pages' Kazma.size say it.
SIZES: dict[str, Text] = {
    "size_b": Text("{n} B", "{n} بايت"),
    "size_kb": Text("{n} KB", "{n} ك.ب"),
    "size_mb": Text("{n} MB", "{n} م.ب"),
    "size_gb": Text("{n} GB", "{n} غ.ب"),
}
WEB_MANAGE.update({key: (text.en, text.ar) for key, text in SIZES.items()})

TERMINAL_MANAGE: dict[str, Text] = {
    "rename_prompt": Text("A new title for “{title}” (Enter keeps it, Esc cancels):", "عنوان جديد لـ«{title}» (Enter للحفظ، Esc للإلغاء):"),
    "renamed": Text("Renamed to “{title}”.", "أُعيدت التسمية إلى «{title}»."),
    "delete_question": Text(
        "Delete “{title}”? c: the whole chat (its messages, saved steps and what Kazma learned in it); "
        "l: only what Kazma learned in it (the messages stay); Esc: keep it.",
        "هل تحذف «{title}»؟ c: الدردشة كلها (رسائلها وخطواتها المحفوظة وما تعلّمته كازما فيها)؛ "
        "l: ما تعلّمته كازما فيها فقط (تبقى الرسائل)؛ Esc: أبقِها.",
    ),
    "deleted": Text("Deleted “{title}”.", "حُذفت «{title}»."),
    "forgot": Text("Kazma forgot what it learned in “{title}”; its messages stay.", "نسيت كازما ما تعلّمته في «{title}»؛ وتبقى رسائلها."),
}
