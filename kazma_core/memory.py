"""Memory a large read used, given back to the system once it is answered.

A whole transcript or step of a long chat builds tens of MB of short-lived objects. Python
frees them, but the C allocator (glibc) keeps the freed pages in its heaps, fragmented, so
the server's resident memory stayed at its peak (about 270 MB after one whole read of a
10,000-message chat). ``malloc_trim`` hands the free pages back; where the C library has no
such call (musl, macOS), nothing happens.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_trim = getattr(_libc, "malloc_trim", None)


def give_back() -> None:
    """Return the allocator's free memory to the system (a few ms: run it off the event loop)."""
    if _trim is not None:
        _trim(0)
