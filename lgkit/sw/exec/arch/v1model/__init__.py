"""The v1model architecture (V1Switch) as BMv2 simple_switch runs it: its externs (the registry
lines below), its blocks on the metadata layout (program.py) and its passes and untimed driver
(passes.py); untimed runs with PFC pause (arch/untimed.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.base import Architecture, Passes
from lgkit.sw.exec.arch.v1model import passes
from lgkit.sw.exec.arch.v1model.program import CompiledV1, compile_v1model
from lgkit.sw.exec.externs.action_profile import ActionProfile, ActionSelector
from lgkit.sw.exec.externs.base import Registry
from lgkit.sw.exec.externs.checksum import CHECKSUMS
from lgkit.sw.exec.externs.counter import Counter, DirectCounter
from lgkit.sw.exec.externs.hash import Hash, Random
from lgkit.sw.exec.externs.meter import DirectMeter, Meter
from lgkit.sw.exec.externs.paths import PATHS
from lgkit.sw.exec.externs.register import Register
from lgkit.sw.exec.externs.reports import REPORTS
from lgkit.sw.exec.externs.verify import Verify

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang import ir


class V1Model(Architecture):
    name = "v1model"
    package = "V1Switch"
    externs = Registry.of(
        Verify(),  # core.p4
        Register(), Counter(), DirectCounter(), Meter(), DirectMeter(),
        ActionProfile(), ActionSelector(), Hash(), Random(), *CHECKSUMS, *PATHS, *REPORTS,
    )

    def compile(self, program: ir.Program, optimise: bool) -> CompiledV1:
        return compile_v1model(program, self.externs, optimise)

    def bind(self, pl: Pipeline) -> Passes:
        pl.slots = passes.Slots(pl)  # standard_metadata slots and blocks, for the passes
        return pl.slots.passes


V1MODEL = V1Model()
