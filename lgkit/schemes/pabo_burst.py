"""PABO's hop-by-hop burst test (paper §V) in virtual time: h1-h3 each send a burst of
1500-byte packets, one every 10 us, to h4 across the tree (mininet/pabo_tree.yaml); with PABO
on or off, count what arrives, what was dropped where, how often and how far packets bounced.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from lgkit.core.frames import ip_bytes, ipv4_checksum, mac_bytes
from lgkit.core.topology import load_spec
from lgkit.schemes import bounce
from lgkit.schemes.pabo_control import PaboParams, switch_writes
from lgkit.schemes.vfabric import VirtualFabric

IP_PACKET_BYTES = 1500
SEND_INTERVAL_NS = 10_000
"The paper's sendInterval (10 us): 1.2 Gb/s offered on a 1 Gb/s link."
TM_MARGIN = 16
"TM queues hold this many packets more than P4 admits, so only P4 drops (and counts)."


@dataclass(frozen=True)
class BurstSetup:
    """One run of the burst test."""

    burst: int
    "Packets each sender sends (the paper: 500 mild, 1500 moderate, 2500 severe)."
    enabled: bool
    params: PaboParams = field(default_factory=PaboParams)
    rate_bps: float = 1e9
    interval_ns: int = SEND_INTERVAL_NS
    delay_ns: int = 1000
    seed: int = 1


@dataclass
class BurstResult:
    """What one run measured."""

    setup: BurstSetup
    sent: int
    delivered: int
    duplicates: int
    drops_by_switch: dict[str, int]
    "Packets P4 dropped at a full queue, per switch."
    tm_drops: int
    "Packets the traffic managers dropped (0 unless P4's estimates went wrong)."
    bounces_by_switch: dict[str, int]
    max_distance: dict[int, int]
    "Delivered packets by their largest bounce distance."
    total_hops: dict[int, int]
    "Delivered packets by the switches they passed (forward and bounced)."
    last_arrival_ns: int
    stray: int
    "Frames that reached a host other than h4, or h4 with a bounce header (never, if right)."

    @property
    def drop_ratio(self) -> float:
        return (self.sent - self.delivered) / self.sent if self.sent else 0.0

    @property
    def bounced_share(self) -> float:
        """Share of delivered packets that were bounced at least once."""
        total = sum(self.max_distance.values())
        return (total - self.max_distance.get(0, 0)) / total if total else 0.0


def udp_packet(src_ip: str, dst_ip: str, src_mac: str, dst_mac: str, ident: int) -> bytes:
    """An Ethernet frame carrying a 1500-byte IPv4/UDP packet whose payload starts with
    `ident`."""
    payload = struct.pack("!I", ident) + bytes(IP_PACKET_BYTES - 28 - 4)
    udp = struct.pack("!HHHH", 5000 + ident % 1000, 6000, 8 + len(payload), 0)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, IP_PACKET_BYTES, ident & 0xFFFF, 0, 64, 17, 0,
                         ip_bytes(src_ip), ip_bytes(dst_ip))
    header = header[:10] + struct.pack("!H", ipv4_checksum(header)) + header[12:]
    return mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + header + udp + payload


def _burst(spec, sender: str, receiver: str, count: int, first_id: int) -> Iterator[bytes]:
    for k in range(count):
        yield udp_packet(spec.host_ip(sender), spec.host_ip(receiver), spec.host_mac(sender),
                         spec.host_mac(receiver), first_id + k)


def run_burst(setup: BurstSetup) -> BurstResult:
    """Run one burst test to the end (every queue drained)."""
    spec = load_spec("pabo_tree")
    fabric = VirtualFabric(spec, "pabo", setup.rate_bps, setup.delay_ns, setup.seed)
    params = setup.params
    for index, switch in enumerate(spec.switches):
        fabric.apply(switch, switch_writes(spec, switch, fabric.port_of, params, setup.enabled,
                                           hash_seed=index))
    normal = (params.capacity if setup.enabled else params.capacity + params.bounce_capacity)
    fabric.set_queue_depths({0: normal + TM_MARGIN, 7: params.bounce_capacity + TM_MARGIN})
    receiver = spec.receivers[0]
    for index, sender in enumerate(spec.senders):
        fabric.hosts[sender].send_at_rate(
            _burst(spec, sender, receiver, setup.burst, index * setup.burst),
            pps=1e9 / setup.interval_ns)
    fabric.run()
    return _measure(setup, spec, fabric, receiver)


def _counter(fabric: VirtualFabric, switch: str, name: str) -> dict[int, int]:
    counters = fabric.pipelines[switch].counters[name]
    values = {i: counters.read(i)[0] for i in range(counters.size)}
    return {i: v for i, v in values.items() if v}


def _measure(setup: BurstSetup, spec, fabric: VirtualFabric, receiver: str) -> BurstResult:
    ids: Counter[int] = Counter()
    stray = 0
    for host_name, host in fabric.hosts.items():
        for _, frame in host.received:
            if host_name != receiver or bounce.read(frame[14:]) is not None:
                stray += 1
                continue
            ids[struct.unpack_from("!I", frame, 14 + 28)[0]] += 1
    arrivals = fabric.hosts[receiver].received
    last_hop = spec.switches[-1]
    return BurstResult(
        setup=setup, sent=setup.burst * len(spec.senders), delivered=len(ids),
        duplicates=sum(ids.values()) - len(ids),
        drops_by_switch={s: sum(_counter(fabric, s, "pabo_full_drops").values())
                         for s in spec.switches},
        tm_drops=sum(sw.drops["queue_full"] for sw in fabric.switches.values()),
        bounces_by_switch={s: sum(_counter(fabric, s, "pabo_bounced").values())
                           for s in spec.switches},
        max_distance=_counter(fabric, last_hop, "pabo_max_distance"),
        total_hops=_counter(fabric, last_hop, "pabo_total_hops"),
        last_arrival_ns=arrivals[-1][0] if arrivals else 0, stray=stray)
