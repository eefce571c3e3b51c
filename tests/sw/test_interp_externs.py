"""Externs through generated code: hash (known CRC vectors), checksums, registers, counters,
meters, random, digest, log_msg and assert."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.sw.exec.interp.hashes import crc16, crc32, csum16
from lgkit.sw.exec.pipeline import MAX_HELD_DIGESTS

CHECK = b"123456789"

PROGRAM = """
header d_t { bit<8> op; bit<32> idx; bit<32> val; }
header nine_t { bit<72> s; }
header miss_t { bit<8> f; }
header r_t {
    bit<32> crc32; bit<16> crc16; bit<16> csum; bit<16> xor; bit<64> ident; bit<16> hmod;
    bit<32> hbase; bit<32> skip; bit<4> nib; bit<4> pad; bit<32> reg; bit<8> color;
    bit<16> rnd; bit<16> rnd2; bit<16> ck; bit<8> cerr;
}
struct headers { d_t d; nine_t nine; miss_t miss; r_t r; }
struct dig_t { bit<32> idx; bit<32> val; }
struct metadata { bit<32> tmp; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.d); pkt.extract(hdr.nine); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.d.op == 7, { hdr.d.idx }, hdr.d.val[15:0] , HashAlgorithm.csum16);
    }
}
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) regs;
    counter(4, CounterType.packets_and_bytes) cnt;
    meter(2, MeterType.packets) mtr;
    apply {
        hdr.r.setValid();
        hash(hdr.r.crc32, HashAlgorithm.crc32, 32w0, { hdr.nine.s }, 64w0x100000000);
        hash(hdr.r.crc16, HashAlgorithm.crc16, 16w0, { hdr.nine.s }, 32w0x10000);
        hash(hdr.r.csum, HashAlgorithm.csum16, 16w0, { hdr.nine.s }, 32w0x10000);
        hash(hdr.r.xor, HashAlgorithm.xor16, 16w0, { hdr.nine.s }, 32w0x10000);
        hash(hdr.r.ident, HashAlgorithm.identity, 64w0, { hdr.nine.s }, 128w1 << 64);
        hash(hdr.r.hmod, HashAlgorithm.crc16, 16w100, { hdr.nine.s }, 16w7);
        hash(hdr.r.hbase, HashAlgorithm.crc32, 32w5, { hdr.nine.s }, 32w0);
        hash(hdr.r.skip, HashAlgorithm.crc32, 32w0, { hdr.miss.f, hdr.nine.s },
             64w0x100000000);
        hash(hdr.r.nib, HashAlgorithm.identity, 4w0, { hdr.d.op[3:0] }, 8w16);
        hdr.r.reg = 0xDEAD;
        if (hdr.d.op == 1) { regs.write(hdr.d.idx, hdr.d.val); }
        regs.read(hdr.r.reg, hdr.d.idx);
        cnt.count(hdr.d.idx);
        mtr.execute_meter(hdr.d.idx, hdr.r.color);
        random(hdr.r.rnd, 16w10, 16w12);
        hdr.r.rnd2 = 77;
        random(hdr.r.rnd2, 16w5, 16w3);
        log_msg("idx={} val={}", { hdr.d.idx, hdr.d.val });
        assert(hdr.d.op != 9);
        if (hdr.d.op == 2) { digest<dig_t>(1, { hdr.d.idx, hdr.d.val }); }
        hdr.r.cerr = (bit<8>)sm.checksum_error;
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum_with_payload(hdr.d.op == 3, { hdr.d.idx }, hdr.r.ck,
                                     HashAlgorithm.csum16);
    }
}
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.r); pkt.emit(hdr.d); pkt.emit(hdr.nine); }
}
""" + v1switch()

R_LAYOUT = [("crc32", 4), ("crc16", 2), ("csum", 2), ("xor", 2), ("ident", 8), ("hmod", 2),
            ("hbase", 4), ("skip", 4), ("nibpad", 1), ("reg", 4), ("color", 1), ("rnd", 2),
            ("rnd2", 2), ("ck", 2), ("cerr", 1)]


@pytest.fixture(scope="module")
def pipeline():
    return load(PROGRAM)


def run(pipeline, op: int, idx: int, val: int, payload: bytes = b"") -> dict[str, int]:
    data = bytes([op]) + idx.to_bytes(4, "big") + val.to_bytes(4, "big") + CHECK + payload
    out = send(pipeline, 0, data)
    assert len(out) == 1
    body = out[0][1]
    result = {}
    pos = 0
    for name, n in R_LAYOUT:
        result[name] = int.from_bytes(body[pos : pos + n], "big")
        pos += n
    assert body[pos:] == data
    return result


def test_hash_algorithms_known_vectors(pipeline) -> None:
    r = run(pipeline, 0, 0, 0)
    assert r["crc32"] == 0xCBF43926
    assert r["crc16"] == 0xBB3D
    assert r["csum"] == csum16(CHECK)
    xor = 0
    padded = CHECK + b"\x00"
    for i in range(0, len(padded), 2):
        xor ^= int.from_bytes(padded[i : i + 2], "big")
    assert r["xor"] == xor
    assert r["ident"] == int.from_bytes(CHECK[:8], "big")
    assert r["hmod"] == 100 + 0xBB3D % 7
    assert r["hbase"] == 5  # max 0 -> base
    assert r["skip"] == crc32(CHECK)  # fields of the invalid header are skipped
    assert r["nibpad"] >> 4 == 0  # identity over 4 bits padded to a byte: 0x00 -> 0


def test_hash_pads_partial_bytes_at_the_end(pipeline) -> None:
    r = run(pipeline, 0x0C, 0, 0)
    assert r["nibpad"] >> 4 == (0xC0 % 16)  # bits 1100 padded to 0xC0; 0xC0 % 16 == 0
    assert crc16(CHECK) == r["crc16"]


def test_register_counter_meter(pipeline) -> None:
    assert run(pipeline, 1, 2, 0x12345678)["reg"] == 0x12345678
    assert run(pipeline, 0, 2, 0)["reg"] == 0x12345678
    assert pipeline.registers["MyIngress.regs"].read(2) == 0x12345678
    assert run(pipeline, 0, 9, 0)["reg"] == 0xDEAD  # out of range read leaves it unchanged
    assert any("out of range" in line for line in pipeline.logs)
    packets, nbytes = pipeline.counters["MyIngress.cnt"].read(2)
    assert packets == 2 and nbytes == 2 * 18
    meter = pipeline.meters["MyIngress.mtr"]
    assert run(pipeline, 0, 1, 0)["color"] == 0  # unconfigured: GREEN
    meter.set_rates(1, (0, 1), (0, 2))
    assert [run(pipeline, 0, 1, 0)["color"] for _ in range(3)] == [0, 1, 2]


def test_random_range_and_empty_range(pipeline) -> None:
    values = {run(pipeline, 0, 0, 0)["rnd"] for _ in range(60)}
    assert values == {10, 11, 12}
    assert run(pipeline, 0, 0, 0)["rnd2"] == 77


def test_digest_log_assert(pipeline) -> None:
    pipeline.digests.clear()
    pipeline.logs.clear()
    run(pipeline, 2, 5, 6)
    assert pipeline.digests == [("dig_t", (5, 6))]
    assert "idx=5 val=6" in pipeline.logs
    run(pipeline, 9, 0, 0)
    assert any(line.startswith("assert failed") for line in pipeline.logs)


def test_digests_nobody_consumes_are_bounded_and_counted(pipeline) -> None:
    pipeline.digests.clear()
    pipeline.digests.limit, pipeline.digests.dropped = 3, 0
    try:
        for value in range(5):
            run(pipeline, 2, value, 6)
        assert pipeline.digests == [("dig_t", (v, 6)) for v in range(3)]  # the oldest held
        assert pipeline.digests.dropped == 2
        pipeline.digests.drop_all()
        assert pipeline.digests == [] and pipeline.digests.dropped == 5
    finally:
        pipeline.digests.limit = MAX_HELD_DIGESTS


def test_verify_and_update_checksum_with_payload(pipeline) -> None:
    idx = 0x01020304
    good = csum16(idx.to_bytes(4, "big"))
    assert run(pipeline, 7, idx, good)["cerr"] == 0
    assert run(pipeline, 7, idx, good ^ 1)["cerr"] == 1
    payload = b"\x10\x20\x30"
    r = run(pipeline, 3, idx, 0, payload)
    assert r["ck"] == csum16(idx.to_bytes(4, "big") + payload)
