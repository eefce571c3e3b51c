"""The chain generator -> s1 -> lossy link -> s2 -> h2 (LinkGuardian on the link or off) on the
Python simulator or on the native event loop: the same seed gives the same arrivals on both."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from lgkit.control.linkguardian import LGParams
from lgkit.core.frames import ID_OFFSET, FrameStream
from lgkit.sim.native_loop import NativeLoop
from lgkit.sim.scenario import HOST_PORT, HOSTS, LGNet, ScenarioConfig
from lgkit.sim.stress import Sink
from lgkit.sim.timing import TimingModel
from lgkit.sw.switch.loss import FrameLoss, GilbertElliott, IidLoss

DRAIN_NS = 1_000_000  # after the last frame: everything in flight arrives


@dataclass(frozen=True)
class ChainSpec:
    """One run of the chain."""

    frames: int = 1_000
    rate_gbps: float = 100.0
    loss: float = 1e-2
    burst: float = 1.0
    """Mean loss burst in frames (1: i.i.d.; more: Gilbert-Elliott)."""
    frame_bytes: int = 1514
    seed: int = 1
    log: int = 0
    """Arrivals (time, id) to record, the first ones."""
    protected: bool = False
    """LinkGuardian on the link (its default parameters for the rate and loss)."""
    calibrated: bool = False
    """The stress test's switch and link timing (timing.py) instead of the scenario's."""
    load: float = 1.0
    """The generator's rate as a share of the link's (LinkGuardian's own frames need room)."""

    def __post_init__(self) -> None:
        if self.frames < 1 or self.rate_gbps <= 0 or not 0.0 <= self.loss < 1.0:
            raise ValueError("chain: frames >= 1, rate > 0 and loss in [0, 1)")
        if self.burst < 1.0 or not ID_OFFSET + 4 <= self.frame_bytes <= 9000:
            raise ValueError(f"chain: burst >= 1, frames of {ID_OFFSET + 4}..9000 bytes")
        if not 0.0 < self.load <= 1.0:
            raise ValueError("chain: load in (0, 1]")

    def loss_model(self) -> FrameLoss | None:
        if self.loss == 0:
            return None
        return GilbertElliott.bursty(self.loss, self.burst) if self.burst > 1 \
            else IidLoss(self.loss)

    @property
    def source_bps(self) -> float:
        return self.load * self.rate_gbps * 1e9

    @property
    def end_ns(self) -> int:
        wire_ns = (self.frame_bytes + 24) * 8e9 / self.source_bps
        return int(self.frames * wire_ns) + DRAIN_NS


@dataclass
class ChainRun:
    """What a run delivered, and what it cost."""

    arrivals: list[tuple[int, int]]
    delivered: bytes
    sent: int
    lost: int
    duplicates: int
    out_of_order: int
    events: int
    wall_s: float
    cpu_s: float
    frames: int
    """Frames the generator sent."""

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.delivered)
        h.update(repr((self.arrivals, self.sent, self.lost, self.duplicates,
                       self.out_of_order)).encode())
        return h.hexdigest()[:16]


def _net(spec: ChainSpec, engine: str) -> LGNet:
    params = LGParams.for_link(round(spec.rate_gbps), actual_loss=spec.loss or 1e-3)
    config = ScenarioConfig(params=params, lg_on=spec.protected,
                            rate_bps=spec.rate_gbps * 1e9, seed=spec.seed, wire_log=False,
                            keep_frames=False, engine=engine)
    if spec.calibrated:
        config = TimingModel.for_link(spec.rate_gbps).scenario(config)
    net = LGNet(config)
    net.link.forward.loss = spec.loss_model()
    return net


def _template(spec: ChainSpec) -> bytes:
    return FrameStream(HOSTS["h1"], HOSTS["h2"], ((spec.frame_bytes, 1.0),)).templates[
        spec.frame_bytes]


def run_python(spec: ChainSpec, engine: str = "python") -> ChainRun:
    """The chain on the Python simulator (switches on `engine`)."""
    net = _net(spec, engine)
    template = _template(spec)
    sink = Sink(bytearray(spec.frames))
    arrivals: list[tuple[int, int]] = []

    def log(_host: object, t: int, data: bytes) -> None:
        if len(arrivals) < spec.log:
            arrivals.append((t, int.from_bytes(data[ID_OFFSET:ID_OFFSET + 4], "big")))

    net.hosts["h2"].handlers.extend((sink.receive, log))
    frames = (template[:ID_OFFSET] + k.to_bytes(4, "big") + template[ID_OFFSET + 4:]
              for k in range(spec.frames))
    net.net.generator(net.switches["s1"], HOST_PORT, spec.source_bps, frames)
    wall, cpu = time.perf_counter(), time.process_time()
    net.run(spec.end_ns)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    forward = net.link.forward
    return ChainRun(arrivals, bytes(sink.delivered), forward.sent, forward.lost,
                    sink.duplicates, sink.out_of_order, net.net.events_run, wall, cpu,
                    spec.frames)


def run_native(spec: ChainSpec) -> ChainRun:
    """The chain on the native event loop (switches on the native engine)."""
    net = _net(spec, "native")
    loop = NativeLoop(net, log=spec.log, ids=spec.frames)
    loop.source("s1", HOST_PORT, spec.source_bps, [_template(spec)], spec.frames)
    wall, cpu = time.perf_counter(), time.process_time()
    loop.run(spec.end_ns)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sink, forward = loop.sink("h2"), net.link.forward
    return ChainRun(sink.arrivals, sink.delivered, forward.sent, forward.lost, sink.duplicates,
                    sink.out_of_order, loop.events, wall, cpu, loop.emitted)
