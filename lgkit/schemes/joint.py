"""The joint scenario, in virtual time: the leaf-spine (mininet/leafspine16.yaml) with one
corrupting link (l1 -> s1), an incast toward h16 and a steady stream h1 -> h13 across the
corrupting link, with LinkGuardian, Vertigo and PABO each on or off, to show which loss each
scheme removes.

Composition: one program per switch role. The two ends of the corrupting link run
p4/linkguardian.p4 (LG on or dormant); every other switch runs p4/vertigo.p4 (ECMP, or Vertigo)
or p4/pabo.p4. The fabric programs carry their state in sealed IPv4 options, which the LG
switches forward untouched (docs/vertigo.md, "Joint scenario").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lgkit.control.linkguardian import (
    LGParams,
    activate_receiver_ops,
    activate_sender_ops,
    apply_ops,
    switch_setup_ops,
)
from lgkit.control.pipeline_writer import PipelineWriter
from lgkit.core.frames import ip_bytes, ipv4_checksum, mac_bytes
from lgkit.core.topology import load_spec, next_hops
from lgkit.schemes import ipoption, pabo_control, vertigo_control
from lgkit.schemes.entries import Write
from lgkit.schemes.fabric import ip_value, mac_value
from lgkit.schemes.flowinfo import FlowInfo
from lgkit.schemes.pabo_control import PaboParams
from lgkit.schemes.vertigo_control import SCHEMES, Buffer
from lgkit.schemes.vfabric import VirtualFabric
from lgkit.sw.exec.interp.tables import Lpm
from lgkit.sw.switch.loss import IidLoss

SPEC = "leafspine16"
LG_SWITCHES = ("l1", "s1")
"The corrupting link, sender first."
RECEIVER = "h16"
STEADY = ("h1", "h13")
"A steady stream across the corrupting link, to a receiver the incast leaves alone."
HOST_RATE, FABRIC_RATE = 1e9, 4e9
FABRICS = ("ecmp", "vertigo", "pabo")
CONFIGS = {"none": (False, "ecmp"), "LG": (True, "ecmp"), "Vertigo": (False, "vertigo"),
           "PABO": (False, "pabo"), "LG+Vertigo": (True, "vertigo"), "LG+PABO": (True, "pabo")}
"label -> (LinkGuardian on the corrupting link, what the other switches run)."
LG_PARAMS = LGParams(actual_loss=1e-2, ack_timeout_us=40)
"ackNoTimeout for 4 Gb/s links (a few packet times, as 7 us is at 100G)."
BUFFER = 16
"Packets per port queue on every switch (PABO: normal and bounce queue each)."


@dataclass(frozen=True)
class JointSetup:
    """One run."""

    lg: bool
    fabric: str
    loss: float = 0.05
    senders: int = 12
    burst: int = 10
    steady: int = 300
    "Packets of the steady stream, at half the host rate."
    seed: int = 1


@dataclass(frozen=True)
class JointResult:
    setup: JointSetup
    sent: int
    delivered: int
    "Packets of both the incast and the steady stream that arrived."
    congestion_drops: int
    "Dropped at full queues (P4's admission, TM), or TTL spent while deflected."
    wire_losses: int
    "Frames the corrupting link lost (data, retransmissions, LG's own frames)."
    lg_retransmissions: int
    detours: int
    "Deflections (Vertigo) or bounces (PABO)."

    @property
    def corruption_drops(self) -> int:
        """Packets lost for good that congestion does not explain: the corrupting link's."""
        return self.sent - self.delivered - self.congestion_drops


def frame(spec, sender: str, ident: int, marked: bool, receiver: str = RECEIVER,
          size: int = 1000) -> bytes:
    """UDP from `sender` to `receiver`; with Vertigo's host side, a flowinfo option."""
    payload = struct.pack("!HI", spec.hosts.index(sender), ident) + bytes(size - 28 - 6)
    udp = struct.pack("!HHHH", 7000 + spec.hosts.index(sender), 9000, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload), ident, 0, 64, 17,
                     0, ip_bytes(spec.host_ip(sender)), ip_bytes(spec.host_ip(receiver)))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:] + udp + payload
    if marked:
        ip = ipoption.insert(ip, FlowInfo.marked(10**6).pack())
    return (mac_bytes(spec.host_mac(receiver)) + mac_bytes(spec.host_mac(sender)) + b"\x08\x00"
            + ip)


def lg_route_writes(spec, switch: str, port_of) -> list[Write]:
    """The LG program's /32 routes (one next hop, the protected link first)."""
    return [Write("LgIngress.forwarding.ipv4_lpm", "LgIngress.forwarding.ipv4_forward",
                  {"dst_addr": mac_value(spec.host_mac(host)), "port": port_of(switch, hop)},
                  {"hdr.ipv4.dst_addr": Lpm(ip_value(spec.host_ip(host)), 32)})
            for host, hop in sorted(next_hops(spec, switch).items())]


