"""Unit tests of the interpreter's building blocks: hashes, table matching, extern state."""

from __future__ import annotations

import pytest

from lgkit.sw.exec.externs.meter import GREEN, RED, YELLOW, MeterArray
from lgkit.sw.exec.externs.register import RegisterArray
from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.runtime import format_log, pop_front, push_front, read_bits
from lgkit.sw.exec.interp.tables import (
    ActionInfo,
    Exact,
    KeySpec,
    Lpm,
    Optional_,
    Range,
    Table,
    TableEntry,
    Ternary,
)

CHECK = b"123456789"


def test_crc_check_values() -> None:
    assert hashes.crc32(CHECK) == 0xCBF43926
    assert hashes.crc16(CHECK) == 0xBB3D
    assert hashes.ALGORITHMS["crc16_custom"](CHECK) == 0xBB3D
    assert hashes.ALGORITHMS["crc32_custom"](CHECK) == 0xCBF43926
    ccitt = hashes.make_crc(16, 0x1021, 0xFFFF, 0, False, False)
    assert ccitt(CHECK) == 0x29B1


def test_csum16_known_ipv4_header() -> None:
    header = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert hashes.csum16(header) == 0xB861
    with_sum = header[:10] + (0xB861).to_bytes(2, "big") + header[12:]
    assert hashes.csum16(with_sum) == 0
    assert hashes.csum16(b"\x01") == 0xFEFF  # odd length padded with a zero byte


def test_xor16_identity_and_packing() -> None:
    assert hashes.xor16(bytes.fromhex("12345678")) == 0x1234 ^ 0x5678
    assert hashes.identity(bytes.fromhex("0102030405060708090a")) == 0x0102030405060708
    assert hashes.identity(b"\x07") == 7
    assert hashes.pack_bits(0xA, 4) == b"\xa0"  # MSB first, padded at the end
    assert hashes.pack_bits(0x1FF, 9) == b"\xff\x80"


def _noop(S: list, P: object, *args: int) -> None:
    return None


def _table(keys: list[KeySpec], size: int = 16) -> Table:
    actions = [
        ActionInfo("set", 1, _noop, [8], [False]),
        ActionInfo("NoAction", 2, _noop, [], []),
    ]
    return Table("c.t", keys, actions, size, ("NoAction", []), False)


def test_exact_table_hit_miss_and_misuse() -> None:
    t = _table([KeySpec("k", "exact", 16)])
    t.insert(TableEntry([Exact(5)], "set", [7]))
    hit = t.lookup((5,))
    assert hit.hit and hit.args == (7,) and hit.action_id == 1
    assert not t.lookup((6,)).hit
    with pytest.raises(KeyError):
        t.insert(TableEntry([Exact(5)], "set", [1]))
    with pytest.raises(ValueError):
        t.insert(TableEntry([Exact(1 << 16)], "set", [1]))
    with pytest.raises(ValueError):
        t.insert(TableEntry([Exact(1)], "set", [256]))
    with pytest.raises(ValueError):
        t.insert(TableEntry([Exact(1)], "nope", []))
    t.modify(TableEntry([Exact(5)], "set", [9]))
    assert t.lookup((5,)).args == (9,)
    t.delete(TableEntry([Exact(5)], "set", []))
    assert not t.lookup((5,)).hit
    with pytest.raises(KeyError):
        t.delete(TableEntry([Exact(5)], "set", []))


def test_lpm_longest_prefix_wins() -> None:
    t = _table([KeySpec("dst", "lpm", 32)])
    t.insert(TableEntry([Lpm(0x0A000000, 8)], "set", [8]))
    t.insert(TableEntry([Lpm(0x0A010000, 16)], "set", [16]))
    t.insert(TableEntry([Lpm(0, 0)], "set", [0]))
    assert t.lookup((0x0A010203,)).args == (16,)
    assert t.lookup((0x0A020203,)).args == (8,)
    assert t.lookup((0x0B000000,)).args == (0,)


def test_ternary_priority_largest_wins_and_range_optional() -> None:
    t = _table([KeySpec("a", "ternary", 8), KeySpec("b", "range", 8), KeySpec("c", "optional", 8)])
    t.insert(TableEntry([Ternary(0x10, 0xF0), None, None], "set", [1], priority=10))
    t.insert(TableEntry([Ternary(0x12, 0xFF), Range(0, 5), None], "set", [2], priority=20))
    t.insert(TableEntry([None, None, Optional_(9)], "set", [3], priority=30))
    assert t.lookup((0x12, 3, 0)).args == (2,)
    assert t.lookup((0x12, 6, 0)).args == (1,)
    assert t.lookup((0x12, 6, 9)).args == (3,)
    assert not t.lookup((0x20, 0, 0)).hit
    assert t.find([Ternary(0x12, 0xFF), Range(0, 5), None], 20) is not None


def test_default_action_and_const() -> None:
    t = _table([KeySpec("k", "exact", 8)])
    t.set_default("set", [3])
    assert t.lookup((1,)).args == (3,) and not t.lookup((1,)).hit
    t.default_is_const = True
    with pytest.raises(ValueError):
        t.set_default("NoAction", [])


def test_register_out_of_range_and_signed() -> None:
    logs: list[str] = []
    r = RegisterArray("r", 2, 8, True, logs)
    r.p4_write(0, -1)
    assert r.read(0) == 0xFF and r.p4_read(0, 0) == -1
    assert r.p4_read(5, 42) == 42 and logs
    r.p4_write(9, 1)
    assert r.values == [0xFF, 0]


def test_meter_two_rate_three_colour() -> None:
    m = MeterArray("m", 1, "packets", [])
    assert m.execute(0, 100, 0) == GREEN  # unconfigured
    m.set_rates(0, (1, 2), (2, 3))  # 1 pkt/s committed burst 2, 2 pkt/s peak burst 3
    colours = [m.execute(0, 100, 0) for _ in range(4)]
    assert colours == [GREEN, GREEN, YELLOW, RED]
    assert m.execute(0, 100, 1_000_000) == GREEN  # one second refills one committed token


def test_runtime_helpers() -> None:
    assert read_bits(b"\xab\xcd", 4, 8) == 0xBC
    S = [2, 1, 11, 1, 22, 0, 0]  # nextIndex 2, three (valid, value) elements
    push_front(S, 0, 3, 2, 1)
    assert S == [3, 0, 0, 1, 11, 1, 22]
    pop_front(S, 0, 3, 2, 2)
    assert S == [1, 1, 22, 0, 0, 0, 0]
    assert format_log("a={} b={}", [1, 2]) == "a=1 b=2"
