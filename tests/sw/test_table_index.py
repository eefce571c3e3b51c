"""The incrementally updated match index agrees with a brute-force matcher and with an index
rebuilt from scratch, under random insert/modify/delete sequences of every match kind."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lgkit.sw.exec.interp.tables import (
    ActionInfo,
    Exact,
    KeySpec,
    Lpm,
    Range,
    Table,
    TableEntry,
    Ternary,
    key_matcher,
    normalised_key,
)

WIDTH = 4  # small keys: collisions, overlaps and every prefix length are frequent


def _fn(S: list, P: object, v: int) -> None:  # noqa: N803 - the generated code's names
    return None


def _table(kinds: list[str]) -> Table:
    keys = [KeySpec(f"k{i}", kind, WIDTH) for i, kind in enumerate(kinds)]
    actions = [ActionInfo("set", 1, _fn, [8], [False])]
    return Table("t", keys, actions, 1 << 20, ("set", [255]), False)


def _key_match(kind: str, draw: st.DrawFn) -> object:
    full = (1 << WIDTH) - 1
    if kind == "exact":
        return Exact(draw(st.integers(0, full)))
    if kind == "lpm":
        plen = draw(st.integers(0, WIDTH))
        value = draw(st.integers(0, full)) & (full ^ ((1 << (WIDTH - plen)) - 1))
        return Lpm(value, plen)
    if kind == "ternary":
        mask = draw(st.integers(1, full))
        return Ternary(draw(st.integers(0, full)) & mask, mask)
    lo = draw(st.integers(0, full))
    return Range(lo, draw(st.integers(lo, full)))


@st.composite
def _ops(draw: st.DrawFn, kinds: list[str]) -> list[tuple[str, list, int, int]]:
    """(op, keys, priority, param): ops on a small pool of keys, so modify/delete find them."""
    prio = any(k in ("ternary", "range") for k in kinds)
    pool = [([_key_match(k, draw) for k in kinds], draw(st.integers(1, 3)) if prio else 0)
            for _ in range(draw(st.integers(1, 12)))]
    return [(draw(st.sampled_from(["insert", "insert", "modify", "delete"])), *pool[i],
             draw(st.integers(0, 254)))
            for i in draw(st.lists(st.integers(0, len(pool) - 1), max_size=40))]


def _brute(table: Table, live: list[TableEntry], key: tuple) -> int:
    """The parameter the winning entry sets (255 = the default), computed from scratch."""
    best, best_rank = None, None
    for order, entry in enumerate(live):
        normed = [normalised_key(s, k) for s, k in zip(table.keys, entry.keys, strict=True)]
        matchers = [key_matcher(s, k) for s, k in zip(table.keys, normed, strict=True)]
        if not all(m is None or (key[i] & m[1] == m[2] if m[0] == 0 else m[1] <= key[i] <= m[2])
                   for i, m in enumerate(matchers)):
            continue
        plen = sum(k.prefix_len for k in normed if isinstance(k, Lpm))
        rank = (entry.priority, plen, -order)
        if best_rank is None or rank > best_rank:
            best, best_rank = entry, rank
    return 255 if best is None else best.params[0]


def _run(kinds: list[str], ops: list) -> None:
    table = _table(kinds)
    live: dict[tuple, TableEntry] = {}  # ident -> entry, in insertion order
    for op, keys, prio, param in ops:
        entry = TableEntry(list(keys), "set", [param], prio)
        ident = table._ident(keys, prio)
        if op == "insert" and ident not in live:
            table.insert(entry)
            live[ident] = entry
        elif op == "modify" and ident in live:
            table.modify(entry)
            live[ident].params = [param]
        elif op == "delete" and ident in live:
            table.delete(entry)
            del live[ident]
    keys = [tuple((n >> (WIDTH * i)) & ((1 << WIDTH) - 1) for i in range(len(kinds)))
            for n in range(1 << (WIDTH * len(kinds)))]
    incremental = [table.lookup(k).args[0] for k in keys]
    table.invalidate()  # a full rebuild from the entries
    assert [table.lookup(k).args[0] for k in keys] == incremental
    assert incremental == [_brute(table, list(live.values()), k) for k in keys]
    assert table.entry_count() == len(live)


KINDS = [["exact"], ["exact", "exact"], ["lpm"], ["exact", "lpm"], ["ternary"],
         ["ternary", "exact"], ["range"], ["range", "ternary"]]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_incremental_index_matches_brute_force_and_rebuild(data: st.DataObject) -> None:
    for kinds in KINDS:
        _run(kinds, data.draw(_ops(kinds), label=",".join(kinds)))


def test_clear_and_reinsert_and_idle_timeout_tracking() -> None:
    table = _table(["exact"])
    timed = TableEntry([Exact(1)], "set", [1], idle_timeout_ns=10**9)
    table.insert(timed)
    table.insert(TableEntry([Exact(2)], "set", [2]))
    assert list(table.timed.values()) == [timed]
    timed.idle_timeout_ns = 0  # a MODIFY clearing the timeout
    table.modify(TableEntry([Exact(1)], "set", [3]))
    assert not table.timed and table.lookup((1,)).args == (3,)
    table.clear()
    assert table.lookup((2,)).args == (255,) and table.entry_count() == 0
    table.insert(TableEntry([Exact(2)], "set", [4], idle_timeout_ns=5))
    assert table.lookup((2,)).args == (4,) and len(table.timed) == 1


def test_lookups_keep_the_current_index_while_it_is_rebuilt() -> None:
    for kinds, new_key in ((["ternary"], Ternary(1, 0xF)), (["lpm"], Lpm(1, WIDTH)),
                           (["exact"], Exact(1))):
        table = _table(kinds)
        table.insert(TableEntry([new_key], "set", [6], 1 if kinds == ["ternary"] else 0))
        pinned = table._pinned()  # what lookups use while invalidate() rebuilds
        table.invalidate()
        table.delete(TableEntry([new_key], "set", [], 1 if kinds == ["ternary"] else 0))
        table.insert(TableEntry([new_key], "set", [7], 1 if kinds == ["ternary"] else 0))
        assert pinned((1,)).args == (6,) and table.lookup((1,)).args == (7,)
