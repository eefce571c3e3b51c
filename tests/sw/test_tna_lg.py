"""p4/tofino/linkguardian.p4 on the built-in target's TNA model: first LinkGuardian scenarios
(tests/p4/tna/lg: a sender data frame gets the LG data header; a receiver delivers in order),
with the same frames and expectations as the v1model program's STF tests (tests/lg_stf)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from testpaths import REPO, TESTS

from lgkit.sw.exec.interp.tables import Exact
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfResult, StfRunner, parse_stf

PROGRAM = REPO / "p4" / "tofino" / "linkguardian.p4"
SCENARIOS = sorted((TESTS / "p4" / "tna" / "lg").glob("*.stf"))
RECIRC_PORT = 68


@pytest.fixture(scope="module")
def compiled() -> object:
    return compile_file(str(PROGRAM))


def run(compiled: object, stf: Path) -> tuple[Pipeline, StfResult]:
    """The STF on a fresh pipeline whose loop-port value set holds the recirculation port (STF
    has no value-set command; the control plane fills it, as for the v1model program)."""
    pl = Pipeline.load(compiled)
    pl.value_sets["LgIngressParser.lg_loop_ports"].set_members([[Exact(RECIRC_PORT)]])
    runner = StfRunner(pl, build_p4info(compiled.ir), str(stf))  # type: ignore[attr-defined]
    return pl, runner.run(parse_stf(stf.read_text(), str(stf)))


@pytest.mark.parametrize("stf", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_lg_scenario(compiled: object, stf: Path) -> None:
    _, result = run(compiled, stf)
    assert result.passed, result


def test_the_sender_assigns_consecutive_sequence_numbers(compiled: object) -> None:
    pl, result = run(compiled, TESTS / "p4" / "tna" / "lg" / "sender.stf")
    assert result.passed
    # one more host packet onto the link: seq 1, the Tx buffer holds both copies' count
    frame = bytes.fromhex("00000000aaaa0000000001010800" "4500003200070000401163b20a0001010a000202"
                          "13881770001e000000000007" + "00" * 26)
    out = pl.run_untimed(1, frame)
    assert [(port, data[12:17].hex()) for port, data in out] == [(2, "abcd020001")]


AUTHORS_ENV = "LGKIT_AUTHORS_TOFINO"  # as `lgkit tofino resources --authors` reads it
AUTHORS_PROGRAMS = ("switch_impl/system_impl/sender/sender.p4",
                    "switch_impl/system_impl/receiver/receiver.p4")


@pytest.mark.parametrize("program", AUTHORS_PROGRAMS, ids=["sender", "receiver"])
def test_the_authors_programs_load_on_the_model(program: str) -> None:
    tree = os.environ.get(AUTHORS_ENV)
    if not tree or not (Path(tree) / program).is_file():
        pytest.skip(f"the authors' linkguardian-tofino tree is not given (${AUTHORS_ENV})")
    # their build gives TIMEOUT_VAL_100NS (the receiver's timeout for 100G links)
    pl = Pipeline.load(compile_file(str(Path(tree) / program),
                                    defines={"TIMEOUT_VAL_100NS": "70"}))
    assert pl.tables and pl.registers
