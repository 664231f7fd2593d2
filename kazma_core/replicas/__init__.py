"""Replica coordination: what lets several `kazma serve` share one database, and one server own a data folder.

- `identity`: which running process this is (host, pid, boot id), as the others see it;
- `leases`: the turn lease, "this chat is busy", taken, renewed, expired, swept;
- `fence`: a chat's writes commit only while their writer still holds its lease;
- `leader`: work that runs on one replica only (the chat-app bots, the clean-up), moving on its death;
- `claims`: the rows replicas agree on (leaders, daily claims) and the lock they start under;
- `relay`: events published on one replica reach the others' buses (PostgreSQL NOTIFY);
- `datalock`: the data folder's lock files (one server per folder; a restore or an import alone).
"""
