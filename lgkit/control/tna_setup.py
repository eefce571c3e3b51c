"""LinkGuardian's set-up of a switch that runs the TNA program (p4/tofino/linkguardian.p4) over
P4Runtime: the loop ports' value set, truncating notification sessions, K <= 4, and the
per-port state the control plane resets where the v1model program resets it by epoch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from finsy.proto import p4r

from lgkit.control.linkguardian import LGLayout, LGParams, PortConfig
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.control.session import P4RuntimeSession

TNA_LAYOUT = LGLayout(recirc_port=68, loop_port=324)
"""Tofino 1's recirculation ports of pipes 0 and 2 (the TNA model recirculates whatever leaves
egress on either): new Tx copies pass port 68; Tx copies and the reordering buffer loop
through port 324, whose queue rate bounds their passes (as port 69's does for the v1model
program). Pipe 1's port 196 is left to the packet generator."""

LOOP_PORTS = "lg_loop_ports"
"The ingress parser's value set of the ports whose packets carry lg_carry_h."

CARRY_BYTES = 16
"lg_carry_h, the mirror header of a notification or PFC frame's mirrored copy."

NOTIFY_MAX_PKT_LEN = 4 + CARRY_BYTES + 14
"""max_pkt_len of the port sessions (notifications, PFC frames): FCS, mirror header and the
Ethernet header, as the authors size theirs (26 = 4 + 8 + 14); egress builds the rest."""

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
what a new epoch resets. The per-sequence bitmaps (reTxReqs, LG_NB tags) are not reset: a
stale reTxReqs bit costs one spare retransmission, which the receiver drops."""


def tna_params(params: LGParams) -> LGParams:
    """The parameters of a link with a TNA end: at most MAX_HOLES holes per notification (a
    v1model receiver must not ask a TNA sender for holes it cannot mark)."""
    return replace(params, max_holes=min(params.max_holes, MAX_HOLES))


def _bits(value: int) -> bytes:
    """P4Runtime's canonical bytestring (no leading zero bytes)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


class TnaLGWriter(P4RuntimeLGWriter):
    """P4RuntimeLGWriter for the TNA program: port sessions truncate their copies, a new epoch
    first resets the role's per-port registers, and the loop ports are a value set."""

    def __init__(self, session: P4RuntimeSession, layout: LGLayout = TNA_LAYOUT) -> None:
        super().__init__(session)
        self.layout = layout
        self._externs = {instance.preamble.name.removeprefix("pipe."): instance.preamble.id
                         for extern in session.switch.p4info.p4info.externs
                         for instance in extern.instances}

    def packet_length(self, session: int) -> int:
        """Port sessions carry notifications and PFC frames: cut after the Ethernet header."""
        return 0 if session == self.layout.recirc_session else NOTIFY_MAX_PKT_LEN

    def set_loop_ports(self, ports: Sequence[int]) -> None:
        """Fill the ingress parser's lg_loop_ports value set."""
        entry = p4r.ValueSetEntry(value_set_id=self._id(f"LgIngressParser.{LOOP_PORTS}"))
        for port in ports:
            member = entry.members.add()
            member.match.add(field_id=1).exact.value = _bits(port)
        self.session.write([p4r.Update(type=p4r.Update.MODIFY,
                                       entity=p4r.Entity(value_set_entry=entry))])

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        """Reset the per-port state of each role whose epoch changes, then write the entry."""
        current = None if insert else self.read_port(port)
        for epoch, state in (("tx_epoch", SENDER_STATE), ("rx_epoch", RECEIVER_STATE)):
            if current is None or getattr(current, epoch) != getattr(config, epoch):
                self.reset(port, state)
        super().write_port(port, config, insert)

    def reset(self, port: int, state: dict[str, int | tuple[int, int]]) -> None:
        """Write each register of `state` at `port` to its initial value."""
        updates = []
        for name, value in state.items():
            entry = p4r.RegisterEntry(register_id=self._id(name), index=p4r.Index(index=port))
            if isinstance(value, tuple):
                for field in value:
                    entry.data.struct.members.add(bitstring=_bits(field))
            else:
                entry.data.bitstring = _bits(value)
            updates.append(p4r.Update(type=p4r.Update.MODIFY,
                                      entity=p4r.Entity(register_entry=entry)))
        self.session.write(updates)

    def _id(self, name: str) -> int:
        try:
            return self._externs[name]
        except KeyError:
            raise KeyError(f"the program has no {name!r} (not the TNA LinkGuardian program?)"
                           ) from None
