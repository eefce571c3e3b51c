"""The testbed experiments' tables and figures on synthetic results with known answers (no
network: the runs themselves are exercised by tests/reproduce/test_reproduce_testbed.py)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from lgkit.measure.metrics import fewer_by_chance, quantile_ci
from lgkit.measure.results import write_csv
from lgkit.reproduce import fig10, figures, table2, table3
from lgkit.reproduce.bed import (
    BASE_RTT_FLOWS,
    REPRODUCE_RATE_MBPS,
    Bed,
    idle_srtt_ms,
    lg_columns,
    loop_mbps,
    median_srtt_ms,
)
from lgkit.reproduce.context import ReproduceError
from lgkit.reproduce.fctrun import RowCounter, fct_table, gain_table, summarize, unresolved
from lgkit.reproduce.fig9 import _schedule
from lgkit.reproduce.fig11 import gain_check
from lgkit.reproduce.tcprun import GoodputRow

PNG = bytes([0x89]) + b"PNG"


def _goodput(label: str, loss: float, mbps: float, retx: int = 0) -> GoodputRow:
    return GoodputRow(label, loss, table3.MODES[label], "cubic", 20.0, mbps, mbps, retx,
                      loss, 0.0 if label != "none" else loss, 16_000)


@pytest.mark.parametrize(("target", "asked", "rate"),
                         [("builtin", None, REPRODUCE_RATE_MBPS["builtin"]),
                          ("bmv2", None, REPRODUCE_RATE_MBPS["bmv2"]), ("builtin", 10.0, 10.0)])
def test_testbed_experiments_run_at_the_lg_rate_unless_asked(target: str, asked: float | None,
                                                             rate: float, tmp_path: Path) -> None:
    ctx = SimpleNamespace(options=argparse.Namespace(rate_mbps=asked), target=target,
                          store=SimpleNamespace(path=tmp_path), log=print)
    assert Bed(ctx).rate_mbps == rate


@pytest.mark.parametrize(("target", "paper_gbps", "loop"),
                         [("builtin", 10.0, 100.0), ("builtin", 25.0, 40.0), ("bmv2", 10.0, 20.0),
                          ("bmv2", 100.0, 10.0)])
def test_the_tx_copy_loop_scales_like_the_papers_recirculation_within_the_targets_cap(
        target: str, paper_gbps: float, loop: float) -> None:
    """The paper's 100G recirculation is 10x a 10G link; BMv2, whose recirculated packets go
    before new ones, keeps its loop at lgrate's 2x (10 Mb/s links here)."""
    assert loop_mbps(target, 10.0, paper_gbps) == pytest.approx(loop)


def test_base_rtt_is_the_median_srtt_of_the_finished_connections() -> None:
    flows = [{"rtt_us": rtt, "error": ""} for rtt in ("480", "510", "2900")]
    flows.append({"rtt_us": "0", "error": "TimeoutError: "})  # a failed flow has no RTT
    assert median_srtt_ms(flows) == pytest.approx(0.51)
    with pytest.raises(ReproduceError, match="cannot reach h3"):
        median_srtt_ms([{"rtt_us": "0", "error": "ConnectionRefusedError: refused"}])


def test_base_rtt_is_the_least_disturbed_round_after_the_warm_up() -> None:
    """Warm-up flows (3 ms) never count; of the rounds after them the lowest median wins, so a
    busy stretch (0.58 ms) cannot raise rto_min."""
    def batch(rtt_us: int) -> list[dict[str, str]]:
        return [{"rtt_us": str(rtt_us), "error": ""}] * BASE_RTT_FLOWS
    assert idle_srtt_ms(batch(3000) + batch(580) + batch(155) + batch(210)) == 0.155
    assert idle_srtt_ms(batch(3000) + batch(400)) == 0.4
    with pytest.raises(ReproduceError, match="cannot reach h3"):
        idle_srtt_ms(batch(3000))


