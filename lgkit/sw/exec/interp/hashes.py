"""Hash and checksum algorithms of v1model (BMv2 definitions) over byte strings."""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable

_LITTLE = sys.byteorder == "little"


def _reflect(value: int, width: int) -> int:
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def _crc_table(width: int, poly: int, reflected: bool) -> list[int]:
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    table = []
    for byte in range(256):
        if reflected:
            crc = byte
            rpoly = _reflect(poly, width)
            for _ in range(8):
                crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        else:
            crc = byte << (width - 8)
            for _ in range(8):
                crc = ((crc << 1) ^ poly) if crc & top else crc << 1
        table.append(crc & mask)
    return table


def make_crc(
    width: int, poly: int, init: int, xor_out: int, reflect_in: bool, reflect_out: bool
) -> Callable[[bytes], int]:
    """A table-driven CRC of `width` bits (8, 16 or 32) with the Rocksoft parameters."""
    mask = (1 << width) - 1
    table = _crc_table(width, poly, reflect_in)
    shift = width - 8

    if reflect_in:
        start = _reflect(init, width)

        def crc_reflected(data: bytes) -> int:
            crc = start
            for byte in data:
                crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
            if not reflect_out:
                crc = _reflect(crc, width)
            return (crc ^ xor_out) & mask

        return crc_reflected

    def crc_normal(data: bytes) -> int:
        crc = init
        for byte in data:
            crc = ((crc << 8) & mask) ^ table[((crc >> shift) ^ byte) & 0xFF]
        if reflect_out:
            crc = _reflect(crc, width)
        return (crc ^ xor_out) & mask

    return crc_normal


crc16 = make_crc(16, 0x8005, 0x0000, 0x0000, True, True)  # CRC-16/ARC


def crc32(data: bytes) -> int:
    """CRC-32/IEEE 802.3 (zlib)."""
    return zlib.crc32(data) & 0xFFFFFFFF




def csum16(data: bytes) -> int:
    """RFC 1071 Internet checksum: ones' complement of the ones' complement sum."""
    if len(data) & 1:
        data = data + b"\x00"
    # The ones' complement sum is byte-order independent (RFC 1071 section 2): sum native
    # 16-bit words, fold, then swap into network order if the host is little-endian.
    total = sum(memoryview(data).cast("H"))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    if _LITTLE:
        total = ((total & 0xFF) << 8) | (total >> 8)
    return ~total & 0xFFFF


def csum16_bits(value: int, nbits: int) -> int:
    """csum16(pack_bits(value, nbits)) without the bytes: 2**16 = 1 (mod 0xFFFF), so the ones'
    complement sum of the 16-bit words (zero-padded at the end) is the value mod 0xFFFF, except
    that a nonzero value whose sum is a multiple of 0xFFFF sums to 0xFFFF, not 0."""
    rest = (value << ((-nbits) & 15)) % 0xFFFF
    if rest == 0:
        return 0 if value else 0xFFFF
    return 0xFFFF - rest


def xor16(data: bytes) -> int:
    """XOR of the 16-bit big-endian words (odd length padded with a zero byte)."""
    if len(data) & 1:
        data = data + b"\x00"
    result = 0
    for i in range(0, len(data), 2):
        result ^= (data[i] << 8) | data[i + 1]
    return result


def identity(data: bytes) -> int:
    """The first min(8, len) bytes as a big-endian integer."""
    return int.from_bytes(data[:8], "big")


ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc16_custom": crc16,  # BMv2's default crc16_custom parameters are CRC-16/ARC
    "crc32": crc32,
    "crc32_custom": crc32,  # BMv2's default crc32_custom parameters are CRC-32/IEEE
    "csum16": csum16,
    "xor16": xor16,
    "identity": identity,
}


def pack_bits(value: int, nbits: int) -> bytes:
    """The bit string `value` of `nbits` bits, MSB first, zero-padded at the end to a byte."""
    pad = (-nbits) & 7
    return (value << pad).to_bytes((nbits + pad) >> 3, "big")
