"""What the `kazma` command prints (serve, users, maintain, backup, migrate), English then Arabic.

A key ending in _one, _two, _few or _many is a plural form of the key before it (`counted`).
"""

from __future__ import annotations

from kazma_core.catalogue.text import Text

CLI: dict[str, Text] = {
    # what `kazma --help` and each command's --help say (help_<command>_<option>)
    "help_kazma": Text("Kazma: a self-hosted chat agent with time travel.", "كازما: وكيل دردشة تستضيفه بنفسك، فيه سفر عبر الزمن."),
    "help_help": Text("show this help and exit", "اعرض هذه المساعدة واخرج"),
    "help_data_dir": Text(
        "the data folder, whose settings are read (default: $KAZMA_DATA_DIR, else ./kazma-data)",
        "مجلد البيانات الذي تُقرأ إعداداته (الافتراضي: $KAZMA_DATA_DIR، وإلا ./kazma-data)",
    ),
    "help_serve": Text("start the web/API server (and configured chat-app bots)", "شغّل خادم الويب/API (وبوتات تطبيقات الدردشة المضبوطة)"),
    "help_serve_host": Text("the address to listen on (default: the setting server.host)", "العنوان الذي يُستمع عليه (الافتراضي: الإعداد server.host)"),
    "help_serve_port": Text("the port to listen on (default: the setting server.port)", "المنفذ الذي يُستمع عليه (الافتراضي: الإعداد server.port)"),
    "help_users": Text("manage users", "أدر المستخدمين"),
    "help_users_add": Text("create a user (or reuse one) and print a new API token", "أنشئ مستخدمًا (أو أعد استعمال موجود) واطبع رمز API جديدًا"),
    "help_users_add_role": Text("the user's role (default: user)", "دور المستخدم (الافتراضي: user)"),
    "help_users_name": Text("the user's name", "اسم المستخدم"),
    "help_users_link": Text("link a platform identity to a user", "اربط هوية منصة بمستخدم"),
    "help_users_link_identity": Text("telegram:<id>, discord:<id> or slack:<team>:<id>", "telegram:<id> أو discord:<id> أو slack:<team>:<id>"),
    "help_users_list": Text("every user: role, chats and the storage they use", "كل المستخدمين: الدور والدردشات والمساحة التي يستعملونها"),
    "help_users_token": Text(
        "give a user a new API token; every older token and sign-in stops working",
        "أعطِ مستخدمًا رمز API جديدًا؛ يتوقف كل رمز وجلسة دخول أقدم",
    ),
    "help_users_remove": Text(
        "remove a user with their chats, steps, memories and files", "أزل مستخدمًا مع دردشاته وخطواته وذكرياته وملفاته",
    ),
    "help_users_remove_yes": Text("do it (without it, only say what would go)", "نفّذ (وبدونه يُقال فقط ما سيُزال)"),
    "help_slack_manifest": Text(
        "print a Slack app manifest declaring every slash command Kazma answers",
        "اطبع بيان تطبيق Slack يعلن كل أمر مائل تجيبه كازما",
    ),
    "help_slack_manifest_url": Text(
        "where Slack reaches this server (default: the settings' public address)",
        "حيث يصل Slack إلى هذا الخادم (الافتراضي: العنوان العام في الإعدادات)",
    ),
    "help_slack_manifest_socket_mode": Text(
        "the app connects over Socket Mode (no request URLs)", "يتصل التطبيق عبر Socket Mode (بلا عناوين طلبات)",
    ),
    "help_tui": Text("the terminal UI, over the server's HTTP API", "واجهة الطرفية، عبر واجهة HTTP للخادم"),
    "help_tui_url": Text(
        "the server (default: $KAZMA_URL, else the settings' server address)",
        "الخادم (الافتراضي: $KAZMA_URL، وإلا عنوان الخادم في الإعدادات)",
    ),
    "help_tui_token": Text(
        "an API token from `kazma users add` (default: $KAZMA_TOKEN)", "رمز API من `kazma users add` (الافتراضي: $KAZMA_TOKEN)",
    ),
    "help_maintain": Text("run one clean-up pass now and print what it did", "شغّل جولة تنظيف واحدة الآن واطبع ما فعلته"),
    "help_backup": Text(
        "back up or restore kazma.db (chats and their conversations) and the audit trail",
        "انسخ احتياطيًّا أو استعد kazma.db (الدردشات ومحادثاتها) وسجلّ التدقيق",
    ),
    "help_backup_create": Text(
        "copy the databases (safe while the server runs); never the steps",
        "انسخ قواعد البيانات (آمن والخادم يعمل)؛ لا الخطوات أبدًا",
    ),
    "help_backup_create_out": Text(
        "folder the backup is written under (default: DATA_DIR/backups)",
        "المجلد الذي تُكتب فيه النسخة الاحتياطية (الافتراضي: DATA_DIR/backups)",
    ),
    "help_backup_restore": Text("put a backup back (stop the server first)", "أعد نسخة احتياطية (أوقف الخادم أولًا)"),
    "help_backup_restore_path": Text(
        "the backup folder printed by `kazma backup create`", "مجلد النسخة الاحتياطية الذي طبعه `kazma backup create`",
    ),
    "help_migrate": Text("move Kazma to another machine in one file", "انقل كازما إلى جهاز آخر في ملف واحد"),
    "help_migrate_export": Text(
        "write a migration bundle (databases, settings; never the steps)",
        "اكتب حزمة نقل (قواعد البيانات والإعدادات؛ لا الخطوات أبدًا)",
    ),
    "help_migrate_import": Text("load a migration bundle into an empty data folder", "حمّل حزمة نقل في مجلد بيانات فارغ"),
    "help_migrate_file": Text("the migration bundle's file", "ملف حزمة النقل"),
    # kazma serve
    "starting": Text(
        "Kazma is starting on {url} (data in {data_dir}, model: {provider})",
        "تبدأ كازما على {url} (البيانات في {data_dir}، النموذج: {provider})",
    ),
    "owner_elsewhere": Text(
        "Another replica starting at the same time made the owner: its sign-in link is in its log.",
        "نسخة أخرى بدأت في الوقت نفسه أنشأت المالك: رابط دخوله في سجلّها.",
    ),
    "sign_in": Text("Sign in (one-time link, valid 24 h): {url}", "سجّل الدخول (رابط لمرة واحدة، صالح 24 ساعة): {url}"),
    # kazma users
    "api_token": Text(
        "API token for {name} (send as Authorization: Bearer <token>):",
        "رمز API لـ {name} (أرسله هكذا: Authorization: Bearer <token>):",
    ),
    "linked": Text("Linked {identity} to {name}.", "رُبطت {identity} بـ {name}."),
    "users_header": Text("Name\tRole\tChats\tStorage used", "الاسم\tالدور\tالدردشات\tالمساحة المستعملة"),
    "users_storage": Text("{used} of {quota}", "{used} من {quota}"),
    "no_users": Text(
        "No users yet: `kazma serve` makes the owner on its first start.",
        "لا مستخدمين بعد: ينشئ `kazma serve` المالك عند أول بدء.",
    ),
    "new_token": Text(
        "New API token for {name} ({ended} ended; send it as Authorization: Bearer <token>):",
        "رمز API جديد لـ {name} ({ended}؛ أرسله هكذا: Authorization: Bearer <token>):",
    ),
    "ended_tokens": Text("{count} older tokens and sign-ins", "انتهت {count} من الرموز وجلسات الدخول الأقدم"),
    "ended_tokens_one": Text("1 older token and sign-ins", "انتهى رمز أقدم واحد وجلسات الدخول"),
    "ended_tokens_zero": Text("no older tokens", "لا رموز أقدم"),
    "removed": Text(
        "Removed {name}: {chats} with their memories, {steps}, {files} of files, tokens and linked chat apps.",
        "أُزيل {name}: {chats} مع ذكرياتها، و{steps}، و{files} من الملفات، والرموز وتطبيقات الدردشة المربوطة.",
    ),
    "audit_kept": Text(
        "The audit trail of their restores and forks is kept.", "سجلّ التدقيق لاستعاداته وتفريعاته باقٍ.",
    ),
    # counts
    "chats": Text("{count} chats", "{count} دردشة"),
    "chats_one": Text("1 chat", "دردشة واحدة"),
    "chats_two": Text("2 chats", "دردشتان"),
    "chats_few": Text("{count} chats", "{count} دردشات"),
    "chats_zero": Text("0 chats", "0 دردشة"),
    "steps": Text("{count} steps", "{count} خطوة"),
    "steps_one": Text("1 step", "خطوة واحدة"),
    "steps_two": Text("2 steps", "خطوتان"),
    "steps_few": Text("{count} steps", "{count} خطوات"),
    "steps_zero": Text("0 steps", "0 خطوة"),
    "saved_steps": Text("{count} saved steps", "{count} خطوة محفوظة"),
    "saved_steps_one": Text("1 saved step", "خطوة محفوظة واحدة"),
    "saved_steps_two": Text("2 saved steps", "خطوتان محفوظتان"),
    "saved_steps_few": Text("{count} saved steps", "{count} خطوات محفوظة"),
    "saved_steps_zero": Text("0 saved steps", "0 خطوة محفوظة"),
    "days": Text("{count} days", "{count} يومًا"),
    "days_one": Text("1 day", "يوم واحد"),
    "days_two": Text("2 days", "يومين"),
    "days_few": Text("{count} days", "{count} أيام"),
    "days_zero": Text("0 days", "0 يوم"),
    "checkpoints": Text("{count} checkpoints", "{count} نقطة حفظ"),
    "checkpoints_one": Text("1 checkpoint", "نقطة حفظ واحدة"),
    "checkpoints_two": Text("2 checkpoints", "نقطتا حفظ"),
    "checkpoints_few": Text("{count} checkpoints", "{count} نقاط حفظ"),
    "checkpoints_zero": Text("0 checkpoints", "0 نقطة حفظ"),
    "freed_messages": Text("{count} freed messages", "{count} رسالة محرّرة"),
    "freed_messages_one": Text("1 freed message", "رسالة محرّرة واحدة"),
    "freed_messages_two": Text("2 freed messages", "رسالتان محرّرتان"),
    "freed_messages_few": Text("{count} freed messages", "{count} رسائل محرّرة"),
    "freed_messages_zero": Text("0 freed messages", "0 رسالة محرّرة"),
    "audit_rows": Text("{count} audit rows", "{count} صفًّا من سجلّ التدقيق"),
    "audit_rows_one": Text("1 audit row", "صفّ واحد من سجلّ التدقيق"),
    "audit_rows_two": Text("2 audit rows", "صفّان من سجلّ التدقيق"),
    "audit_rows_few": Text("{count} audit rows", "{count} صفوف من سجلّ التدقيق"),
    "audit_rows_zero": Text("0 audit rows", "0 صفّ من سجلّ التدقيق"),
    "overrides": Text("{count} settings overrides", "{count} تعديلًا على الإعدادات"),
    "overrides_one": Text("1 settings override", "تعديل واحد على الإعدادات"),
    "overrides_two": Text("2 settings overrides", "تعديلان على الإعدادات"),
    "overrides_few": Text("{count} settings overrides", "{count} تعديلات على الإعدادات"),
    "overrides_zero": Text("0 settings overrides", "0 تعديل على الإعدادات"),
    # kazma maintain
    "cleanup_of_database": Text("Clean-up of {where} in {url}", "تنظيف {where} في {url}"),
    "cleanup_of_file": Text("Clean-up of {path}", "تنظيف {path}"),
    "settings_now": Text(
        "  settings now: time_travel.retention_days = {days}, time_travel.auto_maintain = {auto}",
        "  الإعدادات الآن: time_travel.retention_days = {days}، time_travel.auto_maintain = {auto}",
    ),
    "by_hand": Text(
        "  auto_maintain is off, so the daily pass leaves steps alone; this pass was asked for by hand",
        "  auto_maintain معطّل، فالتنظيف اليومي لا يمسّ الخطوات؛ هذا التنظيف طُلب يدويًّا",
    ),
    "old_steps_kept": Text(
        "  Old steps: not deleted (auto_maintain is off)", "  الخطوات القديمة: لم تُحذف (auto_maintain معطّل)",
    ),
    "old_steps_deleted": Text(
        "  Steps older than {days} (saved before {when}): {count} deleted",
        "  الخطوات الأقدم من {days} (المحفوظة قبل {when}): حُذف {count}",
    ),
    "orphans_deleted": Text(
        "  Chats that no longer exist: {steps} of {chats} deleted, and the checkpoints of {threads}",
        "  الدردشات التي لم تعد موجودة: حُذفت {steps} من {chats}، ونقاط حفظ {threads}",
    ),
    "no_orphans": Text(
        "  Chats that no longer exist: none left a step or a checkpoint behind",
        "  الدردشات التي لم تعد موجودة: لم تترك أيّ منها خطوة أو نقطة حفظ",
    ),
    "history_pruned": Text(
        "  Chat step history: {checkpoints} deleted (the newest {kept} kept per chat)",
        "  سجلّ خطوات الدردشات: حُذفت {checkpoints} (تُبقى أحدث {kept} لكل دردشة)",
    ),
    "step_bytes": Text(
        "  Saved steps: {before} -> {after} ({freed} freed)", "  الخطوات المحفوظة: {before} -> {after} (حُرّر {freed})",
    ),
    "not_compacted_off": Text("  Not compacted: auto_maintain is off", "  لم يُضغط: auto_maintain معطّل"),
    "compacted": Text("  Compacted{how}: {reason}", "  ضُغط{how}: {reason}"),
    "not_compacted": Text("  Not compacted: {reason}", "  لم يُضغط: {reason}"),
    "compact_wanted": Text(
        "{free} of {size} is free pages (at least {least} and a quarter of the file)",
        "{free} من {size} صفحات فارغة (على الأقل {least} وربع الملف)",
    ),
    "compact_waits_bytes": Text(
        "{free} of {size} is free pages; compaction waits for at least {least}",
        "{free} من {size} صفحات فارغة؛ ينتظر الضغط {least} على الأقل",
    ),
    "compact_waits_share": Text(
        "{free} of {size} is free pages; compaction waits for at least a quarter of the file",
        "{free} من {size} صفحات فارغة؛ ينتظر الضغط ربع الملف على الأقل",
    ),
    "disk_bytes": Text(
        "  {where} on disk: {before} -> {after} ({freed} given back)",
        "  {where} على القرص: {before} -> {after} (أُعيد {freed})",
    ),
    "checks_passed": Text("Checks passed", "نجحت الفحوص"),
    "checks_failed": Text("Checks FAILED", "فشلت الفحوص"),
    "checked_rows": Text(
        "  {verdict}: {left} of {deleted} deleted steps left, {bodies} gone with them, and VACUUM ran. The text of "
        "deleted messages is not looked for in the files: they are the PostgreSQL server's",
        "  {verdict}: بقي {left} من {deleted} خطوة محذوفة، وذهبت معها {bodies}، وجرى VACUUM. لا يُبحث عن نص "
        "الرسائل المحذوفة في الملفات: فهي ملفات خادم PostgreSQL",
    ),
    "checked_files": Text(
        "  {verdict}: {left} of {deleted} deleted steps left; {samples_left} of {samples} text samples of {bodies} "
        "freed messages left in the file or its WAL ({shared} also held by steps kept)",
        "  {verdict}: بقي {left} من {deleted} خطوة محذوفة؛ وبقيت {samples_left} من {samples} عيّنة نصية من {bodies} "
        "رسالة محرّرة في الملف أو في WAL الخاص به ({shared} منها تحملها أيضًا خطوات باقية)",
    ),
    "took": Text("  Took {seconds} s", "  استغرق {seconds} ث"),
    "alert": Text("kazma: alert {id} ({kind}): {message}", "kazma: تنبيه {id} ({kind}): {message}"),
    # kazma backup, kazma migrate
    "stored_in_database": Text(
        "the PostgreSQL database {url} (schemas {app}, {audit})", "قاعدة بيانات PostgreSQL {url} (المخططان {app} و{audit})",
    ),
    "steps_schema": Text("the schema {schema}", "المخطط {schema}"),
    "backup_written": Text("Backup written to {path}", "كُتبت النسخة الاحتياطية في {path}"),
    "from": Text("  from {where}", "  من {where}"),
    "file_entry": Text("  {name}: {size}, sha256 {sha256}", "  {name}: {size}، sha256 {sha256}"),
    "steps_not_backed_up": Text(
        "  {steps} is not in it: saved steps are never backed up.", "  {steps} ليس فيها: الخطوات المحفوظة لا تُنسخ احتياطيًّا أبدًا.",
    ),
    "restore_with": Text("Restore it with: kazma backup restore {path}", "استعدها بـ: kazma backup restore {path}"),
    "restored": Text(
        "Restored {path} (written {created} by Kazma {version}) into {where}",
        "استُعيدت {path} (كُتبت {created} بكازما {version}) إلى {where}",
    ),
    "restore_swept": Text(
        "  Saved steps of chats the backup does not have: {steps} of {chats} deleted",
        "  الخطوات المحفوظة لدردشات ليست في النسخة الاحتياطية: حُذفت {steps} من {chats}",
    ),
    "bundle_written": Text("Migration bundle written to {file} ({size})", "كُتبت حزمة النقل في {file} ({size})"),
    "bundle_leaves_out": Text(
        "  {overrides}; {steps} is not in it (saved steps never travel)",
        "  {overrides}؛ {steps} ليس فيها (الخطوات المحفوظة لا تنتقل أبدًا)",
    ),
    "bundle_private": Text(
        "  It holds your chats and token hashes: keep it private.", "  فيها دردشاتك وبصمات رموزك: احفظها بعيدًا عن الآخرين.",
    ),
    "load_with": Text(
        "Load it with: kazma migrate import {file} --data-dir EMPTY_FOLDER (SQLite), or with {setting} naming an "
        "empty database (PostgreSQL)",
        "حمّلها بـ: kazma migrate import {file} --data-dir EMPTY_FOLDER (SQLite)، أو مع {setting} يسمّي قاعدة "
        "بيانات فارغة (PostgreSQL)",
    ),
    "imported": Text(
        "Imported {file} (written {created} by Kazma {version}, format {format}) into {where}",
        "استُوردت {file} (كُتبت {created} بكازما {version}، الصيغة {format}) إلى {where}",
    ),
    "imported_counts": Text("  {chats}, {checkpoints}, {audit_rows}, {overrides}", "  {chats}، {checkpoints}، {audit_rows}، {overrides}"),
    "setting_left_out": Text("  Setting left out: {why}", "  إعداد لم يُنقل: {why}"),
    "steps_stay": Text(
        "  Saved steps do not travel: Time Travel starts empty here.", "  الخطوات المحفوظة لا تنتقل: يبدأ السفر عبر الزمن فارغًا هنا.",
    ),
}
