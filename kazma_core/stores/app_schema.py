"""kazma.db: the schema as numbered migrations (append only; never edit a shipped one).

Each is written once for both engines, its column types as slots (``{text}``, ``{int}``, ``{real}``,
``{blob}``, ``{id}``) that each engine fills with its own words (stores/engine.py ``ddl``): what each
renders is, byte for byte, the script that shipped (the types once were SQLite's words, rewritten for
PostgreSQL), so a database made before runs on unchanged."""

from __future__ import annotations

from kazma_core.stores import bodies

MIGRATIONS: list[str] = [
    # 1: users, chats, transcript, memory, approvals, leases, settings.
    """
    CREATE TABLE users (
        id {text} PRIMARY KEY,
        name {text} NOT NULL UNIQUE,
        role {text} NOT NULL DEFAULT 'user',
        lang {text} NOT NULL DEFAULT '',
        created_at {real} NOT NULL
    );
    CREATE TABLE tokens (
        hash {text} PRIMARY KEY,
        user_id {text} NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        kind {text} NOT NULL,
        created_at {real} NOT NULL,
        expires_at {real}
    );
    CREATE TABLE identities (
        platform_key {text} PRIMARY KEY,
        user_id {text} NOT NULL REFERENCES users(id) ON DELETE CASCADE
    );
    CREATE TABLE chats (
        id {text} PRIMARY KEY,
        owner_id {text} NOT NULL REFERENCES users(id),
        title {text} NOT NULL,
        created_at {real} NOT NULL,
        last_turn {int} NOT NULL DEFAULT 0,
        memory {int} NOT NULL DEFAULT 1,
        forked_from_chat {text},
        forked_from_step {text},
        forked_from_turn {int},
        forked_from_iteration {int}
    );
    CREATE INDEX chats_owner ON chats(owner_id, created_at);
    CREATE TABLE transcript (
        id {id},
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index {int} NOT NULL,
        role {text} NOT NULL,
        text {text} NOT NULL,
        created_at {real} NOT NULL
    );
    CREATE INDEX transcript_chat ON transcript(chat_id, id);
    CREATE TABLE facts (
        id {id},
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index {int} NOT NULL,
        iteration {int} NOT NULL DEFAULT 0,
        text {text} NOT NULL,
        forgotten_turn {int},
        forgotten_iteration {int},
        created_at {real} NOT NULL
    );
    CREATE INDEX facts_chat ON facts(chat_id, turn_index);
    CREATE TABLE approvals (
        id {text} PRIMARY KEY,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index {int} NOT NULL,
        tool_call_id {text} NOT NULL,
        tool {text} NOT NULL,
        args {text} NOT NULL,
        status {text} NOT NULL DEFAULT 'pending',
        created_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        decided_by {text},
        decided_at {real},
        UNIQUE (chat_id, tool_call_id)
    );
    CREATE INDEX approvals_chat ON approvals(chat_id, status);
    CREATE TABLE leases (
        chat_id {text} PRIMARY KEY,
        holder {text} NOT NULL,
        purpose {text} NOT NULL,
        expires_at {real} NOT NULL
    );
    CREATE TABLE settings_overrides (
        key {text} PRIMARY KEY,
        value {text} NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE restore_intents (
        id {text} PRIMARY KEY,
        chat_id {text} NOT NULL,
        step_id {text} NOT NULL,
        state {text} NOT NULL,
        payload {text} NOT NULL,
        created_at {real} NOT NULL
    );
    CREATE TABLE bindings (
        platform_chat {text} PRIMARY KEY,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        is_group {int} NOT NULL DEFAULT 0
    );
    CREATE TABLE alerts (
        id {id},
        kind {text} NOT NULL,
        message {text} NOT NULL,
        created_at {real} NOT NULL,
        acknowledged_at {real}
    )
    """,
    # 2: the conversation store (LangGraph's checkpoints by reference; a fork shares its source's body
    # space; transcript rows refer to bodies).
    bodies.ddl("conv_bodies")
    + """;
    CREATE TABLE checkpoints (
        thread_id {text} NOT NULL,
        checkpoint_ns {text} NOT NULL DEFAULT '',
        checkpoint_id {text} NOT NULL,
        parent_checkpoint_id {text},
        run_id {text},
        type {text} NOT NULL,
        checkpoint {blob} NOT NULL,
        metadata {text} NOT NULL,
        msg_refs {blob},
        msg_count {int},
        msg_bytes {int},
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    );
    CREATE INDEX checkpoints_run ON checkpoints(run_id);
    CREATE TABLE writes (
        thread_id {text} NOT NULL,
        checkpoint_ns {text} NOT NULL DEFAULT '',
        checkpoint_id {text} NOT NULL,
        task_id {text} NOT NULL,
        task_path {text} NOT NULL DEFAULT '',
        idx {int} NOT NULL,
        channel {text} NOT NULL,
        type {text},
        value {blob},
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    );
    """
    + bodies.spaces_ddl("conv_spaces")
    + """;
    ALTER TABLE transcript ADD COLUMN body_n {int};
    CREATE INDEX transcript_body ON transcript(chat_id, body_n)
    """,
    # 3: where a chat lives in a chat app: a whole chat, or a thread or topic opened for a fork.
    """
    ALTER TABLE bindings ADD COLUMN place {text} NOT NULL DEFAULT 'chat';
    ALTER TABLE bindings ADD COLUMN label {text} NOT NULL DEFAULT '';
    CREATE INDEX bindings_chat ON bindings(chat_id)
    """,
    # 4: what a restore took back, kept aside (by the restore's id) until its undo, the chat's next
    # turn, or a forgetting; and each chat's last restore, with what an undo needs to put back.
    """
    CREATE TABLE undos (
        chat_id {text} PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        restore_id {text} NOT NULL,
        step_id {text} NOT NULL,
        state {text} NOT NULL,
        checkpoint_before {text},
        last_turn_before {int} NOT NULL,
        created_at {real} NOT NULL,
        expires_at {real} NOT NULL
    );
    CREATE TABLE kept_transcript (
        restore_id {text} NOT NULL,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id {int} NOT NULL,
        turn_index {int} NOT NULL,
        role {text} NOT NULL,
        text {text} NOT NULL,
        created_at {real} NOT NULL,
        body_n {int}
    );
    CREATE INDEX kept_transcript_chat ON kept_transcript(chat_id, body_n);
    CREATE TABLE kept_facts (
        restore_id {text} NOT NULL,
        kind {text} NOT NULL,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id {int} NOT NULL,
        turn_index {int} NOT NULL,
        iteration {int} NOT NULL,
        text {text} NOT NULL,
        forgotten_turn {int},
        forgotten_iteration {int},
        created_at {real} NOT NULL
    );
    CREATE INDEX kept_facts_chat ON kept_facts(chat_id);
    CREATE TABLE kept_approvals (
        restore_id {text} NOT NULL,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id {text} NOT NULL,
        turn_index {int} NOT NULL,
        tool_call_id {text} NOT NULL,
        tool {text} NOT NULL,
        args {text} NOT NULL,
        status {text} NOT NULL,
        created_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        decided_by {text},
        decided_at {real}
    );
    CREATE INDEX kept_approvals_chat ON kept_approvals(chat_id)
    """,
    # 5: several replicas on one database: the chat apps' leader (one replica polls Telegram, holds the
    # Discord gateway and Slack's socket), the daily jobs each claimed by one replica for the day, and
    # the events too big for a PostgreSQL notification, relayed by reference for a minute or so.
    """
    CREATE TABLE leaders (
        name {text} PRIMARY KEY,
        holder {text} NOT NULL,
        expires_at {real} NOT NULL,
        since {real} NOT NULL
    );
    CREATE TABLE job_claims (
        name {text} NOT NULL,
        day {text} NOT NULL,
        holder {text} NOT NULL,
        claimed_at {real} NOT NULL,
        PRIMARY KEY (name, day)
    );
    CREATE TABLE relayed_events (
        id {id},
        payload {text} NOT NULL,
        created_at {real} NOT NULL
    );
    CREATE INDEX relayed_events_age ON relayed_events(created_at)
    """,
    # 6: which chat-app message is which transcript row (a reply, a message command or a shortcut acts on
    # that row's step; a restore marks the bot's messages it took back). Platform ids live here only,
    # never in the agent's state; the rows go with their chat.
    """
    CREATE TABLE message_links (
        place {text} NOT NULL,
        message {text} NOT NULL,
        chat_id {text} NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        row_id {int} NOT NULL,
        by_bot {int} NOT NULL DEFAULT 0,
        text {text} NOT NULL DEFAULT '',
        rewound {int} NOT NULL DEFAULT 0,
        lang {text} NOT NULL DEFAULT '',
        created_at {real} NOT NULL,
        PRIMARY KEY (place, message)
    );
    CREATE INDEX message_links_chat ON message_links(chat_id, row_id)
    """,
    # 7: versions (issue 22): a chat an edit or a regenerate made from another, the turn it made
    # anew, and its conversation (the first chat of the versions, which the chat lists show once).
    """
    CREATE TABLE chat_versions (
        chat_id {text} PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        conversation {text} NOT NULL,
        version_of {text} NOT NULL,
        turn_index {int} NOT NULL,
        created_at {real} NOT NULL
    );
    CREATE INDEX chat_versions_conversation ON chat_versions(conversation)
    """,
    # 8: an operator alert keeps its sentence's id and parameters, so the owner reads it in their
    # language (rows from before keep their English message only).
    """
    ALTER TABLE alerts ADD COLUMN message_id {text};
    ALTER TABLE alerts ADD COLUMN params {text}
    """,
    # 9: a fork shares its source's transcript rows instead of copying them (transcript_sql.py): which
    # rows, and a row's place (`pos`: a row a fork made its own keeps its place in the source); what
    # comes after a step found by turn (a restore of a long chat reads the rows it takes back).
    """
    CREATE INDEX transcript_turn ON transcript(chat_id, turn_index);
    ALTER TABLE transcript ADD COLUMN pos {int};
    ALTER TABLE kept_transcript ADD COLUMN pos {int};
    CREATE INDEX transcript_place ON transcript(chat_id, (coalesce(pos, id)));
    CREATE TABLE transcript_shares (
        chat_id {text} PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        source {text} NOT NULL REFERENCES chats(id),
        upto {int} NOT NULL,
        turn_index {int} NOT NULL,
        answer {int} NOT NULL
    );
    CREATE INDEX transcript_shares_source ON transcript_shares(source, upto)
    """,
]
