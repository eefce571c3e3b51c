"""Client arbitration (P4Runtime spec, "Rules for Handling MasterArbitrationUpdate Messages").

The primary is the live stream whose election id equals the highest election id ever seen for
the device; when it leaves there is no primary until a client bids at least that id again.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

import grpc
from finsy.proto import U128, p4r, rpc_status

from .errors import P4RTError, code_number, invalid

Outbound = p4r.StreamMessageResponse | P4RTError | None

OUTBOX_CAPACITY = 4096
"""Packet-ins and digests a stream may have waiting for its client; more are dropped (and
counted), so a client that stops reading cannot make the server's memory grow."""


@dataclass(eq=False)
class Session:
    """One StreamChannel: its election id (None = unset) and its outbound message queue, which
    lives on the server's event loop (`send` may be called from any thread)."""

    loop: asyncio.AbstractEventLoop
    live: bool = False
    election_id: int | None = None
    dropped: int = 0
    outbox: asyncio.Queue[Outbound] = field(default_factory=asyncio.Queue)

    def send(self, msg: Outbound) -> None:
        """Queue a message for the client (None ends the stream, a P4RTError aborts it)."""
        try:
            self.loop.call_soon_threadsafe(self._put, msg)
        except RuntimeError:  # the server's loop is closed: the stream is gone
            pass

    def _put(self, msg: Outbound) -> None:
        droppable = isinstance(msg, p4r.StreamMessageResponse) and \
            msg.WhichOneof("update") in ("packet", "digest")
        if droppable and self.outbox.qsize() >= OUTBOX_CAPACITY:
            self.dropped += 1
            return
        self.outbox.put_nowait(msg)


class Arbiter:
    """Live sessions of the default role of one device, and the highest election id seen."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._sessions: list[Session] = []
        self._highest: int | None = None

    def _primary_locked(self) -> Session | None:
        if self._highest is None:
            return None
        return next((s for s in self._sessions if s.election_id == self._highest), None)

    def primary(self) -> Session | None:
        with self._lock:
            return self._primary_locked()

    def is_primary(self, election_id: int | None) -> bool:
        primary = self.primary()
        return primary is not None and election_id is not None \
            and primary.election_id == election_id

    def arbitrate(self, session: Session, election_id: int | None) -> None:
        """Accept a MasterArbitrationUpdate; a live duplicate election id is INVALID_ARGUMENT."""
        with self._lock:
            others = [s for s in self._sessions if s is not session]
            if election_id is not None and any(s.election_id == election_id for s in others):
                raise invalid(f"Election id {election_id} is already used by another client")
            was_primary = session is self._primary_locked()
            session.election_id = election_id
            if not session.live:
                session.live = True
                self._sessions.append(session)
            if election_id is not None and (self._highest is None
                                             or election_id >= self._highest):
                self._highest = election_id
                self._notify(self._sessions)
            elif was_primary:
                self._notify(self._sessions)
            else:
                self._notify([session])

    def leave(self, session: Session) -> None:
        with self._lock:
            if session not in self._sessions:
                return
            was_primary = session is self._primary_locked()
            self._sessions.remove(session)
            if was_primary:
                self._notify(self._sessions)

    def _notify(self, targets: list[Session]) -> None:
        primary = self._primary_locked()
        for session in targets:
            if session is primary:
                code, message = grpc.StatusCode.OK, "is primary"
            elif primary is not None:
                code, message = grpc.StatusCode.ALREADY_EXISTS, "is backup; a primary exists"
            else:
                code, message = grpc.StatusCode.NOT_FOUND, "is backup; there is no primary"
            update = p4r.MasterArbitrationUpdate(
                device_id=self.device_id,
                status=rpc_status.Status(code=code_number(code), message=message))
            if self._highest is not None:
                update.election_id.CopyFrom(U128.encode(self._highest))
            session.send(p4r.StreamMessageResponse(arbitration=update))

    def send_to_primary(self, msg: p4r.StreamMessageResponse) -> bool:
        primary = self.primary()
        if primary is None:
            return False
        primary.send(msg)
        return True

    def close_all(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.send(None)
            self._sessions.clear()