def test_table3_shares_of_the_link_and_the_goal() -> None:
    rows = {(label, loss): _goodput(label, loss, mbps)
            for (label, loss), mbps in {("none", 0.0): 9.0, ("LG", 0.0): 9.0,
                                        ("LG_NB", 0.0): 8.9, ("none", 0.01): 5.0,
                                        ("LG", 0.01): 8.2, ("LG_NB", 0.01): 8.5}.items()}
    table = table3._table(rows, (0.0, 0.01), 10.0, "builtin, 10 Mb/s", 20.0)
    by_label = {row.label: row for row in table.rows}
    assert by_label["none"].ours == [0.9, 0.5]
    assert by_label["none"].paper == pytest.approx([0.949, 0.146])
    assert by_label["Wharf"].ours == [None, None] and by_label["Wharf"].paper[1] == 0.791
    (check,) = table.checks
    assert check.passed and "8.9% lower" in check.text  # 8.2 vs 9.0
    rows["LG", 0.01] = _goodput("LG", 0.01, 8.0)
    assert not table3._table(rows, (0.0, 0.01), 10.0, "", 20.0).checks[0].passed


def test_table3_says_what_lg_did_at_the_highest_loss() -> None:
    rows = {(label, loss): _goodput(label, loss, 9.0) for label in table3.MODES
            for loss in (0.0, 0.01)}
    lg = {"lg_cnt_loss_events": 116, "lg_cnt_retx": 348, "lg_cnt_timeouts": 1,
          "lg_cnt_pauses": 6, "lg_tx_buf_max_pkts": 40, "lg_rx_buf_max_pkts": 73}
    rows["LG", 0.01] = dataclasses.replace(rows["LG", 0.01], lg=lg)
    notes = table3._table(rows, (0.0, 0.01), 10.0, "", 20.0).notes
    assert ("LG at 0.01: effective loss 0.0e+00, 116 losses, 348 copies sent, 1 ackNo timeouts, "
            "6 pauses, Tx/Rx buffer max 40/73 packets") in notes
    assert lg_columns(lg)["pauses"] == 6 and lg_columns({})["timeouts"] == ""


def test_fct_tables_mark_unbounded_percentiles_and_compute_gains() -> None:
    fcts = {"loss": np.concatenate([np.full(4950, 2000.0), np.full(50, 60_000.0)]),
            "LG": np.full(5000, 3000.0)}
    table = fct_table("t", fcts, "scale", {"LG": [1.0, 2.0, 3.0, 4.0]})
    loss_row = table.rows[0]
    assert loss_row.label == "loss (n=5000)" and loss_row.ours[1] == "60"  # ms
    assert loss_row.ours[2] == "(60)"  # p99.99 of 5000 flows cannot be bounded above
    assert table.rows[1].paper == [1.0, 2.0, 3.0, 4.0]
    gain = gain_table("g", fcts, "loss", "scale", {"LG": [None, 51.0, None, None]})
    (row,) = gain.rows
    assert row.label == "loss / LG" and row.ours[1] == pytest.approx(20.0)
    assert row.ours[0] == pytest.approx(np.quantile(fcts["loss"], 0.99) / 3000.0)
    summary = summarize(fcts, "g")
    assert {r["quantile"] for r in summary} == {"p99", "p99.9", "p99.99", "p99.999"}
    assert all(r["group"] == "g" and r["flows"] == 5000 for r in summary)


@pytest.mark.parametrize(("n", "q", "bounded"), [(3687, 0.999, False), (3688, 0.999, True),
                                                 (36886, 0.9999, False), (36887, 0.9999, True)])
def test_a_percentile_is_resolved_from_the_flows_its_upper_bound_needs(n: int, q: float,
                                                                        bounded: bool) -> None:
    assert unresolved(quantile_ci(np.arange(float(n)), q)) is not bounded


def test_fig11_goal_needs_resolved_percentiles_and_the_ratio() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(1000.0, 2000.0, 4000)
    loss = np.where(rng.random(4000) < 0.01, 40_000.0, base)
    lg = np.where(rng.random(4000) < 0.01, 3000.0, base)
    check = gain_check({"loss": loss * 2, "LG": lg}, 0.01)
    assert check.passed and "26.7x lower" in check.text and "NOT resolved" not in check.text
    assert not gain_check({"loss": loss, "LG": lg}, 0.01).passed  # 13.3x: below 20x
    lg[:3] = 20_000.0  # three slow LG flows: the point ratio stays, its upper bound does not
    wide = gain_check({"loss": loss * 2, "LG": lg}, 0.01)
    assert not wide.passed and "26.7x lower" in wide.text and "(4.0x between" in wide.text
    short = gain_check({"loss": loss[:3000], "LG": lg[:3000]}, 0.01)
    assert not short.passed and "NOT resolved" in short.text


