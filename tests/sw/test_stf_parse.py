"""STF parsing, key value forms and the per-port diff (no pipeline needed)."""

from __future__ import annotations

import pytest

from lgkit.sw.tools import stf
from lgkit.sw.tools.stf import (
    AddStmt,
    CommandStmt,
    ExpectStmt,
    PacketStmt,
    SetDefaultStmt,
    StfError,
    lpm_value,
    parse_stf,
    pattern_matches,
    ternary_value,
)

SAMPLE = """
# a comment
packet 0 0001 0203  # trailing comment
EXPECT 1 00 01 ** 03 $
expect 2
add MyIngress.ipv4_lpm 10 hdr.ipv4.dstAddr:0x0A0000** ipv4_forward(dstAddr:0x1, port:2)
add t a:0x1&&&0xF b:1->5 act()
setdefault t drop()
mirroring_add 5 3
mc_node_create 1 2 3
check_counter c(3) bytes == 64
wait
"""


def test_parses_every_statement_kind() -> None:
    stmts = parse_stf(SAMPLE, "x.stf")
    packet, expect, any_expect, add, add2, setdefault, mirror, node, check, wait = stmts
    assert isinstance(packet, PacketStmt) and packet.port == 0
    assert packet.data == b"\x00\x01\x02\x03"
    assert packet.line == 3
    assert isinstance(expect, ExpectStmt) and expect.pattern == "0001**03" and expect.exact
    assert isinstance(any_expect, ExpectStmt) and any_expect.pattern is None
    assert isinstance(add, AddStmt)
    assert (add.table, add.priority, add.action) == ("MyIngress.ipv4_lpm", 10, "ipv4_forward")
    assert add.keys == [("hdr.ipv4.dstAddr", "0x0A0000**")]
    assert add.args == [("dstAddr", "0x1"), ("port", "2")]
    assert isinstance(add2, AddStmt) and add2.priority is None and add2.args == []
    assert add2.keys == [("a", "0x1&&&0xF"), ("b", "1->5")]
    assert isinstance(setdefault, SetDefaultStmt) and setdefault.action == "drop"
    assert isinstance(mirror, CommandStmt) and mirror.words == ["5", "3"]
    assert isinstance(node, CommandStmt) and node.keyword == "mc_node_create"
    assert isinstance(check, CommandStmt) and check.words == ["c(3)", "bytes", "==", "64"]
    assert isinstance(wait, CommandStmt) and wait.keyword == "wait"


def test_packet_without_data_is_an_empty_packet() -> None:
    (packet,) = parse_stf("packet 2 \n")
    assert isinstance(packet, PacketStmt) and packet.port == 2 and packet.data == b""


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("packet x 00", "expected a port number"),
        ("packet 1 0g", "bad hex data"),
        ("packet 1 000", "odd number"),
        ("frobnicate 1", "unknown STF statement"),
        ("add t k:1 act(x)", "not NAME:VALUE"),
        ("add t k1 act()", "not NAME:VALUE"),
        ("mirroring_add 1", "mirroring_add: expected SESSION PORT"),
        ("setdefault t", "usage: setdefault"),
    ],
)
def test_bad_lines_are_located(line: str, message: str) -> None:
    with pytest.raises(StfError) as info:
        parse_stf("# first\n" + line, "bad.stf")
    assert str(info.value).startswith("bad.stf:2: error: ")
    assert message in str(info.value)


def test_ternary_star_digits_and_explicit_mask() -> None:
    assert ternary_value("0x****0101", 32) == (0x00000101, 0x0000FFFF)
    assert ternary_value("0x0A&&&0x0F", 8) == (0x0A, 0x0F)
    assert ternary_value("0b1*0", 3) == (0b100, 0b101)
    assert ternary_value("7", 8) == (7, 0xFF)
    with pytest.raises(ValueError):
        ternary_value("0x1FF", 8)


def test_lpm_prefix_from_written_digits() -> None:
    assert lpm_value("0x0A0000**", 32) == (0x0A000000, 24)
    assert lpm_value("0x0A000000/8", 32) == (0x0A000000, 8)
    assert lpm_value("10", 32) == (10, 32)
    # without '*' the written digits still give the prefix, as p4c's runner computes it
    assert lpm_value("0x0A010065", 32) == (0x0A010065, 32)
    assert lpm_value("0x12", 16) == (0x12, 8)
    assert lpm_value("0b101", 8) == (0b101, 3)
    with pytest.raises(ValueError):
        lpm_value("0x0A/40", 32)


def test_key_names_map_bmv2_style_to_p4info() -> None:
    fields = ["hdr.ipv4.dstAddr", "hdr.h[0].f", "hdr.eth.$valid$", "meta.x"]
    assert stf.key_field_name(fields, "ipv4.dstAddr") == "hdr.ipv4.dstAddr"
    assert stf.key_field_name(fields, "h$0.f") == "hdr.h[0].f"
    assert stf.key_field_name(fields, "eth.valid") == "hdr.eth.$valid$"
    assert stf.key_field_name(fields, "hdr.eth") == "hdr.eth.$valid$"
    with pytest.raises(ValueError):
        stf.key_field_name(fields, "nope")


def test_names_by_suffix_and_ambiguity() -> None:
    names = ["MyIngress.t", "MyEgress.t", "MyIngress.u"]
    assert stf.by_name_or_suffix(names, "u", "table") == "MyIngress.u"
    assert stf.by_name_or_suffix(names, "MyEgress.t", "table") == "MyEgress.t"
    with pytest.raises(ValueError, match="ambiguous"):
        stf.by_name_or_suffix(names, "t", "table")


def test_expect_patterns() -> None:
    exact = ExpectStmt(1, 0, "00**", exact=True)
    prefix = ExpectStmt(1, 0, "00**")
    assert pattern_matches(prefix, b"\x00\x12\x34")
    assert not pattern_matches(exact, b"\x00\x12\x34")
    assert pattern_matches(exact, b"\x00\xff")
    assert not pattern_matches(prefix, b"\x01\x00")
    assert not pattern_matches(prefix, b"\x00")


def test_diff_shows_ports_counts_and_differing_nibbles() -> None:
    diff = stf.PortDiff(2, [ExpectStmt(7, 2, "AABB"), ExpectStmt(8, 2, "CC")], [b"\xaa\xbc"])
    text = "\n".join(stf.format_diff(diff))
    assert "port 2: expected 2 packet(s), got 1" in text
    assert "expected:   AABB  (line 7)" in text
    assert "received:   AABC" in text
    assert "   ^" in text
    assert "received:   <nothing>" in text
