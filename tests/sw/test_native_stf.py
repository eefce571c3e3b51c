"""The STF corpora (the kit's, tests/stf, and p4c's conformance tests, tests/p4c_corpus) on both
engines: the native engine's output packets, registers and counters equal the Python engine's,
with and without the optimisers; it says how many programs it covered and how many fell back to
the Python engine."""

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
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

CORPORA = {"kit": TESTS / "stf", "p4c": TESTS / "p4c_corpus"}
MIN_COVERED = {"kit": 8, "p4c": 44}  # programs the native engine runs today (the rest fall back)


def programs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.glob("*.stf") if p.with_suffix(".p4").is_file())


def compiled(stf: Path) -> tuple[object, list] | None:
    """The program and its test, or None for the corpus's rejected programs and bad tests."""
    try:
        program = compile_file(str(stf.with_suffix(".p4")))
        Pipeline.load(program)
        return program, parse_stf(stf.read_text(errors="replace"), str(stf))
    except (P4Error, StfError):
        return None


def run(stf: Path, compiled: object, stmts: list, engine: str, optimise: bool
        ) -> tuple[bool, tuple]:
    """Whether the native engine ran it, and everything the STF observed (or the error)."""
    pl = Pipeline.load(compiled, optimise=optimise)
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
