"""STF meter_set_rates: BMv2's CLI rates are units per microsecond; the pipeline's meters take
units per second."""

from __future__ import annotations

from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfRunner, parse_stf

EXTERNS = TESTS / "stf" / "externs.p4"


def run(stf_text: str) -> Pipeline:
    compiled = compile_file(str(EXTERNS))
    pipeline = Pipeline.load(compiled)
    result = StfRunner(pipeline, build_p4info(compiled.ir)).run(parse_stf(stf_text))
    assert not result.diffs
    return pipeline


def test_meter_set_rates_converts_per_microsecond_to_per_second() -> None:
    pipeline = run("meter_set_rates rate 1 0.5:3 1.5:7\n")
    assert pipeline.meters["Ing.rate"].get_rates(1) == ((500_000.0, 3), (1_500_000.0, 7))
    assert pipeline.meters["Ing.rate"].get_rates(0) is None


def test_meter_array_set_rates_configures_every_cell() -> None:
    pipeline = run("meter_array_set_rates rate 0.000002:4 0.000003:5\n")
    meter = pipeline.meters["Ing.rate"]
    for index in range(meter.size):
        (cir, cburst), (pir, pburst) = meter.get_rates(index)
        assert (round(cir, 6), cburst, round(pir, 6), pburst) == (2.0, 4, 3.0, 5)