def test_fig10_check_needs_a_lower_resolved_p999_with_lg() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(20_000.0, 22_000.0, 4000)
    loss = np.where(rng.random(4000) < 0.01, 60_000.0, base)  # 1% of the flows wait an RTO

    def check(lg: np.ndarray, n: int = 4000) -> object:
        fcts = {"loss": loss[:n], "LG": lg[:n], "LG_NB": base[:n]}
        return fig10._gain_check("bbr", fcts, gain_table("t", fcts, "loss", "s", {}))

    good = check(base)
    assert good.passed and "NOT resolved" not in good.text and "LG_NB 2." in good.text
    assert "x between the 95% bounds" in good.text
    assert not check(loss).passed  # the same tail: 1x
    short = check(base, 1500)
    assert not short.passed and "NOT resolved" in short.text


def test_table2_tail_check_counts_the_waits_for_an_rto() -> None:
    rng = np.random.default_rng(2)
    base = {label: rng.uniform(8_000.0, 10_000.0, 8000) for label in
            ("ReTx", "ReTx+Order", "ReTx+Tail", "ReTx+Tail+Order")}
    waits = dict(base, **{label: np.where(rng.random(8000) < 0.001, 30_000.0, base[label])
                          for label in ("ReTx", "ReTx+Order")})
    check = table2._tail_check(waits, 22)
    assert check.passed
    assert re.search(r"flows reaching rto_min \(22 ms\) \d+ of 16000 without Tail, 0 of 16000 "
                     r"with it", check.text)
    assert not table2._tail_check(base, 22).passed  # no waits either way: nothing shown
    both = dict(waits, **{"ReTx+Tail": waits["ReTx"], "ReTx+Tail+Order": waits["ReTx+Order"]})
    assert not table2._tail_check(both, 22).passed  # as many waits with Tail as without
    assert not table2._tail_check(waits, 40).passed  # no flow reaches a longer rto_min


def test_fewer_by_chance_is_the_one_sided_fisher_exact_test() -> None:
    assert fewer_by_chance(0, 10, 5, 10) == pytest.approx(math.comb(15, 10) / math.comb(20, 10))
    assert fewer_by_chance(0, 7400, 5, 7400) == pytest.approx(0.5 ** 5, rel=1e-3)
    assert fewer_by_chance(3, 100, 3, 100) > 0.5
    assert fewer_by_chance(0, 100, 0, 100) == 1.0


def test_delivered_rate_from_counter_d_samples() -> None:
    # 10 Mb/s for 1 s, then nothing: 0.5 s means, at uneven poll times
    t = np.array([0.0, 0.1, 0.25, 0.4, 0.5, 0.6, 1.0, 1.25, 1.5, 1.6])
    octets = np.minimum(t, 1.0) * 10e6 / 8
    times, mbps = figures.delivered_mbps(pd.DataFrame({"t_s": t, "bytes": octets}))
    assert list(times) == list(t) and np.isnan(mbps[0])
    assert np.allclose(mbps[1:7], 10.0)
    assert np.allclose(mbps[7:], 0.0)  # the window starts at the first sample inside it


def test_fig9_schedule_follows_the_paper_or_compresses() -> None:
    assert _schedule(16.0) == (2.0, 7.0)
    assert _schedule(6.0) == (1.0, 3.0)


