"""The line-rate stress test in virtual time: calibrated retransmission delay, the p^(N+1) law,
LG_NB versus LG link speed, bursty losses, cut-out loss-free runs and determinism."""

from __future__ import annotations

import pytest

from lgkit.cli import main
from lgkit.sim.stress import StressSpec, poisson_interval, run_stress
from lgkit.sim.timing import TimingModel

PAPER_MAX_RETX_DELAY_US = {25: 6.0, 100: 5.5}  # App. B.1


@pytest.mark.slow
@pytest.mark.parametrize("gbps", [25, 100])
def test_calibrated_retransmission_delay_is_within_20_percent_of_the_paper(gbps: int) -> None:
    # N = 2 copies (the paper's 1e-3 setting, the worst case of its maxima), many loss events.
    result = run_stress(StressSpec(rate_gbps=gbps, loss=5e-3, copies=2, frames=3_000,
                                   warmup_frames=500, seed=3))
    assert len(result.retx_delays_ns) >= 5
    worst_us = max(result.retx_delays_ns) / 1000
    assert worst_us == pytest.approx(PAPER_MAX_RETX_DELAY_US[gbps], rel=0.2)
    assert worst_us * 1000 < result.spec.link_params().ack_timeout_us * 1000  # no timeouts
    assert result.counters["timeouts"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(("p", "frames"), [(5e-2, 8_000), (2e-2, 25_000)])
def test_effective_loss_follows_p_to_the_n_plus_1(p: float, frames: int) -> None:
    # LG_NB with N = 1: a packet is lost when its original and its one copy both are.
    result = run_stress(StressSpec(rate_gbps=100, loss=p, copies=1, mode="lg_nb",
                                   frames=frames, warmup_frames=500, seed=7))
    expected = result.protected * p ** 2
    low, high = poisson_interval(result.lost_onward, 0.99)
    assert low <= expected <= high, (result.lost_onward, expected)
    assert result.lost_onward > 0
    assert result.original_loss == pytest.approx(p, rel=0.25)
    assert result.unrecovered_holes == result.lost_onward  # the wire agrees with the hosts


def test_lg_nb_keeps_more_link_speed_than_lg_at_100g_1e3() -> None:
    speeds = {mode: run_stress(StressSpec(rate_gbps=100, loss=1e-3, mode=mode, frames=5_000,
                                          warmup_frames=1_000, seed=1))
              for mode in ("lg", "lg_nb")}
    lg, nb = speeds["lg"], speeds["lg_nb"]
    assert nb.effective_gbps >= lg.effective_gbps
    assert lg.counters["pauses"] > 0 and nb.counters["pauses"] == 0
    assert nb.rx_max_bytes == 0 < lg.rx_max_bytes
    assert lg.out_of_order == 0 and lg.duplicates == nb.duplicates == 0
    # LG's header alone costs 5 of 1543 bytes; LG_NB loses little more than that.
    assert 99.0 < nb.effective_gbps < 100 * 1538 / 1543


def test_without_lg_the_link_loss_reaches_the_host() -> None:
    result = run_stress(StressSpec(rate_gbps=100, loss=1e-2, mode="off", frames=4_000,
                                   warmup_frames=200, seed=2))
    assert result.lost_onward == result.lost["plain"] > 0
    assert result.effective_gbps == pytest.approx(100 * (1 - result.actual_loss), abs=0.2)


@pytest.mark.slow
def test_bursty_losses_come_in_runs() -> None:
    result = run_stress(StressSpec(rate_gbps=25, loss=2e-2, burst=3.0, mode="lg_nb",
                                   frames=4_000, warmup_frames=200, seed=4))
    runs = result.bursts
    mean_run = sum(k * v for k, v in runs.items()) / sum(runs.values())
    assert mean_run > 1.8 and max(runs) >= 4
    assert result.lost_onward == 0 or result.lost_onward < result.lost["data"]


def test_cut_loss_free_runs_count_as_steady_state_frames() -> None:
    spec = StressSpec(rate_gbps=100, loss=2e-4, mode="lg_nb", frames=40_000,
                      warmup_frames=500, seed=5, max_gap=600)
    result = run_stress(spec)
    # the run ends at the first loss past 40,000 frames: at most one cut run more
    assert result.skipped > 0 and 40_000 <= result.covered <= 40_000 + 1.1 * 3 / 2e-4
    assert result.generated < 0.5 * 40_000
    assert result.steady_ns_per_frame == pytest.approx(1543 * 8 / 100, rel=1e-3)
    assert result.effective_gbps == pytest.approx(100 * 1538 / 1543, abs=0.2)


@pytest.mark.slow
def test_same_seed_same_result_other_seed_differs() -> None:
    def digest(seed: int) -> str:
        return run_stress(StressSpec(rate_gbps=25, loss=1e-2, frames=1_500, warmup_frames=200,
                                     seed=seed, timing=TimingModel())).digest

    assert digest(5) == digest(5) != digest(6)


@pytest.mark.slow
def test_stress_command_prints_the_measures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stress", "--rate-gbps", "25", "--loss", "1e-2", "--frames", "1500",
                 "--warmup", "200", "--mode", "lg_nb"]) == 0
    out = capsys.readouterr().out
    for text in ("actual loss", "effective loss", "effective link speed", "TX buffer",
                 "retransmission delay", "recirculation"):
        assert text in out
    for bad in (["--loss", "2"], ["--clone-latency-ns", "-5"]):  # refused while parsing
        with pytest.raises(SystemExit) as exit_info:
            main(["stress", *bad])
        assert exit_info.value.code == 2
    assert main(["stress", "--mix", "64:1,huge"]) == 1
    assert main(["stress", "--rate-gbps", "100", "--loss", "1e-2", "--frames", "800", "--warmup",
                 "100", "--mode", "lg_nb", "--mix", "64:1,1514:1"]) == 0
