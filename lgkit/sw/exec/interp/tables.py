"""Match-action tables: entries, the control-plane API and the per-packet matching engine."""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KeySpec:
    """One table key: its P4Info name, match kind and width in bits."""

    name: str
    match_kind: str
    width: int


@dataclass(frozen=True)
class Exact:
    value: int


@dataclass(frozen=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True)
class Range:
    lo: int
    hi: int


@dataclass(frozen=True)
class Optional_:  # noqa: N801 - the name the interface documents
    value: int


KeyMatch = Exact | Ternary | Lpm | Range | Optional_


@dataclass(eq=False)
class TableEntry:
    """An entry: one KeyMatch (or None = wildcard) per key, the action and its parameters.

    `priority`: the larger number wins (P4Runtime). In a table with an action profile or
    selector, `member` or `group` names what the entry runs (`action` is ""). `counter` is
    (packets, bytes) for a table with a direct counter; `meter_config` is ((cir, cburst),
    (pir, pburst)) or None for a table with a direct meter; `register` the cell of a TNA
DirectRegister (None: its initial value). `idle_timeout_ns` and `last_hit_us`
    (the switch clock at the last hit, stamped by tables with `support_timeout = true`) serve
    P4Runtime's idle timeout.
    """

    keys: list[KeyMatch | None]
    action: str
    params: list[int] = field(default_factory=list)
    priority: int = 0
    packets: int = 0
    bytes: int = 0
    meter_config: tuple[tuple[int, int], tuple[int, int]] | None = None
    meter_state: list[float] | None = None
    register: Any = None
    idle_timeout_ns: int = 0
    last_hit_us: int = 0
    idle_reported_at_hit: int | None = None
    member: int | None = None
    group: int | None = None

    @property
    def counter(self) -> tuple[int, int]:
        return (self.packets, self.bytes)

    @counter.setter
    def counter(self, value: tuple[int, int]) -> None:
        self.packets, self.bytes = value


class Hit:
    """What a lookup returns: the entry (None for the default action), action id and call;
    `group` is set for an entry pointing at a selector's group (the member is chosen later)."""

    __slots__ = ("entry", "hit", "action_id", "fn", "args", "group")

    def __init__(self, entry: TableEntry | None, action_id: int, fn: Callable, args: tuple,
                 group: int | None = None):
        self.entry = entry
        self.hit = entry is not None
        self.action_id = action_id
        self.fn = fn
        self.args = args
        self.group = group


@dataclass
class ActionInfo:
    """An action a table can run: its id, generated function and parameter widths/signs."""

    name: str
    action_id: int
    fn: Callable
    param_widths: list[int]
    param_signed: list[bool]
    table_only: bool = False
    default_only: bool = False
    hidden: bool = False  # the implicit NoAction default, not in the table's action list

    def check_params(self, owner: str, params: list[int]) -> None:
        """ValueError unless `params` are this action's data (count and widths)."""
        if len(params) != len(self.param_widths):
            raise ValueError(f"{owner}: action {self.name} takes {len(self.param_widths)} "
                             f"parameters, got {len(params)}")
        for value, width in zip(params, self.param_widths, strict=True):
            if not 0 <= value < (1 << width):
                raise ValueError(f"{owner}: parameter {value} does not fit in {width} bits")

    def call_args(self, params: list[int]) -> tuple:
        """The action function's arguments for control-plane data (signed ones sign-extended)."""
        out = []
        for value, width, signed in zip(params, self.param_widths, self.param_signed,
                                        strict=True):
            if signed and value >> (width - 1):
                value -= 1 << width
            out.append(value)
        return tuple(out)


def normalised_key(spec: KeySpec, km: KeyMatch | None) -> KeyMatch | None:
    """Validate one key match against its spec and canonicalise it (masked values)."""
    full = (1 << spec.width) - 1
    kind = spec.match_kind
    if km is None:
        if kind == "exact" or kind == "lpm":
            if kind == "lpm":
                return Lpm(0, 0)
            raise ValueError(f"key {spec.name}: an exact key cannot be a wildcard")
        return None
    if isinstance(km, Exact) and kind in ("exact",):
        _fits(spec, km.value)
        return km
    if isinstance(km, Ternary) and kind == "ternary":
        _fits(spec, km.value)
        _fits(spec, km.mask)
        return None if km.mask == 0 else Ternary(km.value & km.mask, km.mask)
    if isinstance(km, Lpm) and kind == "lpm":
        _fits(spec, km.value)
        if not 0 <= km.prefix_len <= spec.width:
            raise ValueError(f"key {spec.name}: prefix length {km.prefix_len} out of range")
        mask = full ^ ((1 << (spec.width - km.prefix_len)) - 1)
        return Lpm(km.value & mask, km.prefix_len)
    if isinstance(km, Range) and kind == "range":
        _fits(spec, km.lo)
        _fits(spec, km.hi)
        if km.lo > km.hi:
            raise ValueError(f"key {spec.name}: empty range {km.lo}..{km.hi}")
        return None if (km.lo, km.hi) == (0, full) else km
    if isinstance(km, Optional_ | Exact) and kind == "optional":
        _fits(spec, km.value)
        return Optional_(km.value)
    raise ValueError(f"key {spec.name}: {type(km).__name__} does not fit match kind {kind}")


