"""Vertigo's host side on synthetic flows: marking on send (remaining size from the length
prefix, flow ids, first flag, boosting of retransmissions, ages without a prefix) and ordering
on receive (reorder buffer, late packets, timeout tau)."""

from __future__ import annotations

import random
import struct
import subprocess
import time

from lgkit.core.frames import ip_bytes, ipv4_checksum
from lgkit.schemes import flowinfo
from lgkit.schemes.flowinfo import FlowInfo
from lgkit.schemes.vertigo_marker import Marker, Segment
from lgkit.schemes.vertigo_orderer import Orderer
from lgkit.schemes.vertigo_testbed import ADVMSS, cpu_seconds, tree_cpu_seconds, with_advmss

ISN = 0xFFFFFF00  # the sequence numbers wrap inside the first flow
MSS = 1000


def tcp(seq: int, payload: bytes = b"", flags: int = 0x18, sport: int = 40000,
        dport: int = 5300) -> bytes:
    header = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 0, 0x50, flags, 1000, 0,
                         0)
    total = 20 + len(header) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, 0, 64, 6, 0, ip_bytes("10.0.0.1"),
                     ip_bytes("10.0.0.2"))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    return ip + header + payload


def message(size: int, tag: int) -> bytes:
    """A length-prefixed message of `size` bytes (as the kit's FCT workload frames a flow)."""
    return struct.pack("!II", size, tag) + bytes([tag]) * (size - 8)


def segments(stream: bytes, start_seq: int) -> list[tuple[int, bytes]]:
    return [((start_seq + at) & 0xFFFFFFFF, stream[at:at + MSS])
            for at in range(0, len(stream), MSS)]


def test_marks_remaining_size_flow_ids_and_first_packets() -> None:
    marker = Marker(framed_ports={5300})
    assert marker.mark(tcp(ISN, flags=0x02)) == tcp(ISN, flags=0x02)  # SYN: unmarked
    stream = message(2500, 1) + message(1800, 2)  # 4300 bytes, 5 segments; 2nd starts at 2500
    infos = [flowinfo.read(marker.mark(tcp(seq, data))) for seq, data in
             segments(stream, ISN + 1)]
    assert [(i.rfs, i.flow_id, i.first) for i in infos] == [
        (2500, 0, True), (1500, 0, False), (500, 0, False),  # flow 0: 2500 B
        # bytes 3000..3999: flow 1 (2500..4299) began inside segment 3 (flow 0's), so this
        # is the first packet of flow 1: the first that begins inside it
        (1300, 1, True),
        (300, 1, False)]  # bytes 4000..4299
    assert marker.stats.flows == 2 and marker.stats.marked == 5
    # a retransmission of the second segment: retcnt 1, RFS rotated right (boosting)
    again = flowinfo.read(marker.mark(tcp(ISN + 1 + MSS, stream[MSS:2 * MSS])))
    assert again.retcnt == 1 and again.original_rfs == 1500 and again.rank == 750
    twice = flowinfo.read(marker.mark(tcp(ISN + 1 + MSS, stream[MSS:2 * MSS])))
    assert twice.retcnt == 2 and twice.original_rfs == 1500
    assert marker.mark(tcp(ISN + 4301, flags=0x10)) == tcp(ISN + 4301, flags=0x10)  # pure ACK


def test_length_prefix_split_across_segments_and_unframed_connections_age() -> None:
    marker = Marker(framed_ports={5300})
    marker.mark(tcp(100, flags=0x02))
    stream = message(1002, 1) + message(600, 2)
    # the second message's length prefix (bytes 1002..1005) is split: 2 bytes end the second
    # segment, 2 begin the third
    cuts = [(0, 1001), (1001, 1004), (1004, len(stream))]
    infos = [flowinfo.read(marker.mark(tcp(101 + a, stream[a:b]))) for a, b in cuts]
    assert [(i.rfs, i.flow_id) for i in infos] == [(1002, 0), (1, 0), (598, 1)]
    other = Marker(framed_ports={5300})
    other.mark(tcp(0, flags=0x02, dport=80))
    ages = [flowinfo.read(other.mark(tcp(1 + k * MSS, bytes(MSS), dport=80))) for k in range(3)]
    assert [(i.rfs, i.aged) for i in ages] == [(0, True), (1000, True), (2000, True)]


def _flow(size: int, flow_id: int = 0) -> list[tuple[FlowInfo, int]]:
    """(flowinfo, payload length) of each packet of a flow, in sending order."""
    out = []
    for start in range(0, size, MSS):
        out.append((FlowInfo.marked(size - start, flow_id=flow_id, first=start == 0),
                    min(MSS, size - start)))
    return out


KEY = (ip_bytes("10.0.0.1"), 40000, ip_bytes("10.0.0.2"), 5300)


