"""LinkGuardian's LGWriter over P4Runtime: configuration tables, clone sessions, multicast groups.

The same writes work on BMv2 and on the built-in target. No register access: BMv2's P4Runtime
implements neither register writes nor reads; registers hold the data plane's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from threading import RLock

import finsy

from lgkit.control.linkguardian import GlobalConfig, PortConfig
from lgkit.control.session import P4RuntimeSession

GLOBAL_TABLE = "lg_global"
PORT_TABLE = "lg_port"
SET_GLOBAL = "lg_set_global"
SET_PORT = "lg_set_port"


class P4RuntimeLGWriter:
    """Carries out lgkit.control.linkguardian's ops on one switch through its session."""

    def __init__(self, session: P4RuntimeSession) -> None:
        self.session = session
        self.lock: RLock = session.update_lock
        self._sessions: set[int] = set()
        self._groups: set[int] = set()

    def _tables(self, table: str) -> list[str]:
        """Names of every instance of a configuration table (one per control that uses it)."""
        names = [t.name for t in self.session.switch.p4info.tables
                 if t.name.rsplit(".", 1)[-1] == table]
        if not names:
            raise KeyError(f"the program has no {table!r} table (not the LinkGuardian program?)")
        return names

    def write_global(self, config: GlobalConfig) -> None:
        """Set the default action of every lg_global table."""
        action = finsy.P4TableAction(SET_GLOBAL, **asdict(config))
        self.session.modify([finsy.P4TableEntry(name, action=action, is_default_action=True)
                             for name in self._tables(GLOBAL_TABLE)])

    def _port_match(self, table: str, port: int) -> finsy.P4TableMatch:
        """The key of `port` in an lg_port table (its one field: `port` in the v1model program,
        `meta.port` / `eg_intr_md.egress_port` in the TNA program)."""
        [key] = self.session.switch.p4info.tables[table].match_fields
        return finsy.P4TableMatch({key.name: port})

    def read_port(self, port: int) -> PortConfig | None:
        """The port's entry (read from the first lg_port table), None if it has none."""
        name = self._tables(PORT_TABLE)[0]
        entries = self.session.read(finsy.P4TableEntry(name, match=self._port_match(name, port)))
        if not entries:
            return None
        return PortConfig(**{k: int(v) for k, v in entries[0].action.args.items()})

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        """Insert or modify the port's entry in every lg_port table."""
        action = finsy.P4TableAction(SET_PORT, **asdict(config))
        entries = [finsy.P4TableEntry(name, match=self._port_match(name, port), action=action)
                   for name in self._tables(PORT_TABLE)]
        (self.session.insert if insert else self.session.modify)(entries)

    def packet_length(self, session: int) -> int:
        """The clone session's truncation (packet_length_bytes; 0: whole copies)."""
        return 0

    def queue(self, session: int) -> int:
        """The clone session's egress queue (class_of_service; 0: the default)."""
        return 0

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None:
        """Create or replace a clone session."""
        entry = finsy.P4CloneSessionEntry(session, replicas=list(replicas),
                                          packet_length_bytes=self.packet_length(session),
                                          class_of_service=self.queue(session))
        write = self.session.modify if session in self._sessions else self.session.insert
        write([entry])
        self._sessions.add(session)

    def set_multicast_group(self, group: int, replicas: Sequence[tuple[int, int]]) -> None:
        """Create or replace a multicast group."""
        entry = finsy.P4MulticastGroupEntry(group, replicas=list(replicas))
        write = self.session.modify if group in self._groups else self.session.insert
        write([entry])
        self._groups.add(group)
