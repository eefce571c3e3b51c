"""A loaded native program driven through ctypes: its packet passes, with the Python pipeline's
control-plane state shared or mirrored.

Registers and counters are shared: the engine allocates their arrays and the pipeline's
`RegisterArray.values` / `CounterArray.packets` and `.bytes` become those arrays, so every
reader and writer (STF, P4Runtime, Thrift) sees what the packets did. Tables stay Python's
(`Pipeline.tables`); `refresh()` copies a table into the engine when its `version` moved,
as match rows in the Python engine's order.
"""

from __future__ import annotations

import ctypes
import weakref
from array import array
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp.tables import Lpm, Table, key_matcher, normalised_key
from lgkit.sw.exec.jobs import EgressJob, EgressResult, IngressJob, IngressResult
from lgkit.sw.exec.native.cgen import DRAW_BITS64, RANGE_ERRORS, STACK_WHERE, Program
from lgkit.sw.exec.native.layout import Unsupported
from lgkit.sw.exec.native.runtime_c import MAX_ERRORS

if TYPE_CHECKING:
    from pathlib import Path

    from lgkit.sw.exec.pipeline import Pipeline

U64 = ctypes.c_uint64
U64P = ctypes.POINTER(U64)
PTR, INT, U32, BUF = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_char_p
DRAW = ctypes.CFUNCTYPE(U64, INT, U64, U64)  # the generator callback (cgen's DRAW_*)
# the end-of-pass requests after the slots and the 3 cursor registers (runtime_c's RQ_*)
CLONE, SESSION, CLONE_FL, RECIRC, RECIRC_FL, TRUNC, TRUNC_LEN, RESUB, RESUB_FL = range(9)
TAIL = 3 + 9  # the cursor registers and the requests
NO_FL = (1 << 64) - 1
INGRESS_CLONE, EGRESS_CLONE, RECIRCULATED, REPLICA, RESUBMITTED = 1, 2, 4, 5, 6  # instance_type
NO_ACTION = -1  # an action the program never runs (a table's implicit NoAction default)
SIGNATURES = {  # name: (argument types, result type)
    "lg_new": ([], PTR),
    "lg_free": ([PTR], None),
    "lg_slots": ([PTR], PTR),
    "lg_clone_slots": ([PTR], PTR),
    "lg_stop": ([PTR], PTR),
    "lg_errors": ([PTR], PTR),
    "lg_config": ([PTR, U64, U32, U64], None),
    "lg_rng": ([PTR, DRAW], None),
    "lg_array": ([PTR, INT, INT, U64P, U64P], None),
    "lg_table": ([PTR, INT, INT, INT, INT, U64P, ctypes.POINTER(ctypes.c_int32), U64P, INT,
                  U64P], None),
    "lg_ingress": ([PTR, U32, BUF, U32, U64], ctypes.c_long),
    "lg_ingress_job": ([PTR, BUF, U32, U64, U64, U64P, U32], ctypes.c_long),
    "lg_parse": ([PTR, U32, BUF, U32], None),
    "lg_state_save": ([PTR], None),
    "lg_egress_saved": ([PTR, BUF, BUF, U32] + [U64] * 7 + [BUF], ctypes.c_long),
    "lg_run": ([PTR, U32, BUF, U32, U64, U64, BUF], ctypes.c_long),
    "lg_nop": ([PTR, U32, BUF, U32, U64], ctypes.c_long),
}


def _cells(size: int) -> type[ctypes.Array]:
    """An array of `size` uint64 the C code updates that compares and prints as the list of
    values it replaces (a register's or counter's cells)."""
    def equal(self: ctypes.Array, other: object) -> bool:
        return isinstance(other, list | ctypes.Array) and list(self) == list(other)

    return type("Cells", (U64 * size,), {"__eq__": equal, "__hash__": None,
                                         "__repr__": lambda self: repr(list(self))})


def _u64s(values: list[int]) -> ctypes.Array:
    return (U64 * max(1, len(values)))(*values)