def build(setup: JointSetup) -> VirtualFabric:
    """The configured network, no traffic yet."""
    spec = load_spec(SPEC)
    program = "pabo" if setup.fabric == "pabo" else "vertigo"
    fabric = VirtualFabric(spec, program, FABRIC_RATE, 500, setup.seed,
                           host_rate_bps=HOST_RATE,
                           programs=dict.fromkeys(LG_SWITCHES, "linkguardian"))
    sender, receiver = LG_SWITCHES
    link = next(link for link in fabric.net.links
                if {fabric.net.name_of(link.a), fabric.net.name_of(link.b)} == set(LG_SWITCHES))
    forward = link.forward if fabric.net.name_of(link.a) == sender else link.backward
    forward.loss = IidLoss(setup.loss) if setup.loss else None
    for index, switch in enumerate(spec.switches):
        port_of = fabric.port_of
        if switch in LG_SWITCHES:
            fabric.apply(switch, lg_route_writes(spec, switch, port_of))
            apply_ops(PipelineWriter(fabric.pipelines[switch]), switch_setup_ops(
                priority_queues=8))
        elif setup.fabric == "pabo":
            fabric.apply(switch, pabo_control.switch_writes(
                spec, switch, port_of, PaboParams(capacity=BUFFER, bounce_capacity=BUFFER),
                True, index))
        else:
            fabric.apply(switch, vertigo_control.switch_writes(
                spec, switch, port_of, SCHEMES[setup.fabric], Buffer(BUFFER, BUFFER // 2),
                index))
    fabric.set_queue_depths(dict.fromkeys(range(8), 2 * BUFFER + 8))
    for name in LG_SWITCHES:  # the LG switches have no admission control: their TM drops
        lg_switch = fabric.switches[name]
        lg_switch.tm.set_queue_depth(BUFFER)
        lg_switch.tm.set_queue_depth(4096, port=68)  # the recirculation port (LGLayout)
    if setup.lg:
        apply_ops(PipelineWriter(fabric.pipelines[receiver]),
                  activate_receiver_ops(fabric.port_of(receiver, sender), LG_PARAMS))
        apply_ops(PipelineWriter(fabric.pipelines[sender]),
                  activate_sender_ops(fabric.port_of(sender, receiver), LG_PARAMS))
    return fabric


def run_joint(setup: JointSetup, until_ns: int = 50_000_000) -> JointResult:
    """The incast through the configured network, then the counts."""
    fabric = build(setup)
    spec = fabric.spec
    marked = setup.fabric == "vertigo"
    for sender in spec.senders[:setup.senders]:
        fabric.hosts[sender].send_at_rate(
            [frame(spec, sender, k, marked) for k in range(setup.burst)],
            pps=HOST_RATE / 8 / 1100)
    source, sink = STEADY
    fabric.hosts[source].send_at_rate(
        [frame(spec, source, setup.burst + k, marked, sink) for k in range(setup.steady)],
        pps=HOST_RATE / 2 / 8 / 1100, start_ns=100_000)
    fabric.run(until_ns)
    delivered = {(host, struct.unpack_from("!HI", data, 14 + ipoption.header_len(data[14:]) + 8))
                 for host in (RECEIVER, sink) for _, data in fabric.hosts[host].received
                 if data[12:14] == b"\x08\x00"}
    counters = {name: p.counters for name, p in fabric.pipelines.items()}

    def total(name: str, switches: list[str]) -> int:
        return sum(counters[s][name].read(i)[0] for s in switches
                   for i in range(counters[s][name].size))

    others = [s for s in spec.switches if s not in LG_SWITCHES]
    if setup.fabric == "pabo":
        congestion = total("pabo_full_drops", others)
        detours = total("pabo_bounced", others)
    else:
        congestion = total("vertigo_full_drops", others) + total("vertigo_ttl_drops", others)
        detours = total("vertigo_deflected", others)
    congestion += sum(sw.drops["queue_full"] for sw in fabric.switches.values())
    link = next(link for link in fabric.net.links
                if {fabric.net.name_of(link.a), fabric.net.name_of(link.b)} == set(LG_SWITCHES))
    lost = link.forward.lost if fabric.net.name_of(link.a) == LG_SWITCHES[0] else (
        link.backward.lost)
    return JointResult(setup, setup.senders * setup.burst + setup.steady, len(delivered),
                       congestion, lost,
                       total("lg_cnt_retx", [LG_SWITCHES[0]]), detours)
