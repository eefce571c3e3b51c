"""The optimisers (inline -> peephole -> slot-locals) change nothing: the conformance corpus and
LinkGuardian's STF tests give the same packets, logs, digests and state with them and without
them (Pipeline.load(optimise=False), LGKIT_NO_OPT, `--no-opt`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import REPO
from tools import conformance

from lgkit.cli import build_parser, main
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.switch.loader import load_program
from lgkit.sw.switch.switch_main import resolve_options
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

LG = REPO / "p4" / "linkguardian.p4"
LG_STF = sorted((REPO / "tests" / "lg_stf").glob("*.stf"))
CORPUS = conformance.programs(conformance.CORPUS)


def _observed(program: Path, stf: Path, optimise: bool) -> tuple:
    """Everything a run shows: verdict, packets per port, logs, digests, registers, counters."""
    try:
        stmts = parse_stf(stf.read_text(errors="replace"), str(stf))
        compiled = compile_file(str(program))
        pipeline = Pipeline.load(compiled, seed=1, optimise=optimise)
    except (StfError, P4Error) as exc:
        return ("refused", str(exc))
    assert pipeline.code.optimised is optimise
    runner = StfRunner(pipeline, build_p4info(compiled.ir), str(stf))
    try:
        result = runner.run(stmts)
    except StfError as exc:
        return ("stf-error", str(exc))
    return (result.passed, runner.received, result.log, result.check_failures, pipeline.logs,
            pipeline.digests, {n: r.values for n, r in pipeline.registers.items()},
            {n: (c.packets, c.bytes) for n, c in pipeline.counters.items()})


@pytest.mark.parametrize("stf", CORPUS + LG_STF, ids=[s.stem for s in CORPUS + LG_STF])
def test_same_results_with_and_without_the_optimisers(stf: Path) -> None:
    program = LG if stf in LG_STF else stf.with_suffix(".p4")
    optimised = _observed(program, stf, True)
    assert _observed(program, stf, False) == optimised
    if stf in LG_STF:
        assert optimised[0] is True


def test_the_unoptimised_code_is_the_generated_code() -> None:
    compiled = compile_file(str(LG))
    plain = Pipeline.load(compiled, optimise=False)
    assert plain.generated_source() == plain.code.source
    assert Pipeline.load(compiled).generated_source() != plain.code.source


def test_the_environment_variable_and_the_option(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    compiled = compile_file(str(LG))
    monkeypatch.setenv("LGKIT_NO_OPT", "1")
    assert not Pipeline.load(compiled).code.optimised
    monkeypatch.setenv("LGKIT_NO_OPT", "0")
    assert Pipeline.load(compiled).code.optimised
    monkeypatch.delenv("LGKIT_NO_OPT")
    assert main(["stf", "--no-opt", str(LG), str(LG_STF[0])]) == 0, capsys.readouterr()
    assert not Pipeline.load(compiled).code.optimised


def test_the_switch_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """`lgkit switch --no-opt` (also after `--`) turns the optimisers off before it loads a
    program, for the programs P4Runtime pushes later too."""
    resolved = resolve_options(build_parser("switch").parse_args(
        ["switch", "prog.json", "--", "--no-opt"]))
    assert resolved.no_opt is True
    assert resolve_options(build_parser("switch").parse_args(["switch", "p.json"])).no_opt is False
    monkeypatch.delenv("LGKIT_NO_OPT", raising=False)
    assert main(["switch", "--no-opt", str(tmp_path / "missing.p4")]) == 1
    assert capsys.readouterr().err.startswith("lgkit: error: ")
    assert not load_program(str(LG)).code.optimised
