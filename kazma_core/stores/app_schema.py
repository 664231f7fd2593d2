"""kazma.db: the schema as numbered migrations (append only; never edit a shipped one)."""

from __future__ import annotations

from kazma_core.stores import bodies

MIGRATIONS: list[str] = [
    # 1: users, chats, transcript, memory, approvals, leases, settings.
    """
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL DEFAULT 'user',
        lang TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    );
    CREATE TABLE tokens (
        hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL
    );
    CREATE TABLE identities (
        platform_key TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE
    );
    CREATE TABLE chats (
        id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL REFERENCES users(id),
        title TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_turn INTEGER NOT NULL DEFAULT 0,
        memory INTEGER NOT NULL DEFAULT 1,
        forked_from_chat TEXT,
        forked_from_step TEXT,
        forked_from_turn INTEGER,
        forked_from_iteration INTEGER
    );
    CREATE INDEX chats_owner ON chats(owner_id, created_at);
    CREATE TABLE transcript (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index INTEGER NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX transcript_chat ON transcript(chat_id, id);
    CREATE TABLE facts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index INTEGER NOT NULL,
        iteration INTEGER NOT NULL DEFAULT 0,
        text TEXT NOT NULL,
        forgotten_turn INTEGER,
        forgotten_iteration INTEGER,
        created_at REAL NOT NULL
    );
    CREATE INDEX facts_chat ON facts(chat_id, turn_index);
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        turn_index INTEGER NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        decided_by TEXT,
        decided_at REAL,
        UNIQUE (chat_id, tool_call_id)
    );
    CREATE INDEX approvals_chat ON approvals(chat_id, status);
    CREATE TABLE leases (
        chat_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        purpose TEXT NOT NULL,
        expires_at REAL NOT NULL
    );
    CREATE TABLE settings_overrides (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE restore_intents (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL,
        step_id TEXT NOT NULL,
        state TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE bindings (
        platform_chat TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        is_group INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE alerts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at REAL NOT NULL,
        acknowledged_at REAL
    )
    """,
    # 2: the conversation store (LangGraph's checkpoints by reference; a fork shares its source's body
    # space; transcript rows refer to bodies).
    bodies.ddl("conv_bodies")
    + """;
    CREATE TABLE checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        run_id TEXT,
        type TEXT NOT NULL,
        checkpoint BLOB NOT NULL,
        metadata TEXT NOT NULL,
        msg_refs BLOB,
        msg_count INTEGER,
        msg_bytes INTEGER,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    );
    CREATE INDEX checkpoints_run ON checkpoints(run_id);
    CREATE TABLE writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_path TEXT NOT NULL DEFAULT '',
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT,
        value BLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    );
    """
    + bodies.spaces_ddl("conv_spaces")
    + """;
    ALTER TABLE transcript ADD COLUMN body_n INTEGER;
    CREATE INDEX transcript_body ON transcript(chat_id, body_n)
    """,
    # 3: where a chat lives in a chat app: a whole chat, or a thread or topic opened for a fork.
    """
    ALTER TABLE bindings ADD COLUMN place TEXT NOT NULL DEFAULT 'chat';
    ALTER TABLE bindings ADD COLUMN label TEXT NOT NULL DEFAULT '';
    CREATE INDEX bindings_chat ON bindings(chat_id)
    """,
    # 4: what a restore took back, kept aside (by the restore's id) until its undo, the chat's next
    # turn, or a forgetting; and each chat's last restore, with what an undo needs to put back.
    """
    CREATE TABLE undos (
        chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        restore_id TEXT NOT NULL,
        step_id TEXT NOT NULL,
        state TEXT NOT NULL,
        checkpoint_before TEXT,
        last_turn_before INTEGER NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL
    );
    CREATE TABLE kept_transcript (
        restore_id TEXT NOT NULL,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        turn_index INTEGER NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at REAL NOT NULL,
        body_n INTEGER
    );
    CREATE INDEX kept_transcript_chat ON kept_transcript(chat_id, body_n);
    CREATE TABLE kept_facts (
        restore_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        turn_index INTEGER NOT NULL,
        iteration INTEGER NOT NULL,
        text TEXT NOT NULL,
        forgotten_turn INTEGER,
        forgotten_iteration INTEGER,
        created_at REAL NOT NULL
    );
    CREATE INDEX kept_facts_chat ON kept_facts(chat_id);
    CREATE TABLE kept_approvals (
        restore_id TEXT NOT NULL,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        turn_index INTEGER NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        decided_by TEXT,
        decided_at REAL
    );
    CREATE INDEX kept_approvals_chat ON kept_approvals(chat_id)
    """,
    # 5: several replicas on one database: the chat apps' leader (one replica polls Telegram, holds the
    # Discord gateway and Slack's socket), the daily jobs each claimed by one replica for the day, and
    # the events too big for a PostgreSQL notification, relayed by reference for a minute or so.
    """
    CREATE TABLE leaders (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at REAL NOT NULL,
        since REAL NOT NULL
    );
    CREATE TABLE job_claims (
        name TEXT NOT NULL,
        day TEXT NOT NULL,
        holder TEXT NOT NULL,
        claimed_at REAL NOT NULL,
        PRIMARY KEY (name, day)
    );
    CREATE TABLE relayed_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        payload TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX relayed_events_age ON relayed_events(created_at)
    """,
    # 6: which chat-app message is which transcript row (a reply, a message command or a shortcut acts on
    # that row's step; a restore marks the bot's messages it took back). Platform ids live here only,
    # never in the agent's state; the rows go with their chat.
    """
    CREATE TABLE message_links (
        place TEXT NOT NULL,
        message TEXT NOT NULL,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        row_id INTEGER NOT NULL,
        by_bot INTEGER NOT NULL DEFAULT 0,
        text TEXT NOT NULL DEFAULT '',
        rewound INTEGER NOT NULL DEFAULT 0,
        lang TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        PRIMARY KEY (place, message)
    );
    CREATE INDEX message_links_chat ON message_links(chat_id, row_id)
    """,
    # 7: versions (issue 22): a chat an edit or a regenerate made from another, the turn it made
    # anew, and its conversation (the first chat of the versions, which the chat lists show once).
    """
    CREATE TABLE chat_versions (
        chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL,
        version_of TEXT NOT NULL,
        turn_index INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX chat_versions_conversation ON chat_versions(conversation)
    """,
    # 8: an operator alert keeps its sentence's id and parameters, so the owner reads it in their
    # language (rows from before keep their English message only).
    """
    ALTER TABLE alerts ADD COLUMN message_id TEXT;
    ALTER TABLE alerts ADD COLUMN params TEXT
    """,
]
