"""Flow-size CDFs: the shipped files, inverse-CDF sampling (statistical tests), bad files."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lgkit.workloads.cdf import CdfError, FlowSizeCdf, available, load_cdf

SAMPLES = 20_000
KS_99 = 1.63
"Kolmogorov-Smirnov critical value at 99%: D * sqrt(n) exceeds it with probability 1%."


def test_every_shipped_cdf_loads_and_names_its_source() -> None:
    names = available()
    assert {"websearch", "datamining", "google_rpc", "google_search_rpc",
            "fb_hadoop"} <= set(names)
    for name in names:
        dist = load_cdf(name)
        assert dist.source.startswith("https://github.com/"), name
        assert dist.probs[-1] == pytest.approx(1.0)


def test_homa_files_keep_their_published_means() -> None:
    # Homa's files state the mean size on their first line; the step reading reproduces it.
    assert load_cdf("google_rpc").mean() == pytest.approx(1001.269, abs=0.01)
    assert load_cdf("google_search_rpc").mean() == pytest.approx(440.7907, abs=0.01)


@pytest.mark.parametrize("name", ["websearch", "datamining", "fb_hadoop"])
def test_linear_sampling_follows_the_cdf(name: str) -> None:
    dist = load_cdf(name)
    rng = random.Random(11)
    sizes = np.sort([dist.quantile(rng.random()) for _ in range(SAMPLES)])
    # KS statistic against the continuous (linear) CDF, at every sample
    empirical_hi = np.arange(1, SAMPLES + 1) / SAMPLES
    model = np.array([dist.cdf(s) for s in sizes])
    d = max(np.max(np.abs(empirical_hi - model)),
            np.max(np.abs(empirical_hi - 1 / SAMPLES - model)))
    assert d * SAMPLES ** 0.5 < KS_99 + 0.05  # + rounding of sizes to whole bytes


@pytest.mark.parametrize("name", ["google_rpc", "google_search_rpc"])
def test_step_sampling_hits_each_size_with_its_probability(name: str) -> None:
    dist = load_cdf(name)
    rng = random.Random(12)
    sizes = np.array([dist.sample(rng) for _ in range(SAMPLES)])
    assert set(np.unique(sizes)) <= set(dist.sizes)
    empirical = np.array([np.mean(sizes <= s) for s in dist.sizes])
    assert np.max(np.abs(empirical - np.array(dist.probs))) * SAMPLES ** 0.5 < KS_99


def test_quantile_and_cdf_are_inverse_on_a_small_table() -> None:
    dist = FlowSizeCdf("t", (0, 100, 1000), (0.0, 0.5, 1.0))
    assert dist.quantile(0.25) == 50 and dist.quantile(0.75) == 550
    assert dist.cdf(50) == pytest.approx(0.25) and dist.cdf(550) == pytest.approx(0.75)
    assert dist.mean() == pytest.approx(0.5 * 50 + 0.5 * 550)
    step = FlowSizeCdf("s", (1, 10, 100), (0.2, 0.7, 1.0), interpolation="step")
    assert [step.quantile(u) for u in (0.1, 0.2, 0.21, 0.7, 0.71, 1.0)] == [1, 1, 10, 10, 100, 100]
    assert step.mean() == pytest.approx(0.5 * 10 + 0.3 * 100)


def test_bad_files_are_reported_with_their_line(tmp_path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("# cdf: fraction\n0 0\n100 oops\n")
    with pytest.raises(CdfError, match=r"bad.txt:3: expected 'size probability'"):
        load_cdf(str(bad))
    bad.write_text("# cdf: fraction\n0 0\n100 0.7\n50 1\n")
    with pytest.raises(CdfError, match="sizes must not decrease"):
        load_cdf(str(bad))
    bad.write_text("# cdf: fraction\n0 0\n100 0.7\n")
    with pytest.raises(CdfError, match="up to 1"):
        load_cdf(str(bad))
    with pytest.raises(CdfError, match="no flow-size CDF 'nope'"):
        load_cdf("nope")
