"""Vertigo's data plane in a leaf-spine in virtual time: an incast of marked UDP packets under
ECMP, DIBS and Vertigo (deflection absorbs what ECMP drops; small ranks are kept, large ones
deflected), P2C and DRILL forwarding, and the rank bands on the strict-priority queues."""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass

import pytest

from lgkit.core.frames import ip_bytes, ipv4_checksum, mac_bytes
from lgkit.core.topology import load_spec
from lgkit.schemes import flowinfo, ipoption
from lgkit.schemes.flowinfo import FlowInfo
from lgkit.schemes.vertigo_control import SCHEMES, Buffer, switch_writes
from lgkit.schemes.vfabric import VirtualFabric

SPEC = load_spec("leafspine16")
HOST_RATE, FABRIC_RATE = 1e9, 4e9  # the paper's 10G hosts and 40G fabric, / 10
RECEIVER = "h16"
SMALL_RANK_SENDER = "h1"


def packet(sender: str, ident: int, rank: int, size: int = 1000) -> bytes:
    """UDP from `sender` to the receiver with a flowinfo option of remaining size `rank`."""
    payload = struct.pack("!HI", SPEC.hosts.index(sender), ident) + bytes(size - 28 - 6)
    udp = struct.pack("!HHHH", 7000 + SPEC.hosts.index(sender), 9000, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload), ident, 0, 64, 17,
                     0, ip_bytes(SPEC.host_ip(sender)), ip_bytes(SPEC.host_ip(RECEIVER)))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:] + udp + payload
    ip = ipoption.insert(ip, FlowInfo.marked(rank, first=ident == 0).pack())
    return (mac_bytes(SPEC.host_mac(RECEIVER)) + mac_bytes(SPEC.host_mac(sender)) + b"\x08\x00"
            + ip)


@dataclass
class Incast:
    delivered: Counter
    "sender -> packets delivered"
    deflected: Counter
    "sender -> delivered packets that were deflected on the way"
    drops: int
    full_drops: int
    "Dropped by P4 because the port and the deflection choices were full."
    ttl_drops: int
    deflections: int
    reordered: int
    bad_checksums: int
    tm_drops: int


def incast(scheme: str, burst: int = 10, senders: int = 12, seed: int = 3) -> Incast:
    fabric = VirtualFabric(SPEC, "vertigo", FABRIC_RATE, 500, seed, host_rate_bps=HOST_RATE)
    buffer = Buffer(capacity=16, headroom=8)
    for index, switch in enumerate(SPEC.switches):
        fabric.apply(switch, switch_writes(SPEC, switch, fabric.port_of, SCHEMES[scheme],
                                           buffer, hash_seed=index))
    fabric.set_queue_depths({prio: buffer.tm_depth() for prio in range(8)})
    for sender in SPEC.senders[:senders]:
        rank = 1_000 if sender == SMALL_RANK_SENDER else 1_000_000
        fabric.hosts[sender].send_at_rate([packet(sender, k, rank) for k in range(burst)],
                                          pps=HOST_RATE / 8 / 1100)
    fabric.run()
    delivered, deflected, last = Counter(), Counter(), {}
    reordered = bad = 0
    for _, frame in fabric.hosts[RECEIVER].received:
        ip = frame[14:]
        bad += ipv4_checksum(ip[:ipoption.header_len(ip)]) != 0
        index, ident = struct.unpack_from("!HI", ip, 32 + 8)
        sender = SPEC.hosts[index]
        delivered[sender] += 1
        deflected[sender] += flowinfo.read(ip).deflections > 0
        reordered += ident < last.get(sender, -1)
        last[sender] = max(ident, last.get(sender, -1))
    counters = [fabric.pipelines[s].counters for s in SPEC.switches]
    def total(name: str) -> int:
        return sum(c[name].read(i)[0] for c in counters for i in range(32))

    return Incast(delivered, deflected, burst * senders - sum(delivered.values()),
                  total("vertigo_full_drops"), total("vertigo_ttl_drops"),
                  total("vertigo_deflected"),
                  reordered, bad, sum(sw.drops["queue_full"] for sw in fabric.switches.values()))