class NativeEngine:
    """One pipeline's native program: `run` (both passes of a packet, the untimed driver's),
    `ingress_pass` / `egress_pass` (the Pipeline's pass interface, for a traffic manager)."""

    def __init__(self, pl: Pipeline, program: Program, library: Path) -> None:
        self.pl = pl
        self.program = program
        tables = [(spec, _table_of(pl, spec.name)) for spec in program.tables]
        lib = ctypes.CDLL(str(library))
        for name, (args, result) in SIGNATURES.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = result
        self.lib = lib
        self.ctx = ctypes.c_void_p(lib.lg_new())
        weakref.finalize(self, lib.lg_free, self.ctx)
        self.contexts = [self.ctx]
        """Every context of the program (a port loop's own, add_context): control-plane state
        reaches them all."""
        self.lock: AbstractContextManager = nullcontext()
        """Held while refresh copies a table into the contexts (a port loop's, native_loop)."""
        self._tables = tables
        self._keep: dict[str, tuple] = {}  # the arrays the C side points into
        self._versions: dict[int, int] = {}  # Table.version of each table as last copied
        self._config: tuple[int, int, int] = (-1, -1, -1)
        self._share_arrays()
        self._draw = DRAW(self._drawn)  # kept: the C side calls it
        lib.lg_rng(self.ctx, self._draw)
        nslots = len(program.widths)
        self._rq = nslots + 3  # where the requests start
        self._slots = (U64 * (nslots + TAIL)).from_address(lib.lg_slots(self.ctx))
        self._clone_slots = (U64 * (nslots + TAIL)).from_address(lib.lg_clone_slots(self.ctx))
        self._stop = ctypes.c_int.from_address(lib.lg_stop(self.ctx))
        self._state_bytes = (nslots + TAIL) * 8
        self._zeros = bytes(self._state_bytes)  # a fresh job state (_fresh)
        self._sm = program.sm
        self._errors = (U64 * (1 + 2 * MAX_ERRORS)).from_address(lib.lg_errors(self.ctx))
        self._out = ctypes.create_string_buffer(2048)
        self._fits = 0  # the longest input `_out` has room for
        self._room(0)
        self._run, self._ingress, self._egress = lib.lg_run, lib.lg_ingress, lib.lg_egress_saved
        self.refresh()

    def _share_arrays(self) -> None:
        """The registers' and counters' values become arrays the C code updates (their
        current values kept)."""
        found: list[tuple[int, int, object, tuple[str, ...]]] = []
        for spec in self.program.registers:
            reg = self.pl.registers.get(spec.name)
            if reg is None:
                raise Unsupported(f"register {spec.name} (not among the pipeline's registers)")
            found.append((0, spec.index, reg, ("values",)))
        for spec in self.program.counters:
            ctr = self.pl.counters.get(spec.name)
            if ctr is None:
                raise Unsupported(f"counter {spec.name} (not among the pipeline's counters)")
            found.append((1, spec.index, ctr, ("packets", "bytes")))
        for kind, index, obj, attrs in found:
            arrays = [_cells(len(getattr(obj, a)))(*getattr(obj, a)) for a in attrs]
            for attr, arr in zip(attrs, arrays, strict=True):
                setattr(obj, attr, arr)
            self._keep[f"{kind}.{index}"] = tuple(arrays)
        self._arrays = [(kind, index, self._keep[f"{kind}.{index}"]) for kind, index, _, _ in found]
        self._push_arrays(self.ctx)

    def _push_arrays(self, ctx: ctypes.c_void_p) -> None:
        for kind, index, arrays in self._arrays:
            self.lib.lg_array(ctx, kind, index, arrays[0], arrays[-1])

    def add_context(self) -> ctypes.c_void_p:
        """A new context of the program sharing this one's registers, counters, generator
        and tables (kept up to date by refresh) until remove_context."""
        ctx = ctypes.c_void_p(self.lib.lg_new())
        self._push_arrays(ctx)
        self.lib.lg_rng(ctx, self._draw)
        self.lib.lg_config(ctx, *self._config)
        with self.lock:
            self.contexts.append(ctx)
            self._versions.clear()
            self._copy()
        return ctx

    def remove_context(self, ctx: ctypes.c_void_p) -> None:
        """Free a context of add_context (nothing runs on it any more)."""
        self.contexts.remove(ctx)
        self.lib.lg_free(ctx)

    def stale(self) -> bool:
        """Whether refresh has something to copy."""
        return (self._config != (self.pl.drop_port, self.pl.max_parser_transitions,
                                 self.pl.max_loop_iterations)
                or any(self._versions.get(spec.index) != table.version
                       for spec, table in self._tables))

    def _drawn(self, kind: int, lo: int, hi: int) -> int:
        """random() and HashAlgorithm.random from the pipeline's own generator, so both engines
        draw the same numbers in the same order."""
        rng = self.pl.rng
        return rng.getrandbits(64) if kind == DRAW_BITS64 else rng.randint(lo, hi)

    # ------------------------------------------------------------------ control-plane state

    def refresh(self) -> None:
        """Copy into the engine what changed in the pipeline: tables (by version), the drop
        port, the parser and loop bounds; with a port loop's context too, under `lock`."""
        if len(self.contexts) == 1:
            self._copy()
        elif self.stale():
            with self.lock:
                self._copy()

    def _copy(self) -> None:
        pl = self.pl
        config = (pl.drop_port, pl.max_parser_transitions, pl.max_loop_iterations)
        if config != self._config:
            for ctx in self.contexts:
                self.lib.lg_config(ctx, *config)
            self._config = config
        versions = self._versions
        for spec, table in self._tables:
            if versions.get(spec.index) != table.version:
                versions[spec.index] = table.version
                self._push_table(spec.index, spec.nkeys, spec.nparams, spec.actions, table)

    def _push_table(self, index: int, nkeys: int, nparams: int, actions: dict[str, int],
                    table: Table) -> None:
        entries = table.entries()
        kinds = [k.match_kind for k in table.keys]
        lpm = kinds.count("lpm") == 1 and not set(kinds) & {"ternary", "range", "optional"}
        if lpm:
            at = kinds.index("lpm")
            entries.sort(key=lambda e: -_prefix_len(e.keys[at]))
        elif set(kinds) & {"ternary", "range", "optional"}:
            entries.sort(key=lambda e: -e.priority)  # stable: the earlier entry wins a tie
        rows: list[int] = []
        for entry in entries:
            for spec, km in zip(table.keys, entry.keys, strict=True):
                rows.extend(key_matcher(spec, normalised_key(spec, km)) or (0, 0, 0))
        acts = [_action_id(actions, e.action) for e in entries]
        params = [v for e in entries for v in _padded(e.params, nparams)]
        name, dparams = table.default_action
        arrays = (_u64s(rows), (ctypes.c_int32 * max(1, len(acts)))(*acts), _u64s(params),
                  _u64s(_padded(dparams, nparams)))
        self._keep[table.name] = arrays
        for ctx in self.contexts:
            self.lib.lg_table(ctx, index, len(entries), nkeys, nparams, arrays[0], arrays[1],
                              arrays[2], _action_id(actions, name), arrays[3])

    # ------------------------------------------------------------------ passes

    def run(self, port: int, data: bytes, now_in: int, now_eg: int) -> tuple[int, bytes | None]:
        """Both passes in one call (egress at now_eg, its queue empty): (-1, None) when
        ingress drops the packet, (-2, None) when egress does, (-3, None) when ingress cloned,
        resubmitted or multicast (a program with `requests` runs through the passes), else
        (port, bytes)."""
        n = len(data)
        if n > self._fits:
            self._room(n)
        out = self._out
        r = self._run(self.ctx, port, data, n, now_in, now_eg, out)
        if self._errors[0]:
            self._log_errors()
        if r < 0:
            return r, None
        return r & 0x3FF, ctypes.string_at(out, r >> 10)

    def stop_pass(self, stop: bool) -> None:
        """The watchdog's request that the pass running on this engine end at its next loop
        iteration, dropped (stop), or its withdrawal once that pass is over."""
        self._stop.value = int(stop)

    def ingress_pass(self, port: int, data: bytes, now: int) -> IngressResult:
        """Pipeline.ingress on the native engine: the packet's egress job, or a drop."""
        self.refresh()
        return self._ingress_end(self._ingress(self.ctx, port, data, len(data), now), data)

    def ingress_job(self, job: IngressJob, now: int) -> IngressResult:
        """Pipeline.ingress_job on the native engine: a recirculated packet's ingress pass."""
        self.refresh()
        pre = _u64s([v for pair in job.preserved for v in pair])
        return self._ingress_end(self.lib.lg_ingress_job(
            self.ctx, job.data, len(job.data), now, job.instance_type, pre,
            len(job.preserved)), job.data)

    def _ingress_end(self, spec: int, data: bytes) -> IngressResult:
        """The jobs of an ingress pass (-1 dropped, -3 cloned or multicast, else the port),
        in the Python engine's order (arch/v1model/passes.py)."""
        if self._errors[0]:
            self._log_errors()
        if spec == -1:
            return IngressResult([], None, 1)
        self.lib.lg_state_save(self.ctx)
        slots, sm = self._slots, self._sm
        if spec >= 0:  # unicast: the state as it is
            state = (ctypes.string_at(slots, self._state_bytes), data)
            priority = slots[sm["priority"]] if "priority" in sm else 0
            rid = slots[sm["egress_rid"]] if "egress_rid" in sm else 0
            return IngressResult([EgressJob(spec, priority, 0, rid, slots[self._rq - 2], state)],
                                 None, 0)
        S = self._words(slots)
        result = IngressResult([], None, 0)
        rq = self._rq
        if S[rq + CLONE]:
            result.egress.extend(self._ingress_clone(S, data))
        if S[rq + RESUB]:
            result.resubmit = IngressJob(data, RESUBMITTED, self._preserved(S, S[rq + RESUB_FL]))
            return result
        mgid = S[sm["mcast_grp"]]
        if mgid:
            for rid, out_port in self.pl.mc_groups.get(mgid, ()):
                copy = S[:]
                copy[sm["egress_rid"]] = rid & 0xFFFF
                copy[sm["instance_type"]] = REPLICA
                copy[rq + RECIRC] = 0
                result.egress.append(self._job(copy, out_port, REPLICA, data, rid))
            return result
        spec = S[sm["egress_spec"]]
        if spec == self.pl.drop_port:
            result.drops = 1
            return result
        S[sm["instance_type"]] = 0
        result.egress.append(self._job(S, spec, 0, data))
        return result

    def _ingress_clone(self, S: array[int], data: bytes) -> list[EgressJob]:
        """I2E: the original bytes parsed again, metadata reset but for the field list."""
        sm, rq = self._sm, self._rq
        targets = self.pl.clone_sessions.get(S[rq + SESSION])
        if not targets:
            return []
        self.lib.lg_parse(self.ctx, S[sm["ingress_port"]], data, len(data))
        if self._errors[0]:
            self._log_errors()
        parsed = self._words(self._slots)
        copy = self._fresh(S, S[rq + CLONE_FL])
        for k in (*self.program.header_slots, rq - 3, rq - 2, rq - 1):
            copy[k] = parsed[k]
        copy[sm["instance_type"]] = INGRESS_CLONE
        return self._replicas(copy, targets, INGRESS_CLONE, data)

    def _words(self, slots: ctypes.Array) -> array[int]:
        """A copy of the context's slots (F or CF) a job can own."""
        return array("Q", ctypes.string_at(slots, self._state_bytes))

    def _fresh(self, S: array[int], field_list: int) -> array[int]:
        """Zero slots with the field list's copied from S (no requests)."""
        copy = array("Q", self._zeros)
        for k in self.program.field_lists.get(field_list, ()) if field_list != NO_FL else ():
            copy[k] = S[k]
        return copy

    def _replicas(self, copy: array[int], targets: list[tuple[int, int]], instance_type: int,
                  data: bytes) -> list[EgressJob]:
        jobs = []
        for out_port, rid in targets:
            replica = copy[:]
            replica[self._sm["egress_rid"]] = rid & 0xFFFF
            jobs.append(self._job(replica, out_port, instance_type, data, rid))
        return jobs

    def _job(self, S: array[int], port: int, instance_type: int, data: bytes,
             rid: int | None = None) -> EgressJob:
        sm = self._sm
        priority = S[sm["priority"]] if "priority" in sm else 0
        if rid is None:
            rid = S[sm["egress_rid"]] if "egress_rid" in sm else 0
        state = (S.tobytes(), data)
        return EgressJob(port, priority, instance_type, rid, S[self._rq - 2], state)

    def egress_pass(self, job: EgressJob, now: int, enq_qdepth: int = 0, deq_qdepth: int = 0,
                    enq_timestamp: int = 0, deq_timedelta: int = 0) -> EgressResult:
        """Pipeline.egress on the native engine (for a job its ingress_pass made)."""
        assert isinstance(job.state, tuple), "a job of ingress_pass: (saved state, packet)"
        state, data = job.state
        n = len(data)
        if n > self._fits:
            self._room(n)
        out = self._out
        length = self._egress(self.ctx, state, data, n, job.port, job.instance_type, now,
                              enq_qdepth, deq_qdepth, enq_timestamp, deq_timedelta, out)
        if self._errors[0]:
            self._log_errors()
        slots, rq = self._slots, self._rq
        result = EgressResult(None, [], None, length < 0)
        if slots[rq + CLONE]:
            result.clones = self._egress_clone(data)
        if length < 0:
            return result
        sent = ctypes.string_at(out, length)
        if slots[rq + RECIRC]:
            result.recirculate = IngressJob(sent, RECIRCULATED,
                                            self._preserved(slots, slots[rq + RECIRC_FL]))
            return result
        if slots[rq + TRUNC] and slots[rq + TRUNC_LEN] < length:
            sent = sent[: slots[rq + TRUNC_LEN]]
        result.out = (job.port, sent)
        return result

    def _preserved(self, S: Any, field_list: int) -> tuple[tuple[int, int], ...]:
        """IngressJob.preserved of the native engine: the field list's (slot, value) pairs."""
        return tuple((k, S[k]) for k in self.program.field_lists.get(field_list, ()))

    def _egress_clone(self, data: bytes) -> list[EgressJob]:
        """E2E: the headers after egress, metadata reset but for the field list."""
        sm, rq = self._sm, self._rq
        S = self._words(self._clone_slots)
        targets = self.pl.clone_sessions.get(S[rq + SESSION])
        if not targets:
            return []
        copy = self._fresh(S, S[rq + CLONE_FL])
        for k in (*self.program.header_slots, rq - 3, rq - 2, rq - 1):
            copy[k] = S[k]
        copy[sm["instance_type"]] = EGRESS_CLONE
        return self._replicas(copy, targets, EGRESS_CLONE, data)

    def log_errors(self) -> None:
        """The engine's context's out-of-range accesses since the last call, into the log."""
        if self._errors[0]:
            self._log_errors()

    def _log_errors(self) -> None:
        """The pass's out-of-range register and counter accesses and stack index errors,
        logged as the Python engine logs them."""
        errors, logs = self._errors, self.pl.logs
        names = [[r.name for r in self.program.registers]] * 2 + [
            [c.name for c in self.program.counters], STACK_WHERE, self.program.loops]
        count = errors[0]
        for i in range(min(count, MAX_ERRORS)):
            what, index = errors[1 + 2 * i], errors[2 + 2 * i]
            kind = what >> 32
            name = names[kind][what & 0xFFFFFFFF]
            logs.append("error: " + RANGE_ERRORS[kind].format(name=name, index=index))
        if count > MAX_ERRORS:
            logs.append(f"error: {count - MAX_ERRORS} more out-of-range register or counter "
                        "accesses in this pass")
        errors[0] = 0

    def _room(self, length: int) -> None:
        """An output buffer for a packet of `length` bytes and every header emitted."""
        need = length + self.program.max_header_bytes
        if len(self._out) < need:
            self._out = ctypes.create_string_buffer(need)
        self._fits = len(self._out) - self.program.max_header_bytes


def _table_of(pl: Pipeline, name: str) -> Table:
    table = pl.tables.get(name)
    if table is None:
        raise Unsupported(f"table {name} (not among the pipeline's tables)")
    if table.direct_counter or table.direct_meter or table.profile is not None:
        raise Unsupported(f"table {name} with a direct counter, meter or action profile")
    return table


def _action_id(actions: dict[str, int], name: str) -> int:
    if name in actions:
        return actions[name]
    if name == "NoAction":
        return NO_ACTION
    raise Unsupported(f"action {name} (not among the table's actions in the program)")


def _padded(values: list[int], n: int) -> list[int]:
    return list(values) + [0] * (n - len(values))


def _prefix_len(km: object) -> int:
    """An LPM key's prefix length (0 for a wildcard)."""
    return km.prefix_len if isinstance(km, Lpm) else 0
