"""Settings overrides: what the owner changed at run time over the settings file, shared by every replica."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson

from kazma_core.stores.engine import Database


@dataclass(frozen=True)
class SettingsStore:
    """kazma.db's settings overrides, by key."""

    db: Database

    async def set_override(self, key: str, value: Any) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO settings_overrides (key, value, updated_at) VALUES ($1, $2, $3) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, orjson.dumps(value).decode(), time.time()),
            )
        )

    async def overrides(self) -> dict[str, Any]:
        rows = await self.db.run(lambda c: c.execute("SELECT key, value FROM settings_overrides").fetchall())
        return {r["key"]: orjson.loads(r["value"]) for r in rows}
