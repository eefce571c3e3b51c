"""LinkGuardian's LGWriter over P4Runtime: registers, clone sessions, multicast groups."""

from __future__ import annotations

from collections.abc import Sequence

import finsy

from lgkit.control.session import P4RuntimeSession


class P4RuntimeLGWriter:
    """Carries out lgkit.control.linkguardian's ops on one switch through its session."""

    def __init__(self, session: P4RuntimeSession) -> None:
        self.session = session
        self._sessions: set[int] = set()
        self._groups: set[int] = set()

    def write_register(self, name: str, index: int, value: int) -> None:
        """Write one register cell."""
        self.session.modify([finsy.P4RegisterEntry(name, index=index, data=value)])

    def read_register(self, name: str, index: int) -> int:
        """Read one register cell."""
        entries = self.session.read(finsy.P4RegisterEntry(name, index=index))
        if not entries:
            raise KeyError(f"register {name}[{index}] not found")
        return int(entries[0].data)

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None:
        """Create or replace a clone session."""
        entry = finsy.P4CloneSessionEntry(session, replicas=list(replicas))
        write = self.session.modify if session in self._sessions else self.session.insert
        write([entry])
        self._sessions.add(session)

    def set_multicast_group(self, group: int, replicas: Sequence[tuple[int, int]]) -> None:
        """Create or replace a multicast group."""
        entry = finsy.P4MulticastGroupEntry(group, replicas=list(replicas))
        write = self.session.modify if group in self._groups else self.session.insert
        write([entry])
        self._groups.add(group)
