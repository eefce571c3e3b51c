"""Byte-string rules and controller-header packing of the P4Runtime server (pure functions)."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4i, p4r

from lgkit.sw.p4runtime import codec
from lgkit.sw.p4runtime.errors import P4RTError
from lgkit.sw.p4runtime.packetio import decode_packet_in, encode_packet_out


def header(name: str, widths: list[int]) -> p4i.ControllerPacketMetadata:
    msg = p4i.ControllerPacketMetadata()
    msg.preamble.name = name
    for i, width in enumerate(widths, start=1):
        msg.metadata.append(p4i.ControllerPacketMetadata.Metadata(id=i, name=f"f{i}",
                                                                  bitwidth=width))
    return msg


def code_of(call) -> grpc.StatusCode:
    with pytest.raises(P4RTError) as info:
        call()
    return info.value.code


def test_decode_accepts_leading_zeros_and_rejects_too_wide_values():
    assert codec.decode(b"\x00\x00\x01\xff", 9, "f") == 0x1FF
    assert code_of(lambda: codec.decode(b"\x02\x00", 9, "f")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: codec.decode(b"", 9, "f")) == grpc.StatusCode.INVALID_ARGUMENT


def test_encode_is_canonical():
    assert codec.encode(0) == b"\x00"
    assert codec.encode(0x1FF) == b"\x01\xff"
    assert codec.encode(1 << 47) == b"\x80" + bytes(5)


def test_packet_out_metadata_is_packed_msb_first():
    out = header("packet_out", [9, 8, 7])
    msg = p4r.PacketOut(payload=b"PAY", metadata=[
        p4r.PacketMetadata(metadata_id=1, value=b"\x01\x02"),
        p4r.PacketMetadata(metadata_id=2, value=b"\xab"),
        p4r.PacketMetadata(metadata_id=3, value=b"\x05")])
    packed = (0x102 << 15) | (0xAB << 7) | 0x05
    assert encode_packet_out(out, msg) == packed.to_bytes(3, "big") + b"PAY"


def test_packet_out_pads_odd_widths_at_the_end():
    out = header("packet_out", [9])
    msg = p4r.PacketOut(payload=b"", metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x01")])
    assert encode_packet_out(out, msg) == bytes([0x00, 0x80])


def test_packet_out_metadata_errors():
    out = header("packet_out", [9, 8])
    missing = p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x01")])
    assert code_of(lambda: encode_packet_out(out, missing)) == grpc.StatusCode.INVALID_ARGUMENT
    unknown = p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=9, value=b"\x01")])
    assert code_of(lambda: encode_packet_out(out, unknown)) == grpc.StatusCode.INVALID_ARGUMENT
    wide = p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x01"),
                                   p4r.PacketMetadata(metadata_id=2, value=b"\x01\x00")])
    assert code_of(lambda: encode_packet_out(out, wide)) == grpc.StatusCode.INVALID_ARGUMENT


def test_packet_in_metadata_is_decoded_from_the_leading_bytes():
    header_in = header("packet_in", [9, 8, 7])
    packed = (0x1FE << 15) | (0x11 << 7) | 0x7F
    msg = decode_packet_in(header_in, packed.to_bytes(3, "big") + b"frame")
    assert msg.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in msg.metadata] == \
        [(1, b"\x01\xfe"), (2, b"\x11"), (3, b"\x7f")]


def test_without_controller_headers_frames_pass_unchanged():
    assert decode_packet_in(None, b"raw").payload == b"raw"
    assert encode_packet_out(None, p4r.PacketOut(payload=b"raw")) == b"raw"
