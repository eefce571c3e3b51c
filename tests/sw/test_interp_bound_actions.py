"""Actions with directional parameters bound in the table's action list, used by const entries
and the default action (which then list every argument: the bound ones are not action data)."""

from __future__ import annotations

from test_interp_helpers import load, send, v1switch

PROGRAM = """
header h_t { bit<8> op; bit<8> v; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
action to_port(inout standard_metadata_t smeta, bit<9> port) { smeta.egress_spec = port; }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action mark(inout h_t h, bit<8> v) { h.v = v; }
    table t {
        key = { hdr.h.op : exact; }
        actions = { to_port(sm); mark(hdr.h); }
        const entries = {
            1 : to_port(sm, 5);
            2 : mark(hdr.h, 0x77);
        }
        default_action = to_port(sm, 9);
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def test_entries_and_default_bind_directional_parameters() -> None:
    pl = load(PROGRAM)
    assert send(pl, 0, bytes([1, 0])) == [(5, bytes([1, 0]))]
    assert send(pl, 0, bytes([2, 0])) == [(1, bytes([2, 0x77]))]
    assert send(pl, 0, bytes([3, 0])) == [(9, bytes([3, 0]))]


def test_only_action_data_is_visible_to_the_control_plane() -> None:
    pl = load(PROGRAM)
    table = pl.tables["MyIngress.t"]
    assert table.default_action == ("to_port", [9])
    params = sorted((e.action, tuple(e.params)) for e in table.entries())
    assert params == [("MyIngress.mark", (0x77,)), ("to_port", (5,))]
