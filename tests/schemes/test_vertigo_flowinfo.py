"""The flowinfo option and its checksum-neutral seal: encoding, boosting and its inverse."""

from __future__ import annotations

import struct

from lgkit.core.frames import ipv4_checksum, udp_frame
from lgkit.schemes import flowinfo, ipoption
from lgkit.schemes.flowinfo import FlowInfo


def test_rotations_are_inverse_and_rank_halves_per_retransmission() -> None:
    for value in (0, 1, 1461, 0x80000001, 0xFFFFFFFF, 400_001):
        for count in range(16):
            assert flowinfo.rotl(flowinfo.rotr(value, count), count) == value
    info = FlowInfo.marked(400_001, retcnt=2, flow_id=5, first=True)
    assert info.rfs == 0x400186A0  # the two low bits rotated in at the top
    assert info.original_rfs == 400_001
    assert info.rank == 100_000
    assert FlowInfo.unpack(info.pack()) == info


def test_seal_keeps_the_fixed_header_checksum_valid_for_the_whole_header() -> None:
    ip = udp_frame("00:00:00:00:00:01", "00:00:00:00:00:02", "10.0.0.1", "10.0.0.2", 7)[14:]
    marked = ipoption.insert(ip, FlowInfo.marked(123_456, flow_id=3).pack())
    assert ipoption.header_len(marked) == 32
    assert struct.unpack_from("!H", marked, 2)[0] == len(marked)
    assert ipv4_checksum(marked[:32]) == 0  # valid over the whole header
    fixed = marked[:10] + b"\0\0" + marked[12:20]
    assert ipv4_checksum(fixed) == struct.unpack_from("!H", marked, 10)[0]  # and over 20 bytes
    assert flowinfo.read(marked) == FlowInfo.marked(123_456, flow_id=3)
    bumped = ipoption.replace(marked, FlowInfo(5, deflections=9).pack())
    assert ipv4_checksum(bumped[:32]) == 0
    assert ipoption.remove(marked) == ip
    assert flowinfo.read(ip) is None


def test_every_option_value_seals() -> None:
    for rfs in (0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF, 0x12345678):
        for deflections in (0, 1, 255):
            option = FlowInfo(rfs, retcnt=15, flow_id=7, first=True,
                              deflections=deflections).pack()
            assert ipoption.is_sealed(option)
