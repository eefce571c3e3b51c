"""Interfaces claimed by running switches: one locked file per (network namespace, interface).

A switch holds an exclusive flock on its interfaces' claim files for as long as it runs; the
kernel drops the lock when the process ends (even by SIGKILL), so a claim never outlives its
switch. A second kit switch that asks for a claimed interface is refused with the owner's pid.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

CLAIMS_DIR = Path("/run/lgkit/claims")
"Where claim files live (a per-user temporary folder when /run/lgkit is not writable)."


class InterfaceBusy(ValueError):
    """The interface is already used by another running switch."""


def _claims_dir() -> Path:
    for folder in (CLAIMS_DIR, Path(tempfile.gettempdir()) / f"lgkit-claims-{os.getuid()}"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    raise OSError("no writable folder for interface claims")


def _namespace() -> str:
    """This process's network namespace (interface names are per namespace)."""
    try:
        return str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:
        return "host"


class InterfaceClaim:
    """An exclusive claim on one interface, held until `release` (or the process ends)."""

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        self.path = _claims_dir() / f"{_namespace()}-{ifname}.claim"
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise InterfaceBusy(f"interface {ifname} is already used by another lgkit switch "
                                f"(pid {owner})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Give the interface up (idempotent)."""
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


def claim_held(path: Path) -> bool:
    """True while a live switch holds the claim file's flock."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def stale_claims() -> list[Path]:
    """Claim files no live switch holds (left by a switch that was killed with SIGKILL)."""
    try:
        folder = _claims_dir()
    except OSError:
        return []
    return sorted(path for path in folder.glob("*.claim") if not claim_held(path))


def remove_stale_claims() -> list[Path]:
    """Delete the claim files no live switch holds; returns them."""
    stale = stale_claims()
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
