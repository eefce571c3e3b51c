"""`lgkit fabric` commands: a tiny run, plot, trace and sweep; bad input gives a clean error."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from lgkit.fabric import cli as fabric_cli
from lgkit.fabric import runs
from lgkit.fabric.cli import register
from lgkit.fabric.runs import find_runs, load

SMALL = ["--pods", "3", "--tors-per-pod", "4", "--planes", "4", "--spines-per-plane", "4",
         "--days", "20", "--mttf-hours", "500"]
TINY = [*SMALL, "--no-progress"]
PNG_SIGNATURE = bytes([0x89]) + b"PNG"


def lgkit(argv: list[str]) -> int:
    """Parse and dispatch like `lgkit.cli.main`, with only the fabric commands registered."""
    parser = argparse.ArgumentParser(prog="lgkit")
    register(parser.add_subparsers(dest="command"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return args.func(args)


@pytest.mark.slow
def test_run_then_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = lgkit(["fabric", "run", "--constraint", "0.5,0.75", "--seed", "4",
                  "--out", str(tmp_path / "res"), *TINY])
    out = capsys.readouterr().out
    assert code == 0
    assert "orders of magnitude lower" in out and "peak memory" in out
    folders = find_runs(tmp_path / "res")
    assert [load(folder).spec.constraint for folder in folders] == [0.5, 0.75]
    assert lgkit(["fabric", "plot", "--results", str(tmp_path / "res"),
                  "--out", str(tmp_path / "fig")]) == 0
    for name in ("fig13.png", "fig14.png"):
        assert (tmp_path / "fig" / name).read_bytes()[:4] == PNG_SIGNATURE


def test_trace_then_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.npz"
    assert lgkit(["fabric", "trace", "--out", str(trace), *SMALL]) == 0
    assert lgkit(["fabric", "run", "--trace", str(trace), "--solutions", "corropt",
                  "--out", str(tmp_path / "res"), *TINY]) == 0
    assert "saved to" in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_on_a_local_dask_cluster(tmp_path: Path) -> None:
    code = lgkit(["fabric", "sweep", "--seeds", "1,2", "--constraints", "0.75",
                  "--deploy", "0.5,1", "--out", str(tmp_path), *TINY])
    assert code == 0
    names = [folder.name for folder in find_runs(tmp_path)]
    assert names == ["fb-p3-c75-s1", "fb-p3-c75-s2"]
    assert load(tmp_path / names[1]).spec.deploys == (0.5, 1.0)


@pytest.mark.parametrize("argv, message", [
    (["fabric", "run", "--constraint", "1.5"], "--constraint: 1.5 is not within (0, 1]"),
    (["fabric", "run", "--constraint", "0"], "not within (0, 1]"),
    (["fabric", "run", "--pods", "0"], "--pods: 0 is not within [1, 2000000]"),
    (["fabric", "run", "--days", "soon"], "not a valid float"),
    (["fabric", "run", "--solutions", "magic"], "magic"),
    (["fabric", "sweep", "--seeds", "1,x"], "not a valid int"),
    (["fabric", "run", "--warmup-days", "-3", *TINY], "--warmup-days: -3 is not within"),
    (["fabric", "run", "--trace", "/nonexistent/t.npz", *TINY], "trace file not found"),
    (["fabric", "run", "--lg-table", "/nonexistent.csv", *TINY], "table not found"),
    (["fabric", "run", "--topology", "fattree", "--k", "5", *TINY], "not an even number"),
    (["fabric", "plot", "--results", "/nonexistent/results"], "results folder not found"),
])
def test_bad_input_is_a_clear_error(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = lgkit([*argv, *(["--out", str(tmp_path)] if argv[1] == "run" else [])])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("lgkit: error: ") and err.count("\n") == 1
    assert message in err


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any simulation or trace draw starts."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(runs, "execute", refuse)
    monkeypatch.setattr(fabric_cli, "generate_trace", refuse)


TOO_LARGE = {"--constraint": "1.01", "--constraints": "0.5,1.5", "--deploy": "1.5",
             "--seed": str(2**64), "--seeds": "1,18446744073709551616", "--pods": "99999999999",
             "--tors-per-pod": "2000001", "--planes": "2000001", "--spines-per-plane": "2000001",
             "--k": "1002", "--days": "1e9", "--warmup-days": "1e9", "--mttf-hours": "1e13",
             "--workers": "65", "--week-start-day": "1e9"}
NUMBERS = {  # every numeric option of every `lgkit fabric` action
    "run": ["--constraint", "--seed", "--pods", "--tors-per-pod", "--planes",
            "--spines-per-plane", "--k", "--days", "--warmup-days", "--mttf-hours", "--deploy"],
    "sweep": ["--seeds", "--constraints", "--workers", "--pods", "--tors-per-pod", "--planes",
              "--spines-per-plane", "--k", "--days", "--warmup-days", "--mttf-hours",
              "--deploy"],
    "bench": ["--constraints", "--seed", "--days", "--warmup-days", "--mttf-hours", "--deploy"],
    "trace": ["--seed", "--pods", "--tors-per-pod", "--planes", "--spines-per-plane", "--k",
              "--days", "--warmup-days", "--mttf-hours"],
    "plot": ["--week-start-day"],
}


@pytest.mark.parametrize("action, option", [(action, option) for action, options in
                                            NUMBERS.items() for option in options])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "1e400", "too large"])
def test_every_number_is_checked_before_any_work(
    action: str, option: str, value: str, tmp_path: Path, no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = TOO_LARGE[option] if value == "too large" else value
    out = ["--out", str(tmp_path / "t.npz" if action == "trace" else tmp_path)]
    code = lgkit(["fabric", action, option, value, *(out if action != "bench" else [])])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith(f"lgkit: error: fabric {action}: argument {option}")


@pytest.mark.parametrize("argv, message", [
    (["--pods", "100000"], "38,400,000 links; at most 2,000,000"),
    (["--topology", "fattree", "--k", "200"], "4,000,000 links"),
    (["--mttf-hours", "0.5"], "onsets; at most 10,000,000"),
    (["--days", "100000"], "onsets; at most 10,000,000"),
])
def test_runs_too_large_for_memory_are_refused_before_any_work(
    argv: list[str], message: str, tmp_path: Path, no_work: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for action in ("run", "trace"):
        out = tmp_path / ("t.npz" if action == "trace" else "res")
        assert lgkit(["fabric", action, *argv, "--out", str(out)]) == 1
        assert message in capsys.readouterr().err
        assert not out.exists()


def test_days_inf_through_the_real_command_exits_at_once() -> None:
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "fabric", "run", "--days", "inf"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "lgkit: error: fabric run: argument --days: inf is not within " \
        "(0, 100000]\n"


@pytest.mark.parametrize("content", [bytes(range(256)) * 8, b"PK\x03\x04garbage", b"{not json",
                                     b"\x00" * 100])
def test_garbage_input_files_are_named_in_the_error(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(content)
    for option in ("--trace", "--lg-table"):
        assert lgkit(["fabric", "run", option, str(garbage), "--out", str(tmp_path / "res"),
                      *TINY]) == 1
        err = capsys.readouterr().err
        assert err.startswith("lgkit: error: ") and str(garbage) in err, err
    results = tmp_path / "results" / "run"
    results.mkdir(parents=True)
    for name in ("meta.json", "trace.npz"):
        (results / name).write_bytes(content)
    assert lgkit(["fabric", "plot", "--results", str(results), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lgkit: error: ") and str(results / "meta.json") in err, err


def test_a_special_file_is_not_read_as_a_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert lgkit(["fabric", "run", "--trace", "/dev/zero", "--out", "/tmp", *TINY]) == 1
    assert "not a regular file" in capsys.readouterr().err


def test_unwritable_out_fails_before_any_work(
    tmp_path: Path, no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    inside = str(blocker / "results")
    for argv in (["run", "--out", inside], ["sweep", "--out", inside],
                 ["plot", "--results", str(tmp_path), "--out", inside],
                 ["trace", "--out", str(blocker / "t.npz")],
                 ["trace", "--out", str(tmp_path)]):
        assert lgkit(["fabric", *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("lgkit: error: ") and str(argv[-1]) in err, err
