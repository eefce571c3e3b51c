"""Random LinkGuardian packet sequences as STF tests, for comparing the built-in target with BMv2.

One switch runs p4/linkguardian.p4 with both roles on port 2 (the protected link) and a host on
port 1. The sequence mixes what the peer switch would send on the link (data frames with gaps,
i.e. losses, retransmitted copies, duplicates, dummies, explicit ACKs, loss notifications,
piggybacked ACKs) with host packets routed onto the link (sequence numbers, Tx copies, dummies,
piggybacked ACKs going out). Every packet's consequences end inside the switch before the
next packet comes (the untimed mode of both targets): no pause frames (held packets wait for a
resume), no gaps in LG mode (the reordering buffer waits for the retransmission), no timeouts
(time differs), no in-P4 corruption (random numbers differ), and the sender's leading ACK
starts far ahead, so each Tx copy is released on its first loop.
"""

from __future__ import annotations

import random
import struct
from dataclasses import asdict, dataclass, field

from finsy.proto import p4i

from lgkit.control.linkguardian import GlobalConfig, PortConfig
from lgkit.core.frames import ETHERTYPE_LG, mac_bytes, udp_frame
from lgkit.sw.tools.bmv2_stf import Probe

HOST_PORT, LINK_PORT, RECIRC_PORT = 1, 2, 68
RECIRC_SESSION, PORT_SESSION, TX_MGID = 511, 3, 0x4002
HOST = ("00:00:00:00:01:01", "10.0.1.1")
PEER = ("00:00:00:00:02:02", "10.0.2.2")
SWITCH_MAC = "00:00:00:00:aa:aa"
LEADING_ACK = 60_000
"The sender's leading ACK at the start: every sequence number it assigns is below it."
GLOBAL_TABLES = ("LgIngress.global_cfg.lg_global", "LgEgress.global_cfg.lg_global")
PORT_TABLES = ("LgIngress.pass_cfg.lg_port", "LgIngress.out_cfg.lg_port",
               "LgEgress.port_cfg.lg_port")
KINDS = ("host", "data", "dummy", "retx", "ack", "notify")
HOLE_WORDS_PER_PORT = 128


def lg_data(seq: int, *, more: bool = False, retx: bool = False, dummy: bool = False,
            blocking: bool = False) -> bytes:
    """The 3-byte LG data header (docs/protocol.md §1)."""
    era = (seq >> 16) & 1
    first = (int(more) << 5) | (era << 4) | (int(retx) << 3) | (int(dummy) << 2) \
        | (int(blocking) << 1)
    return struct.pack("!BH", first, seq & 0xFFFF)


def lg_ack(ack: int, *, loss: bool = False, piggybacked: bool = False) -> bytes:
    """The 3-byte LG ACK header (type ACK or ACK_LOSS), xoff 0."""
    first = ((2 if loss else 1) << 6) | (int(piggybacked) << 5) | (((ack >> 16) & 1) << 4)
    return struct.pack("!BH", first, ack & 0xFFFF)


def ethernet(dst: str, src: str, ether_type: int) -> bytes:
    return mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", ether_type)


@dataclass
class Peer:
    """The peer switch's side of the protected link: its sequence numbers and losses."""

    blocking: bool
    rng: random.Random
    next_seq: int = 0
    lost: list[int] = field(default_factory=list)
    "Sequence numbers skipped (lost on the link), not yet retransmitted."
    sent: list[int] = field(default_factory=list)
    packet_id: int = 0

    def payload(self) -> bytes:
        """An IPv4/UDP packet to the host, inner part of a data frame."""
        self.packet_id += 1
        size = self.rng.randrange(64, 300)
        return udp_frame(PEER[0], SWITCH_MAC, PEER[1], HOST[1], self.packet_id, size)[14:]

    def data(self) -> bytes:
        if not self.blocking and self.rng.random() < 0.25:  # a loss: skip 1..6 seqs
            gap = self.rng.randrange(1, 7)
            self.lost += range(self.next_seq, self.next_seq + gap)
            self.next_seq += gap
        seq, self.next_seq = self.next_seq, self.next_seq + 1
        self.sent.append(seq)
        piggyback = self.rng.random() < 0.3
        head = lg_data(seq, more=piggyback, blocking=self.blocking)
        if piggyback:
            head += lg_ack(self.rng.randrange(LEADING_ACK), piggybacked=True)
        return self.frame(head + struct.pack("!H", 0x0800) + self.payload())

    def dummy(self) -> bytes:
        return self.frame(lg_data(self.next_seq - 1, dummy=True, blocking=self.blocking))

    def retx(self) -> bytes:
        """A retransmitted copy: of a lost seq (LG_NB), or of one already delivered (a dup)."""
        if self.lost and self.rng.random() < 0.7:
            seq = self.rng.choice(self.lost)
            if self.rng.random() < 0.7:
                self.lost.remove(seq)  # else a later copy of it comes again (a duplicate)
        elif self.sent:
            seq = self.rng.choice(self.sent)
        else:
            return self.data()
        head = lg_data(seq, retx=True, blocking=self.blocking) + struct.pack("!H", 0x0800)
        return self.frame(head + self.payload())

    def ack(self) -> bytes:
        return self.frame(lg_ack(self.rng.randrange(LEADING_ACK)))

    def notify(self) -> bytes:
        holes = struct.pack("!BH", self.rng.randrange(1, 6), self.rng.randrange(LEADING_ACK))
        return self.frame(lg_ack(self.rng.randrange(LEADING_ACK), loss=True) + holes)

    @staticmethod
    def frame(lg: bytes) -> bytes:
        return ethernet(SWITCH_MAC, PEER[0], ETHERTYPE_LG) + lg


