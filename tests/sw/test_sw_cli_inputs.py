"""The built-in target's commands on bad input and a hostile environment: one line, no
traceback, nothing half-written (full or read-only file systems, a closed stdout, bad switch
options)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.sw.atomic_file import write_all, write_atomic

ROOT = REPO
LGKIT = [sys.executable, "-m", "lgkit.cli"]
LOGGING = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in p, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata m) { apply { } }
control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply { log_msg("packet {}", {hdr.h.a}); sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out p, in headers hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def lgkit(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LGKIT, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, **kwargs)  # type: ignore[call-overload]


def one_error_line(done: subprocess.CompletedProcess[str], status: int = 1) -> str:
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs (mounted read-only by tests that remount it); skipped if mount is denied."""
    where = tmp_path / "mnt"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        print(f"skipped: cannot mount a tmpfs ({mounted.stderr.strip()})")
        pytest.skip("mount -t tmpfs is not permitted here")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


# ------------------------------------------------------------------ nothing half-written


def test_compile_to_a_full_file_system_leaves_nothing(tmpfs: Path) -> None:
    (tmpfs / "filler").write_bytes(b"x" * 40_000)  # the JSON (~ 90 kB) cannot fit
    done = lgkit("compile", "p4/linkguardian.p4", "--out", str(tmpfs / "out"))
    assert one_error_line(done) == (f"{tmpfs}/out/linkguardian.json: error: cannot write: No "
                                    "space left on device (nothing written)")
    assert sorted(p.name for p in (tmpfs / "out").iterdir()) == []


def test_compile_to_a_read_only_file_system_leaves_nothing(tmpfs: Path) -> None:
    (tmpfs / "out").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    done = lgkit("compile", "p4/basic.p4", "--out", str(tmpfs / "out"))
    assert one_error_line(done) == (f"{tmpfs}/out/basic.p4info.txt: error: cannot write: "
                                    "Read-only file system (nothing written)")
    assert list((tmpfs / "out").iterdir()) == []


def test_a_failed_write_keeps_the_old_file_and_removes_its_companions(tmpfs: Path) -> None:
    old = tmpfs / "b.txt"
    old.write_text("old")
    with pytest.raises(OSError) as info:
        write_all({tmpfs / "a.txt": "a", old: "y" * 100_000})
    assert info.value.filename == str(old) and info.value.strerror == "No space left on device"
    assert sorted(p.name for p in tmpfs.iterdir()) == ["b.txt"] and old.read_text() == "old"


def test_write_atomic_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    write_atomic(target, "first")
    write_atomic(target, b"\x00second")
    assert target.read_bytes() == b"\x00second" and [p.name for p in tmp_path.iterdir()] == [
        "f.bin"]


def test_compile_of_a_directory_says_it_is_one() -> None:
    done = lgkit("compile", "p4", "--out", "/nonexistent")
    assert one_error_line(done) == "p4: error: is a directory, not a P4 program"


def test_compile_of_a_missing_file_says_so() -> None:
    done = lgkit("compile", "p4/nope.p4", "--out", "/nonexistent")
    assert one_error_line(done) == "p4/nope.p4: error: no such file"


def test_compile_out_naming_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    done = lgkit("compile", "p4/basic.p4", "--out", str(tmp_path / "afile"))
    assert one_error_line(done) == f"{tmp_path}/afile: error: --out names a file, not a directory"


def test_bench_pipeline_refuses_an_endless_run() -> None:
    done = lgkit("bench-pipeline", "--packets", "99999999999999999999")
    assert one_error_line(done, status=2) == "lgkit: error: --packets must be in 1..10,000,000"


@pytest.mark.parametrize(("args", "status", "message"), [
    (["bench-switch", "--seconds", "nan"], 2, "--seconds must be in 0.5..3600"),
    (["bench-switch", "--offered-pps", "10"], 2, "--offered-pps must be in 1000..10000000"),
    (["bench-switch", "--offered-pps", "nan"], 2, "--offered-pps must be in 1000..10000000"),
    (["bench-switch", "--program", "p4"], 1, "--program p4: is a directory, not a P4 program"),
    (["soak-switch", "--program", "p4"], 1, "--program p4: is a directory, not a P4 program"),
])
def test_switch_benchmarks_check_their_options_before_starting(args: list[str], status: int,
                                                               message: str) -> None:
    if args[0] == "soak-switch" and os.geteuid() != 0:
        pytest.skip("soak-switch checks for root first")
    assert one_error_line(lgkit(*args), status=status) == f"lgkit: error: {message}"


# ------------------------------------------------------------------ a closed stdout


def test_stf_verbose_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    (tmp_path / "log.p4").write_text(LOGGING)
    (tmp_path / "many.stf").write_text("packet 0 01\nexpect 1 01\n" * 3000)
    read_end, write_end = os.pipe()
    # A pipe of one page: the output (tens of KB) cannot all fit before the reader closes it,
    # however fast the command runs, so it must meet the closed pipe.
    fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([*LGKIT, "stf", "-v", "log.p4", "many.stf"], cwd=tmp_path,
                            stdout=write_end, stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    assert proc.stderr is not None
    with os.fdopen(read_end) as out:
        assert out.readline() == "packet 1\n"
    # closed, as `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(120) == 141 and err == ""


# ------------------------------------------------------------------ switch options


@pytest.mark.parametrize(("option", "message"), [
    (["--thrift-port", "99999"], "--thrift-port 99999: expected a port in 1..65535"),
    (["--thrift-port", "0"], "--thrift-port 0: expected a port in 1..65535"),
    (["--device-id", "-1"], "--device-id -1: expected 0..2^64-1 (P4Runtime's uint64)"),
    (["--device-id", str(2**64)], f"--device-id {2**64}: expected 0..2^64-1"),
    (["-i", "1@abcdefghijklmnop"], "-i 1@abcdefghijklmnop: 'abcdefghijklmnop' is not a Linux "
                                   "interface name (1 to 15 characters"),
    (["-i", "1@a/b"], "-i 1@a/b: 'a/b' is not a Linux interface name"),
    (["-i", "1@a b"], "-i 1@a b: 'a b' is not a Linux interface name"),
])
def test_switch_options_are_checked_like_bmv2s(option: list[str], message: str) -> None:
    line = one_error_line(lgkit("switch", "--no-p4", *option), status=2)
    assert line.startswith(f"lgkit: error: {message}")


def test_switch_cli_checks_its_address() -> None:
    line = one_error_line(lgkit("switch-cli", "--grpc-server-addr", "127.0.0.1:99999", "-c",
                                "show_drops"), status=2)
    assert line == ("lgkit: error: --grpc-server-addr 127.0.0.1:99999: expected HOST:PORT with "
                    "PORT in 0..65535")


def test_stf_of_a_recursive_function_is_a_compile_error(tmp_path: Path) -> None:
    program = LOGGING.replace("control I(", "bit<8> f(in bit<8> x) { return f(x); }\ncontrol I(")
    (tmp_path / "rec.p4").write_text(program)
    (tmp_path / "t.stf").write_text("packet 0 01\nexpect 1 01\n")
    done = lgkit("stf", str(tmp_path / "rec.p4"), str(tmp_path / "t.stf"))
    assert one_error_line(done) == f"{tmp_path}/rec.p4:10:32: error: unknown name 'f'"
