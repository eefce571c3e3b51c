"""Mutation fuzzing of STF files (hypothesis): every mutant of the kit's STF tests, run against
its program as `lgkit stf` does, passes, fails with per-port diffs, or stops at one located
StfError; never another exception, never a hang."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from fuzz_inputs import FUZZ_SETTINGS, STF_TOKENS, mutants, per_input_limit
from hypothesis import event, given
from hypothesis import strategies as st
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfError, StfRunner, format_result, parse_stf

CORPUS = TESTS / "stf"
TESTS = sorted(p for p in CORPUS.glob("*.stf") if p.with_suffix(".p4").is_file())


@functools.cache
def program(stf: Path) -> tuple[object, object]:
    compiled = compile_file(str(stf.with_suffix(".p4")))
    return compiled, build_p4info(compiled.ir)


@st.composite
def stf_cases(draw: st.DrawFn) -> tuple[Path, str]:
    stf = draw(st.sampled_from(TESTS))
    return stf, draw(mutants([stf.read_text()], STF_TOKENS))


@pytest.mark.slow
@pytest.mark.timeout(0)  # per_input_limit bounds each input instead
@FUZZ_SETTINGS
@given(stf_cases())
def test_mutated_stf_files_run_or_give_located_errors(case: tuple[Path, str]) -> None:
    with per_input_limit():
        check_stf(*case)


def check_stf(stf: Path, text: str) -> None:
    compiled, info = program(stf)
    try:
        stmts = parse_stf(text, "fuzz.stf")
        pipeline = Pipeline.load(compiled, seed=1)
        result = StfRunner(pipeline, info, "fuzz.stf").run(stmts)
    except StfError as exc:
        event("located STF error")
        assert str(exc).startswith("fuzz.stf:"), str(exc)
        return
    event("passed" if result.passed else "failed with diffs")
    format_result(result)
