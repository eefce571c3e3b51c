"""The Tofino Native Architecture (tna.p4 as bf-p4c ships it, Tofino 1): its externs (the
registry lines below), its blocks on the metadata layout (program.py), its passes (passes.py)
and the port metadata the control plane sets (port_metadata.py); its untimed runs are
v1model's driver with the packet generator and PFC pause around it (arch/untimed.py)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.base import Architecture, Passes
from lgkit.sw.exec.arch.tna import passes, port_metadata
from lgkit.sw.exec.arch.tna.pktgen import USAGE
from lgkit.sw.exec.arch.tna.program import compile_tna
from lgkit.sw.exec.externs.base import Registry
from lgkit.sw.exec.externs.tna_functions import FUNCTIONS
from lgkit.sw.exec.externs.tna_hash import HASHES
from lgkit.sw.exec.externs.tna_paths import PATHS
from lgkit.sw.exec.externs.tna_state import STATE
from lgkit.sw.exec.externs.verify import Verify

if TYPE_CHECKING:
    from lgkit.sw.exec.arch.v1model.program import CompiledV1
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang import ir


class Tna(Architecture):
    name = "tna"
    package = "Switch"
    externs = Registry.of(Verify(), *STATE, *HASHES, *PATHS, *FUNCTIONS)
    commands = USAGE | port_metadata.USAGE

    def compile(self, program: ir.Program, optimise: bool) -> CompiledV1:
        return compile_tna(program, self.externs, optimise)

    def bind(self, pl: Pipeline) -> Passes:
        pl.slots = passes.Slots(pl)
        return (partial(passes.ingress, pl), partial(passes.ingress_job, pl),
                partial(passes.egress, pl))

    def command(self, pl: Pipeline, keyword: str, words: list[str]) -> list[tuple[int, bytes]]:
        if keyword in port_metadata.USAGE:  # configuration only: nothing is sent
            port_metadata.set_port_metadata(pl, words)
            return []
        return super().command(pl, keyword, words)


TNA = Tna()
