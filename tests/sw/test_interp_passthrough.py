"""Pass-through: a recirculating egress pass whose headers are those its ingress parse got
from the parse memo sends its input frame, only once deparsing those headers gave it back."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.sw.exec.arch.v1model import passes as v1model

# Loops `meta.loops` times through recirculation with its headers unchanged (a field list
# carries the count), then leaves on port 1. The compute control writes a checksum of a.x
# into b.y; EMIT is the deparser's order.
PROGRAM = """
header a_t { bit<8> x; bit<8> n; }
header b_t { bit<16> y; }
struct headers { a_t a; b_t b; }
struct metadata { @field_list(1) bit<8> loops; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); pkt.extract(hdr.b); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (meta.loops < hdr.a.n) {
            meta.loops = meta.loops + 1;
            recirculate_preserving_field_list(1);
        }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) {
    apply { update_checksum(true, { hdr.a.x }, hdr.b.y, HashAlgorithm.csum16); }
}
control MyDeparser(packet_out pkt, in headers hdr) { apply { EMIT } }
""" + v1switch()

IN_ORDER = "pkt.emit(hdr.a); pkt.emit(hdr.b);"
REVERSED = "pkt.emit(hdr.b); pkt.emit(hdr.a);"


def _entries(pipeline) -> list:
    """The parse memo's entries (the parser's one memo dict in the module namespace)."""
    memos = [v for k, v in pipeline.code.ns.items() if k.startswith("_c") and isinstance(v, dict)]
    return [e for memo in memos for e in memo.values()]


def _without(program: str, monkeypatch: pytest.MonkeyPatch):
    """The same program with the pass-through off (the reference)."""
    with monkeypatch.context() as m:
        m.setattr(v1model, "header_writes", lambda *args: None)
        pl = load(program, engine="python")
    assert pl.slots.pass_writes is None
    return pl


@pytest.mark.parametrize("loops", [0, 1, 3])
@pytest.mark.parametrize("emit", [IN_ORDER, REVERSED])
@pytest.mark.parametrize("check", [b"\xed\xff", b"\x00\x00"])  # right, wrong checksum
def test_the_output_is_what_deparsing_gives(loops: int, emit: str, check: bytes,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    program = PROGRAM.replace("EMIT", emit)
    pl, ref = load(program, engine="python"), _without(program, monkeypatch)  # Python's entries
    assert pl.slots.pass_writes is not None  # compute and deparser read headers only
    frame = bytes([0x12, loops]) + check + b"payload"
    for _ in range(2):  # the second time through the entries the first one left
        assert send(pl, 0, frame) == send(ref, 0, frame)
    learnt = [e[4][0] for e in _entries(pl)]
    if loops >= 2 and emit == IN_ORDER:
        assert learnt and all(k and k[0] is True for k in learnt)  # loops passed through
        assert send(pl, 0, frame) == [(1, send(ref, 0, frame)[0][1])]
    if loops >= 2 and emit == REVERSED:
        assert False in learnt  # the frame changes every pass: never passed through


def test_compute_that_reads_metadata_disables_it() -> None:
    program = PROGRAM.replace("EMIT", IN_ORDER).replace(
        "{ hdr.a.x }, hdr.b.y", "{ hdr.a.x, meta.loops }, hdr.b.y")
    assert load(program).slots.pass_writes is None
