"""Bad input to the kit's commands outside lgkit/sw, through the real `lgkit` command: numbers
out of range refused at parse time (before any run folder exists), and a full (ENOSPC) or
read-only (EROFS) file system under `fabric` or `reproduce --results`: one line, exit 1, nothing
half-written left."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lgkit.core.argtypes import host_port, ranged

ROOT = Path(__file__).resolve().parents[1]


def lgkit(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lgkit.cli", *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_ranged_refuses_nan_inf_and_the_ends_it_excludes() -> None:
    positive = ranged(float, 0.0, 10.0, above=True)
    assert positive("10") == 10.0
    for text in ("0", "-1", "nan", "inf", "10.5", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive(text)
    below = ranged(int, 1, 5, below=True)
    assert below("4") == 4
    with pytest.raises(argparse.ArgumentTypeError, match=r"5 is not within \[1, 5\)"):
        below("5")


def test_host_port() -> None:
    assert host_port("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    for text in ("BADADDR", "host:", ":80", "host:0", "host:65536", "host:http"):
        with pytest.raises(argparse.ArgumentTypeError, match="HOST:PORT"):
            host_port(text)


@pytest.mark.parametrize("argv", [
    ("soak", "--packets", "-5"), ("soak", "--packets", "10000000000"),
    ("soak", "--loss", "nan"), ("soak", "--load", "0"),
    ("stress", "--frames", "0"), ("stress", "--rate-gbps", "inf"),
    ("stress", "--burst", "-1"), ("bench-stress", "--repeat", "0"),
    ("bench-stress", "--frames", "1e99"), ("interrupt-test", "--runs", "0"),
])
def test_bad_numbers_refused_at_parse_time(argv: tuple[str, ...]) -> None:
    done = lgkit(*argv)
    assert done.returncode == 2 and done.stdout == ""
    assert f"argument {argv[-2]}: " in done.stderr and "is not within" in done.stderr \
        or "not a valid" in done.stderr, done.stderr


@pytest.mark.parametrize("argv", [
    ("table4", "--time-limit", "0"), ("table4", "--time-limit", "nan"),
    ("fig17", "--no-cache", "--scheduler", "BADADDR"), ("fig17", "--workers", "0"),
    ("table3", "--seconds", "-2"), ("table2", "--flows", "0"), ("pabo", "--theta", "nan"),
    ("joint", "--loss", "1"), ("lgrate", "--factor", "1"), ("vertigo", "--background", "2"),
    ("fig9", "--rate-mbps", "1e300"),
])
def test_reproduce_usage_errors_leave_no_run_folder(argv: tuple[str, ...], tmp_path: Path) -> None:
    done = lgkit("reproduce", *argv, "--results", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"argument {argv[-2]}: " in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def full_fs(tmp_path: Path) -> Iterator[Path]:
    """A tiny tmpfs, filled up."""
    yield from _tmpfs(tmp_path / "full", "size=64k", fill=True)


@pytest.fixture
def ro_fs(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs."""
    yield from _tmpfs(tmp_path / "ro", "ro")


def _tmpfs(where: Path, options: str, fill: bool = False) -> Iterator[Path]:
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)
    try:
        if fill:
            with pytest.raises(OSError), (where / "filler").open("wb") as handle:
                while True:
                    handle.write(b"\0" * 4096)
                    handle.flush()
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def _left(fs: Path) -> list[str]:
    return sorted(str(p.relative_to(fs)) for p in fs.rglob("*") if p.name != "filler")


@pytest.mark.root
@pytest.mark.parametrize("name", ["t.npz", "t.json"])
def test_fabric_trace_on_a_full_disk(full_fs: Path, name: str) -> None:
    done = lgkit("fabric", "trace", "--topology", "fattree", "--k", "4", "--days", "10",
                 "--out", str(full_fs / name))
    assert done.returncode == 1
    assert done.stderr == f"lgkit: error: {full_fs / name}: No space left on device\n"
    assert _left(full_fs) == []


@pytest.mark.root
def test_fabric_run_on_a_full_or_read_only_disk(full_fs: Path, ro_fs: Path) -> None:
    args = ["fabric", "run", "--topology", "fattree", "--k", "4", "--days", "10",
            "--no-progress", "--out"]
    full = lgkit(*args, str(full_fs / "out"))
    assert full.returncode == 1
    assert full.stderr == f"lgkit: error: {full_fs / 'out'}: No space left on device\n"
    assert _left(full_fs) == ["out"]  # the folder checked before the run; no file in it
    ro = lgkit(*args, str(ro_fs / "out"))
    assert ro.returncode == 1
    assert ro.stderr == f"lgkit: error: cannot write to {ro_fs / 'out'}: Read-only file system\n"


@pytest.mark.root
def test_reproduce_results_on_a_full_or_read_only_disk(full_fs: Path, ro_fs: Path) -> None:
    full = lgkit("reproduce", "table4", "--quick", "--results", str(full_fs / "r"))
    assert full.returncode == 1 and full.stdout == ""
    assert full.stderr == f"lgkit: error: results: {full_fs / 'r'}: No space left on device\n"
    assert _left(full_fs) == ["r"]  # no run folder, no temporary file
    ro = lgkit("reproduce", "table4", "--quick", "--results", str(ro_fs / "r"))
    assert ro.returncode == 1
    assert ro.stderr == f"lgkit: error: cannot write to {ro_fs / 'r'}: Read-only file system\n"