def test_deflection_absorbs_the_incast_that_ecmp_drops() -> None:
    # 12 senders x 10 packets into one 1G host port with 16 places (+8 push-out headroom)
    ecmp, dibs, vertigo = incast("ecmp"), incast("dibs"), incast("vertigo")
    assert ecmp.drops > 60 and ecmp.deflections == 0 and ecmp.reordered == 0
    assert ecmp.drops == ecmp.full_drops
    assert vertigo.drops < ecmp.drops / 2 and vertigo.deflections > 50
    assert dibs.drops < ecmp.drops / 2 and dibs.deflections > 50
    # Vertigo drops on purpose when both sampled deflection ports are full (a congestion signal
    # for TCP); every drop is one of those or a TTL that ran out while deflected
    assert vertigo.drops == vertigo.full_drops + vertigo.ttl_drops
    for run in (ecmp, dibs, vertigo):
        assert run.bad_checksums == 0 and run.tm_drops == 0  # the seal and the estimates hold
    assert vertigo.reordered > 0  # deflected packets come late: the receiver must reorder


def test_vertigo_keeps_the_small_rank_flow_and_deflects_the_large_ones() -> None:
    vertigo, dibs = incast("vertigo"), incast("dibs")
    assert vertigo.delivered[SMALL_RANK_SENDER] == 10
    assert vertigo.deflected[SMALL_RANK_SENDER] == 0  # push-out: admitted, never deflected
    assert sum(vertigo.deflected.values()) > 20
    assert dibs.deflected[SMALL_RANK_SENDER] > 0  # FIFO schemes deflect whatever comes


@pytest.mark.parametrize("scheme", ["vertigo", "drill"])
def test_per_packet_balancing_spreads_one_flow_over_both_spines(scheme: str) -> None:
    fabric = VirtualFabric(SPEC, "vertigo", FABRIC_RATE, 500, 5, host_rate_bps=HOST_RATE)
    for index, switch in enumerate(SPEC.switches):
        fabric.apply(switch, switch_writes(SPEC, switch, fabric.port_of, SCHEMES[scheme],
                                           Buffer(), hash_seed=index))
    fabric.hosts["h1"].send_at_rate([packet("h1", k, 10**6) for k in range(200)], pps=1e5)
    fabric.run()
    uplinks = [fabric.port_of("l1", s) for s in ("s1", "s2")]
    sent = [fabric.pipelines["l1"].counters["vertigo_forwarded"].read(p)[0] for p in uplinks]
    assert sum(sent) == 200 and min(sent) > 40  # ECMP would put one flow on one spine
    assert len(fabric.hosts[RECEIVER].received) == 200


def test_rank_bands_pick_the_priority_queue() -> None:
    fabric = VirtualFabric(SPEC, "vertigo", FABRIC_RATE, 500, 1, host_rate_bps=HOST_RATE)
    fabric.apply("l1", switch_writes(SPEC, "l1", fabric.port_of, SCHEMES["vertigo"], Buffer()))
    pipeline = fabric.pipelines["l1"]
    port = fabric.port_of("l1", "h1")
    for rank, band in ((0, 7), (1_500, 7), (1_501, 6), (99_999, 4), (10**9, 0)):
        result = pipeline.ingress(port, packet("h1", 1, rank), 0)
        assert [j.priority for j in result.egress] == [band], rank
    ecmp = VirtualFabric(SPEC, "vertigo", FABRIC_RATE, 500, 1, host_rate_bps=HOST_RATE)
    ecmp.apply("l1", switch_writes(SPEC, "l1", ecmp.port_of, SCHEMES["ecmp"], Buffer()))
    result = ecmp.pipelines["l1"].ingress(port, packet("h1", 1, 1_000), 0)
    assert [j.priority for j in result.egress] == [0]  # FIFO schemes: one queue
