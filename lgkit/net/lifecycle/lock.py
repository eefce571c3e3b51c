"""One kit network on the machine at a time: a file lock, re-entrant within a process and
inheritable by the run's watchdog (so that it holds the lock while it cleans up)."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lgkit.core import naming

LOCK_PATH = naming.RUNTIME_DIR / "network.lock"

_guard = threading.RLock()
_depth = 0
_fd: int | None = None


@contextmanager
def machine_lock() -> Iterator[int]:
    """Hold the machine-wide network lock; yields its file descriptor."""
    global _depth, _fd
    with _guard:
        if _depth == 0:
            naming.RUNTIME_DIR.mkdir(parents=True, exist_ok=True)
            fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            _fd = fd
        _depth += 1
        assert _fd is not None
        try:
            yield _fd
        finally:
            _depth -= 1
            if _depth == 0:
                os.close(_fd)
                _fd = None
