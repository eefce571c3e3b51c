"""The built-in target against BMv2 simple_switch: the STF tests of p4/'s programs and random
LinkGuardian sequences give the same packets and state on both (BMv2 parts skip without
BMv2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.cli import main
from lgkit.control.diff_bmv2 import random_sequence
from lgkit.control.lg_stf import random_lg_stf
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.bmv2_stf import Bmv2Cli
from lgkit.sw.tools.differential import LG_PROGRAM, LG_STF_DIR, REPO, Differential, stf_suites
from lgkit.sw.tools.stf import parse_stf


@pytest.fixture(scope="module")
def differential(tmp_path_factory) -> Differential:
    return Differential(tmp_path_factory.mktemp("diff"))


P4_STF = [(program, stf) for program, folder in stf_suites()
          if program.parent == REPO / "p4" for stf in sorted(folder.glob("*.stf"))]


@pytest.mark.bmv2
@pytest.mark.parametrize(("program", "stf"), P4_STF, ids=[s.stem for _, s in P4_STF])
def test_stf_tests_of_p4_programs_agree(differential: Differential, program: Path,
                                        stf: Path) -> None:
    outcome = differential.stf_file(stf, program)
    assert not outcome.differences, "\n".join(outcome.differences)
    assert outcome.packets_out > 0 and outcome.values > 0


def test_every_p4_program_with_stf_tests_is_compared() -> None:
    assert {p.name for p, _ in P4_STF} == {"linkguardian.p4", "vertigo.p4", "pabo.p4"}
    assert len(P4_STF) >= 9


@pytest.mark.bmv2
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_lg_sequences_agree(differential: Differential, seed: int) -> None:
    outcome = random_sequence(differential, seed, 50)
    assert not outcome.differences, "\n".join(outcome.differences)
    assert outcome.packets_out > 0 and outcome.values > 300


@pytest.mark.bmv2
def test_stf_command_on_bmv2_and_both(capsys: pytest.CaptureFixture[str]) -> None:
    stf = str(LG_STF_DIR / "receiver.stf")
    assert main(["stf", "--target", "bmv2", str(LG_PROGRAM), stf]) == 0
    assert main(["stf", "--target", "both", str(LG_PROGRAM), stf]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "SAME" in out and "3 packet(s) on 2 port(s)" in out


@pytest.mark.slow
def test_stf_command_names_missing_tools(monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    stf = str(LG_STF_DIR / "receiver.stf")
    assert main(["stf", "--target", "bmv2", str(LG_PROGRAM), stf]) == 1
    err = capsys.readouterr().err
    assert "simple_switch" in err and "not installed (not on PATH)" in err


@pytest.mark.slow
def test_cli_translation_of_stf_statements() -> None:
    info = build_p4info(compile_file(str(LG_PROGRAM)).ir)  # = p4c's (test_bmv2_p4info)
    cli = Bmv2Cli(info)
    stmts = parse_stf(
        "add ipv4_lpm hdr.ipv4.dst_addr:0x0a000202/32 ipv4_forward(dst_addr:0x0202, port:2)\n"
        "register_write lg_tx_leading_ack 2 0x10\n"
        "setdefault LgEgress.global_cfg.lg_global lg_set_global(recirc_port:68, "
        "recirc_session:511, prio_normal:0, prio_high:0, loop_port:0)\n")
    assert [cli.command(s) for s in stmts] == [
        "table_add LgIngress.forwarding.ipv4_lpm LgIngress.forwarding.ipv4_forward "
        "167772674/32 => 514 2",
        "register_write lg_tx_leading_ack 2 16",
        "table_set_default LgEgress.global_cfg.lg_global lg_set_global 68 511 0 0 0",
    ]


def test_random_sequences_are_reproducible_stf() -> None:
    text = random_lg_stf(7, 30)
    assert text == random_lg_stf(7, 30) != random_lg_stf(8, 30)
    stmts = parse_stf(text)
    assert sum(type(s).__name__ == "PacketStmt" for s in stmts) == 30
    assert Path(LG_PROGRAM).exists()
