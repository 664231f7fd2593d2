"""Which running Kazma process this is, as the other replicas sharing its database see it.

A replica is named by its host, its process id and a random id drawn at start (the boot
id): a process started again with the same pid (a container's pid 1 after a restart) is
still a new replica, so what the old one held is known to be gone.
"""

from __future__ import annotations

import os
import socket
import uuid

HOST = socket.gethostname()
_LIFE: tuple[int, str] = (0, "")  # (the process id, its boot id), drawn at the process's first ask


def boot_id() -> str:
    """This process's boot id, drawn the first time it is asked for. A process forked from one that
    had drawn it draws its own: it is another replica (its pid tells)."""
    global _LIFE  # noqa: PLW0603  (one per process)
    pid = os.getpid()
    if _LIFE[0] != pid:
        _LIFE = (pid, uuid.uuid4().hex[:12])
    return _LIFE[1]


def replica_id() -> str:
    """This process's name as the other replicas see it: host, process id and boot id."""
    return f"{HOST}:{os.getpid()}:{boot_id()}"


def replica_is_dead(replica: str) -> bool:
    """True only when the replica is known to be gone: a process of this host that no longer runs,
    or an earlier life of this very process id. About other hosts it cannot know: False."""
    host, _, rest = replica.partition(":")
    pid, _, boot = rest.partition(":")
    if host != HOST or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return boot.split(":", 1)[0] != boot_id()
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
