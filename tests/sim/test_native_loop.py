"""The native event loop against the Python simulator: the same seed gives the same arrivals,
losses and events; what it does not model stops it with one clear error."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from chain_support import ChainSpec, run_native, run_python

from lgkit.cli import main
from lgkit.core.frames import FrameStream
from lgkit.sim import sweep
from lgkit.sim.native_loop import NativeLoop, NativeLoopError
from lgkit.sim.native_stress import run_stress_native
from lgkit.sim.scenario import HOST_PORT, HOSTS, LGNet, ScenarioConfig
from lgkit.sim.stress import StressSpec, report, run_stress
from lgkit.sim.sweep import run_point
from lgkit.sw.exec.pipeline import ENGINE_ENV

CASES = [
    ChainSpec(frames=400, loss=2e-2, seed=1, log=400),
    ChainSpec(frames=400, loss=5e-2, burst=4.0, seed=2, log=400),
    ChainSpec(frames=300, rate_gbps=25, loss=0.1, frame_bytes=64, seed=3, log=300),
    ChainSpec(frames=200, loss=0.0, frame_bytes=700, seed=4, log=200),
]


@pytest.mark.parametrize("spec", CASES, ids=["iid", "bursty", "64B-25G", "lossless"])
def test_native_loop_is_identical_to_the_python_simulator(spec: ChainSpec) -> None:
    python, native = run_python(spec), run_native(spec)
    assert len(native.arrivals) == native.delivered.count(1) > 0
    assert native.arrivals == python.arrivals  # every arrival time and id
    assert native.delivered == python.delivered
    assert (native.sent, native.lost) == (python.sent, python.lost) == (
        spec.frames, spec.frames - len(native.arrivals))
    assert (native.duplicates, native.out_of_order) == (python.duplicates,
                                                        python.out_of_order) == (0, 0)
    assert native.events == python.events
    assert native.digest == python.digest
    if spec.loss:
        assert native.lost > 0


def test_the_link_generator_is_handed_back_where_python_would_be() -> None:
    spec = ChainSpec(frames=100, loss=0.1, seed=5)
    nets = [LGNet(ScenarioConfig(lg_on=False, seed=5, wire_log=False, keep_frames=False,
                                 loss=0.1, engine=engine)) for engine in ("python", "native")]
    frame = FrameStream(HOSTS["h1"], HOSTS["h2"]).frame(1514)
    nets[0].net.generator(nets[0].switches["s1"], HOST_PORT, 100e9, [frame] * spec.frames)
    nets[0].run(spec.end_ns)
    loop = NativeLoop(nets[1])
    loop.source("s1", HOST_PORT, 100e9, [frame], spec.frames)
    loop.run(spec.end_ns)
    assert loop.now_ns == nets[0].net.now_ns == spec.end_ns
    a, b = (net.link.forward for net in nets)
    assert (a.sent, a.lost) == (b.sent, b.lost)
    assert a.rng.random() == b.rng.random()
    assert loop.switch_stats("s2")["egress"] == b.sent - b.lost


LG_CASES = [
    ChainSpec(frames=300, loss=2e-2, seed=1, log=300, protected=True),
    ChainSpec(frames=300, loss=5e-2, burst=3.0, seed=2, log=300, protected=True,
              rate_gbps=25),
    ChainSpec(frames=400, loss=2e-2, seed=3, log=400, protected=True, calibrated=True),
]


@pytest.mark.parametrize("spec", LG_CASES, ids=["lg", "lg-bursty-25G", "lg-calibrated"])
def test_linkguardian_on_the_native_loop_is_identical_to_the_python_simulator(
        spec: ChainSpec) -> None:
    # Clones (I2E, E2E), multicast copies, recirculation with the field list, truncation,
    # clone lanes, latencies, byte caps and cells: every event at the same time.
    python, native = run_python(spec), run_native(spec)
    assert native.events == python.events > 10 * spec.frames
    assert native.arrivals == python.arrivals
    assert native.delivered == python.delivered
    assert (native.sent, native.lost) == (python.sent, python.lost)
    assert native.lost > 0
    assert native.sent > len(native.arrivals)  # retransmitted copies and LG frames went too
    if spec.burst == 1 and not spec.calibrated:  # LG recovered every loss, in order
        assert len(native.arrivals) == spec.frames
        assert [pid for _, pid in native.arrivals] == list(range(spec.frames))


@pytest.mark.parametrize(("config", "message"), [
    (ScenarioConfig(lg_on=False, keep_frames=False, wire_log=False, engine="python"),
     "not on the native engine"),
    (ScenarioConfig(lg_on=False, keep_frames=False, engine="native"), "wire logs"),
    (ScenarioConfig(lg_on=False, keep_frames=True, wire_log=False, engine="native"),
     "kept frames"),
    (ScenarioConfig(lg_on=False, keep_frames=False, wire_log=False, engine="native",
                    loop_pps=1e6), "queue rates"),
])
def test_what_the_loop_does_not_model_is_refused(config: ScenarioConfig, message: str) -> None:
    with pytest.raises(NativeLoopError, match=message):
        NativeLoop(LGNet(config))


def test_wrapped_deliveries_and_bad_sources_are_refused() -> None:
    config = ScenarioConfig(lg_on=False, keep_frames=False, wire_log=False, engine="native")
    net = LGNet(config)
    backward = net.link.backward
    deliver = backward.deliver
    backward.deliver = lambda data: deliver(data)
    with pytest.raises(NativeLoopError, match="wrapped in Python"):
        NativeLoop(net)
    loop = NativeLoop(LGNet(config))
    with pytest.raises(NativeLoopError, match="a source needs"):
        loop.source("s1", HOST_PORT, 1e9, [b"short"], 10)
    with pytest.raises(ValueError, match="chain: frames"):
        ChainSpec(frames=0)


STRESS_CASES = [
    StressSpec(rate_gbps=100, loss=1e-2, frames=1_500, warmup_frames=400, seed=3),
    StressSpec(rate_gbps=25, loss=3e-2, burst=3.0, frames=1_000, warmup_frames=300, seed=5),
    StressSpec(rate_gbps=100, loss=1e-2, mode="lg_nb", copies=1, frames=1_000,
               warmup_frames=300, seed=7),
    StressSpec(rate_gbps=25, loss=1e-2, mode="off", frames=800, warmup_frames=200, seed=2),
    StressSpec(rate_gbps=100, loss=1e-3, frames=6_000, warmup_frames=300, seed=3, max_gap=500),
    StressSpec(rate_gbps=25, loss=1e-2, frames=1_000, warmup_frames=200, seed=8,
               mix=((64, 1.0), (700, 2.0), (1514, 3.0)), period_ps=600_000),
]


@pytest.mark.parametrize("spec", STRESS_CASES,
                         ids=["lg-100G", "lg-bursty-25G", "lg_nb", "off", "cut-gaps",
                              "mix-period"])
def test_the_stress_test_on_the_native_loop_gives_the_python_result(spec: StressSpec) -> None:
    python, native = run_stress(spec), run_stress_native(spec)
    assert native.digest == python.digest  # deliveries, wire counts, delays, buffers, counters
    assert native.events == python.events
    for name in ("lost_onward", "protected", "delivered_in_window", "steady_ns_per_frame",
                 "resume_flights_ns", "tx_max_bytes", "rx_max_bytes", "tail_drops",
                 "unrecovered_holes", "recirculations", "steady_recirc_per_frame", "skipped",
                 "covered", "steady_tx_bytes", "steady_weight"):
        assert getattr(native, name) == getattr(python, name), name
    assert sum(native.lost.values()) > 0
    assert report(native).split("simulated")[0] == report(python).split("simulated")[0]


def test_lgkit_stress_native_prints_the_python_report(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["stress", "--rate-gbps", "25", "--loss", "1e-2", "--frames", "600", "--warmup",
            "200", "--seed", "4"]
    assert main(args) == 0
    python = capsys.readouterr().out
    assert main([*args, "--native"]) == 0
    native = capsys.readouterr().out
    assert native.split("simulated")[0] == python.split("simulated")[0]
    assert "effective loss" in native
    for extra in (["--pktgen"], ["--mix", "64:1,1514:3"]):
        assert main([*args, *extra]) == 0
        python = capsys.readouterr().out
        assert main([*args, *extra, "--native"]) == 0
        assert capsys.readouterr().out.split("simulated")[0] == python.split("simulated")[0]


def test_lgkit_stress_native_without_a_c_compiler_says_so_in_one_line(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("LGKIT_NATIVE_CACHE", str(tmp_path))
    assert main(["stress", "--frames", "100", "--warmup", "50", "--native"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "lgkit: error: a switch is not on the native engine (LGKIT_ENGINE=native)"
    assert not list(tmp_path.iterdir())


def test_a_sweep_point_runs_natively_when_the_engine_is_native_the_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    spec = StressSpec(rate_gbps=25, loss=1e-2, frames=600, warmup_frames=200, seed=6)
    python = run_point(replace(spec, engine="python"))
    mixed = replace(spec, engine="native", mix=((200, 1.0), (1514, 1.0)))
    assert run_point(mixed)["digest"] == run_point(replace(mixed, engine="python"))["digest"]

    def python_simulator(_spec: StressSpec) -> None:
        raise AssertionError("the point ran on the Python simulator")

    assert sweep.point_key(replace(spec, engine="native")) == sweep.point_key(spec)
    monkeypatch.setattr(sweep, "run_stress", python_simulator)
    assert run_point(replace(spec, engine="native"))["digest"] == python["digest"]
    assert run_point(spec)["digest"] == python["digest"]  # engine None: the default
