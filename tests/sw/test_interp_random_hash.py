"""HashAlgorithm.random (accepted by p4c; BMv2 refuses to load it): the result is base plus a
uniform draw below max from the pipeline's seeded generator, and max 0 gives base."""

from __future__ import annotations

from collections import Counter

from test_interp_helpers import load, send, v1switch

PROGRAM = """
header h_t { bit<8> a; bit<8> r; bit<8> zero_max; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.h.r, HashAlgorithm.random, 8w100, { hdr.h.a }, 16w10);
        hash(hdr.h.zero_max, HashAlgorithm.random, 8w7, { hdr.h.a }, 16w0);
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def draws(seed: int, n: int) -> list[tuple[int, int]]:
    pipeline = load(PROGRAM, seed=seed)
    return [tuple(send(pipeline, 0, bytes([1, 0, 0]))[0][1][1:]) for _ in range(n)]


def test_random_hash_is_uniform_below_max_and_seeded() -> None:
    results = draws(5, 2000)
    counts = Counter(r for r, _ in results)
    assert set(counts) == set(range(100, 110))
    assert min(counts.values()) > 150  # 200 expected per value
    assert {z for _, z in results} == {7}
    assert draws(5, 50) == results[:50]
    assert draws(6, 50) != results[:50]
