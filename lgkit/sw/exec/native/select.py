"""Choosing the engine of a pipeline: `--engine native|python`, and the native untimed driver.

`use_engine(pipeline, program, "native")` generates and builds the program's C and makes the
pipeline's passes (`ingress`, `ingress_job`, `egress`: the switch's traffic manager) and
untimed runs (STF, `run_untimed`) go through it; a construct the native engine does not cover,
or no C compiler, leaves the Python engine in place with one printed line:
`native: unsupported <what>; using the python engine`. A program that clones, recirculates,
resubmits, truncates or multicasts runs untimed through the native device's driver (device_c's
lg_dev_frame: v1model's untimed driver and the jobs in C, as the port loop makes them).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.base import Architecture
from lgkit.sw.exec.native.build import shared_library
from lgkit.sw.exec.native.cgen import generate
from lgkit.sw.exec.native.device import NativeDevice
from lgkit.sw.exec.native.device_c import with_device
from lgkit.sw.exec.native.engine import NativeEngine
from lgkit.sw.exec.native.layout import Unsupported

if TYPE_CHECKING:
    from lgkit.sw.exec.arch.base import Passes
    from lgkit.sw.exec.arch.v1model.program import CompiledV1
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang import ir

ENGINES = ("python", "native")
ENGINE_HELP = ("the built-in target's engine: python (the default) or native (C generated per "
               "program; falls back to python, saying why), as LGKIT_ENGINE does")


def native_engine(pl: Pipeline, program: ir.Program) -> NativeEngine:
    """The native engine of a loaded pipeline (Unsupported when it cannot run it), with the
    device layer (device_c.py); it builds with the optimiser setting the pipeline was loaded
    with (--no-opt: -O0)."""
    code = generate(program)
    source = with_device(code.source)
    return NativeEngine(pl, code, shared_library(source, pl.code.optimised))


def use_engine(pl: Pipeline, program: ir.Program, engine: str) -> NativeEngine | None:
    """Run the pipeline's untimed passes on `engine`; the native engine when it was used."""
    if engine != "native":
        return None
    try:
        native = native_engine(pl, program)
    except Unsupported as exc:
        print(f"native: unsupported {exc.what}; using the python engine", file=sys.stderr)
        return None
    pl.arch = NativeUntimed(pl.arch, native)
    pl.ingress, pl.egress = native.ingress_pass, native.egress_pass
    pl.ingress_job = native.ingress_job
    return native


class NativeUntimed(Architecture):
    """The pipeline's architecture with its untimed driver on the native engine (everything
    else is the architecture's own)."""

    def __init__(self, arch: Architecture, native: NativeEngine) -> None:
        self.inner = arch
        self.native = native
        self.name, self.package, self.externs = arch.name, arch.package, arch.externs
        self.commands = arch.commands
        self.device: NativeDevice | None = None
        """The native device that drives untimed runs of a program with requests (made on
        first use, on the engine's context)."""
        self._jobs: tuple[list[int], list[int]] | None = None

    def compile(self, program: ir.Program, optimise: bool) -> CompiledV1:
        """The architecture's own."""
        return self.inner.compile(program, optimise)

    def bind(self, pl: Pipeline) -> Passes:
        """The architecture's own."""
        return self.inner.bind(pl)

    def advance(self, pl: Pipeline, ns: int) -> list[tuple[int, bytes]]:
        """The architecture's own (a PFC frame is not consumed on the native engine)."""
        return self.inner.advance(pl, ns)

    def command(self, pl: Pipeline, keyword: str, words: list[str]) -> list[tuple[int, bytes]]:
        """The architecture's own."""
        return self.inner.command(pl, keyword, words)

    def run_untimed(self, pl: Pipeline, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """One packet through ingress and egress on the native engine, each pass one tick of
        the pipeline's untimed clock (as the Python driver); with requests, everything it
        causes, through the native device's driver."""
        native = self.native
        native.refresh()
        clock = pl.untimed_clock
        if native.program.requests:
            return self._device_run(pl, port, data)
        now_in = clock.tick()
        spec, sent = native.run(port, data, now_in, clock.now_us())
        if spec != -1:  # egress ran: its pass takes a tick too
            clock.tick()
        return [] if sent is None else [(spec, sent)]

    def _device_run(self, pl: Pipeline, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """run_untimed's driver in C, on the engine's own context (its registers, generator
        and logs), with the pipeline's clone sessions and multicast groups."""
        native, clock = self.native, pl.untimed_clock
        if self.device is None:
            self.device = NativeDevice(native, 0, own=False)
        jobs = jobs_settings(pl)
        if jobs != self._jobs:
            self.device.set_sessions(jobs[0])
            self.device.set_groups(jobs[1])
            self._jobs = jobs
        out, clock.now_ns, over = self.device.frame(port, data, clock.now_ns, clock.pass_ns,
                                                     clock.limit_ns)
        native.log_errors()
        if over:
            pl.logs.append(f"error: too many resubmit/recirculate/clone passes; stopped after "
                           f"{clock.limit_ns / 1e9:g} s of virtual time")
        return out


def jobs_settings(pl: Pipeline) -> tuple[list[int], list[int]]:
    """The pipeline's clone sessions as (session, port, rid) and multicast groups as (group,
    rid, port) triples, flat, for the native device."""
    sessions = [v for session, targets in sorted(pl.clone_sessions.items())
                for port, rid in targets for v in (session, port, rid)]
    groups = [v for group, members in sorted(pl.mc_groups.items())
              for rid, port in members for v in (group, rid, port)]
    return sessions, groups
