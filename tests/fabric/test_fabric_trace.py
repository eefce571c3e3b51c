"""Corruption traces: statistics (MTTF, loss buckets, repairs), determinism, save/load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lgkit.fabric.trace import CORROPT_BUCKETS, Trace, TraceParams, generate_trace

CHI2_3DF_P001 = 16.27
"""Chi-square critical value, 3 degrees of freedom, p = 0.001."""


@pytest.fixture(scope="module")
def full_size_trace() -> Trace:
    return generate_trace(100_224, TraceParams(seed=3))


def test_onsets_are_sorted_inside_the_horizon(full_size_trace: Trace) -> None:
    trace = full_size_trace
    assert np.all(np.diff(trace.time_h) >= 0)
    assert trace.time_h.min() >= 0 and trace.time_h.max() < trace.params.horizon_hours
    assert trace.link.min() >= 0 and trace.link.max() < trace.n_links


def test_onset_count_matches_the_mttf(full_size_trace: Trace) -> None:
    trace = full_size_trace
    exposure = trace.n_links * trace.params.horizon_hours
    expected = exposure / trace.params.mttf_hours
    assert abs(len(trace) - expected) < 5 * np.sqrt(expected)
    estimated_mttf = exposure / len(trace)
    assert estimated_mttf == pytest.approx(10_000, rel=0.02)
    # Time to the first onset is exponential: P(onset before the horizon) = 1 - exp(-H / MTTF).
    share_hit = np.unique(trace.link).size / trace.n_links
    p_hit = 1 - np.exp(-trace.params.horizon_hours / trace.params.mttf_hours)
    assert abs(share_hit - p_hit) < 5 * np.sqrt(p_hit * (1 - p_hit) / trace.n_links)


def test_onsets_per_link_are_poisson() -> None:
    params = TraceParams(seed=5, mttf_hours=1_000.0)
    trace = generate_trace(20_000, params)
    counts = np.bincount(trace.link, minlength=trace.n_links)
    rate = params.horizon_hours / params.mttf_hours
    assert abs(counts.mean() - rate) < 5 * np.sqrt(rate / trace.n_links)
    variance_sd = np.sqrt((2 * rate**2 + rate) / trace.n_links)
    assert abs(counts.var() - rate) < 5 * variance_sd


def test_loss_rates_follow_corropt_buckets(full_size_trace: Trace) -> None:
    loss = full_size_trace.loss
    observed = np.array([((loss >= b.low) & (loss <= b.high)).sum() for b in CORROPT_BUCKETS])
    assert observed.sum() == len(loss)
    expected = np.array([b.share for b in CORROPT_BUCKETS]) * len(loss)
    assert (((observed - expected) ** 2) / expected).sum() < CHI2_3DF_P001
    for bucket in CORROPT_BUCKETS:
        inside = loss[(loss >= bucket.low) & (loss <= bucket.high)]
        position = (inside - bucket.low) / (bucket.high - bucket.low)
        assert abs(position.mean() - 0.5) < 5 * np.sqrt(1 / 12 / inside.size)


def test_repair_times(full_size_trace: Trace) -> None:
    repair = full_size_trace.repair_h
    assert set(np.unique(repair).tolist()) == {48.0, 96.0}
    short = (repair == 48.0).mean()
    assert abs(short - 0.8) < 5 * np.sqrt(0.8 * 0.2 / repair.size)


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    params = TraceParams(seed=9, days=60)
    first, again = generate_trace(5_000, params), generate_trace(5_000, params)
    other = generate_trace(5_000, TraceParams(seed=10, days=60))
    for name in ("time_h", "link", "loss", "repair_h"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(first.time_h[:100], other.time_h[:100])


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    trace = generate_trace(2_000, TraceParams(seed=4, days=30, warmup_days=2))
    trace.save(tmp_path / "trace.npz")
    loaded = Trace.load(tmp_path / "trace.npz")
    assert loaded.params == trace.params and loaded.n_links == trace.n_links
    for name in ("time_h", "link", "loss", "repair_h"):
        assert np.array_equal(getattr(loaded, name), getattr(trace, name))


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        TraceParams(days=0)
    with pytest.raises(ValueError):
        TraceParams(mttf_hours=-1)
