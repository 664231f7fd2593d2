"""The audit trail and the metrics of the rewind service: every attempt recorded once.

`Audited.attempt` wraps one action of `kazma_ui/thread_rewind.py`; the row it writes says who,
from which surface, which chat and step, the outcome (ok, a refusal's code, or error) and
what the action filled in on the way (`Attempt`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from kazma_core.core import Core
from kazma_core.errors import KazmaError
from kazma_core.metrics import REWIND_TOTAL
from kazma_core.stores.types import AuditRow, User

METERED = {"restore", "fork", "undo"}


@dataclass
class Attempt:
    """What the audit row of one attempt will say."""

    step_id: str | None = None
    checkpoint_before: str | None = None
    new_chat_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


class Audited:
    def __init__(self, core: Core) -> None:
        self.core = core

    @contextlib.asynccontextmanager
    async def attempt(
        self, action: str, user: User, surface: str, chat_id: str, refusals_only: bool = False
    ) -> AsyncIterator[Attempt]:
        """Record the action's outcome when it ends; with `refusals_only`, only a refusal or an
        error (a preview is audited when it refuses, as the action itself would be)."""
        # An action that could not be recorded is not done: an audit trail that cannot be written
        # answers 503 before anything changes, rather than after.
        await self.core.audit.db.run(lambda conn: None)
        attempt = Attempt()
        outcome = "ok"
        try:
            yield attempt
        except KazmaError as err:
            outcome = err.code
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            if not (refusals_only and outcome == "ok"):
                await self._record(action, user, surface, chat_id, outcome, attempt)

    async def _record(self, action: str, user: User, surface: str, chat_id: str, outcome: str, attempt: Attempt) -> None:
        if action in METERED:
            REWIND_TOTAL.labels(action=action, outcome=outcome).inc()
        await self.core.audit.record(
            AuditRow(
                at=time.time(), user_id=user.id, surface=surface, chat_id=str(chat_id)[:64],
                step_id=attempt.step_id, action=action, outcome=outcome,
                checkpoint_before=attempt.checkpoint_before, new_chat_id=attempt.new_chat_id,
                detail=orjson.dumps(attempt.detail).decode() if attempt.detail else None,
            )
        )
