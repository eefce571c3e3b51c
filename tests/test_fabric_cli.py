"""`lgkit fabric` commands: a tiny run, plot, trace and sweep; bad input gives a clean error."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lgkit.fabric.cli import register
from lgkit.fabric.runs import find_runs, load

TINY = ["--pods", "3", "--tors-per-pod", "4", "--planes", "4", "--spines-per-plane", "4",
        "--days", "20", "--mttf-hours", "500", "--no-progress"]
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
    assert lgkit(["fabric", "trace", "--out", str(trace), *TINY]) == 0
    assert lgkit(["fabric", "run", "--trace", str(trace), "--solutions", "corropt",
                  "--out", str(tmp_path / "res"), *TINY]) == 0
    assert "saved to" in capsys.readouterr().out


def test_sweep_on_a_local_dask_cluster(tmp_path: Path) -> None:
    code = lgkit(["fabric", "sweep", "--seeds", "1,2", "--constraints", "0.75",
                  "--deploy", "0.5,1", "--out", str(tmp_path), *TINY])
    assert code == 0
    names = [folder.name for folder in find_runs(tmp_path)]
    assert names == ["fb-p3-c75-s1", "fb-p3-c75-s2"]
    assert load(tmp_path / names[1]).spec.deploys == (0.5, 1.0)


@pytest.mark.parametrize("argv, message", [
    (["fabric", "run", "--constraint", "1.5"], "within [0, 1]"),
    (["fabric", "run", "--constraint", "0"], "above 0"),
    (["fabric", "run", "--pods", "0"], "must be positive"),
    (["fabric", "run", "--days", "soon"], "not a valid float"),
    (["fabric", "run", "--solutions", "magic"], "magic"),
    (["fabric", "sweep", "--seeds", "1,x"], "not an integer seed"),
    (["fabric", "run", "--warmup-days", "-3", *TINY], "warmup_days"),
    (["fabric", "run", "--trace", "/nonexistent/t.npz", *TINY], "trace file not found"),
    (["fabric", "run", "--lg-table", "/nonexistent.csv", *TINY], "table not found"),
    (["fabric", "run", "--topology", "fattree", "--k", "5", *TINY], "even number"),
    (["fabric", "plot", "--results", "/nonexistent/results"], "results folder not found"),
])
def test_bad_input_is_a_clear_error(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = lgkit([*argv, *(["--out", str(tmp_path)] if argv[1] == "run" else [])])
    err = capsys.readouterr().err
    assert code != 0
    assert message in err
    assert "Traceback" not in err
