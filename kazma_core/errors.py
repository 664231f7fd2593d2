"""Typed errors: each carries a stable code and a sentence that tells a person what to do."""

from __future__ import annotations

import re
from typing import Any

from kazma_core.catalogue import error_sentence

# An absolute file path (two parts or more), not the path part of a URL (that follows a host name).
_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.~-]+/)+[\w.~-]*")


class KazmaError(Exception):
    """Base of every error a surface may show to a person."""

    code: str = "error"
    status: int = 400

    def __init__(self, message: str | None = None, *, message_id: str | None = None, **details: Any) -> None:
        # The sentence's id in kazma_core.catalogue's errors; `details` are its parameters. The
        # English `message` is that sentence filled with them, and a surface words the error in
        # the person's language from the id and parameters, never from the English text.
        if message is None:
            if message_id is None:
                raise TypeError("a KazmaError needs its sentence's message_id")
            message = error_sentence(message_id, "en", details)
        super().__init__(message)
        self.message = message
        self.message_id = message_id
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        named = {"message_id": self.message_id} if self.message_id else {}
        return {"error": self.code, "message": self.message, **named, **self.details}


class NotFound(KazmaError):
    code = "not_found"
    status = 404


class TurnRunning(KazmaError):
    code = "turn_running"
    status = 409


class LeaseLost(KazmaError):
    """The chat's lease expired and another server took it while this one still worked on it."""

    code = "lease_lost"
    status = 409


class ApprovalPending(KazmaError):
    code = "approval_pending"
    status = 409


class SnapshotTruncated(KazmaError):
    code = "snapshot_truncated"
    status = 409


class AmbiguousStep(KazmaError):
    code = "ambiguous_step"
    status = 400


class InvalidStep(KazmaError):
    code = "invalid_step"
    status = 400


class StoreUnavailable(KazmaError):
    code = "store_unavailable"
    status = 503


class InvalidInput(KazmaError):
    code = "invalid_input"
    status = 400


class Unauthorized(KazmaError):
    code = "unauthorized"
    status = 401


class Forbidden(KazmaError):
    code = "forbidden"
    status = 403


class ApprovalClosed(KazmaError):
    code = "approval_closed"
    status = 409


class WrongMessage(KazmaError):
    """The message cannot take that action (an edit of an answer, a rewind to before the first message)."""

    code = "wrong_message"
    status = 409


class SettingsError(KazmaError):
    code = "invalid_setting"
    status = 400


class FilesChanged(KazmaError):
    """A restore would overwrite files something other than the chat's tools changed since."""

    code = "files_changed"
    status = 409


class TurnFailed(KazmaError):
    code = "turn_failed"
    status = 502


class QuotaExceeded(KazmaError):
    code = "quota_exceeded"
    status = 413


class MessageTooLong(KazmaError):
    code = "message_too_long"
    status = 422


def without_paths(text: str) -> str:
    """The text with every absolute file path replaced: a person never learns the server's layout."""
    return _PATH.sub("…", text)
