"""Constructs outside the executable subset fail at load with a located `unsupported:` error."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, v1switch

from lgkit.sw.lang.frontend.diagnostics import P4Error

COMMON = """
header h_t { bit<8> a; bit<16> b; }
struct headers { h_t h; }
struct metadata { bit<16> m; }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
"""

CASES = {
    "entries in a table with an action profile": """
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action_profile(32w128) prof;
    action a() { }
    table t {
        key = { hdr.h.a: exact; }
        actions = { a; }
        implementation = prof;
        const entries = { 1 : a(); }
    }
    apply { t.apply(); }
}""",
    "hash base that is a struct (found by make fuzz: a TypeError per packet)": """
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(meta.m, HashAlgorithm.xor16, hdr, { hdr.h.a }, 32w65536);
    }
}""",
    "stack index the right side's call changes": """
bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    h_t[2] st;
    apply {
        st[0].setValid();
        st[1].setValid();
        st[hdr.h.a[0:0]].a = bump(hdr.h.a);
    }
}""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unsupported_fails_at_load_with_location(name: str) -> None:
    with pytest.raises(P4Error) as info:
        load(COMMON + CASES[name] + v1switch())
    text = str(info.value)
    assert "unsupported:" in text
    assert text.startswith("test.p4:")
