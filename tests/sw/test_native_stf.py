"""The STF corpora (the kit's, tests/stf, and p4c's conformance tests, tests/p4c_corpus), the
kit's STF suites (LinkGuardian, Vertigo, PABO, the exercises' solutions) and `lgkit diff-bmv2`'s
random LinkGuardian sequences on both engines: the native engine's output packets, registers,
counters and logs equal the Python engine's, with and without the optimisers; the programs the
native engine leaves to the Python engine are exactly FALLBACKS (each with its construct)."""

from __future__ import annotations

import contextlib
import gc
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.control.lg_stf import random_lg_stf
from lgkit.sw.exec.native.build import CACHE_ENV
from lgkit.sw.exec.native.select import use_engine
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.frontend.diagnostics import P4Error
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.differential import LG_PROGRAM, REPO, stf_suites
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

CORPORA = {"kit": TESTS / "stf", "p4c": TESTS / "p4c_corpus"}
# the programs the native engine leaves to the Python engine, with the construct it names
# (docs/performance.md lists them); every other program that loads runs natively
FALLBACKS = {
    "kit": {"action_selectors": "extern action_profile",
            "checksum_payload": "extern verify_checksum_with_payload",
            "direct_apply": "extern TailParser",
            "externs": "extern direct_counter",
            "header_structs": "values of type StructLikeT",
            "headers_unions": "a header_union",
            "odd_width_header": "header odd_t that is not whole bytes",
            "parser_select": "extern verify",
            "varbit_truncate": "values of type VarbitT"},
    "p4c": {"equality-bmv2": "values of type VarbitT",
            "gauntlet_action_return-bmv2": "bit<128> wider than 64 bits",
            "gauntlet_hdr_in_value-bmv2": "expression ListExpr",
            "gauntlet_hdr_set_valid-bmv2": "a struct or header as a value",
            "gauntlet_nested_slice-bmv2": "l-value Slice",
            "issue2488-bmv2": "nested struct initialisers"}}
NOTICE = "native: unsupported {}; using the python engine\n"
SUITES = stf_suites()
RANDOM_SEEDS = (1, 2, 3)  # as tests/sw/test_bmv2_differential.py, 50 packets each


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One build cache for the module: a program's library is built once per optimiser
    setting (LinkGuardian's serves its suite and the random sequences)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("native")))
        yield


def programs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.glob("*.stf") if p.with_suffix(".p4").is_file())


def compiled(stf: Path, source: Path | None = None) -> tuple[object, list] | None:
    """The program (`source`, else the .p4 beside the test) and its test, or None for the
    corpus's rejected programs and bad tests."""
    try:
        program = compile_file(str(source or stf.with_suffix(".p4")))
        Pipeline.load(program, engine="python")
        return program, parse_stf(stf.read_text(errors="replace"), str(stf))
    except (P4Error, StfError):
        return None


