"""v1model traffic-manager decisions as BMv2 takes them: unicast, drop, multicast with rid,
I2E/E2E clone with field lists, resubmit, recirculate, digest, truncate, instance types."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

PROGRAM = """
header c_t {
    bit<8> cmd; bit<8> arg; bit<8> iin; bit<8> inst; bit<16> rid; bit<16> eport;
    bit<8> keep; bit<8> lose; bit<8> both; bit<32> plen; bit<16> iport;
}
header x_t { bit<16> v; }
struct headers { c_t c; x_t x; }
struct metadata {
    @field_list(1) bit<8> keep;
    bit<8> lose;
    @field_list(1, 2) bit<8> both;
}
struct dig_t { bit<8> arg; bit<32> len; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.c); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.c.iin = (bit<8>)sm.instance_type;
        hdr.c.iport = (bit<16>)sm.ingress_port;
        sm.egress_spec = 1;
        if (hdr.c.cmd == 1) { sm.egress_spec = (bit<9>)hdr.c.arg; }
        else if (hdr.c.cmd == 2) { mark_to_drop(sm); }
        else if (hdr.c.cmd == 3) { sm.mcast_grp = (bit<16>)hdr.c.arg; }
        else if (hdr.c.cmd == 4) {
            meta.keep = 0x11; meta.lose = 0x22; meta.both = 0x23;
            clone_preserving_field_list(CloneType.I2E, (bit<32>)hdr.c.arg, 1);
            hdr.c.arg = 0xAA;
        } else if (hdr.c.cmd == 6) {
            if (sm.instance_type == 0) {
                meta.keep = 0x33; meta.lose = 0x44;
                resubmit_preserving_field_list(1);
            } else { sm.egress_spec = 2; }
        } else if (hdr.c.cmd == 7 && sm.instance_type == 4) {
            sm.egress_spec = 3;
        } else if (hdr.c.cmd == 8) {
            digest<dig_t>(1, { hdr.c.arg, sm.packet_length });
            truncate(3);
        } else if (hdr.c.cmd == 11) {
            clone(CloneType.I2E, 99);
        } else if (hdr.c.cmd == 12) {
            sm.egress_spec = 511;
            sm.mcast_grp = (bit<16>)hdr.c.arg;
        } else if (hdr.c.cmd == 13) {
            if (sm.instance_type == 6) { sm.egress_spec = 4; exit; }
            resubmit_preserving_field_list(1);
            resubmit_preserving_field_list(2);
            meta.keep = 1; meta.both = 2;
        } else if (hdr.c.cmd == 14) {
            hdr.x.setValid();
            hdr.x.v = 0xBEEF;
        }
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.c.inst = (bit<8>)sm.instance_type;
        hdr.c.rid = sm.egress_rid;
        hdr.c.eport = (bit<16>)sm.egress_port;
        hdr.c.keep = meta.keep;
        hdr.c.lose = meta.lose;
        hdr.c.both = meta.both;
        hdr.c.plen = sm.packet_length;
        if (sm.instance_type == 1) { hdr.c.iport = (bit<16>)sm.ingress_port; }
        if (hdr.c.cmd == 5 && sm.instance_type == 0) {
            meta.keep = 0x21; meta.lose = 0x31;
            hdr.c.arg = 0xBB;
            clone_preserving_field_list(CloneType.E2E, 6, 1);
        } else if (hdr.c.cmd == 7 && hdr.c.arg != 0xCC) {  // unicast resets instance_type
            meta.both = 0x55; meta.keep = 0x66;
            hdr.c.arg = 0xCC;
            recirculate_preserving_field_list(2);
        } else if (hdr.c.cmd == 9) {
            sm.egress_spec = 5;
        } else if (hdr.c.cmd == 10) {
            mark_to_drop(sm);
        }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.c); pkt.emit(hdr.x); }
}
""" + v1switch()

NAMES = [("cmd", 1), ("arg", 1), ("iin", 1), ("inst", 1), ("rid", 2), ("eport", 2), ("keep", 1),
         ("lose", 1), ("both", 1), ("plen", 4), ("iport", 2)]
HEADER_LEN = sum(n for _, n in NAMES)


@pytest.fixture(scope="module")
def pipeline():
    p = load(PROGRAM)
    p.mc_groups[7] = [(1, 2), (1, 3), (9, 4)]
    p.clone_sessions[5] = [(4, 0)]
    p.clone_sessions[6] = [(5, 3)]
    return p


def packet(cmd: int, arg: int = 0, payload: bytes = b"\x99") -> bytes:
    return bytes([cmd, arg]) + bytes(HEADER_LEN - 2) + payload


def decode(body: bytes) -> dict[str, int]:
    out, pos = {}, 0
    for name, n in NAMES:
        out[name] = int.from_bytes(body[pos : pos + n], "big")
        pos += n
    return out


def test_unicast_defaults(pipeline) -> None:
    out = send(pipeline, 6, packet(1, 9))
    assert [port for port, _ in out] == [9]
    r = decode(out[0][1])
    assert (r["inst"], r["eport"], r["iport"], r["iin"]) == (0, 9, 6, 0)
    assert r["plen"] == HEADER_LEN + 1
    assert out[0][1].endswith(b"\x99")


def test_drop_and_drop_in_egress(pipeline) -> None:
    assert send(pipeline, 0, packet(2)) == []
    assert send(pipeline, 0, packet(10)) == []  # mark_to_drop works in egress
    out = send(pipeline, 0, packet(9))  # any other egress_spec written in egress is ignored
    assert [port for port, _ in out] == [1]


def test_ingress_result_counts_drops(pipeline) -> None:
    res = pipeline.ingress(0, packet(2), 0)
    assert res.drops == 1 and res.egress == [] and res.resubmit is None


def test_multicast_replicas_with_rid(pipeline) -> None:
    out = send(pipeline, 0, packet(3, 7))
    assert [port for port, _ in out] == [2, 3, 4]
    assert [(decode(b)["inst"], decode(b)["rid"]) for _, b in out] == [(5, 1), (5, 1), (5, 9)]
    assert send(pipeline, 0, packet(3, 8)) == []  # unknown group: zero copies


def test_egress_spec_511_alone_still_multicasts(pipeline) -> None:
    out = send(pipeline, 0, packet(12, 7))
    assert [port for port, _ in out] == [2, 3, 4]


def test_ingress_clone_reparses_original_with_field_list(pipeline) -> None:
    out = send(pipeline, 3, packet(4, 5))
    by_port = {port: decode(body) for port, body in out}
    assert sorted(by_port) == [1, 4]
    clone, orig = by_port[4], by_port[1]
    assert orig["arg"] == 0xAA and orig["inst"] == 0
    assert clone["arg"] == 5  # the original packet, re-parsed
    assert clone["inst"] == 1
    assert (clone["keep"], clone["lose"], clone["both"]) == (0x11, 0, 0x23)
    assert clone["iport"] == 0  # metadata (ingress_port too) is reset after the re-parse


def test_egress_clone_copies_post_egress_headers(pipeline) -> None:
    out = send(pipeline, 0, packet(5))
    by_port = {port: decode(body) for port, body in out}
    assert sorted(by_port) == [1, 5]
    clone = by_port[5]
    assert clone["arg"] == 0xBB and clone["inst"] == 2 and clone["rid"] == 3
    assert (clone["keep"], clone["lose"]) == (0x21, 0)
    assert by_port[1]["arg"] == 0xBB and by_port[1]["inst"] == 0


def test_unconfigured_clone_session_makes_nothing(pipeline) -> None:
    out = send(pipeline, 0, packet(11))
    assert [port for port, _ in out] == [1]


def test_resubmit_with_field_list(pipeline) -> None:
    res = pipeline.ingress(0, packet(6), 0)
    assert res.egress == [] and res.resubmit is not None
    assert res.resubmit.instance_type == 6
    out = send(pipeline, 8, packet(6))
    assert [port for port, _ in out] == [2]
    r = decode(out[0][1])
    assert r["iin"] == 6 and r["inst"] == 0  # unicast enqueue resets instance_type
    assert (r["keep"], r["lose"]) == (0x33, 0)
    assert r["iport"] == 0  # standard_metadata is zeroed for resubmitted packets


def test_last_resubmit_call_wins_and_exit(pipeline) -> None:
    out = send(pipeline, 0, packet(13))
    assert [port for port, _ in out] == [4]
    r = decode(out[0][1])
    assert (r["keep"], r["both"]) == (0, 2)  # field list 2 (the last call) carries only `both`


def test_recirculate_deparsed_bytes_with_field_list(pipeline) -> None:
    out = send(pipeline, 0, packet(7))
    assert [port for port, _ in out] == [3]
    r = decode(out[0][1])
    assert r["arg"] == 0xCC  # the deparsed (egress-modified) bytes re-entered ingress
    assert r["iin"] == 4
    assert (r["both"], r["keep"]) == (0x55, 0)


def test_digest_and_truncate(pipeline) -> None:
    pipeline.digests.clear()
    data = packet(8, 0x42)
    out = send(pipeline, 0, data)
    assert out == [(1, out[0][1])] and len(out[0][1]) == 3
    assert pipeline.digests == [("dig_t", (0x42, len(data)))]


def test_set_valid_grows_packet_length(pipeline) -> None:
    out = send(pipeline, 0, packet(14))
    r = decode(out[0][1])
    assert r["plen"] == HEADER_LEN + 1 + 2
    assert out[0][1][HEADER_LEN : HEADER_LEN + 2] == b"\xbe\xef"


COUNT_LENGTH_PROGRAM = """
header a_t { bit<8> op; }
header b_t { bit<32> pad; }
struct headers { a_t a; b_t b; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); pkt.extract(hdr.b); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(4, CounterType.bytes) at_ingress;
    apply {
        at_ingress.count(0);
        hdr.b.setInvalid();
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(4, CounterType.bytes) at_egress;
    apply {
        at_egress.count((bit<32>)sm.instance_type);
        if (sm.instance_type == 0 && hdr.a.op == 1) { clone(CloneType.E2E, 5); }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); } }
