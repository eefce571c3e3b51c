"""`lgkit reproduce`: the registry, the options, the context, the results and the tables."""

from __future__ import annotations

import sys
import types

import pytest

from lgkit import cli
from lgkit.measure.results import read_metadata, read_table
from lgkit.reproduce import registry
from lgkit.reproduce.context import Context, ReproduceError, TimeBoundReached
from lgkit.reproduce.registry import Entry
from lgkit.reproduce.report import Check, Comparison, Row
from lgkit.reproduce.runner import reproduce


def _fake_module(run) -> types.ModuleType:
    module = types.ModuleType("lgkit_test_fake_experiment")
    module.__doc__ = "A fake experiment for the framework's tests."

    def add_arguments(group) -> None:
        group.add_argument("--copies", type=int, default=2)

    module.add_arguments = add_arguments
    module.run = run
    return module


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    """Register a fake virtual-time experiment whose run() the test supplies."""

    def install(run) -> Entry:
        entry = Entry("fake", "lgkit_test_fake_experiment", "Fig. 0", "a fake experiment",
                      network=False)
        monkeypatch.setitem(sys.modules, entry.module, _fake_module(run))
        monkeypatch.setitem(registry.EXPERIMENTS, "fake", entry)
        monkeypatch.setattr(registry, "ENTRIES", (*registry.ENTRIES, entry))
        return entry

    return install


def _table(ctx: Context) -> list[Comparison]:
    ctx.store.append("samples", {"t_s": 0.0, "value": ctx.options.copies})
    return [Comparison("Fake table", ["p99", "p99.9"],
                       [Row("LG", [1.5, 2.25], [150.0, 168.2]), Row("extra", [3, None])],
                       scale=f"{ctx.target}, quick={ctx.quick}", units="ours ms, paper us",
                       checks=[Check("p99 below 2 ms", True)])]


def test_run_writes_folder_summary_and_prints_the_table(fake, tmp_path, capsys) -> None:
    entry = fake(_table)
    path = reproduce(entry, ["--quick", "--copies", "3", "--results", str(tmp_path)])
    out = capsys.readouterr().out
    assert "== Fake table ==" in out and "scale: builtin, quick=True" in out
    assert "check: p99 below 2 ms: PASS" in out
    lines = out.splitlines()
    lg = next(line for line in lines if line.startswith("LG"))
    assert lg.split() == ["LG", "ours", "1.5", "2.25"]
    assert lines[lines.index(lg) + 1].split() == ["paper", "150", "168"]
    assert any(line.split() == ["extra", "ours", "3", "n/a"] for line in lines)
    meta = read_metadata(path)
    assert meta["status"] == "complete" and meta["quick"] is True
    assert meta["time_limit_s"] == 60.0 and meta["options"]["copies"] == 3
    assert meta["checks"] == [{"text": "p99 below 2 ms", "passed": True}]
    assert meta["command"] == f"lgkit reproduce fake --quick --copies 3 --results {tmp_path}"
    assert meta["code"] == "unknown" or len(meta["code"].split("+")[0]) == 12
    report = (path / "report.txt").read_text()
    assert report.startswith(f"$ {meta['command']}\n== Fake table ==")
    assert "check: p99 below 2 ms: PASS" in report and "s wall (quick scale" in report
    summary = read_table(path, "summary")
    assert {(r["row"], r["column"], r["ours"], r["paper"]) for r in summary} >= {
        ("LG", "p99", "1.5", "150.0"), ("extra", "p99.9", "", "")}
    assert read_table(path, "samples") == [{"t_s": "0.0", "value": "3"}]


def test_time_bound_marks_the_run_incomplete(fake, tmp_path) -> None:
    def slow(ctx: Context) -> list[Comparison]:
        assert ctx.time_limit_s == 0.5
        ctx.store.append("samples", {"i": 1})
        ctx.started -= 1.0
        ctx.check_time("step 2")
        return []

    entry = fake(slow)
    with pytest.raises(TimeBoundReached, match="time bound of 0.5 s reached at step 2"):
        reproduce(entry, ["--time-limit", "0.5", "--results", str(tmp_path)])
    (run,) = tmp_path.iterdir()
    meta = read_metadata(run)
    assert meta["status"] == "incomplete" and "time bound" in meta["reason"]
    assert read_table(run, "samples") == [{"i": "1"}]


def test_context_shares_time_and_derives_stable_seeds(fake, tmp_path) -> None:
    seen = {}

    def probe(ctx: Context) -> list[Comparison]:
        seen["share"] = ctx.share_s(4, reserve_s=20.0)
        seen["seeds"] = (ctx.seed_for("loss", 1), ctx.seed_for("loss", 1), ctx.seed_for("lg"))
        with ctx.progress(3, "flows", unit="flow") as bar:
            bar.update(3)
        return []

    reproduce(fake(probe), ["--results", str(tmp_path), "--seed", "7"])
    assert 140.0 < seen["share"] <= 145.0  # (600 - 20) / 4
    a, b, c = seen["seeds"]
    assert a == b != c


def test_cli_lists_and_reports_errors(fake, tmp_path, capsys) -> None:
    def broken(ctx: Context) -> list[Comparison]:
        raise ReproduceError("dctcp: unavailable (kernel offers reno bbr cubic)")

    fake(broken)
    assert cli.main(["reproduce", "--list"]) == 0
    assert any(line.split()[:4] == ["fake", "Fig.", "0", "virtual"]
               for line in capsys.readouterr().out.splitlines())
    assert cli.main(["reproduce", "nope"]) == 1
    assert "lgkit: error: no experiment 'nope'" in capsys.readouterr().err
    assert cli.main(["reproduce", "fake", "--results", str(tmp_path)]) == 1
    assert "lgkit: error: dctcp: unavailable" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "fake", "--copies", "many"])
    assert "--copies: invalid int value" in capsys.readouterr().err


def test_every_registered_experiment_is_importable_and_has_run() -> None:
    names = [entry.name for entry in registry.ENTRIES]
    assert len(names) == len(set(names)) == len(registry.EXPERIMENTS)  # --list shows each once
    for entry in registry.ENTRIES:
        module = registry.load(entry)
        assert callable(module.run), entry.name
        assert module.__doc__, entry.name


def test_expected_errors_of_a_module_reach_the_user_without_traceback(
        fake, tmp_path, capsys, monkeypatch) -> None:
    def failing(ctx: Context) -> list[Comparison]:
        raise LookupError("switch lgup did not start")

    entry = fake(failing)
    monkeypatch.setattr(sys.modules[entry.module], "EXPECTED", (LookupError,), raising=False)
    assert cli.main(["reproduce", "fake", "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "lgkit: error: fake: switch lgup did not start" in err and "Traceback" not in err
    (run,) = tmp_path.iterdir()
    assert read_metadata(run)["status"] == "incomplete"
