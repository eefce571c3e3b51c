"""Choosing the engine of a pipeline: `--engine native|python`, and the native untimed driver.

`use_engine(pipeline, program, "native")` generates and builds the program's C and makes the
pipeline's passes (`ingress`, `ingress_job`, `egress`: the switch's traffic manager) and
untimed runs (STF, `run_untimed`) go through it; a construct the native engine does not cover,
or no C compiler, leaves the Python engine in place with one printed line:
`native: unsupported <what>; using the python engine` (for a construct only when native was
asked for: it is the default, pipeline.DEFAULT_ENGINE). A program that clones, recirculates,
resubmits, truncates or multicasts runs untimed through the native device's driver (device_c's
lg_dev_frame: v1model's untimed driver and the jobs in C, as the port loop makes them); once PFC
is in play an untimed run goes through the architecture's driver over the native passes.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.base import Architecture
from lgkit.sw.exec.arch.untimed import session
from lgkit.sw.exec.native.build import shared_library
from lgkit.sw.exec.native.cgen import generate
from lgkit.sw.exec.native.device import NativeDevice
from lgkit.sw.exec.native.device_c import with_device
from lgkit.sw.exec.native.engine import NativeEngine
from lgkit.sw.exec.native.layout import Unsupported
from lgkit.sw.exec.pfc import pfc_quanta

if TYPE_CHECKING:
    from lgkit.sw.exec.arch.base import Passes
    from lgkit.sw.exec.arch.v1model.program import CompiledV1
    from lgkit.sw.exec.native.cgen import Program as NativeProgram
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang import ir

ENGINES = ("native", "python")
_SAID: set[str] = set()  # why the default engine could not build, said once per process
ENGINE_HELP = ("the built-in target's engine: native (the default: C generated per program and "
               "built with the system C compiler, where it covers the program, else python; "
               "no C compiler is said in one line, and `--engine native` also says why a "
               "program stays on python) or python (the reference), as LGKIT_ENGINE does")


def native_engine(pl: Pipeline, program: ir.Program) -> NativeEngine:
    """The native engine of a loaded pipeline (Unsupported when it cannot run it), with the
    device layer (device_c.py); it builds with the optimiser setting the pipeline was loaded
    with (--no-opt: -O0)."""
    return _built(pl, generate(program))


def _built(pl: Pipeline, code: NativeProgram) -> NativeEngine:
    """The engine of generated `code` with the device layer, built (Unsupported: no C
    compiler, a failed build)."""
    return NativeEngine(pl, code, shared_library(with_device(code.source), pl.code.optimised))


def use_engine(pl: Pipeline, program: ir.Program, engine: str, asked: bool = True
               ) -> NativeEngine | None:
    """Run the pipeline's untimed passes on `engine`; the native engine when it was used. A
    program it does not cover stays on the Python engine with one line saying why, unless
    the native engine was not `asked` for (the default) and only the program is the reason
    (a missing C compiler or a failed build is said then too, once per process)."""
    if engine != "native":
        return None
    try:
        code = generate(program)
    except Unsupported as exc:
        _python(exc, asked)
        return None
    try:
        native = _built(pl, code)
    except Unsupported as exc:
        _python(exc, asked or exc.what not in _SAID)
        _SAID.add(exc.what)
        return None
    pl.arch = NativeUntimed(pl.arch, native)
    pl.ingress, pl.egress = native.ingress_pass, native.egress_pass
    pl.ingress_job = native.ingress_job
    return native


def _python(exc: Unsupported, say: bool) -> None:
    """The fallback to the Python engine, said in one line."""
    if say:
        print(f"native: unsupported {exc.what}; using the python engine", file=sys.stderr)


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
        """The architecture's own."""
        return self.inner.advance(pl, ns)

    def command(self, pl: Pipeline, keyword: str, words: list[str]) -> list[tuple[int, bytes]]:
        """The architecture's own."""
        return self.inner.command(pl, keyword, words)

    def run_untimed(self, pl: Pipeline, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """One packet through ingress and egress on the native engine, each pass one tick of
        the pipeline's untimed clock (as the Python driver); with requests, everything it
        causes, through the native device's driver; once PFC is in play (a PFC frame pauses
        queues: it is the MAC's, not the pipeline's), the architecture's own driver over the
        native passes."""
        native = self.native
        if session(pl).pause.until or pfc_quanta(data) is not None:
            return self.inner.run_untimed(pl, port, data)
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
