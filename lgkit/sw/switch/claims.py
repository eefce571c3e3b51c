"""Interfaces claimed by running switches: one abstract Unix socket per interface.

A switch binds the abstract socket name `@lgkit-claim:<iface>` for each interface it attaches
and keeps the socket open while it runs. Abstract names belong to a network namespace (so a
claim is per namespace and interface, like interface names) and disappear with the socket:
a claim never outlives its switch, even one killed with SIGKILL, and leaves no file behind.
A second kit switch that asks for a claimed interface is refused with the owner's pid.
"""

from __future__ import annotations

import errno
import socket
import struct

NAME_PREFIX = "lgkit-claim:"
"The abstract socket of interface X is named NAME_PREFIX + X."

OWNER_QUERIES = 64
"Refused claimants that can still learn the owner's pid (the listen backlog; never accepted)."

_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class InterfaceBusy(ValueError):
    """The interface is already used by another running switch."""


def claim_address(ifname: str) -> str:
    """The abstract socket address that stands for a claim on `ifname`."""
    return f"\0{NAME_PREFIX}{ifname}"


class InterfaceClaim:
    """An exclusive claim on one interface, held until `release` (or the process ends)."""

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(claim_address(ifname))
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                raise
            raise InterfaceBusy(f"interface {ifname} is already used by another lgkit switch "
                                f"(pid {claim_owner(ifname) or 'unknown'})") from None
        sock.listen(OWNER_QUERIES)  # a refused claimant connects to read our pid
        self._sock: socket.socket | None = sock

    def release(self) -> None:
        """Give the interface up (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def claim_owner(ifname: str) -> int | None:
    """The pid of the process holding the claim on `ifname` in this network namespace (None
    when there is no claim, or the owner cannot be asked)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.setblocking(False)
    try:
        probe.connect(claim_address(ifname))
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    except OSError:
        return None
    finally:
        probe.close()
    return _PEERCRED.unpack(creds)[0]
