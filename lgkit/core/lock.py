"""One kit network on the machine at a time: a file lock, re-entrant within a process and
inheritable by the run's watchdog (so that it holds the lock while it cleans up). The holder
writes its pid and command into the lock file, so that a waiting run, or `lgkit clean`
refused, can say whom it waits for."""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lgkit.core import naming

LOCK_PATH = naming.RUNTIME_DIR / "network.lock"

_guard = threading.RLock()
_depth = 0
_fd: int | None = None


class LockBusy(RuntimeError):
    """The lock is held by another run (raised only when asked not to wait)."""


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def machine_lock(wait: bool = True, tell: Callable[[str], None] = _say) -> Iterator[int]:
    """Hold the machine-wide network lock; yields its file descriptor. If another run holds
    it: with `wait`, say once (through `tell`) whom we wait for, then wait; else LockBusy."""
    global _depth, _fd
    with _guard:
        if _depth == 0:
            _fd = _acquire(wait, tell)
        _depth += 1
        assert _fd is not None
        try:
            yield _fd
        finally:
            _depth -= 1
            if _depth == 0:
                os.ftruncate(_fd, 0)  # no stale holder for the next reader
                os.close(_fd)
                _fd = None


def _acquire(wait: bool, tell: Callable[[str], None]) -> int:
    naming.RUNTIME_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise LockBusy(f"the network lock is held by {holder(fd)}") from None
            tell(f"lgkit: waiting for the network lock, held by {holder(fd)}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {shlex.join(sys.argv)}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def holder(fd: int | None = None) -> str:
    """'pid N (COMMAND)' of the lock's holder, as it wrote itself into the lock file."""
    try:
        text = os.pread(fd, 4096, 0) if fd is not None else LOCK_PATH.read_bytes()[:4096]
    except OSError:
        text = b""
    pid, _, command = text.decode(errors="replace").strip().partition(" ")
    if not pid.isdigit():
        return "another process (it wrote no pid)"
    return f"pid {pid} ({command or 'unknown command'})"
