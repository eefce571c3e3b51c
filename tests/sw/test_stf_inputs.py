"""`lgkit stf` refuses files that are not STF text, and extern indices out of range, with one
line naming the file (and line), exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.cli import main

EXTERNS = TESTS / "stf" / "externs.p4"


def stf_error(path: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["stf", str(EXTERNS), path]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return out.err.strip()


def test_binary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bin.stf"
    path.write_bytes(b"packet 0 00\n\x00\x01\x02\x7fELF")
    assert stf_error(str(path), capsys) == f"{path}: error: a binary file, not an STF text"


def test_non_utf8_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.stf"
    path.write_bytes("# caf\xe9\npacket 0 00\n".encode("latin-1"))
    assert stf_error(str(path), capsys) == f"{path}: error: not UTF-8 text (byte 5 is 0xe9)"


def test_device_instead_of_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_error("/dev/zero", capsys) == "/dev/zero: error: not a regular file"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("counter_read pkts 8", "index 8 out of range for pkts (size 8)"),
        ("counter_read pkts -1", "index -1 out of range for pkts (size 8)"),
        ("counter_write pkts 99 1 1", "index 99 out of range for pkts (size 8)"),
        ("register_read regs -1", "index -1 out of range for regs (size 8)"),
        ("register_write regs 8 1", "index 8 out of range for regs (size 8)"),
    ],
)
def test_extern_index_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, message: str
) -> None:
    path = tmp_path / "t.stf"
    path.write_text(f"# one command\n{command}\n")
    assert stf_error(str(path), capsys) == f"{path}:2: error: {message}"
