"""What help says of each command of the registry (commands/registry.py), by its path, and of its arguments."""

from __future__ import annotations

from kazma_core.catalogue.text import Text

# A command by its path ("replay compare"), an argument as "arg.<name>"; "page_link": what a
# time-travel command does in the web chat (it answers with a link to the Time Travel page).
HELP: dict[str, Text] = {
    "arg.step": Text("The step’s id, or its first 8 or more characters (from /replay list)", "معرّف الخطوة، أو أول 8 أحرف منه أو أكثر (من /replay list)"),
    "arg.here": Text("Keep the fork here, as a chat of its own on the web, instead of opening a thread or topic for it", "إبقاء التفريع هنا، دردشةً مستقلة على الويب، بدل فتح سلسلة أو موضوع له"),
    # files travel too: what a restore takes back besides the conversation
    "arg.what": Text("files: the files the chat's tools wrote, as at the step; both: files and conversation", "files: ملفات أدوات الدردشة كما كانت في الخطوة؛ both: الملفات والمحادثة"),
    "arg.force": Text("Overwrite files something else changed since (look at them first)", "الكتابة فوق ملفات غيّرها شيء آخر منذ ذلك (انظر فيها أولًا)"),
    "page_link": Text("How many steps this chat saved, and a link that opens the Time Travel page on it", "كم خطوة حُفظت لهذه الدردشة، ورابط يفتح صفحة السفر عبر الزمن عليها"),
    "replay": Text("Time travel: this chat’s saved steps (list, restore, undo, show, compare, clear)", "السفر عبر الزمن: الخطوات المحفوظة لهذه الدردشة (عرض، استعادة، تراجع، مقارنة، حذف)"),
    "replay list": Text("This chat’s saved steps, turn by turn, with their ids", "الخطوات المحفوظة لهذه الدردشة، دورةً بدورة، مع معرّفاتها"),
    "replay restore": Text("Restore this chat to that step (the first eight characters of its id are enough)", "استعادة هذه الدردشة إلى تلك الخطوة (تكفي الأحرف الثمانية الأولى من معرّفها)"),
    "replay undo": Text("Undo this chat’s last restore: everything it took back comes back (until the next message)", "التراجع عن آخر استعادة في هذه الدردشة: يعود كل ما سحبته (حتى الرسالة التالية)"),
    "replay show": Text("A step’s messages, plan, routing and cost", "رسائل خطوة وخطتها وتوجيهها وتكلفتها"),
    "replay compare": Text("What differs between two steps", "ما يختلف بين خطوتين"),
    "arg.a": Text("The first step’s id (8 or more characters)", "معرّف الخطوة الأولى (8 أحرف أو أكثر)"),
    "arg.b": Text("The second step’s id (8 or more characters); <chat>:<step> for a step of a fork or of its source", "معرّف الخطوة الثانية (8 أحرف أو أكثر)؛ أو <دردشة>:<خطوة> لخطوة من تفريع أو من أصله"),
    "replay clear": Text("Delete this chat’s saved steps", "حذف الخطوات المحفوظة لهذه الدردشة"),
    "fork": Text("Fork: branch that step into a new chat, owned by you, in a thread or topic where the app has one", "تفريع: تفريع تلك الخطوة إلى دردشة جديدة تملكها أنت، في سلسلة أو موضوع إن كان التطبيق يتيحه"),
    "stop": Text("Stop the turn that is running in this chat, at its next step", "إيقاف الدورة الجارية في هذه الدردشة، عند خطوتها التالية"),
    "reset": Text("Start the conversation afresh (the saved steps are kept)", "بدء المحادثة من جديد (تبقى الخطوات المحفوظة)"),
    "memory": Text("Kazma’s memory in this chat", "ذاكرة كازما في هذه الدردشة"),
    "memory off": Text("Stop remembering here, and forget what Kazma learned in this chat, steps included", "إيقاف التذكّر هنا، ونسيان ما تعلمته كازما في هذه الدردشة، بما فيه الخطوات"),
    "help": Text("The commands you can use here", "الأوامر التي يمكنك استخدامها هنا"),
}
