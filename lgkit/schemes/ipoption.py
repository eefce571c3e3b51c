"""Checksum-neutral 12-byte IPv4 options: the carrier of Vertigo's flowinfo and PABO's bounce
header (p4/include/fabric_headers.p4).

The option's six 16-bit words add up to 0xFFFF in ones' complement, so the IPv4 header checksum
of the 20 fixed bytes is also the checksum of the header with the option: a program that
recomputes the checksum over the fixed fields only (p4/basic.p4, p4/linkguardian.p4) stays
correct. The seal is the fifth word.
"""

from __future__ import annotations

import struct

from lgkit.core.frames import ipv4_checksum

OPTION_LEN = 12
SEAL_OFFSET = 8
"Byte offset of the seal word inside the option."


def fold(total: int) -> int:
    """Ones' complement fold of a sum of 16-bit words to 16 bits."""
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def seal(option: bytes) -> bytes:
    """The option with its seal word set so that its words add up to 0xFFFF."""
    if len(option) != OPTION_LEN:
        raise ValueError(f"an option here is {OPTION_LEN} bytes, got {len(option)}")
    words = list(struct.unpack("!6H", option))
    words[SEAL_OFFSET // 2] = 0
    words[SEAL_OFFSET // 2] = ~fold(sum(words)) & 0xFFFF
    return struct.pack("!6H", *words)


def is_sealed(option: bytes) -> bool:
    """True if the option's words add up to 0xFFFF (or 0, the same in ones' complement)."""
    return fold(sum(struct.unpack("!6H", option))) in (0, 0xFFFF)


def header_len(ip: bytes) -> int:
    """IPv4 header length in bytes (IHL * 4)."""
    return (ip[0] & 0x0F) * 4


def option_of(ip: bytes, option_type: int) -> bytes | None:
    """The 12-byte option of `option_type` if it is the packet's only option."""
    if header_len(ip) == 20 + OPTION_LEN and ip[20] == option_type and ip[21] == OPTION_LEN:
        return ip[20:20 + OPTION_LEN]
    return None


def with_checksum(ip: bytes) -> bytes:
    """The packet with its IPv4 header checksum recomputed over the whole header."""
    hlen = header_len(ip)
    header = ip[:10] + b"\0\0" + ip[12:hlen]
    return ip[:10] + struct.pack("!H", ipv4_checksum(header)) + ip[12:]


def insert(ip: bytes, option: bytes) -> bytes:
    """A plain (20-byte header) IPv4 packet with `option` (sealed here) after its header."""
    if header_len(ip) != 20:
        raise ValueError("the packet already has IPv4 options")
    total = struct.unpack_from("!H", ip, 2)[0] + OPTION_LEN
    head = bytes([0x40 | (20 + OPTION_LEN) // 4]) + ip[1:2] + struct.pack("!H", total) + ip[4:20]
    return with_checksum(head + seal(option) + ip[20:])


def replace(ip: bytes, option: bytes) -> bytes:
    """The packet with its 12-byte option replaced by `option` (sealed here); the checksum
    does not change, since both options are neutral."""
    if header_len(ip) != 20 + OPTION_LEN:
        raise ValueError("the packet has no 12-byte option")
    return ip[:20] + seal(option) + ip[20 + OPTION_LEN:]


def remove(ip: bytes) -> bytes:
    """The packet without its 12-byte option."""
    if header_len(ip) != 20 + OPTION_LEN:
        raise ValueError("the packet has no 12-byte option")
    total = struct.unpack_from("!H", ip, 2)[0] - OPTION_LEN
    head = bytes([0x45]) + ip[1:2] + struct.pack("!H", total) + ip[4:20]
    return with_checksum(head + ip[20 + OPTION_LEN:])
