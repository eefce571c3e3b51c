"""LinkGuardian's set-up of a switch that runs the TNA program (p4/tofino/linkguardian.p4) over
P4Runtime: the loop ports' value set, a port's two truncating sessions (notifications at the
high priority, PFC frames), K <= 4, and the per-port state the control plane resets where the
v1model program resets it by epoch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import finsy
from finsy.proto import p4r

from lgkit.control.linkguardian import GlobalConfig, LGLayout, LGParams, PortConfig
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.control.session import P4RuntimeSession

TNA_LAYOUT = LGLayout(recirc_port=68, loop_port=324)
"""Tofino 1's recirculation ports of pipes 0 and 2 (the TNA model recirculates whatever leaves
egress on either): new Tx copies pass port 68; Tx copies and the reordering buffer loop
through port 324, whose queue rate bounds their passes (as port 69's does for the v1model
program). Pipe 1's port 196 is left to the packet generator."""

LOOP_PORTS = "lg_loop_ports"
"The ingress parser's value set of the ports whose packets carry lg_carry_h."

PKTGEN_PIPE = 1
PKTGEN_PORT = 196
"Pipe 1's generator port, where its timer packets enter ingress (lg_pktgen_ports)."
KIND_DUMMY, KIND_ACK = 7, 8
"lg_timers kinds (headers.p4): a timer packet leaves as a dummy or an explicit ACK."
TIMER_APPS = {"sender": (1, KIND_DUMMY), "receiver": (2, KIND_ACK)}
"Each role's packet-generator timer application and the kind its packets become."
TIMER_PAYLOAD = bytes.fromhex("020000000002" "020000000001" "0000") + bytes(44)
"""What follows the pktgen header: the Ethernet header a dummy or explicit ACK leaves with
(locally administered unicast addresses: a Linux bridge drops a frame whose source is zero),
padding to the generator's 64-byte frame."""

CARRY_BYTES = 16
"lg_carry_h, the mirror header of a notification or PFC frame's mirrored copy."

NOTIFY_MAX_PKT_LEN = 4 + CARRY_BYTES + 14
"""max_pkt_len of a port's sessions (notifications, PFC frames): FCS, mirror header and the
Ethernet header, as the authors size theirs (26 = 4 + 8 + 14); egress builds the rest."""

PFC_SESSION_OFFSET = 512
"""A receiver port's PFC frames leave through mirror session port_session + this (headers.p4),
in queue 0; its notifications through port_session, at the high priority."""

MAX_HOLES = 4
"K on Tofino (LG_MAX_HOLES_TNA): the reTxReqs registers one notification can mark."

PAIR = (0, 0)
SENDER_STATE: dict[str, int | tuple[int, int]] = {
    "LgIngress.sender.leading_ack": 0xFFFF8000, "LgIngress.sender.tx_buf_removed": PAIR,
    "LgEgress.sender.tx_next": 0, "LgEgress.sender.dummy_budget": 0,
    "LgEgress.sender.tx_buf_added": PAIR}
RECEIVER_STATE: dict[str, int | tuple[int, int]] = {
    "LgIngress.receiver.expected": 0, "LgIngress.receiver.ack_no": 0,
    "LgIngress.receiver.stall_since": 0, "LgIngress.receiver.rx_buf_bytes": 0,
    "LgIngress.receiver.paused": 0, "LgEgress.receiver.leading": 0xFFFF8000,
    "LgEgress.receiver.ack_budget": 0}
"""Each role's per-port registers with their initial values (the program's declarations):
what a new epoch resets."""

SEEN = "LgIngress.receiver.rx_retx_seen"
SEEN_SEQS = 2048
"""LG_NB's window tags, per port SEEN_SEQS cells at (port[7:0] ++ seq[10:0]) (headers.p4
seen_idx_t): a new receiver epoch writes its port's cells to 0, which matches no tag (a tag's
top bit is 1); a stale tag equal to a new retransmission's would drop every copy of it."""
HOLES = tuple(f"LgIngress.sender.holes_{j}" for j in range(MAX_HOLES))
HOLE_SEQS = 4096
"""reTxReqs, per port HOLE_SEQS bits in each register at (port[7:0] ++ seq[11:0]) (hole_idx_t):
a new sender epoch clears its port's; a stale bit would retransmit a copy the receiver has."""


def tna_params(params: LGParams) -> LGParams:
    """The parameters of a link with a TNA end: at most MAX_HOLES holes per notification (a
    v1model receiver must not ask a TNA sender for holes it cannot mark)."""
    return replace(params, max_holes=min(params.max_holes, MAX_HOLES))


def timer_command(role: str, period_ns: int) -> str:
    """The switch command that (re)starts the role's timer with this period (the packet
    generator is the switch's, not P4Runtime's)."""
    app, _ = TIMER_APPS[role]
    return f"pktgen_timer {app} {period_ns} pipe={PKTGEN_PIPE} payload={TIMER_PAYLOAD.hex()}"


