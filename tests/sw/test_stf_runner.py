"""`lgkit stf` failure reporting: per-port diffs, extern checks, located errors, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.cli import main

CORPUS = TESTS / "stf"
TABLES = CORPUS / "tables.p4"
EXTERNS = CORPUS / "externs.p4"


def run(tmp_path: Path, program: Path, stf_text: str, capsys: pytest.CaptureFixture[str]) -> tuple:
    stf = tmp_path / "t.stf"
    stf.write_text(stf_text)
    code = main(["stf", str(program), str(stf)])
    out = capsys.readouterr()
    return code, out.out, out.err, stf


def test_wrong_packet_gives_per_port_diff(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _, _ = run(
        tmp_path,
        TABLES,
        "packet 0 01 00 1234 00 00 00 00\nexpect 1 01 00 1234 00 00 00 FF$\n",
        capsys,
    )
    assert code == 1
    assert "port 1: expected 1 packet(s), got 1" in out
    assert "expected:   010012340000 00FF$".replace(" ", "") in out.replace(" ", "")
    assert "^" in out


def test_missing_and_unexpected_packets(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # the packet (sent on port 1) goes out on port 1 while the test expects it on port 2
    code, out, _, _ = run(
        tmp_path, TABLES, "packet 1 01 00 1234 00 00 00 00\nexpect 2 01\n", capsys
    )
    assert code == 1
    assert "port 1: expected 0 packet(s), got 1" in out and "unexpected:" in out
    assert "port 2: expected 1 packet(s), got 0" in out and "<nothing>" in out


def test_outputs_on_ports_the_test_never_names_are_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # BMv2 under STF only has the ports named by packet/expect lines; port 1 is not one of them
    code, out, _, _ = run(tmp_path, TABLES, "packet 0 01 00 1234 00 00 00 00\n", capsys)
    assert code == 0 and "PASS" in out


def test_failed_register_and_counter_checks(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = (
        "register_write regs 1 5\nregister_read regs 1 == 6\n"
        "packet 0 00 03 00000000 00000000 00 00\nexpect 1\n"
        "check_counter pkts(3) packets == 2\n"
    )
    code, out, _, stf = run(tmp_path, EXTERNS, text, capsys)
    assert code == 1
    assert f"{stf}:2: regs[1] is 5, expected == 6" in out
    assert f"{stf}:5: pkts[3].packets is 1, expected == 2" in out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("add nosuch k1:1 none()", "unknown table 'nosuch'"),
        ("add t_exact k1:1 nosuch()", "unknown action of table Ing.t_exact 'nosuch'"),
        ("add t_exact k1:1 set1(w:1)", "has no parameter 'w'"),
        ("add t_exact k1:1 set1()", "missing argument 'v'"),
        ("add t_exact k1:0x100 set1(v:1)", "does not fit in 8 bits"),
        ("add t_exact nokey:1 set1(v:1)", "unknown key field 'nokey'"),
        ("register_read nosuch 0", "unknown register 'nosuch'"),
        ("mc_node_associate 7 0", "multicast group 7 was not created"),
    ],
)
def test_bad_statements_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture, line: str, message: str
) -> None:
    code, _, err, stf = run(tmp_path, TABLES, f"# header\n{line}\n", capsys)
    assert code == 1
    assert f"{stf}:2: error: " in err and message in err
    assert "Traceback" not in err


def test_missing_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["stf", str(tmp_path / "nope.p4"), str(CORPUS / "tables.stf")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["stf", str(TABLES), str(tmp_path / "nope.stf")]) == 1
    assert "nope.stf" in capsys.readouterr().err


def test_expect_without_data_leaves_the_port_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # p4c's runner: `expect PORT` with no data accepts any number of packets on PORT (also
    # none), while the other ports are still checked
    stf_text = (
        "packet 1 01 00 1234 00 00 00 00\npacket 1 01 00 1234 00 00 00 00\n"
        "expect 1\nexpect 2\n"
    )
    code, out, _, _ = run(tmp_path, TABLES, stf_text, capsys)
    assert code == 0, out
    code, out, _, _ = run(tmp_path, TABLES, stf_text + "expect 3 01\n", capsys)
    assert code == 1
    assert "port 3: expected 1 packet(s), got 0" in out
