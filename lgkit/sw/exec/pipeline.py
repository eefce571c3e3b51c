"""One loaded P4 program and its runtime state: tables, externs, sessions, and packet passes.

Consumers (STF runner, P4Info, switch runtime, P4Runtime server) use:

- `Pipeline.load(compiled, seed=None, optimise=None, engine=None)`: code-generates the program
  once (raises the frontend's P4Error with `unsupported: <what>` for anything the target cannot
  execute). The passes run on the native engine (exec/native/) where it covers the program,
  else on the Python engine, the reference: `engine="python"` (or, when None,
  LGKIT_ENGINE=python; `--engine python` of `lgkit stf` / `lgkit switch` sets it) chooses the
  Python engine; `engine="native"` (LGKIT_ENGINE=native) also says in one line why a program
  stays on the Python engine.
  `optimise=False` (or, when None, the environment variable LGKIT_NO_OPT set to anything but
  "" or "0"; `--no-opt` of `lgkit stf` / `lgkit switch` sets it) runs the generated code without
  the optimisers (inline -> peephole -> slot-locals), to tell an optimiser bug from others.
- State, keyed by P4Info names ("MyIngress.ipv4_lpm", actions "MyIngress.drop", "NoAction"):
  `tables: dict[str, Table]`, `registers: dict[str, RegisterArray]`,
  `counters: dict[str, CounterArray]` (indirect counters; direct counters live on the entries:
  `entry.counter`), `meters: dict[str, MeterArray]` (direct meters: `entry.meter_config`),
  `direct_counters` / `direct_meters`: extern name -> table name,
  `struct_registers: dict[str, StructRegister]` (TNA registers of a struct: cells are lists),
  `clone_sessions: dict[int, list[(port, rid)]]`, `mirror_max_len: dict[int, int]` (TNA: a
  session's truncation of its copies, in bytes; absent: none), `mirror_queue: dict[int, int]`
  (TNA: the egress queue of a session's copies; absent: queue 0),
  `mc_groups: dict[int, list[(rid, port)]]` (replication order), `digests: DigestQueue` (a list
  of (name, values) appended at the end of ingress; consumers drain it; at most
  MAX_HELD_DIGESTS wait, more are dropped),
  `logs: list[str]` (log_msg, failed assert/assume, out-of-range extern accesses),
  `value_sets: dict[str, ValueSet]` (parser value sets: `.set_members([[KeyMatch, ...]])`),
  `action_profiles: dict[str, ActionProfile]` (members and groups of action profiles and
  selectors; entries of their tables name `member=` or `group=`).
- The architecture (`arch`, exec/arch/: found by the package of `main`; v1model's V1Switch, the
  one there is) makes the passes and drives untimed runs: `run_untimed(port, data)`.
- Packet passes (see arch/v1model/passes.py for the exact BMv2 order of decisions):
  `ingress(port, data, now_us) -> IngressResult`, `ingress_job(job, now_us) -> IngressResult`,
  `egress(job, now_us, enq_qdepth, deq_qdepth, enq_timestamp, deq_timedelta) -> EgressResult`
  (the queue values default to 0). They are generated functions bound per pipeline (attributes,
  not methods: a call less per pass).
- `untimed_clock`: the PassClock (passclock.py) of untimed runs (the architecture's
  run_untimed, STF): one per pipeline, so its timestamps never go back between packets; replace
  it (e.g. `PassClock(pass_ns=100)`) before the first packet to run at another cost per pass.

Units and threading: times are microseconds of the switch clock; meter rates are units
(packets or bytes) per second and bursts are units (BMv2's CLI uses units per microsecond).
Table mutations may run in another thread than the packet passes (tables lock internally);
`logs` grows until its consumer drains it.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.base import Architecture
from lgkit.sw.exec.arch.registry import architecture_of
from lgkit.sw.exec.arch.v1model.program import CompiledV1
from lgkit.sw.exec.externs.counter import CounterArray
from lgkit.sw.exec.externs.meter import MeterArray
from lgkit.sw.exec.externs.register import RegisterArray
from lgkit.sw.exec.externs.tna_state import StructRegister
from lgkit.sw.exec.interp.action_profiles import ActionProfile
from lgkit.sw.exec.interp.inline import inlined_source
from lgkit.sw.exec.interp.tables import (
    Exact,
    KeyMatch,
    KeySpec,
    Lpm,
    Optional_,
    Range,
    Table,
    TableEntry,
    Ternary,
)
from lgkit.sw.exec.interp.value_sets import ValueSet
from lgkit.sw.exec.jobs import EgressJob, EgressPass, EgressResult, IngressJob, IngressResult
from lgkit.sw.exec.passclock import PassClock
from lgkit.sw.lang.frontend.diagnostics import P4Error

if TYPE_CHECKING:
    from lgkit.sw.lang.frontend.compiler import CompiledProgram

__all__ = [
    "EgressJob",
    "EgressResult",
    "Exact",
    "IngressJob",
    "IngressResult",
    "KeyMatch",
    "KeySpec",
    "Lpm",
    "Optional_",
    "Pipeline",
    "Range",
    "Table",
    "TableEntry",
    "Ternary",
    "UnsupportedError",
    "turn_optimisers_off",
    "RegisterArray",
    "CounterArray",
    "MeterArray",
    "ValueSet",
]

UnsupportedError = P4Error  # construct outside the supported subset: "unsupported: <what>"

NO_OPT_ENV = "LGKIT_NO_OPT"
ENGINE_ENV = "LGKIT_ENGINE"
DEFAULT_ENGINE = "native"  # where it builds and covers the program; else the Python engine
DROP_PORT = 511
MAX_PARSER_TRANSITIONS = 10_000  # per packet; see Pipeline.max_parser_transitions
MAX_LOOP_ITERATIONS = 100_000  # per pass; see Pipeline.max_loop_iterations
MAX_HELD_DIGESTS = 4096  # digests waiting for their consumer; see DigestQueue


class DigestQueue(list[tuple[str, tuple[int, ...]]]):
    """The digests passes emitted, waiting for their consumer: at most `limit` are held and
    newer ones are dropped and counted in `dropped`, as BMv2 drops digests no client takes."""

    def __init__(self, limit: int = MAX_HELD_DIGESTS) -> None:
        super().__init__()
        self.limit = limit
        self.dropped = 0

    def append(self, digest: tuple[str, tuple[int, ...]]) -> None:
        if len(self) < self.limit:
            super().append(digest)
        else:
            self.dropped += 1

    def drop_all(self) -> None:
        """Drop (and count) every digest held: nobody will consume them."""
        self.dropped += len(self)
        self.clear()


def turn_optimisers_off() -> None:
    """Every later Pipeline.load of this process (and of its children) runs the generated code
    without the optimisers (`--no-opt`)."""
    os.environ[NO_OPT_ENV] = "1"


def chosen_engine(engine: str | None) -> str:
    """The engine a load uses: `engine`, else LGKIT_ENGINE, else DEFAULT_ENGINE."""
    return engine or os.environ.get(ENGINE_ENV) or DEFAULT_ENGINE


def select_engine(engine: str) -> None:
    """Every later Pipeline.load of this process (and of its children) uses this engine
    ("python" or "native"; `--engine`)."""
    os.environ[ENGINE_ENV] = engine


class Pipeline:
    """A loaded program: generated code plus all control-plane-visible state."""

    def __init__(self, compiled: CompiledV1, arch: Architecture, name: str = "",
                 seed: int | None = None):
        self.name = name
        self.arch = arch
        self.code = compiled
        self.tables: dict[str, Table] = compiled.tables
        self.registers: dict[str, RegisterArray] = {}
        self.struct_registers: dict[str, StructRegister] = {}
        self.counters: dict[str, CounterArray] = {}
        self.meters: dict[str, MeterArray] = {}
        for ext in compiled.externs:
            if isinstance(ext.obj, RegisterArray):
                self.registers[ext.qname] = ext.obj
            elif isinstance(ext.obj, StructRegister):
                self.struct_registers[ext.qname] = ext.obj
            elif isinstance(ext.obj, CounterArray):
                self.counters[ext.qname] = ext.obj
            elif isinstance(ext.obj, MeterArray):
                self.meters[ext.qname] = ext.obj
        self.direct_counters: dict[str, str] = compiled.direct_counters
        self.direct_meters: dict[str, str] = compiled.direct_meters
        self.clone_sessions: dict[int, list[tuple[int, int]]] = {}
        self.mirror_max_len: dict[int, int] = {}
        self.mirror_queue: dict[int, int] = {}
        self.mc_groups: dict[int, list[tuple[int, int]]] = {}
        self.value_sets: dict[str, ValueSet] = compiled.value_sets
        self.action_profiles: dict[str, ActionProfile] = {
            ext.qname: ext.obj for ext in compiled.externs if isinstance(ext.obj, ActionProfile)
        }
        self.digests = DigestQueue()
        self.logs: list[str] = compiled.logs
        self.rng = random.Random(seed)
        compiled.ns["_rng"] = self.rng
        for profile in self.action_profiles.values():
            profile.rng = self.rng
        self.drop_port = DROP_PORT
        self.max_parser_transitions = MAX_PARSER_TRANSITIONS
        self.max_loop_iterations = MAX_LOOP_ITERATIONS
        self.untimed_clock = PassClock()
        self.slots: object = None  # the architecture's own (Architecture.bind)
        # The packet passes (module docstring), generated for this pipeline by its architecture.
        self.ingress: Callable[[int, bytes, int], IngressResult]
        self.ingress_job: Callable[[IngressJob, int], IngressResult]
        self.egress: EgressPass
        self.ingress, self.ingress_job, self.egress = arch.bind(self)

    @classmethod
    def load(cls, compiled: CompiledProgram, seed: int | None = None,
             optimise: bool | None = None, engine: str | None = None) -> Pipeline:
        """Build the pipeline of a frontend CompiledProgram; `optimise` None: unless
        LGKIT_NO_OPT says not to; `engine` None: LGKIT_ENGINE (module docstring)."""
        if optimise is None:
            optimise = os.environ.get(NO_OPT_ENV, "") in ("", "0")
        arch = architecture_of(compiled.ir)
        pl = cls(arch.compile(compiled.ir, optimise), arch, compiled.name, seed)
        if chosen_engine(engine) == "native":
            from lgkit.sw.exec.native.select import use_engine

            asked = (engine or os.environ.get(ENGINE_ENV)) == "native"
            use_engine(pl, compiled.ir, "native", asked=asked)
        return pl

    def run_untimed(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """One packet and everything it causes, to completion (the architecture's untimed
        driver); returns the transmitted packets in order."""
        return self.arch.run_untimed(self, port, data)

    @property
    def drop_port(self) -> int:
        """The egress port that means "drop" (simple_switch --drop-port, 511 by default); used
        by mark_to_drop and by the end-of-ingress/egress decisions."""
        return self._drop_port

    @drop_port.setter
    def drop_port(self, port: int) -> None:
        self._drop_port = port
        self.code.ns["_drop_port"] = port

    @property
    def max_parser_transitions(self) -> int:
        """Parser states a packet may visit (sub-parsers included) before parsing stops with
        error.ParserTimeout (P4 spec; BMv2 has no bound): a state loop that consumes no input
        cannot hang the target."""
        return self._max_parser_transitions

    @max_parser_transitions.setter
    def max_parser_transitions(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_parser_transitions must be at least 1, not {limit}")
        self._max_parser_transitions = limit
        self.code.ns["_parser_limit"] = limit

    @property
    def max_loop_iterations(self) -> int:
        """Loop iterations (all `for` loops together) one pass may run before it ends and its
        packet is dropped, with an error logged naming the loop (BMv2 has no bound): a loop of
        2^32 iterations cannot hang an untimed run, and the count is the same on every machine."""
        return self._max_loop_iterations

    @max_loop_iterations.setter
    def max_loop_iterations(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_loop_iterations must be at least 1, not {limit}")
        self._max_loop_iterations = limit
        self.code.ns["_loop_limit"] = limit

    def seed(self, seed: int) -> None:
        """Re-seed the generator behind random()."""
        self.rng.seed(seed)

    def generated_source(self) -> str:
        """The Python source generated for this program, as it runs (inlined; for debugging:
        its line numbers are those of tracebacks in `<lgkit-generated>`)."""
        if not self.code.optimised:
            return self.code.source
        return inlined_source(self.code.source, self.code.outside)
