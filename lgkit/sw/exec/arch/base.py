"""What the pipeline, the traffic manager and the STF runner need from an architecture."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lgkit.sw.exec.arch.v1model.program import CompiledV1
    from lgkit.sw.exec.externs.base import Registry
    from lgkit.sw.exec.jobs import EgressPass, IngressJob, IngressResult
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang import ir

# ingress(port, data, now_us), ingress_job(job, now_us), egress(job, now_us, queue values...)
Passes = tuple[Callable[[int, bytes, int], "IngressResult"],
               Callable[["IngressJob", int], "IngressResult"],
               "EgressPass"]


class Architecture(ABC):
    """An architecture: its package (whose `main` it runs), its externs, how its blocks are
    instantiated on the metadata layout, its end-of-ingress/egress decisions (the passes a
    traffic manager calls, exec/jobs.py) and the untimed driver of STF runs."""

    name: str  # as P4Info's pkg_info.arch names it
    package: str  # the package type of `main`
    externs: Registry
    commands: Mapping[str, str] = {}
    "Run-time commands (STF, `lgkit switch`), keyword -> usage (TNA: the packet generator)."

    @abstractmethod
    def compile(self, program: ir.Program, optimise: bool) -> CompiledV1:
        """Code-generate the blocks of `main` (P4Error `unsupported: ...` when it cannot)."""

    @abstractmethod
    def bind(self, pl: Pipeline) -> Passes:
        """The packet passes of a loaded pipeline (generated for its program; what the
        architecture keeps for them it keeps on the pipeline, e.g. v1model's `pl.slots`)."""

    # Untimed runs (STF): v1model's driver with PFC pause and the packet generator around it,
    # for either architecture (arch/untimed.py; imported here when used: it imports both).

    def run_untimed(self, pl: Pipeline, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """One packet and everything it causes, to completion; the transmitted packets (a PFC
        frame pauses the port's queues instead)."""
        from lgkit.sw.exec.arch import untimed

        return untimed.receive(pl, port, data)

    def advance(self, pl: Pipeline, ns: int) -> list[tuple[int, bytes]]:
        """Let `ns` nanoseconds of virtual time pass in an untimed run (STF `wait DURATION`);
        what the switch transmits meanwhile (queues a pause held; TNA: timer packets)."""
        from lgkit.sw.exec.arch import untimed

        if ns < 0:
            raise ValueError(f"time cannot go back ({ns} ns)")
        return untimed.run_due(pl, pl.untimed_clock.now_ns + ns)

    def command(self, pl: Pipeline, keyword: str, words: list[str]) -> list[tuple[int, bytes]]:
        """Run one of `commands` in an untimed run; what the switch transmits at once."""
        from lgkit.sw.exec.arch import untimed

        if keyword not in self.commands:
            raise ValueError(f"{keyword}: not a command of {self.name} programs")
        return untimed.command(pl, keyword, words)
