"""The STF corpora (the kit's, tests/stf, and p4c's conformance tests, tests/p4c_corpus) and the
kit's STF suites (LinkGuardian, Vertigo, PABO, the exercises' solutions) on both engines: the
native engine's output packets, registers and counters equal the Python engine's, with and
without the optimisers; it says how many programs it covered and how many fell back to the
Python engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.native.build import CACHE_ENV
from lgkit.sw.exec.native.select import use_engine
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.frontend.diagnostics import P4Error
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.differential import REPO, stf_suites
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

CORPORA = {"kit": TESTS / "stf", "p4c": TESTS / "p4c_corpus"}
MIN_COVERED = {"kit": 16, "p4c": 56}  # programs the native engine runs today (the rest fall back)
SUITES = stf_suites()


def programs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.glob("*.stf") if p.with_suffix(".p4").is_file())


def compiled(stf: Path, source: Path | None = None) -> tuple[object, list] | None:
    """The program (`source`, else the .p4 beside the test) and its test, or None for the
    corpus's rejected programs and bad tests."""
    try:
        program = compile_file(str(source or stf.with_suffix(".p4")))
        Pipeline.load(program)
        return program, parse_stf(stf.read_text(errors="replace"), str(stf))
    except (P4Error, StfError):
        return None


def run(stf: Path, compiled: object, stmts: list, engine: str, optimise: bool
        ) -> tuple[bool, tuple]:
    """Whether the native engine ran it, and everything the STF observed (or the error)."""
    pl = Pipeline.load(compiled, seed=1, optimise=optimise)  # both engines draw alike
    native = use_engine(pl, compiled.ir, engine)  # type: ignore[attr-defined]
    runner = StfRunner(pl, build_p4info(compiled.ir), str(stf))  # type: ignore[attr-defined]
    try:
        result = runner.run(stmts)
    except StfError as exc:
        return native is not None, (str(exc),)
    registers = {name: list(r.values) for name, r in pl.registers.items()}
    counters = {name: (list(c.packets), list(c.bytes)) for name, c in pl.counters.items()}
    seen = (result.passed, result.check_failures, sorted(runner.received.items()),
            result.ignored, registers, counters, pl.logs)
    return native is not None, seen


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("corpus", list(CORPORA))
def test_corpus_is_the_same_on_both_engines(corpus: str, optimise: bool, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    tests = programs(CORPORA[corpus])
    covered = []
    for stf in tests:
        loaded = compiled(stf)
        if loaded is None:
            continue
        _, reference = run(stf, *loaded, "python", optimise)
        native, seen = run(stf, *loaded, "native", optimise)
        assert seen == reference, stf.name
        if native:
            covered.append(stf.stem)
    with capsys.disabled():
        print(f"\nnative engine, {corpus} corpus ({'optimised' if optimise else '--no-opt'}): "
              f"covered {len(covered)} of {len(tests)} programs ({', '.join(covered)}); "
              f"{len(tests) - len(covered)} fell back to the python engine or do not load")
    assert len(covered) >= MIN_COVERED[corpus]



def suite_name(program: Path) -> str:
    return str(program.relative_to(REPO))


@pytest.mark.parametrize("program,folder", SUITES, ids=[suite_name(p) for p, _ in SUITES])
def test_suites_are_the_same_on_both_engines(program: Path, folder: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Each suite's STF tests, seeded alike (random() and HashAlgorithm.random draw from the
    pipeline's generator on both engines), with the optimisers; they pass on both."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    covered = set()
    for stf in sorted(folder.glob("*.stf")):
        loaded = compiled(stf, program)
        assert loaded is not None, stf.name
        _, reference = run(stf, *loaded, "python", True)
        native, seen = run(stf, *loaded, "native", True)
        assert seen == reference, stf.name
        assert reference[0] is True, f"{stf.name} should pass"
        covered.add(native)
    assert covered == {True}, "every suite runs natively"
