"""Verdicts do not depend on the untimed clock's cost per pass: every STF test of the kit (the
LinkGuardian, Vertigo and PABO suites, the exercises' tests on their solutions and on the
students' skeletons, the STF corpus) gives the same verdict, the same packets, the same
failed checks and the same logs with a pass costing 10x less and 10x more virtual time."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.course.generate import EXERCISES_DIR, PROGRAM
from lgkit.sw.exec.passclock import PASS_NS, PassClock
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.frontend.diagnostics import P4Error
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.differential import REPO, stf_suites
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

COSTS = (PASS_NS // 10, PASS_NS, PASS_NS * 10)
CORPUS = REPO / "tests" / "stf"
SUITES = stf_suites() + [
    (skeleton, skeleton.parent / "tests") for skeleton in sorted(EXERCISES_DIR.glob(f"*/{PROGRAM}"))
    if (skeleton.parent / "tests").is_dir()
] + [(stf.with_suffix(".p4"), stf) for stf in sorted(CORPUS.glob("*.stf"))
     if stf.with_suffix(".p4").is_file()]


def outcomes(program: Path, folder_or_stf: Path) -> list[dict[str, object]]:
    """Per pass cost (COSTS), per STF file of the suite: everything the run shows (or the
    error that stopped it)."""
    try:
        compiled = compile_file(str(program))
        info = build_p4info(compiled.ir)
    except P4Error as exc:
        return [{"compile": str(exc)}] * len(COSTS)
    tests = [folder_or_stf] if folder_or_stf.is_file() else sorted(folder_or_stf.glob("*.stf"))
    return [run(compiled, info, tests, cost) for cost in COSTS]


def run(compiled: object, info: object, tests: list[Path], pass_ns: int) -> dict[str, object]:
    seen: dict[str, object] = {}
    for stf in tests:
        pipeline = Pipeline.load(compiled)
        pipeline.untimed_clock = PassClock(pass_ns)
        runner = StfRunner(pipeline, info, str(stf))
        try:
            result = runner.run(parse_stf(stf.read_text(), str(stf)))
        except StfError as exc:
            seen[stf.name] = str(exc)
            continue
        seen[stf.name] = (result.passed, sorted(runner.received.items()), result.ignored,
                          result.check_failures, pipeline.logs, pipeline.digests)
    return seen


def name(suite: tuple[Path, Path]) -> str:
    program, tests = suite
    return f"{program.relative_to(REPO)}:{tests.relative_to(REPO)}"


def test_every_suite_is_here() -> None:
    kinds = {name(s).split("/")[0] for s in SUITES}
    assert {"p4", "exercises", "tests"} <= kinds
    assert sum(1 for p, _ in SUITES if p.name == PROGRAM and p.parent.name != "solution") >= 4


@pytest.mark.parametrize("suite", SUITES, ids=[name(s) for s in SUITES])
def test_same_outcomes_at_a_tenth_and_ten_times_the_pass_cost(suite: tuple[Path, Path]) -> None:
    slow, default, fast = outcomes(*suite)
    assert default, "no STF test ran"
    assert slow == default
    assert fast == default
    failed = [stf for stf, seen in default.items() if not (isinstance(seen, tuple) and seen[0])]
    if suite[0].parent == EXERCISES_DIR / suite[0].parent.name:  # a student's skeleton
        assert failed, "a skeleton passes every test"
    else:
        assert failed == [], "these tests should pass"
