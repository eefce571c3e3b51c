"""P4Info id assignment and aliases (p4c's Jenkins hash, prefixes, probing, @id, suffixes)."""

from __future__ import annotations

import pytest

from lgkit.sw.lang.p4info import ACTION, TABLE, P4InfoError, SymbolTable, allocate_ids, jenkins_hash


def test_known_ids_from_p4c() -> None:
    symbols = SymbolTable()
    symbols.add(ACTION, "NoAction")
    symbols.add(TABLE, "MyIngress.ipv4_lpm")
    symbols.compute_ids()
    assert symbols.id(ACTION, "NoAction") == 21257015
    assert symbols.id(TABLE, "MyIngress.ipv4_lpm") == 37375156


def test_collisions_probe_upwards_in_sorted_name_order() -> None:
    symbols = SymbolTable()
    symbols.add(ACTION, "b")
    symbols.add(ACTION, "a")
    taken = (ACTION << 24) | (jenkins_hash("a") & 0xFFFFFF)
    symbols.add(ACTION, "c", taken)  # an @id equal to a's hash forces 'a' to probe
    symbols.compute_ids()
    assert symbols.id(ACTION, "c") == taken
    assert symbols.id(ACTION, "a") == taken + 1
    assert symbols.id(ACTION, "b") == (ACTION << 24) | (jenkins_hash("b") & 0xFFFFFF)


def test_user_id_gets_prefix_and_wrong_prefix_is_rejected() -> None:
    symbols = SymbolTable()
    symbols.add(TABLE, "t", 5)
    symbols.compute_ids()
    assert symbols.id(TABLE, "t") == (TABLE << 24) | 5
    with pytest.raises(P4InfoError, match="wrong 8-bit prefix"):
        SymbolTable().add(TABLE, "u", (ACTION << 24) | 5)


def test_alias_is_shortest_unique_suffix() -> None:
    symbols = SymbolTable()
    for name in ["ingress.on_miss", "egress.on_miss", "ingress.set_vrf", "a.b.c", "d.b.c"]:
        symbols.add(ACTION, name)
    assert symbols.alias("ingress.on_miss") == "ingress.on_miss"
    assert symbols.alias("ingress.set_vrf") == "set_vrf"
    assert symbols.alias("a.b.c") == "a.b.c"


def test_field_ids_honour_user_ids() -> None:
    assert allocate_ids([None, None, None]) == [1, 2, 3]
    assert allocate_ids([None, 1, None]) == [2, 1, 3]
    assert allocate_ids([5, None, None]) == [5, 2, 3]
    with pytest.raises(P4InfoError):
        allocate_ids([0])