"""


def test_counters_count_the_length_the_packet_came_in_with() -> None:
    """BMv2 counts the packet's ingress_length, in egress too, and for clones (found by
    `lgkit diff-bmv2`: the built-in target counted the length after ingress's changes)."""
    pipeline = load(COUNT_LENGTH_PROGRAM + v1switch())
    pipeline.clone_sessions[5] = [(2, 0)]
    data = b"\x01" + bytes(4) + bytes(20)
    out = send(pipeline, 0, data)
    assert sorted(len(frame) for _, frame in out) == [21, 21]  # the 4-byte header is gone
    counters = {name.rsplit(".", 1)[-1]: c for name, c in pipeline.counters.items()}
    assert counters["at_ingress"].read(0)[1] == 25
    assert counters["at_egress"].read(0)[1] == 25  # the original, in egress
    assert counters["at_egress"].read(2)[1] == 25  # its egress clone


def test_passes_are_bound_per_pipeline_and_refuse_foreign_jobs() -> None:
    from lgkit.sw.exec.pipeline import EgressJob

    first, second = load(PROGRAM), load(PROGRAM)
    first.clone_sessions[5] = [(4, 0)]
    assert first.ingress is not second.ingress  # each pipeline's own generated functions
    res = first.ingress(0, packet(4, 5), 0)
    assert len(res.egress) == 2  # the clone used first's session
    assert len(second.ingress(0, packet(4, 5), 0).egress) == 1  # second has no session 5
    outs = [first.egress(job, 0, enq_qdepth=3).out for job in res.egress]  # by keyword
    assert sorted(out[0] for out in outs if out is not None) == [1, 4]
    with pytest.raises(TypeError, match="not made by an ingress pass"):
        first.egress(EgressJob(1, 0, 0, 0, 10, ["not", "a", "state"]), 0)
