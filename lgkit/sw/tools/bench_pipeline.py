"""`lgkit bench-pipeline`: packets per second of the built-in target's interpreter (one process,
no I/O) on a basic IPv4 router (L2 and L3 tables, TTL decrement, IPv4 checksum update)."""

from __future__ import annotations

import argparse
import sys
import time

ROUTER_P4 = r"""
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification;
    bit<3> flags; bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct metadata { bit<9> l2_port; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() { mark_to_drop(standard_metadata); }
    action set_l2(bit<9> port) { meta.l2_port = port; }
    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table l2_check {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_l2; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = drop();
    }
    apply {
        l2_check.apply();
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
"""


def router_packet(dst_ip: int, payload_len: int = 64) -> bytes:
    """An Ethernet/IPv4/UDP-sized packet with a correct IPv4 header checksum."""
    from lgkit.sw.exec.interp.hashes import csum16

    total = 20 + payload_len
    ip = bytearray(
        bytes.fromhex("4500")
        + total.to_bytes(2, "big")
        + bytes.fromhex("0000400040110000")
        + bytes.fromhex("0a000001")
        + dst_ip.to_bytes(4, "big")
    )
    ip[10:12] = csum16(bytes(ip)).to_bytes(2, "big")
    eth = bytes.fromhex("000000000001" "000000000002" "0800")
    return eth + bytes(ip) + bytes(payload_len)


def build_router():  # noqa: ANN201 - returns a Pipeline (imported lazily)
    """The benchmark pipeline with its L2 and L3 entries installed."""
    from lgkit.sw.exec.pipeline import Exact, Lpm, Pipeline, TableEntry
    from lgkit.sw.lang.frontend.compiler import compile_source

    pipeline = Pipeline.load(compile_source(ROUTER_P4, "bench_router.p4"), engine="python")
    l2 = pipeline.tables["MyIngress.l2_check"]
    for i in range(64):
        l2.insert(TableEntry([Exact(i + 1)], "MyIngress.set_l2", [i % 8]))
    l3 = pipeline.tables["MyIngress.ipv4_lpm"]
    for i in range(256):
        l3.insert(TableEntry([Lpm(0x0A000000 | (i << 8), 24)], "MyIngress.ipv4_forward",
                             [0x0000000000AA + i, 1 + i % 4]))
    l3.insert(TableEntry([Lpm(0x0A000000, 8)], "MyIngress.ipv4_forward", [0xBB, 5]))
    return pipeline


def measure(packets: int, payload_len: int = 64) -> tuple[float, float]:
    """Packets per second of ingress + egress passes (parse, two tables, checksum, deparse),
    by wall-clock time and by this process's CPU time (robust when the machine is busy)."""
    pipeline = build_router()
    pkts = [router_packet(0x0A000000 | ((i % 300) << 8) | 7, payload_len) for i in range(256)]
    ingress, egress = pipeline.ingress, pipeline.egress
    for data in pkts[:64]:  # warm-up
        for job in ingress(1, data, 0).egress:
            egress(job, 0)
    start = time.perf_counter()
    cpu_start = time.process_time()
    sent = 0
    for i in range(packets):
        for job in ingress(1, pkts[i & 255], i).egress:
            if egress(job, i).out is not None:
                sent += 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    if sent == 0:
        raise RuntimeError("the benchmark router forwarded nothing")
    return packets / elapsed, packets / cpu


MAX_PACKETS = 10_000_000  # minutes of the interpreter (70k-200k packets/s here); more is a typo


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.packets <= MAX_PACKETS:
        print(f"lgkit: error: --packets must be in 1..{MAX_PACKETS:,}", file=sys.stderr)
        return 2
    if not 0 <= args.payload <= 9000:
        print("lgkit: error: --payload must be between 0 and 9000 bytes", file=sys.stderr)
        return 2
    wall, cpu = measure(args.packets, args.payload)
    print(f"interpreter: {wall:,.0f} packets/s wall clock, {cpu:,.0f} packets/s of CPU time "
          f"({args.packets} packets, {args.payload}-byte payload, IPv4 router with L2+L3 "
          "tables and checksum update, one process, no I/O)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench-pipeline", help="packets/s of the built-in target's interpreter (no I/O)"
    )
    p.add_argument("--packets", type=int, default=50_000, help="packets to process")
    p.add_argument("--payload", type=int, default=64, help="UDP-sized payload bytes")
    p.set_defaults(func=_run)