def run(stf: Path, compiled: object, stmts: list, engine: str, optimise: bool
        ) -> tuple[str, tuple]:
    """What the native engine left to the Python engine ("" when it ran it; the construct
    its one-line notice names), and everything the STF observed (or the error)."""
    pl = Pipeline.load(compiled, seed=1, optimise=optimise, engine="python")  # drawn alike
    notice = io.StringIO()
    with contextlib.redirect_stderr(notice):
        native = use_engine(pl, compiled.ir, engine)  # type: ignore[attr-defined]
    fallback = notice.getvalue()
    if native is None and engine == "native":
        head, tail = NOTICE.split("{}")
        assert fallback.startswith(head) and fallback.endswith(tail), fallback
        fallback = fallback[len(head):-len(tail)]
    runner = StfRunner(pl, build_p4info(compiled.ir), str(stf))  # type: ignore[attr-defined]
    try:
        result = runner.run(stmts)
    except StfError as exc:
        return fallback, (str(exc),)
    registers = {name: list(r.values) for name, r in pl.registers.items()}
    counters = {name: (list(c.packets), list(c.bytes)) for name, c in pl.counters.items()}
    seen = (result.passed, result.check_failures, sorted(runner.received.items()),
            result.ignored, registers, counters, pl.logs)
    return fallback, seen


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("corpus", ["kit", pytest.param("p4c", marks=pytest.mark.slow)])
def test_corpus_is_the_same_on_both_engines(corpus: str, optimise: bool,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    tests = programs(CORPORA[corpus])
    covered, fallbacks = [], {}
    for stf in tests:
        loaded = compiled(stf)
        if loaded is None:
            continue
        _, reference = run(stf, *loaded, "python", optimise)
        fallback, seen = run(stf, *loaded, "native", optimise)
        assert seen == reference, stf.name
        if fallback:
            fallbacks[stf.stem] = fallback
        else:
            covered.append(stf.stem)
    with capsys.disabled():
        print(f"\nnative engine, {corpus} corpus ({'optimised' if optimise else '--no-opt'}): "
              f"covered {len(covered)} of {len(tests)} programs, {len(fallbacks)} fell back to "
              f"the python engine, {len(tests) - len(covered) - len(fallbacks)} do not load")
    assert fallbacks == FALLBACKS[corpus]


def suite_name(program: Path) -> str:
    return str(program.relative_to(REPO))


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("program,folder", SUITES, ids=[suite_name(p) for p, _ in SUITES])
def test_suites_are_the_same_on_both_engines(program: Path, folder: Path,
                                             optimise: bool) -> None:
    """Each suite's STF tests, seeded alike (random() and HashAlgorithm.random draw from the
    pipeline's generator on both engines); they pass on both, every suite natively."""
    for stf in sorted(folder.glob("*.stf")):
        loaded = compiled(stf, program)
        assert loaded is not None, stf.name
        _, reference = run(stf, *loaded, "python", optimise)
        fallback, seen = run(stf, *loaded, "native", optimise)
        assert seen == reference, stf.name
        assert reference[0] is True, f"{stf.name} should pass"
        assert fallback == "", f"{suite_name(program)} runs natively"


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_lg_sequences_are_the_same_on_both_engines(seed: int, optimise: bool,
                                                          tmp_path: Path) -> None:
    """`lgkit diff-bmv2`'s random LinkGuardian sequences (losses, retransmissions, duplicates,
    dummies, ACKs, host traffic) on LinkGuardian natively and on the Python engine."""
    stf = tmp_path / f"random-{seed}.stf"
    stf.write_text(random_lg_stf(seed, 50))
    loaded = compiled(stf, LG_PROGRAM)
    assert loaded is not None
    _, reference = run(stf, *loaded, "python", optimise)
    fallback, seen = run(stf, *loaded, "native", optimise)
    assert fallback == ""
    assert seen == reference
    assert sum(len(packets) for _, packets in reference[2]) > 0  # it forwarded something


def test_linkguardian_runs_untimed_through_the_native_device() -> None:
    """A program with requests (LinkGuardian's clones, recirculations, multicast) is driven by
    the device's C driver and jobs (device_c, jobs_c), the port loop's, in the suites above."""
    stf = TESTS / "lg_stf" / "sender.stf"
    loaded = compiled(stf, LG_PROGRAM)
    assert loaded is not None
    pl = Pipeline.load(loaded[0], seed=1)
    native = use_engine(pl, loaded[0].ir, "native")  # type: ignore[attr-defined]
    assert native is not None and native.program.requests
    runner = StfRunner(pl, build_p4info(loaded[0].ir), str(stf))  # type: ignore[attr-defined]
    assert runner.run(loaded[1]).passed
    device = pl.arch.device  # type: ignore[attr-defined]
    assert device is not None
    counts = device.counters()
    assert counts["ingress"] > 0 and counts["egress"] > counts["ingress"]  # clones, copies
    assert counts["recirc"] > 0  # the Tx buffer's loops


def test_the_untimed_device_is_freed_with_its_pipeline() -> None:
    """Its eventfds and timerfd go with it (the STF runs load hundreds of pipelines)."""
    program = compile_file(str(LG_PROGRAM))
    frame = bytes(64)

    def load_and_run() -> None:
        pl = Pipeline.load(program, seed=1, engine="native")
        pl.run_untimed(1, frame)
        assert pl.arch.device is not None  # type: ignore[attr-defined]

    load_and_run()
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        load_and_run()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before
