"""One loaded P4 program and its runtime state: tables, externs, sessions, and packet passes.

Consumers (STF runner, P4Info, switch runtime, P4Runtime server) use:

- `Pipeline.load(compiled, seed=None)`: code-generates the program once (raises the frontend's
  P4Error with `unsupported: <what>` for anything the target cannot execute).
- State, keyed by P4Info names ("MyIngress.ipv4_lpm", actions "MyIngress.drop", "NoAction"):
  `tables: dict[str, Table]`, `registers: dict[str, RegisterArray]`,
  `counters: dict[str, CounterArray]` (indirect counters; direct counters live on the entries:
  `entry.counter`), `meters: dict[str, MeterArray]` (direct meters: `entry.meter_config`),
  `direct_counters` / `direct_meters`: extern name -> table name,
  `clone_sessions: dict[int, list[(port, rid)]]`, `mc_groups: dict[int, list[(rid, port)]]`
  (replication order), `digests: list[(name, values)]` (appended at the end of ingress; consumers
  drain it), `logs: list[str]` (log_msg, failed assert/assume, out-of-range extern accesses),
  `value_sets: dict` (always empty: parser value sets are unsupported).
- Packet passes (see v1model.py for the exact BMv2 order of decisions):
  `ingress(port, data, now_us) -> IngressResult`, `ingress_job(job, now_us) -> IngressResult`,
  `egress(job, now_us, enq_qdepth, deq_qdepth, enq_timestamp, deq_timedelta) -> EgressResult`.

Units and threading: times are microseconds of the switch clock; meter rates are units
(packets or bytes) per second and bursts are units (BMv2's CLI uses units per microsecond).
Table mutations may run in another thread than the packet passes (tables lock internally);
`digests` and `logs` grow until their consumer drains them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from lgkit.target.frontend.diagnostics import P4Error
from lgkit.target.interp.externs import CounterArray, MeterArray, RegisterArray
from lgkit.target.interp.program import CompiledV1, compile_v1model
from lgkit.target.interp.tables import (
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
    "RegisterArray",
    "CounterArray",
    "MeterArray",
]

UnsupportedError = P4Error  # construct outside the supported subset: "unsupported: <what>"

DROP_PORT = 511


@dataclass(slots=True)
class IngressJob:
    """A packet entering ingress again (resubmit, recirculate). `preserved` maps slots of
    @field_list metadata to their values; opaque to the traffic manager beyond `data`."""

    data: bytes
    instance_type: int
    preserved: dict = field(default_factory=dict)


@dataclass(slots=True)
class EgressJob:
    """A packet copy queued for egress. `length` is its length in bytes (for rate limits);
    `state` is opaque to the traffic manager."""

    port: int
    priority: int
    instance_type: int
    rid: int
    length: int
    state: object


@dataclass(slots=True)
class IngressResult:
    """What ingress asks the traffic manager to do: enqueue `egress` jobs (in order), feed
    `resubmit` back to ingress (high priority); `drops` counts copies dropped here."""

    egress: list[EgressJob]
    resubmit: IngressJob | None
    drops: int


@dataclass(slots=True)
class EgressResult:
    """`out` is (port, bytes) to transmit (truncation applied), `clones` are E2E clone copies
    to enqueue for egress, `recirculate` goes back to ingress; `dropped` if egress dropped it."""

    out: tuple[int, bytes] | None
    clones: list[EgressJob]
    recirculate: IngressJob | None
    dropped: bool


class Pipeline:
    """A loaded program: generated code plus all control-plane-visible state."""

    def __init__(self, compiled: CompiledV1, name: str = "", seed: int | None = None):
        self.name = name
        self.code = compiled
        self.tables: dict[str, Table] = compiled.tables
        self.registers: dict[str, RegisterArray] = {}
        self.counters: dict[str, CounterArray] = {}
        self.meters: dict[str, MeterArray] = {}
        for ext in compiled.externs:
            if isinstance(ext.obj, RegisterArray):
                self.registers[ext.qname] = ext.obj
            elif isinstance(ext.obj, CounterArray):
                self.counters[ext.qname] = ext.obj
            elif isinstance(ext.obj, MeterArray):
                self.meters[ext.qname] = ext.obj
        self.direct_counters: dict[str, str] = compiled.direct_counters
        self.direct_meters: dict[str, str] = compiled.direct_meters
        self.clone_sessions: dict[int, list[tuple[int, int]]] = {}
        self.mc_groups: dict[int, list[tuple[int, int]]] = {}
        self.value_sets: dict[str, Any] = {}
        self.digests: list[tuple[str, tuple[int, ...]]] = []
        self.logs: list[str] = compiled.logs
        self.rng = random.Random(seed)
        compiled.ns["_rng"] = self.rng
        self.drop_port = DROP_PORT
        from lgkit.target import v1model  # v1model imports this module's job types

        self._v1 = v1model
        self.slots = v1model.Slots(self)

    @classmethod
    def load(cls, compiled: Any, seed: int | None = None) -> Pipeline:
        """Build the pipeline of a frontend CompiledProgram (anything with `.ir`)."""
        return cls(compile_v1model(compiled.ir), getattr(compiled, "name", ""), seed)

    @property
    def drop_port(self) -> int:
        """The egress port that means "drop" (simple_switch --drop-port, 511 by default); used
        by mark_to_drop and by the end-of-ingress/egress decisions."""
        return self._drop_port

    @drop_port.setter
    def drop_port(self, port: int) -> None:
        self._drop_port = port
        self.code.ns["_drop_port"] = port

    def seed(self, seed: int) -> None:
        """Re-seed the generator behind random()."""
        self.rng.seed(seed)

    def generated_source(self) -> str:
        """The Python source generated for this program (for debugging)."""
        return self.code.source

    # ------------------------------------------------------------------ packet passes

    def ingress(self, port: int, data: bytes, now_us: int) -> IngressResult:
        return self._v1.ingress_pass(self, data, now_us, port=port)

    def ingress_job(self, job: IngressJob, now_us: int) -> IngressResult:
        return self._v1.ingress_pass(
            self, job.data, now_us, instance_type=job.instance_type, preserved=job.preserved
        )

    def egress(
        self,
        job: EgressJob,
        now_us: int,
        enq_qdepth: int = 0,
        deq_qdepth: int = 0,
        enq_timestamp: int = 0,
        deq_timedelta: int = 0,
    ) -> EgressResult:
        return self._v1.egress_pass(
            self, job, now_us, enq_qdepth, deq_qdepth, enq_timestamp, deq_timedelta
        )
