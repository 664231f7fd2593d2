"""How a person names a step: its id, or a prefix of it. One rule for every surface.

The rewind service resolves an address within one chat (`RewindService.resolve`); the HTTP
API documents the same bounds, and the chat apps' Arabic sentence names the same minimum.
This module imports nothing heavy, so a surface that only words errors (the TUI) can use it.
"""

from __future__ import annotations

import re

from kazma_core.errors import InvalidStep

MIN_PREFIX = 8  # shorter prefixes of a 32-character random id would collide too often
MAX_ADDRESS = 64  # anything longer is not a step id; it is cut before it is echoed back
HEX = re.compile(r"[0-9a-f]+")


def step_prefix(address: str) -> tuple[str, str]:
    """(the address as given, cut to its bounds; its lowercase hex prefix), or invalid_step with the reason."""
    given = (address or "").strip()[:MAX_ADDRESS]
    prefix = given.lower()
    if not HEX.fullmatch(prefix):
        raise InvalidStep(message_id="not_a_step", address=given, reason="not_hex", min_length=MIN_PREFIX)
    if len(prefix) < MIN_PREFIX:
        raise InvalidStep(message_id="step_too_short", address=given, reason="too_short", min_length=MIN_PREFIX)
    return given, prefix