def _fits(spec: KeySpec, value: int) -> None:
    if not 0 <= value < (1 << spec.width):
        raise ValueError(f"key {spec.name}: value {value} does not fit in {spec.width} bits")


def key_matcher(spec: KeySpec, km: KeyMatch | None) -> tuple[int, int, int] | None:
    """(kind, a, b): 0 = masked equality (v & a == b), 1 = range a <= v <= b; None = any."""
    if km is None:
        return None
    full = (1 << spec.width) - 1
    if isinstance(km, Exact | Optional_):
        return (0, full, km.value)
    if isinstance(km, Ternary):
        return (0, km.mask, km.value)
    if isinstance(km, Lpm):
        if km.prefix_len == 0:
            return None
        return (0, full ^ ((1 << (spec.width - km.prefix_len)) - 1), km.value)
    return (1, km.lo, km.hi)


class Table:
    """A table's control-plane view and its matching engine.

    Names are P4Info names ("MyIngress.ipv4_lpm"). Entries are identified by (keys, priority).
    insert raises KeyError if the entry exists; modify/delete raise KeyError if it does not;
    malformed entries (unknown action, wrong parameter count, values too wide, wrong key kinds,
    changing a const table) raise ValueError.

    The match index is kept up to date by every write, in time independent of the table's size
    for exact and LPM tables (a dict, or one dict per prefix length); a ternary/range/optional
    table keeps its rows in priority order, a write replacing that list (copy on write). A
    packet never rebuilds anything: lookups read the current structures, which writes swap or
    update in single steps, so a lookup running beside a write sees the table before or after it.
    """

    def __init__(
        self,
        name: str,
        keys: list[KeySpec],
        actions: list[ActionInfo],
        size: int,
        default_action: tuple[str, list[int]],
        default_is_const: bool,
        direct_counter: str | None = None,
        direct_meter: str | None = None,
        profile: Any = None,
    ) -> None:
        self.name = name
        self.keys = keys
        self._actions = {a.name: a for a in actions}
        self.action_names = [a.name for a in actions if not a.hidden]
        self.size = size
        self.default_is_const = default_is_const
        self.direct_counter = direct_counter
        self.direct_meter = direct_meter
        self.profile = profile
        """The ActionProfile of a table with an implementation (entries name members/groups).
        Such a table runs no action on a miss, whatever its default_action: p4c's BMv2 backend
        drops it ("Target does not support default_action ... (due to action profiles)")."""
        self.const_entries = False
        self._entries: dict[tuple, TableEntry] = {}
        self._order: dict[tuple, int] = {}
        self.timed: dict[tuple, TableEntry] = {}
        "The entries with an idle timeout set (the idle-timeout scan reads only these)."
        self._seq = 0
        self.version = 0
        "Grows with every change of what a lookup can return (entries, default action)."
        self._default_hit: Hit
        self.default_action: tuple[str, list[int]] = default_action
        self._set_default(*default_action)
        kinds = [k.match_kind for k in keys]
        self._needs_priority = bool(set(kinds) & {"ternary", "range", "optional"})
        self._kind = _index_kind(kinds, self._needs_priority)
        self._lpm_pos = kinds.index("lpm") if self._kind == "lpm" else -1
        self._lock = threading.Lock()  # control-plane writers among themselves
        self._lookup: Callable[[Any], Hit]
        self._reindex()

    # ------------------------------------------------------------------ control plane

    def entries(self) -> list[TableEntry]:
        """A snapshot of the entries, in insertion order."""
        return list(self._entries.values())

    def entry_count(self) -> int:
        return len(self._entries)

    def action_infos(self) -> dict[str, ActionInfo]:
        return dict(self._actions)

    def invalidate(self) -> None:
        """Recompute every entry's Hit (an action profile's members changed); lookups use the
        old index until the new one is swapped in."""
        with self._lock:
            self._reindex()

    def find(self, keys: list[KeyMatch | None], priority: int = 0) -> TableEntry | None:
        return self._entries.get(self._ident(keys, priority))

    def insert(self, entry: TableEntry) -> None:
        self._check_mutable()
        ident = self._validate(entry)
        with self._lock:
            if ident in self._entries:
                raise KeyError(f"{self.name}: entry already exists")
            if len(self._entries) >= self.size:
                raise ValueError(f"{self.name}: table full ({self.size} entries)")
            self._add(ident, entry)

    def modify(self, entry: TableEntry) -> None:
        """Change the action/parameters (and meter config, if given) of an existing entry;
        its counters are kept."""
        self._check_mutable()
        ident = self._validate(entry)
        with self._lock:
            old = self._entries.get(ident)
            if old is None:
                raise KeyError(f"{self.name}: no such entry")
            old.action, old.params = entry.action, list(entry.params)
            old.member, old.group = entry.member, entry.group
            if entry.meter_config is not None:
                old.meter_config = entry.meter_config
                old.meter_state = None
            self._track_timeout(ident, old)
            self._index_put(ident, old, replace=True)

    def delete(self, entry: TableEntry) -> None:
        self._check_mutable()
        ident = self._ident(entry.keys, entry.priority)
        with self._lock:
            if ident not in self._entries:
                raise KeyError(f"{self.name}: no such entry")
            self._index_remove(ident)
            del self._entries[ident]
            del self._order[ident]
            self.timed.pop(ident, None)

    def clear(self) -> None:
        """Remove every (non-const) entry."""
        self._check_mutable()
        with self._lock:
            self._entries = {}
            self._order = {}
            self.timed = {}
            self._reindex()

    def set_default(self, action: str, params: list[int]) -> None:
        if self.profile is not None:
            raise ValueError(f"{self.name} has an action profile: it has no default action")
        if self.default_is_const:
            raise ValueError(f"{self.name}: the default action is const")
        self._set_default(action, params)

    # ------------------------------------------------------------------ internals

    def add_const_entry(self, entry: TableEntry) -> None:
        """Load a const entry from the program (entries are matched in the order given)."""
        ident = self._validate(entry)
        with self._lock:
            if ident not in self._entries:  # a duplicate const entry never matches
                self._add(ident, entry)

    def _add(self, ident: tuple, entry: TableEntry) -> None:
        self._entries[ident] = entry
        self._order[ident] = self._seq
        self._seq += 1
        self._track_timeout(ident, entry)
        self._index_put(ident, entry, replace=False)

    def _track_timeout(self, ident: tuple, entry: TableEntry) -> None:
        if entry.idle_timeout_ns:
            self.timed[ident] = entry
        else:
            self.timed.pop(ident, None)

    def _check_mutable(self) -> None:
        if self.const_entries:
            raise ValueError(f"{self.name}: entries are const")

    def _ident(self, keys: list[KeyMatch | None], priority: int) -> tuple:
        if len(keys) != len(self.keys):
            raise ValueError(f"{self.name}: expected {len(self.keys)} keys, got {len(keys)}")
        normed = tuple(normalised_key(s, k) for s, k in zip(self.keys, keys, strict=True))
        return (normed, priority if self._needs_priority else 0)

    def _validate(self, entry: TableEntry) -> tuple:
        if self.profile is not None:
            self.profile.check_target(entry.member, entry.group)
            return self._ident(entry.keys, entry.priority)
        info = self._actions.get(entry.action)
        if info is None:
            raise ValueError(f"{self.name}: action {entry.action} is not in the table")
        if info.default_only:
            raise ValueError(f"{self.name}: action {entry.action} is @defaultonly")
        info.check_params(self.name, entry.params)
        return self._ident(entry.keys, entry.priority)

    def _set_default(self, action: str, params: list[int]) -> None:
        self.version += 1
        info = self._actions.get(action)
        if info is None:
            raise ValueError(f"{self.name}: action {action} is not in the table")
        if info.table_only:
            raise ValueError(f"{self.name}: action {action} is @tableonly")
        info.check_params(self.name, params)
        self.default_action = (action, list(params))
        if self.profile is not None:
            self._default_hit = Hit(None, -1, no_op, ())
            return
        self._default_hit = Hit(None, info.action_id, info.fn, info.call_args(params))

    def _hit(self, entry: TableEntry) -> Hit:
        if entry.group is not None:
            return Hit(entry, -1, no_op, (), entry.group)
        if entry.member is not None:
            return self.profile.member_hit(entry.member, entry)
        info = self._actions[entry.action]
        return Hit(entry, info.action_id, info.fn, info.call_args(entry.params))

    def lookup(self, key: Any) -> Hit:
        """Match a key (a tuple of ints, one per key) and return the Hit to run."""
        return self._lookup(key)

    # ------------------------------------------------------------------ the match index

    def _reindex(self) -> None:
        """Build a fresh index of every entry, then make lookups use it (meanwhile they use
        the current one)."""
        self.version += 1
        if hasattr(self, "_lookup"):
            self._lookup = self._pinned()
        self._exact: dict[tuple, Hit] = {}
        self._by_len: dict[int, dict[tuple, Hit]] = {}
        self._lpm_buckets: list[tuple[int, dict[tuple, Hit]]] = []
        self._rows: list[tuple[tuple[int, int], list, Hit]] = []
        for ident, entry in self._entries.items():
            self._index_put(ident, entry, replace=False)
        self._lookup = {"none": self._lookup_none, "exact": self._exact_lookup(),
                        "lpm": self._lookup_lpm, "scan": self._lookup_scan}[self._kind]

    def _index_put(self, ident: tuple, entry: TableEntry, replace: bool) -> None:
        self.version += 1
        hit = self._hit(entry)
        normed = ident[0]
        if self._kind == "exact":
            self._exact[tuple(k.value for k in normed)] = hit
        elif self._kind == "lpm":
            plen = normed[self._lpm_pos].prefix_len
            bucket = self._by_len.get(plen)
            if bucket is None:
                bucket = self._by_len[plen] = {}
                self._lpm_rebucket()
            bucket[tuple(k.value for k in normed)] = hit
        elif self._kind == "scan":
            sort_key = (-ident[1], self._order[ident])
            matchers = [(i, m) for i, (spec, km) in enumerate(zip(self.keys, normed, strict=True))
                        if (m := key_matcher(spec, km)) is not None]
            rows = self._rows
            at = bisect.bisect_left(rows, sort_key, key=_row_key)
            self._rows = [*rows[:at], (sort_key, matchers, hit), *rows[at + replace:]]

    def _index_remove(self, ident: tuple) -> None:
        self.version += 1
        normed = ident[0]
        if self._kind == "exact":
            del self._exact[tuple(k.value for k in normed)]
        elif self._kind == "lpm":
            plen = normed[self._lpm_pos].prefix_len
            bucket = self._by_len[plen]
            del bucket[tuple(k.value for k in normed)]
            if not bucket:
                del self._by_len[plen]
                self._lpm_rebucket()
        elif self._kind == "scan":
            rows = self._rows
            at = bisect.bisect_left(rows, (-ident[1], self._order[ident]), key=_row_key)
            self._rows = [*rows[:at], *rows[at + 1:]]

    def _lpm_rebucket(self) -> None:
        """The (mask, bucket) list a lookup probes, longest prefix first (swapped whole)."""
        width = self.keys[self._lpm_pos].width
        full = (1 << width) - 1
        self._lpm_buckets = [(full ^ ((1 << (width - plen)) - 1), self._by_len[plen])
                             for plen in sorted(self._by_len, reverse=True)]

    def _lookup_none(self, key: Any) -> Hit:
        return self._default_hit

    def _exact_lookup(self) -> Callable[[Any], Hit]:
        get = self._exact.get

        def lookup(key: Any) -> Hit:
            return get(key) or self._default_hit

        return lookup

    def _pinned(self) -> Callable[[Any], Hit]:
        """A lookup over the index as it is now (writes and rebuilds replace the LPM bucket
        list and the rows rather than change them; a rebuild makes a new exact dict)."""
        if self._kind == "lpm":
            # _Pinned has every attribute the lookup reads: a snapshot standing in for the table
            return functools.partial(Table._lookup_lpm, _Pinned(self))  # type: ignore[arg-type]
        if self._kind == "scan":
            return functools.partial(Table._lookup_scan, _Pinned(self))  # type: ignore[arg-type]
        return self._lookup  # exact: its closure holds its dict; none: no index

    def _lookup_lpm(self, key: Any) -> Hit:
        p = self._lpm_pos
        for mask, bucket in self._lpm_buckets:
            probe = list(key)
            probe[p] &= mask
            found = bucket.get(tuple(probe))
            if found is not None:
                return found
        return self._default_hit

    def _lookup_scan(self, key: Any) -> Hit:
        for _, matchers, hit in self._rows:
            for i, (kind, a, b) in matchers:
                v = key[i]
                if kind == 0:
                    if v & a != b:
                        break
                elif not a <= v <= b:
                    break
            else:
                return hit
        return self._default_hit


class _Pinned:
    """A table's LPM buckets and rows as they were when made, and its live default action."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._lpm_pos = table._lpm_pos
        self._lpm_buckets = table._lpm_buckets
        self._rows = table._rows

    @property
    def _default_hit(self) -> Hit:
        return self._table._default_hit


def _index_kind(kinds: list[str], needs_priority: bool) -> str:
    """How a table with these match kinds is indexed: none (keyless), exact, lpm or scan."""
    if not kinds:
        return "none"
    if all(k == "exact" for k in kinds):
        return "exact"
    if not needs_priority and kinds.count("lpm") == 1:
        return "lpm"
    return "scan"


def _row_key(row: tuple) -> tuple[int, int]:
    return row[0]


def no_op(S: list, P: Any) -> None:  # noqa: N803 - the generated code's names
    """An action that does nothing (an entry pointing at an empty group)."""
    return None