def test_shuffled_flows_come_out_in_sending_order() -> None:
    rng = random.Random(4)
    for trial in range(30):
        flows = {fid: _flow(rng.randint(1, 20) * MSS - rng.randint(0, 999), fid)
                 for fid in range(3)}
        arrivals = [(fid, k) for fid, pkts in flows.items() for k in range(len(pkts))]
        rng.shuffle(arrivals)
        orderer = Orderer(tau_us=1e9)
        out: list[tuple[int, int]] = []
        for t, (fid, k) in enumerate(arrivals):
            info, length = flows[fid][k]
            released = orderer.arrive(fid * 1000 + k, (*KEY, fid), info, length, t)
            out += [(h // 1000, h % 1000) for h in released]
        for fid, pkts in flows.items():
            assert [k for f, k in out if f == fid] == list(range(len(pkts))), trial
        assert orderer.buffered == 0 and not orderer.flows
        assert orderer.stats.timeouts == 0


def test_a_lost_packet_releases_the_rest_after_tau_and_late_ones_pass() -> None:
    pkts = _flow(5 * MSS)
    orderer = Orderer(tau_us=360)
    key = (*KEY, 0)
    assert orderer.arrive(0, key, *pkts[0], 0) == [0]
    assert orderer.arrive(2, key, *pkts[2], 10) == []  # 1 is missing
    assert orderer.arrive(3, key, *pkts[3], 20) == []
    assert orderer.next_deadline() == 370 and orderer.waiting == {key}
    assert orderer.expire(369) == []
    assert orderer.expire(370) == [2, 3]  # up to the next gap
    assert not orderer.waiting and orderer.next_deadline() is None  # tracked, nothing held
    assert orderer.stats.timeouts == 1 and orderer.stats.released_by_timeout == 2
    assert orderer.arrive(4, key, *pkts[4], 400) == [4]  # in order again
    # the retransmission of 1 (boosted) comes after all: late, sent up at once
    info, length = pkts[1]
    boosted = FlowInfo.marked(info.original_rfs, retcnt=1)
    assert orderer.arrive(1, key, boosted, length, 500) == [1]
    assert orderer.stats.late == 1
    # packets without flowinfo never wait
    assert orderer.arrive(9, None, None, 0, 600) == [9]


def test_first_packet_overtaken_waits_for_it_and_the_marker_feeds_the_orderer() -> None:
    marker = Marker(framed_ports={5300})
    marker.mark(tcp(ISN, flags=0x02))
    packets = [marker.mark(tcp(seq, data)) for seq, data in
               segments(message(3500, 7), ISN + 1)]
    assert Segment.parse(packets[0]) is None  # marked once: a packet with options is left alone
    assert marker.mark(packets[0]) == packets[0]
    orderer = Orderer(tau_us=1000)
    released = []
    for t, k in enumerate([2, 1, 3, 0]):
        info = flowinfo.read(packets[k])
        length = len(packets[k]) - 32 - 20  # IP header with the option, TCP header
        released += orderer.arrive(k, (*KEY, info.flow_id), info, length, t)
    assert released == [0, 1, 2, 3]


def test_pipelined_messages_each_get_a_first_packet_and_are_ordered_without_waiting() -> None:
    # messages written back to back share segments: 2500 B (the next begins inside its third
    # segment), 300 B (inside one segment of its neighbours: no packet of its own), 4100 B
    sizes = (2500, 300, 4100, 1500)
    marker = Marker(framed_ports={5300})
    marker.mark(tcp(ISN, flags=0x02))
    stream = b"".join(message(size, k) for k, size in enumerate(sizes))
    infos = [(flowinfo.read(marker.mark(tcp(seq, data))), len(data))
             for seq, data in segments(stream, ISN + 1)]
    starts = [(i.flow_id, i.original_rfs) for i, _ in infos if i.first]
    assert starts == [(0, 2500), (2, 4100 - 200), (3, 1500 - 100)]  # 1 has no packet of its own
    rng = random.Random(7)
    for trial in range(20):
        order = list(range(len(infos)))
        rng.shuffle(order)
        orderer = Orderer(tau_us=1e9)  # a flow without its first packet would wait forever
        released = [h for t, k in enumerate(order)
                    for h in orderer.arrive(k, (*KEY, infos[k][0].flow_id), *infos[k], t)]
        assert sorted(released) == list(range(len(infos))), trial
        for fid in {i.flow_id for i, _ in infos}:
            mine = [k for k in released if infos[k][0].flow_id == fid]
            assert mine == sorted(mine), trial
        assert orderer.buffered == 0 and not orderer.flows and orderer.stats.timeouts == 0


def test_routes_get_room_for_the_option_whatever_ip_printed() -> None:
    # `ip route show` prints a locked rto_min as `rto_min lock 200ms`, which `ip route replace`
    # refuses: the route must go back as `rto_min 200ms`, or it silently keeps MSS 1460
    shown = "10.0.0.0/8 dev h13-eth0 proto kernel scope link src 10.0.0.13 rto_min lock 200ms"
    assert with_advmss(shown) == ("10.0.0.0/8 dev h13-eth0 proto kernel scope link src "
                                  f"10.0.0.13 rto_min 200ms advmss {ADVMSS}")
    assert with_advmss("10.0.0.0/8 dev h1-eth0 advmss 1400 rto_min 1ms") == (
        f"10.0.0.0/8 dev h1-eth0 rto_min 1ms advmss {ADVMSS}")
    assert with_advmss("10.0.0.0/8 dev x proto kernel scope link src 10.0.0.1 linkdown") == (
        f"10.0.0.0/8 dev x proto kernel scope link src 10.0.0.1 advmss {ADVMSS}")
    assert ADVMSS + 20 + 12 + 20 == 1500  # TCP and IP headers, the option: one full frame


def test_streams_not_seen_from_their_syn_or_out_of_frame_are_aged_not_split() -> None:
    stream = message(20_000, 1) + message(20_000, 2)
    # first seen in the middle of a message (its SYN and first bytes passed unseen): the zero
    # filler read as length prefixes would make a 4-byte flow of every 4 bytes
    marker = Marker(framed_source_ports={5301})
    midway = [flowinfo.read(marker.mark(tcp(5000 + at, stream[at:at + MSS], sport=5301,
                                            dport=40000))) for at in range(5000, 9000, MSS)]
    assert all(i.aged for i in midway) and marker.stats.flows == 0
    # seen from the SYN, but a length below 4 appears where a message should begin
    marker = Marker(framed_ports={5300})
    marker.mark(tcp(0, flags=0x02))
    broken = message(1000, 1) + bytes(3000)  # the second "message" has length 0
    infos = [flowinfo.read(marker.mark(tcp(1 + at, broken[at:at + MSS])))
             for at in range(0, len(broken), MSS)]
    assert marker.stats.flows == 1 and marker.stats.lost_framing == 1
    assert not infos[0].aged and all(i.aged for i in infos[1:])


def run_cbpf(program: str, packet: bytes) -> bool:
    """Whether a classic BPF program in iptables' bytecode text matches a raw IPv4 packet (the
    few instructions the agent's filters use)."""
    code = [tuple(int(x) for x in ins.split()) for ins in program.split(",")[1:]]
    a = x = pc = 0
    mem = [0] * 16
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x30:
            a = packet[k]
        elif op == 0x28:
            a = struct.unpack_from("!H", packet, k)[0]
        elif op == 0x50:
            a = packet[x + k]
        elif op == 0xB1:
            x = (packet[k] & 0x0F) * 4
        elif op in (0x54, 0x64, 0x74, 0x0C):
            a = {0x54: a & k, 0x64: a << k, 0x74: a >> k, 0x0C: a + x}[op] & 0xFFFFFFFF
        elif op == 0x02:
            mem[k] = a
        elif op == 0x60:
            a = mem[k]
        elif op == 0x07:
            x = a
        elif op in (0x15, 0x45, 0x25, 0x2D):
            taken = {0x15: a == k, 0x45: bool(a & k), 0x25: a > k, 0x2D: a > x}[op]
            pc += jt if taken else jf
        elif op == 0x06:
            return k != 0
        else:
            raise AssertionError(f"instruction {op:#x} not modelled")


def test_the_agents_rules_send_only_what_it_changes_or_holds_through_user_space() -> None:
    from lgkit.schemes.vertigo_host import MARK_FILTER, ORDER_FILTER, rules
    syn, fin, rst = tcp(ISN, flags=0x02), tcp(ISN, flags=0x11), tcp(ISN, flags=0x04)
    data, ack = tcp(ISN, b"x" * 100), tcp(ISN, flags=0x10)
    one_byte = tcp(ISN, b"x", flags=0x10)
    assert [run_cbpf(MARK_FILTER, p) for p in (syn, fin, rst, data, one_byte, ack)] == [
        True, True, True, True, True, False]
    marked = Marker(framed_ports={5300}).mark(data)
    assert flowinfo.read(marked) is not None
    assert [run_cbpf(ORDER_FILTER, p) for p in (marked, data, ack, syn)] == [
        True, False, False, False]
    assert all("bpf" in args for _, _, args in rules("h1-eth0", mark=True, order=True))


def test_an_agents_cpu_includes_the_c_agent_it_runs() -> None:
    proc = subprocess.Popen(["sh", "-c", "timeout 5 sh -c 'while :; do :; done'; true"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and tree_cpu_seconds(proc.pid) < 0.2:
            time.sleep(0.1)
        assert cpu_seconds(proc.pid) < 0.1 <= tree_cpu_seconds(proc.pid)
    finally:
        proc.kill()
        proc.wait()