@pytest.fixture
def synthetic_run(tmp_path: Path) -> Path:
    """A run folder with every table the figures read."""
    run = tmp_path / "20260101-000000-synthetic"
    run.mkdir()
    (run / "metadata.json").write_text(json.dumps({
        "experiment": "synthetic", "paper": "Fig. 0", "quick": True, "target": "builtin",
        "status": "complete", "link_rate_mbps": 10.0, "paper_link_gbps": 100.0,
        "scale": "builtin, 10 Mb/s", "wall_s": 1.0}))
    rng = np.random.default_rng(1)
    flows = []
    for group in ("", "bbr"):
        for condition, extra in (("no loss", 0), ("loss", 50_000), ("LG", 0), ("LG_NB", 0),
                                 ("ReTx", 20_000), ("ReTx+Order", 20_000),
                                 ("ReTx+Tail", 0), ("ReTx+Tail+Order", 0)):
            values = rng.exponential(500, 400) + 2000
            values[:4] += extra
            flows += [{"group": group, "condition": condition, "fct_us": v, "error": ""}
                      for v in values]
    write_csv(run / "fct.csv", flows)
    write_csv(run / "goodput.csv", [
        {"label": label, "loss": loss, "steady_mbps": 9.0 - 4 * loss * 100 * (label == "none")}
        for label in ("none", "LG", "LG_NB") for loss in (0.0, 0.01)])
    write_csv(run / "timeline_tcp.csv", [
        {"run": "cubic", "congestion": "cubic", "t_s": t / 10, "mbps": 9.0, "retransmits": 0}
        for t in range(1, 60)])
    write_csv(run / "timeline_p4.csv", [
        {"run": "cubic", "t_s": t / 10, "switch": "tx", "name": name, "index": 2,
         "packets": "", "bytes": "", "value": t % 7}
        for t in range(60) for name in ("lg_qdepth_max", "lg_rx_buf_bytes")])
    write_csv(run / "events.csv", [{"run": "cubic", "t_s": 1.0, "event": "corruption on"},
                                   {"run": "cubic", "t_s": 3.0, "event": "LG on"}])
    write_csv(run / "link_speed.csv", [{"effective_link_speed": 0.93}])
    write_csv(run / "probes.csv", [
        {"rate_mbps": rate, "clean_mbps": 0.9 * rate, "lg_mbps": 0.85 * rate,
         "effective_loss": 0.0 if rate < 20 else 5e-3, "passed": rate < 20}
        for rate in (10, 15, 22.5, 18.4)])
    return run


@pytest.mark.parametrize("name", ["fig9", "fig10", "fig11", "table2", "table3", "lgrate"])
def test_figures_draw_and_save(name: str, synthetic_run: Path, monkeypatch, tmp_path) -> None:
    out = tmp_path / "figures"
    monkeypatch.setenv("LGKIT_FIGURES", str(out))
    drawn = getattr(figures, name)(synthetic_run)
    assert drawn and all(isinstance(label, str) for label, _ in drawn)
    for label, figure in drawn:
        path = figures.save(figure, synthetic_run, label)
        assert path.parent == out and path.read_bytes()[:4] == PNG
    assert "synthetic (Fig. 0), quick scale on builtin" in figures.describe(synthetic_run)


def test_find_run_prefers_the_environment_then_reference(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("LGKIT_RUN_TABLE3", str(tmp_path))
    assert figures.find_run("table3") == tmp_path
    monkeypatch.delenv("LGKIT_RUN_TABLE3")
    monkeypatch.setattr(figures, "RUNS", tmp_path / "none")
    monkeypatch.setattr(figures, "REFERENCE", tmp_path)
    (tmp_path / "table3").mkdir()
    assert figures.find_run("table3") == tmp_path / "table3"
    with pytest.raises(FileNotFoundError, match="lgkit reproduce fig9"):
        figures.find_run("fig9")


def test_find_run_skips_a_corrupt_metadata_naming_it(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("LGKIT_RUN_TABLE3", raising=False)
    monkeypatch.setattr(figures, "RUNS", tmp_path)
    good, bad = tmp_path / "20260101-000000-table3-quick", tmp_path / "20260102-000000-table3-x"
    for folder, text in ((good, '{"status": "complete"}'), (bad, '{"status": "comp')):
        folder.mkdir()
        (folder / "metadata.json").write_text(text)
    os.utime(good, (0, 0))  # the corrupt one is the newest
    with pytest.warns(UserWarning, match=f"skipping {bad / 'metadata.json'}: unreadable"):
        assert figures.find_run("table3") == good


def test_row_counter_counts_appended_rows_only_once(tmp_path: Path) -> None:
    path = tmp_path / "fct-LG.csv"
    counter = RowCounter(path)
    assert counter.rows() == 0  # no file yet
    path.write_text("flow,fct_us\n")
    assert counter.rows() == 0  # the header is not a row
    with path.open("a") as handle:
        handle.write("0,900\n1,950\n2,9")  # the third row is still being written
        handle.flush()
        assert counter.rows() == 2
        handle.write("80\n")
    assert counter.rows() == 3 and counter.offset == path.stat().st_size
