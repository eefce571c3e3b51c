"""A loaded native program driven through ctypes: passes, and the Python pipeline's tables,
registers and counters mirrored into it.

Python stays the owner of control-plane state (`Pipeline.tables`, `.registers`, `.counters`);
`push()` copies it into the engine (a table that changed since, rebuilt as match rows in the
Python engine's order),
`pull()` copies registers and counters back. The untimed driver does both around each packet.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.tables import Table, key_matcher, normalised_key
from lgkit.sw.exec.native.cgen import Program
from lgkit.sw.exec.native.layout import Unsupported

if TYPE_CHECKING:
    from pathlib import Path

    from lgkit.sw.exec.pipeline import Pipeline

U64 = ctypes.c_uint64
U64P = ctypes.POINTER(U64)
NO_ACTION = -1  # an action the program never runs (a table's implicit NoAction default)


def _u64s(values: list[int]) -> ctypes.Array:
    return (U64 * max(1, len(values)))(*values)


class NativeEngine:
    """One pipeline's native program: `ingress(port, data, now)` then `egress(port, now, ...)`
    of the packet it accepted (one packet in flight)."""

    def __init__(self, pl: Pipeline, program: Program, library: Path) -> None:
        self.pl = pl
        self.program = program
        lib = ctypes.CDLL(str(library))
        lib.lg_new.restype = ctypes.c_void_p
        lib.lg_config.argtypes = [ctypes.c_void_p, U64, ctypes.c_uint32]
        lib.lg_array.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, U64P, U64P]
        lib.lg_table.argtypes = [ctypes.c_void_p] + [ctypes.c_int] * 4 + [
            U64P, ctypes.POINTER(ctypes.c_int32), U64P, ctypes.c_int, U64P]
        lib.lg_ingress.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p,
                                   ctypes.c_uint32, U64]
        lib.lg_ingress.restype = ctypes.c_long
        lib.lg_egress.argtypes = [ctypes.c_void_p] + [U64] * 6 + [ctypes.c_char_p]
        lib.lg_egress.restype = ctypes.c_long
        lib.lg_run.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p,
                               ctypes.c_uint32, U64, U64, ctypes.c_char_p]
        lib.lg_run.restype = ctypes.c_long
        self.lib = lib
        self.ctx = ctypes.c_void_p(lib.lg_new())
        self._keep: dict[str, tuple] = {}  # the arrays the C side points into
        self._versions: dict[int, int] = {}  # Table.version of each table as last pushed
        self._arrays = self._bind_arrays()
        self._data = b""
        self._out = ctypes.create_string_buffer(2048)
        self._fits = 0  # the longest input `_out` has room for
        self._room(0)
        self._ingress = lib.lg_ingress
        self._egress = lib.lg_egress
        self._run = lib.lg_run
        for spec in program.tables:
            self._table_of(spec.name)
        self.configure()

    def configure(self) -> None:
        """Take the pipeline's drop port and parser bound (set them before the first packet)."""
        self.lib.lg_config(self.ctx, self.pl.drop_port, self.pl.max_parser_transitions)

    def _table_of(self, name: str) -> Table:
        table = self.pl.tables.get(name)
        if table is None:
            raise Unsupported(f"table {name} (not among the pipeline's tables)")
        if table.direct_counter or table.direct_meter or table.profile is not None:
            raise Unsupported(f"table {name} with a direct counter, meter or action profile")
        return table

    def _bind_arrays(self) -> list[tuple[list[int], ctypes.Array]]:
        pairs = []
        for spec in self.program.registers:
            reg = self.pl.registers.get(spec.name)
            if reg is None:
                raise Unsupported(f"register {spec.name} (not among the pipeline's registers)")
            arr = (U64 * max(1, spec.size))()
            self.lib.lg_array(self.ctx, 0, spec.index, arr, None)
            pairs.append((reg.values, arr))
        for spec in self.program.counters:
            ctr = self.pl.counters.get(spec.name)
            if ctr is None:
                raise Unsupported(f"counter {spec.name} (not among the pipeline's counters)")
            packets, nbytes = (U64 * max(1, spec.size))(), (U64 * max(1, spec.size))()
            self.lib.lg_array(self.ctx, 1, spec.index, packets, nbytes)
            pairs += [(ctr.packets, packets), (ctr.bytes, nbytes)]
        return pairs

    # ------------------------------------------------------------------ state mirroring

    def push(self) -> None:
        """Copy tables, registers and counters from the Python pipeline into the engine."""
        for spec in self.program.tables:
            table = self._table_of(spec.name)
            if self._versions.get(spec.index) != table.version:
                self._push_table(spec.index, spec.nkeys, spec.nparams, spec.actions, table)
                self._versions[spec.index] = table.version
        for values, arr in self._arrays:
            arr[: len(values)] = values

    def pull(self) -> None:
        """Copy registers and counters back into the Python pipeline (in place)."""
        for values, arr in self._arrays:
            values[:] = arr[: len(values)]

    def _push_table(self, index: int, nkeys: int, nparams: int, actions: dict[str, int],
                    table: Table) -> None:
        entries = table.entries()
        kinds = [k.match_kind for k in table.keys]
        lpm = kinds.count("lpm") == 1 and not set(kinds) & {"ternary", "range", "optional"}
        if lpm:
            at = kinds.index("lpm")
            entries.sort(key=lambda e: -(e.keys[at].prefix_len if e.keys[at] else 0))
        elif set(kinds) & {"ternary", "range", "optional"}:
            entries.sort(key=lambda e: -e.priority)  # stable: the earlier entry wins a tie
        rows: list[int] = []
        for entry in entries:
            for spec, km in zip(table.keys, entry.keys, strict=True):
                rows.extend(key_matcher(spec, normalised_key(spec, km)) or (0, 0, 0))
        acts = [self._action_id(actions, e.action) for e in entries]
        params = [v for e in entries for v in _padded(e.params, nparams)]
        name, dparams = table.default_action
        arrays = (_u64s(rows), (ctypes.c_int32 * max(1, len(acts)))(*acts), _u64s(params),
                  _u64s(_padded(dparams, nparams)))
        self._keep[table.name] = arrays
        self.lib.lg_table(self.ctx, index, len(entries), nkeys, nparams, arrays[0], arrays[1],
                          arrays[2], self._action_id(actions, name), arrays[3])

    @staticmethod
    def _action_id(actions: dict[str, int], name: str) -> int:
        if name in actions:
            return actions[name]
        if name == "NoAction":
            return NO_ACTION
        raise Unsupported(f"action {name} (not among the table's actions in the program)")

    # ------------------------------------------------------------------ passes

    def ingress(self, port: int, data: bytes, now: int) -> int:
        """The egress spec of the packet, or -1 when ingress drops it."""
        self._data = data  # the engine reads the payload from it in egress
        self._room(len(data))
        return self._ingress(self.ctx, port, data, len(data), now)

    def run(self, port: int, data: bytes, now_in: int, now_eg: int) -> tuple[int, bytes | None]:
        """Both passes in one call (egress at now_eg, its queue empty): (-1, None) when
        ingress drops the packet, (-2, None) when egress does, else (port, bytes)."""
        n = len(data)
        if n > self._fits:
            self._room(n)
        out = self._out
        r = self._run(self.ctx, port, data, n, now_in, now_eg, out)
        if r < 0:
            return r, None
        return r & 0x3FF, ctypes.string_at(out, r >> 10)

    def _room(self, length: int) -> None:
        """An output buffer for a packet of `length` bytes and every header emitted."""
        need = length + self.program.max_header_bytes
        if len(self._out) < need:
            self._out = ctypes.create_string_buffer(need)
        self._fits = len(self._out) - self.program.max_header_bytes

    def egress(self, port: int, now: int, enq_qdepth: int = 0, deq_qdepth: int = 0,
               enq_timestamp: int = 0, deq_timedelta: int = 0) -> bytes | None:
        """The bytes egress transmits on `port`, or None when it drops the packet."""
        out = self._out
        n = self._egress(self.ctx, port, now, enq_qdepth, deq_qdepth, enq_timestamp,
                         deq_timedelta, out)
        return None if n < 0 else ctypes.string_at(out, n)


def _padded(values: list[int], n: int) -> list[int]:
    return list(values) + [0] * (n - len(values))
