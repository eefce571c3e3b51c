"""lgkit tofino: bf-p4c reports read right, budgets enforced, the TNA program compiles, its
STF scenarios run (without bf-p4c too)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.cli import main
from lgkit.tofino import bfp4c

BF_P4C = bfp4c.find()
PROGRAM = REPO / "p4" / "tofino" / "linkguardian.p4"

# The shape of bf-p4c 9.13's mau.resources.log: a table of counts per stage, then percentages.
MAU_LOG = """\
| Stage Number | Exact Match Input xbar | Gateway | SRAM | Map RAM | TCAM | Meter ALU |
|      0       |           1            |    1    |  10  |    1    |  2   |     3     |
|      1       |           1            |    1    |  6   |    1    |  0   |     1     |
|      2       |           0            |    0    |  0   |    0    |  0   |     0     |
|    Totals    |           2            |    2    |  16  |    2    |  2   |     4     |
| Stage Number | Exact Match Input xbar | Gateway | SRAM | Map RAM | TCAM | Meter ALU |
|   Average    |         9.99%          |  9.99%  | 9.99%| 9.99%   | 9.99%|   50.00%  |
"""


def write_logs(folder: Path, phv: list[int], **other_phv: list[int]) -> Path:
    folder.mkdir(parents=True)
    (folder / "mau.resources.log").write_text(MAU_LOG)
    classes = {"normal": phv, **other_phv}
    (folder / "metrics.json").write_text(json.dumps({"phv": {
        kind: [{"bit_width": 8, "bits_occupied": n} for n in bits]
        for kind, bits in classes.items()}}))
    return folder


def test_reports_read_as_shares_of_the_whole_chip(tmp_path: Path) -> None:
    used = bfp4c.read_reports(write_logs(tmp_path / "logs", [100, 28]))
    assert used.stages == 2
    assert (used.sram, used.tcam, used.salu, used.phv_bits) == (16, 2, 4, 128)
    # Shares of the 12-stage chip, not the log's average over the stages used.
    assert used.sram_pct == round(100 * 16 / 960, 2)
    assert used.salu_pct == round(100 * 4 / 48, 2)
    assert used.phv_pct == round(100 * 128 / 4096, 2)


def test_tofino2_reports_count_its_20_stages_and_the_mocha_phv(tmp_path: Path) -> None:
    logs = write_logs(tmp_path / "logs", [100], mocha=[28, 8], dark=[16], tagalong=[7])
    used = bfp4c.read_reports(logs, bfp4c.TOFINO2)
    assert (used.stages, used.sram, used.salu) == (2, 16, 4)
    assert used.sram_pct == round(100 * 16 / 1600, 2)
    assert used.tcam_pct == round(100 * 2 / 480, 2)
    assert used.salu_pct == round(100 * 4 / 80, 2)
    # The MAU's PHV: normal and mocha; the dark PHV (and Tofino 1's tagalong) are not counted.
    assert used.phv_bits == 136
    assert bfp4c.read_reports(logs).phv_bits == 100


def test_budget_names_each_resource_over_it(tmp_path: Path) -> None:
    used = bfp4c.read_reports(write_logs(tmp_path / "logs", [64]))
    assert bfp4c.over_budget(used, {"_about": "a comment", "stages": 2, "sram": 16,
                                    "salu": 4}) == []
    assert bfp4c.over_budget(used, {"stages": 1, "sram": 20, "salu": 3}) == [
        "stages 2 > 1", "salu 4 > 3"]


def test_without_bf_p4c_resources_is_one_line_and_exit_1(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["tofino", "resources"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "bf-p4c" in out[0]


def test_without_bf_p4c_check_says_so_and_runs_the_stf_scenarios(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    stf = REPO / "tests" / "lg_stf" / "sender.stf"
    assert main(["tofino", "check", str(PROGRAM), "--stf", str(stf)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "skipped: compile for tofino (tna) and resources: bf-p4c not on PATH"
    assert out[1:3] == ["checked: 1 STF scenarios on the built-in target (tofino binding): ok",
                        f"  PASS {stf}"]
    assert any(line.startswith("not checked: not in this program: register "
                               "lg_tx_buf_max_pkts") for line in out)


def test_a_failing_scenario_fails_the_check(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    text = (REPO / "tests" / "lg_stf" / "sender.stf").read_text()
    wrong = tmp_path / "wrong.stf"
    wrong.write_text(text.replace("lg_tx_next 2 == 1", "lg_tx_next 2 == 2"))
    assert main(["tofino", "check", str(PROGRAM), "--stf", str(wrong)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {wrong}" in out and "lg_tx_next[2] is 1, expected == 2" in out


def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["tofino", "check", str(tmp_path / "none.p4")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("lgkit: error: ")
    bad = tmp_path / "budget.json"
    bad.write_text("{")
    prog = tmp_path / "p.p4"
    prog.write_text("")
    assert main(["tofino", "check", str(prog), "--budget", str(bad)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "budget" in err[0]


def test_bad_stf_input_is_one_error_line(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["tofino", "check", str(PROGRAM), "--stf", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("lgkit: error: ") and "none" in err[0]
    prog = tmp_path / "p.p4"
    prog.write_text("control {")
    (tmp_path / "p.stf.json").write_text("[]")
    assert main(["tofino", "check", str(prog)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "not a scenario binding" in err[0]


def test_committed_budgets_are_our_program_with_a_small_margin() -> None:
    for name, chip in (("budget.json", bfp4c.TOFINO), ("budget-tofino2.json", bfp4c.TOFINO2)):
        budget = json.loads((REPO / "p4" / "tofino" / name).read_text())
        assert budget["stages"] <= chip.stages
        assert "linkguardian.p4" in budget["_about"] and f"--target {chip.target}" in budget[
            "_about"]
        # The budget is ours, not the authors' two programs together (SRAM 284, SALU 44).
        assert budget["sram"] < 284 and budget["salu"] < 44


def test_check_for_tofino2_without_bf_p4c_names_the_target(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    stf = REPO / "tests" / "lg_stf" / "sender.stf"
    assert main(["tofino", "check", str(PROGRAM), "--target", "tofino2", "--stf", str(stf)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "skipped: compile for tofino2 (t2na) and resources: bf-p4c not on PATH"
    assert out[2] == f"  PASS {stf}"
    assert any(line.startswith("not checked: the STF scenarios on tofino2") for line in out)


@pytest.mark.slow
@pytest.mark.skipif(BF_P4C is None, reason="bf-p4c not on PATH (the open Tofino compiler)")
def test_tna_linkguardian_compiles_within_budget(tmp_path: Path) -> None:
    budget = json.loads((REPO / "p4" / "tofino" / "budget.json").read_text())
    assert BF_P4C is not None
    used = bfp4c.compile_tna(REPO / "p4" / "tofino" / "linkguardian.p4", tmp_path, BF_P4C)
    assert bfp4c.over_budget(used, budget) == []
    # The ingress and egress registers really placed: 12 ingress + 6 egress RegisterActions'
    # registers, each a stateful ALU; and a binary for the ASIC came out.
    assert used.salu == 18, used
    assert os.path.isfile(tmp_path / "pipe" / "tofino.bin")


@pytest.mark.slow
@pytest.mark.skipif(BF_P4C is None, reason="bf-p4c not on PATH (the open Tofino compiler)")
def test_t2na_linkguardian_compiles_within_its_budget(tmp_path: Path) -> None:
    budget = json.loads((REPO / "p4" / "tofino" / "budget-tofino2.json").read_text())
    assert BF_P4C is not None
    used = bfp4c.compile_tna(PROGRAM, tmp_path, BF_P4C, bfp4c.TOFINO2)
    assert bfp4c.over_budget(used, budget) == []
    # The same 18 registers as on Tofino 1 (rx_retx_seen half as deep), a Tofino 2 binary.
    assert used.salu == 18, used
    assert os.path.isfile(tmp_path / "pipe" / "tofino2.bin")