def config_lines(port: PortConfig, copies: int) -> list[str]:
    """The switch's configuration in STF: routes, sessions, the N-copy group, the tables."""
    glob = GlobalConfig(RECIRC_PORT, RECIRC_SESSION, 0, 0)
    args = ", ".join(f"{k}:{v}" for k, v in asdict(glob).items())
    lines = [f"setdefault {table} lg_set_global({args})" for table in GLOBAL_TABLES]
    args = ", ".join(f"{k}:{v}" for k, v in asdict(port).items())
    lines += [f"add {table} port:{LINK_PORT} lg_set_port({args})" for table in PORT_TABLES]
    lines += [f"mirroring_add {RECIRC_SESSION} {RECIRC_PORT}",
              f"mirroring_add {PORT_SESSION} {LINK_PORT}",
              f"mc_mgrp_create {TX_MGID}"]
    for copy in range(copies):
        lines += [f"mc_node_create {copy + 1} {LINK_PORT}",
                  f"mc_node_associate {TX_MGID} {copy}"]
    for (mac, ip), out in ((HOST, HOST_PORT), (PEER, LINK_PORT)):
        value = "0x" + "".join(f"{int(b):02x}" for b in ip.split("."))
        lines.append(f"add LgIngress.forwarding.ipv4_lpm hdr.ipv4.dst_addr:{value}/32 "
                     f"LgIngress.forwarding.ipv4_forward(dst_addr:0x{mac.replace(':', '')}, "
                     f"port:{out})")
    # Activation's reset (as the data plane would do it for epoch 1), but leading ACK far ahead.
    for name, reset in (("lg_tx_epoch", 1), ("lg_rx_epoch", 1), ("lg_dummy_parked", 1),
                        ("lg_ack_parked", 1), ("lg_tx_leading_ack", LEADING_ACK)):
        lines.append(f"register_write {name} {LINK_PORT} {reset}")
    return lines


def random_lg_stf(seed: int, packets: int = 100) -> str:
    """A random LG sequence (see the module docstring) as STF text, without expectations."""
    rng = random.Random(seed)
    blocking = rng.random() < 0.3
    copies = rng.randrange(1, 4)
    port = PortConfig(tx_epoch=1, tx_on=1, tx_blocking=int(rng.random() < 0.5),
                      tx_mgid=TX_MGID, dummy_repeat=rng.randrange(0, 4), rx_epoch=1, rx_on=1,
                      rx_max_holes=rng.randrange(1, 9), ack_repeat=rng.randrange(0, 4),
                      port_session=PORT_SESSION)
    peer = Peer(blocking, rng)
    lines = [f"# random LinkGuardian sequence, seed {seed}: peer in "
             f"{'LG' if blocking else 'LG_NB'} mode, {copies} copies, {port}"]
    lines += config_lines(port, copies)
    weights = (3, 4, 1, 2 if not blocking else 1, 1, 1)
    for number in range(packets):
        kind = rng.choices(KINDS, weights)[0]
        if kind == "host":
            frame = udp_frame(HOST[0], SWITCH_MAC, HOST[1], PEER[1], 10_000 + number,
                              rng.randrange(64, 300))
            lines.append(f"packet {HOST_PORT} {frame.hex()}")
            continue
        frame = getattr(peer, kind)()
        lines.append(f"packet {LINK_PORT} {frame.hex()}")
    return "\n".join(lines) + "\n"


def lg_probes(info: p4i.P4Info) -> list[Probe]:
    """What to compare after a sequence: every register of the program at the host and link
    ports (the link port's 128 words of each hole bitmap), every counter at those ports and
    at the recirculation port."""
    probes = []
    for register in info.registers:
        name = register.preamble.name
        if register.size >= HOLE_WORDS_PER_PORT * 512:
            first = LINK_PORT * HOLE_WORDS_PER_PORT
            probes += [Probe("register", name, i)
                       for i in range(first, first + HOLE_WORDS_PER_PORT)]
        else:
            probes += [Probe("register", name, i) for i in (HOST_PORT, LINK_PORT)]
    for counter in info.counters:
        probes += [Probe("counter", counter.preamble.name, i)
                   for i in (HOST_PORT, LINK_PORT, RECIRC_PORT)]
    return probes
