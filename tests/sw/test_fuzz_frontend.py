"""Mutation fuzzing of P4 sources (hypothesis): every mutant of the kit's STF programs ends in a
compiled program (which then loads, has P4Info and forwards a packet) or in located errors
(`file:line:col: error: ...`, never an internal error), within the test's time limit."""

from __future__ import annotations

import pytest
from fuzz_inputs import FUZZ_SETTINGS, P4_TOKENS, InputHang, mutants, per_input_limit
from hypothesis import event, given
from testpaths import TESTS

from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend import P4Error, compile_source
from lgkit.sw.lang.p4info import build_p4info

SEEDS = [p.read_text() for p in sorted((TESTS / "stf").glob("*.p4"))]
PACKET = bytes(range(64))


def check_located(exc: P4Error) -> None:
    assert exc.diagnostics
    for d in exc.diagnostics:
        assert str(d).startswith(f"{d.loc.file}:{d.loc.line}:{d.loc.col}: "), str(d)
        assert "internal error" not in d.message, str(d)


@pytest.mark.slow
@pytest.mark.timeout(0)  # per_input_limit bounds each input instead
@FUZZ_SETTINGS
@given(mutants(SEEDS, P4_TOKENS))
def test_mutated_programs_compile_or_give_located_errors(source: str) -> None:
    with per_input_limit():
        check_program(source)


def check_program(source: str) -> None:
    try:
        compiled = compile_source(source, "fuzz.p4")
    except P4Error as exc:
        event("rejected by the frontend")
        check_located(exc)
        return
    try:
        build_p4info(compiled.ir)
        pipeline = Pipeline.load(compiled, seed=1)
    except P4Error as exc:
        event("rejected at load")
        check_located(exc)
        return
    event("compiled, loaded and ran")
    pipeline.max_parser_transitions = 1000
    for port in (0, 1):
        run_untimed(pipeline, port, PACKET)


def test_the_per_input_limit_stops_a_hang() -> None:
    with pytest.raises(InputHang), per_input_limit(0.2):
        while True:
            pass