def _bits(value: int) -> bytes:
    """P4Runtime's canonical bytestring (no leading zero bytes)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


class TnaLGWriter(P4RuntimeLGWriter):
    """P4RuntimeLGWriter for the TNA program: port sessions truncate their copies, a new epoch
    first resets the role's per-port registers, and the loop ports are a value set."""

    def __init__(self, session: P4RuntimeSession, layout: LGLayout = TNA_LAYOUT) -> None:
        super().__init__(session)
        self.layout = layout
        self._prio_high = 0
        self._externs = {instance.preamble.name.removeprefix("pipe."): instance.preamble.id
                         for extern in session.switch.p4info.p4info.externs
                         for instance in extern.instances}

    def packet_length(self, session: int) -> int:
        """A port's sessions carry notifications and PFC frames: cut after the Ethernet header."""
        return 0 if session == self.layout.recirc_session else NOTIFY_MAX_PKT_LEN

    def write_global(self, config: GlobalConfig) -> None:
        """The global entry; its high priority becomes the notification sessions' queue."""
        self._prio_high = config.prio_high
        super().write_global(config)

    def queue(self, session: int) -> int:
        """A port session's notifications leave at the high priority (in queue 0, behind
        reverse data, a notification could arrive after a later piggybacked leading ACK, which
        releases the lost packet's Tx copy unsent); PFC frames and Tx copies in queue 0."""
        if session == self.layout.recirc_session or session > PFC_SESSION_OFFSET:
            return 0
        return self._prio_high

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None:
        """The session, and for a port session its PFC twin (same replicas)."""
        super().set_clone_session(session, replicas)
        if session != self.layout.recirc_session:
            super().set_clone_session(session + PFC_SESSION_OFFSET, replicas)

    def set_loop_ports(self, ports: Sequence[int]) -> None:
        """Fill the ingress parser's lg_loop_ports value set."""
        self._set_value_set(f"LgIngressParser.{LOOP_PORTS}", ports)

    def _set_value_set(self, name: str, ports: Sequence[int]) -> None:
        entry = p4r.ValueSetEntry(value_set_id=self._id(name))
        for port in ports:
            member = entry.members.add()
            member.match.add(field_id=1).exact.value = _bits(port)
        self.session.write([p4r.Update(type=p4r.Update.MODIFY,
                                       entity=p4r.Entity(value_set_entry=entry))])

    def set_timer(self, role: str, port: int) -> None:
        """The role's timer packets for `port` (`lg_timers` entry and lg_pktgen_ports); the
        switch runs the timer (timer_command). Each timer packet becomes a dummy or explicit ACK
        while the port's budget lasts (dummy_repeat / ack_repeat per update), else egress drops
        it."""
        app, kind = TIMER_APPS[role]
        self._set_value_set("LgIngressParser.lg_pktgen_ports", [PKTGEN_PORT])
        entry = finsy.P4TableEntry(
            "lg_timers", match=finsy.P4TableMatch({"hdr.timer.app_id": app,
                                                   "hdr.timer.batch_id": 0}),
            action=finsy.P4TableAction("lg_timer", port=port, kind=kind))
        self.session.insert([entry])

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        """Reset the per-port state of each role whose epoch changes, then write the entry."""
        current = None if insert else self.read_port(port)
        for epoch, state in (("tx_epoch", SENDER_STATE), ("rx_epoch", RECEIVER_STATE)):
            if current is None or getattr(current, epoch) != getattr(config, epoch):
                self.reset(port, state)
        if current is None or current.rx_epoch != config.rx_epoch:
            self.clear(port, (SEEN,), SEEN_SEQS)
        if current is None or current.tx_epoch != config.tx_epoch:
            self.clear(port, HOLES, HOLE_SEQS)
        super().write_port(port, config, insert)

    def clear(self, port: int, registers: tuple[str, ...], seqs: int) -> None:
        """Write 0 to `port`'s range of each per-sequence register (port[7:0] ++ seq), one
        write per register (a write holds at most 10,000 updates)."""
        base = (port & 0xFF) * seqs
        for name in registers:
            self.session.write([self._cell(name, base + i, 0) for i in range(seqs)])

    def reset(self, port: int, state: dict[str, int | tuple[int, int]]) -> None:
        """Write each register of `state` at `port` to its initial value."""
        self.session.write([self._cell(name, port, value) for name, value in state.items()])

    def _cell(self, name: str, index: int, value: int | tuple[int, int]) -> p4r.Update:
        """The update that writes `value` (a struct register's: its fields) to a cell."""
        entry = p4r.RegisterEntry(register_id=self._id(name), index=p4r.Index(index=index))
        if isinstance(value, tuple):
            for field in value:
                entry.data.struct.members.add(bitstring=_bits(field))
        else:
            entry.data.bitstring = _bits(value)
        return p4r.Update(type=p4r.Update.MODIFY, entity=p4r.Entity(register_entry=entry))

    def _id(self, name: str) -> int:
        try:
            return self._externs[name]
        except KeyError:
            raise KeyError(f"the program has no {name!r} (not the TNA LinkGuardian program?)"
                           ) from None
