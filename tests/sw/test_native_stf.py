"""The kit's STF corpus on both engines: the native engine's output packets, registers and
counters equal the Python engine's, with and without the optimisers; it says how many programs
it covered and how many fell back to the Python engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.native.build import CACHE_ENV
from lgkit.sw.exec.native.select import use_engine
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfRunner, parse_stf

CORPUS = sorted(p for p in (TESTS / "stf").glob("*.stf") if p.with_suffix(".p4").is_file())
MIN_COVERED = 5  # corpus programs the native engine runs today (the rest fall back)


def run(stf: Path, engine: str, optimise: bool) -> tuple[bool, tuple]:
    """Whether the native engine ran it, and everything the STF observed."""
    compiled = compile_file(str(stf.with_suffix(".p4")))
    pl = Pipeline.load(compiled, optimise=optimise)
    native = use_engine(pl, compiled.ir, engine)
    runner = StfRunner(pl, build_p4info(compiled.ir), str(stf))
    result = runner.run(parse_stf(stf.read_text(), str(stf)))
    registers = {name: list(r.values) for name, r in pl.registers.items()}
    counters = {name: (list(c.packets), list(c.bytes)) for name, c in pl.counters.items()}
    seen = (result.passed, result.check_failures, sorted(runner.received.items()),
            result.ignored, registers, counters)
    return native is not None, seen


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
def test_corpus_is_the_same_on_both_engines(optimise: bool, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    covered = []
    for stf in CORPUS:
        _, reference = run(stf, "python", optimise)
        native, seen = run(stf, "native", optimise)
        assert seen == reference, stf.name
        if native:
            covered.append(stf.stem)
    with capsys.disabled():
        print(f"\nnative engine ({'optimised' if optimise else '--no-opt'}): covered "
              f"{len(covered)} of {len(CORPUS)} corpus programs ({', '.join(covered)}); "
              f"{len(CORPUS) - len(covered)} fell back to the python engine")
    assert len(covered) >= MIN_COVERED
