"""The line-rate stress test (paper §4.1, §4.5, App. B) in virtual time: a packet generator on
the sender switch sends MTU frames back to back into a protected 25G or 100G link that loses
frames, and meters measure loss, link speed, buffers, retransmission delay and recirculation.
"""

from __future__ import annotations

import hashlib
import math
import struct
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lgkit.control.linkguardian import LGParams
from lgkit.core.frames import ID_OFFSET, FrameStream, parse_lg
from lgkit.sim.scenario import HOST_PORT, HOSTS, LINK_PORT, LGNet, ScenarioConfig
from lgkit.sim.soak import _unwrap
from lgkit.sim.timing import TimingModel
from lgkit.sw.switch.loss import FrameLoss, GilbertElliott, IidLoss, TruncatedGaps
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.vnet import ETHERNET_FRAMING_BYTES, LineRateSource

MTU_FRAME_BYTES = 1514
LG_DATA_OVERHEAD = 5  # data header + inner EtherType on every protected frame
MODES = ("lg", "lg_nb", "off")
LG_ID_OFFSET = ID_OFFSET + LG_DATA_OVERHEAD
PRIO_LOOP = 0  # the queue of every looping packet (the program's PRIO_COURIER)


@dataclass(frozen=True)
class StressSpec:
    """One point of the stress test."""

    rate_gbps: float = 100.0
    loss: float = 1e-3
    """Stationary loss rate of the protected direction (all frames)."""
    burst: float = 1.0
    """Mean burst length in frames: 1 = i.i.d. losses, > 1 = Gilbert-Elliott bursts."""
    mode: str = "lg"
    target: float = 1e-8
    """Target effective loss: N copies from Eq. 2 with the actual loss rate."""
    copies: int | None = None
    """N retransmitted copies (None = Eq. 2)."""
    frames: int = 100_000
    """Frames the generator sends after the warm-up (with `max_gap`: frames covered)."""
    warmup_frames: int = 2_000
    """Loss-free frames first: the pipeline reaches its steady state, which is measured."""
    frame_bytes: int = MTU_FRAME_BYTES
    mix: tuple[tuple[int, float], ...] = ()
    """A frame-size mix ((size, weight), ...) instead of `frame_bytes` only."""
    period_ps: int | None = None
    """Fixed generator period (None: back to back at the link rate; 124_000 = Tofino pktgen
    at 100G)."""
    max_gap: int | None = None
    """Cut loss-free runs longer than this many frames (see TruncatedGaps); None = never. The
    cut frames count as measured, so a run may end up to one cut run past `frames`."""
    sample_ns: int = 1_000
    """Buffer occupancy sampling period."""
    seed: int = 1
    timing: TimingModel | None = None
    """None = TimingModel.for_link(rate_gbps)."""
    ack_timeout_us: int | None = None
    """ackNoTimeout (None: the paper's value for the link speed)."""
    engine: str | None = None
    """The switches' engine (None: LGKIT_ENGINE, else native: Pipeline.load); the native event
    loop needs native."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if not 0.0 <= self.loss < 1.0:
            raise ValueError("loss must be in [0, 1)")
        if self.burst < 1.0:
            raise ValueError("burst must be >= 1")
        if self.frames < 1 or self.warmup_frames < 0:
            raise ValueError("frames must be >= 1 and warmup_frames >= 0")
        if self.rate_gbps <= 0 or not 0.0 < self.target < 1.0:
            raise ValueError("rate must be > 0 and target in (0, 1)")
        if self.max_gap is not None and self.max_gap < 100:
            raise ValueError("max_gap must be >= 100 frames")
        if any(not 64 <= size <= 9000 or weight <= 0 for size, weight in self.sizes):
            raise ValueError("frame sizes must be in 64..9000 bytes, weights > 0")

    @property
    def sizes(self) -> tuple[tuple[int, float], ...]:
        return self.mix or ((self.frame_bytes, 1.0),)

    def link_params(self) -> LGParams:
        params = LGParams.for_link(
            round(self.rate_gbps), mode=self.mode if self.mode != "off" else "lg",
            target_loss=self.target, actual_loss=self.loss if self.loss > 0 else self.target,
            copies=self.copies)
        if self.ack_timeout_us is not None:
            params = replace(params, ack_timeout_us=self.ack_timeout_us)
        return params

    def loss_model(self) -> FrameLoss | None:
        if self.loss == 0:
            return None
        if self.burst > 1.0:
            return GilbertElliott.bursty(self.loss, self.burst)
        return IidLoss(self.loss)


@dataclass
class WireMeter:
    """Watches every frame the sender puts on the protected link (a link tap): what it was,
    whether the link lost it, and the receiver's loss detection replayed on the arrivals."""

    originals: bytearray
    """1 for each packet id whose original went on the link."""
    count_from_ns: int = 0
    sent: Counter[str] = field(default_factory=Counter)
    lost: Counter[str] = field(default_factory=Counter)
    bursts: Counter[int] = field(default_factory=Counter)
    """Runs of consecutive frames the link lost, by length."""
    retx_delays_ns: list[int] = field(default_factory=list)
    _run: int = 0
    _expected: int = 0
    _detected: dict[int, int | None] = field(default_factory=dict)

    def tap(self, data: bytes, lost: bool, arrival_ns: int) -> None:
        kind, seq, pid = classify(data)
        counting = arrival_ns >= self.count_from_ns
        if counting:
            self.sent[kind] += 1
            if lost:
                self.lost[kind] += 1
                self._run += 1
            elif self._run:
                self.bursts[self._run] += 1
                self._run = 0
        if pid is not None and kind in ("data", "plain") and pid < len(self.originals):
            self.originals[pid] = 1
        if lost or seq is None:
            return
        self._arrived(kind, seq, arrival_ns)

    def _arrived(self, kind: str, seq: int, t: int) -> None:
        """The receiver's detection (docs/protocol.md §3.2) on an arrival at time t. As the
        authors' receiver timestamps only a detection's first lost seq_no
        (`record_lost_timestamp`), only the first hole of each detection gets a delay."""
        absolute = _unwrap(seq, self._expected)
        if kind == "retx":
            t0 = self._detected.pop(absolute, None)
            if t0 is not None:
                self.retx_delays_ns.append(t - t0)
            return
        if absolute >= self._expected:
            last_lost = absolute if kind == "dummy" else absolute - 1
            for hole in range(self._expected, last_lost + 1):
                self._detected[hole] = t if hole == self._expected else None
            self._expected = absolute + 1

    @property
    def unrecovered(self) -> int:
        """Holes detected of which no retransmitted copy arrived."""
        return len(self._detected)


@dataclass
class ResumeMeter:
    """t_flight_resume (App. B.1): a tap on each direction of the protected link. A resume
    frame's egress pass at the receiver is its wire start less the egress latency; the flight
    ends at the next original data frame's arrival at the receiver."""

    egress_ns: int
    link_delay_ns: int
    wire_ps: Callable[[int], int]
    flights_ns: list[int] = field(default_factory=list)
    _since: int | None = None

    def backward(self, data: bytes, lost: bool, arrival_ns: int) -> None:
        wire = parse_lg(data)
        if lost or wire is None or wire.pause is not False:
            return
        start_ns = arrival_ns - self.link_delay_ns - self.wire_ps(len(data)) // 1000
        if self._since is None:
            self._since = start_ns - self.egress_ns

    def forward(self, data: bytes, lost: bool, arrival_ns: int) -> None:
        if self._since is None or lost or not is_data(data):
            return
        self.flights_ns.append(arrival_ns - self._since)
        self._since = None


class PausedQueue:
    """The sender's normal queue as the testbed has it: the receiver's pause stops it in
    place (PFC), and its backlog waits.

    Our program pauses by holding packets in its recirculation loop (docs/protocol.md §3.5),
    which costs recirculation bandwidth that the testbed's paused queue does not. So the
    generator's frames wait here instead (tail-dropped beyond `limit_bytes`) and enter the
    sender's pipeline only while its `lg_tx_paused` register is 0, keeping `keep` frames in
    the pipeline and its normal queue (enough to cover the ingress latency: the link stays
    busy back to back). The program's hold then never holds a frame. The stress test also
    pauses the normal TM queue itself while the register is 1, as the MAC does on a PFC
    frame, so the frames already past the ingress wait there and leave at once on resume.
    `release` runs on each frame offered and after each frame the sender receives from the
    link."""

    def __init__(self, receive: Callable[[bytes], None], paused: Any, normal_depth:
                 Callable[[], int], clock: Any, limit_bytes: int, keep: int,
                 ingress_ns: int) -> None:
        self.receive = receive
        self.paused = paused
        self.normal_depth = normal_depth
        self.clock = clock
        self.limit_bytes = limit_bytes
        self.keep = keep
        self.ingress_ns = ingress_ns
        self.backlog: deque[bytes] = deque()
        self.bytes = 0
        self.drops = 0
        self._entered: deque[int] = deque()

    def offer(self, data: bytes) -> None:
        if self.bytes + len(data) > self.limit_bytes:
            self.drops += 1
        else:
            self.backlog.append(data)
            self.bytes += len(data)
        self.release()

    def release(self) -> None:
        backlog, entered = self.backlog, self._entered
        if not backlog or self.paused.read(LINK_PORT):
            return
        now = self.clock.now_ns()
        while entered and entered[0] <= now - self.ingress_ns:
            entered.popleft()
        while backlog and len(entered) + self.normal_depth() < self.keep:
            data = backlog.popleft()
            self.bytes -= len(data)
            entered.append(now)
            self.receive(data)


def is_data(data: bytes) -> bool:
    """An original data frame (protected or plain): not a retransmission, dummy or control."""
    return data[12:14] != b"\xab\xcd" or (data[14] >> 6 == 0 and not data[14] & 0x0C)


def classify(data: bytes) -> tuple[str, int | None, int | None]:
    """(kind, 17-bit seq or None, packet id or None) of a frame on the forward link."""
    if data[12:14] != b"\xab\xcd":
        pid = struct.unpack_from("!I", data, ID_OFFSET)[0] if len(data) >= ID_OFFSET + 4 \
            else None
        return "plain", None, pid
    b0 = data[14]
    if b0 >> 6 != 0:
        return "control", None, None
    seq = ((b0 >> 4) & 1) << 16 | (data[15] << 8 | data[16])
    if b0 & 0x04:
        return "dummy", seq, None
    at = LG_ID_OFFSET + (3 if b0 & 0x20 else 0)
    pid = struct.unpack_from("!I", data, at)[0] if len(data) >= at + 4 else None
    return ("retx" if b0 & 0x08 else "data"), seq, pid


@dataclass
class Sink:
    """The receiving end after the protected link: which packets arrived, order, timing."""

    delivered: bytearray
    window: tuple[int, int] = (0, 0)
    """Deliveries in [start, end] ns are counted for the link speed (set before the run)."""
    in_window: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    _last: int = -1

    def receive(self, _host: Any, t: int, data: bytes) -> None:
        pid = struct.unpack_from("!I", data, ID_OFFSET)[0]
        if pid >= len(self.delivered):
            return
        if self.delivered[pid]:
            self.duplicates += 1
            return
        self.delivered[pid] = 1
        if pid < self._last:
            self.out_of_order += 1
        self._last = pid
        if self.window[0] <= t <= self.window[1]:
            self.in_window += 1


@dataclass
class StressResult:
    """What one stress-test point measured (see docs/vtime.md for every definition)."""

    spec: StressSpec
    copies: int
    link_bps: float
    frame_wire_bits: int
    sim_ns: int
    covered: int
    """Frames generated after the warm-up plus the frames cut out of long loss-free runs."""
    skipped: int
    protected: int
    """Originals of measured packets put on the protected link (simulated)."""
    lost_onward: int
    """Protected packets that never reached the far host."""
    sent: dict[str, int]
    lost: dict[str, int]
    bursts: dict[int, int]
    retx_delays_ns: list[int]
    unrecovered_holes: int
    delivered_in_window: int
    window_ns: int
    steady_ns_per_frame: float
    """Time per delivered frame in the loss-free steady state (measured in the warm-up)."""
    tx_samples: list[int]
    """The sender's Tx buffer as the paper measured it: bytes (80-byte cells) of Tx copies
    waiting in the recirculation queue, sampled every `sample_ns`."""
    rx_samples: list[int]
    """The receiver's Rx buffer likewise: packets waiting in its recirculation queue."""
    steady_tx_bytes: int
    steady_rx_bytes: int
    steady_weight: int
    """Extra samples at the steady-state occupancy standing for the cut-out frames."""
    tx_max_bytes: int
    """The watermark of the Tx buffer queue (the paper's maximum)."""
    rx_max_bytes: int
    tx_alive_max_bytes: int
    """The program's own count: the most bytes of Tx copies alive at once (queued, in a pass
    or on the loop), `lg_tx_buf_max_bytes`; an upper bound of the queue's watermark."""
    rx_alive_max_bytes: int
    """Likewise the most bytes in the reordering buffer, `lg_rx_buf_max_bytes`."""
    resume_flights_ns: list[int]
    """t_flight_resume of each resume (App. B.1): from the resume frame's egress pass at the
    receiver to the next data frame's arrival at the receiver's LG ingress."""
    recirculations: dict[str, int]
    steady_recirc_per_frame: dict[str, float]
    counters: dict[str, int]
    duplicates: int
    out_of_order: int
    pipeline_capacity_pps: float
    wall_s: float
    events: int
    generated: int
    tail_drops: int
    """Generated frames dropped because the sender's paused normal queue was full."""
    digest: str = ""

    # ---- loss ------------------------------------------------------------------------------

    @property
    def actual_loss(self) -> float:
        """(B - C) / B on the protected link: every frame kind, after the warm-up (cut-out
        frames count as sent and not lost)."""
        sent = sum(self.sent.values()) + self.skipped
        return sum(self.lost.values()) / sent if sent else 0.0

    @property
    def original_loss(self) -> float:
        """The loss rate of original data frames (cut-out frames included)."""
        sent = self.sent.get("data", 0) + self.sent.get("plain", 0) + self.skipped
        lost = self.lost.get("data", 0) + self.lost.get("plain", 0)
        return lost / sent if sent else 0.0

    @property
    def retx_loss(self) -> float | None:
        """The loss rate of retransmitted copies (None if none was sent)."""
        sent = self.sent.get("retx", 0)
        return self.lost.get("retx", 0) / sent if sent else None

    @property
    def effective_loss(self) -> float:
        """Protected packets never delivered / protected packets (cut-out ones delivered)."""
        total = self.protected + self.skipped
        return self.lost_onward / total if total else 0.0

    def effective_loss_interval(self, confidence: float = 0.99) -> tuple[float, float]:
        """Exact (Garwood) Poisson interval of the effective loss rate."""
        total = self.protected + self.skipped
        low, high = poisson_interval(self.lost_onward, confidence)
        return low / total, high / total

    def theory_loss(self) -> float:
        """p^(N+1) with p the measured loss rate of the link (all frames)."""
        if self.spec.mode == "off":
            return self.actual_loss
        return self.actual_loss ** (self.copies + 1)

    # ---- link speed ------------------------------------------------------------------------

    @property
    def effective_gbps(self) -> float:
        """Delivered frames per second in the measurement window, counted as generator frames
        (frame + framing) on the wire; cut-out frames at the steady-state rate."""
        frames = self.delivered_in_window + self.skipped
        ns = self.window_ns + self.skipped * self.steady_ns_per_frame
        return frames * self.frame_wire_bits / ns if ns else 0.0

    @property
    def speed_reduction(self) -> float:
        return 1.0 - self.effective_gbps * 1e9 / self.link_bps

    # ---- buffers and overhead --------------------------------------------------------------

    def buffer_percentiles(self, which: str) -> dict[str, int]:
        """min, p25, p50, p75, p99, max of the sampled Tx or Rx buffer bytes."""
        samples = self.tx_samples if which == "tx" else self.rx_samples
        steady = self.steady_tx_bytes if which == "tx" else self.steady_rx_bytes
        return weighted_percentiles(samples, steady, self.steady_weight)

    def recirc_overhead(self, switch: str) -> float:
        """Recirculated packets per second over the pipeline capacity, in % (Table 4)."""
        passes = self.recirculations[switch] + self.skipped * self.steady_recirc_per_frame[switch]
        seconds = (self.sim_ns + self.skipped * self.steady_ns_per_frame) / 1e9
        return 100.0 * passes / seconds / self.pipeline_capacity_pps if seconds else 0.0

    def delay_percentiles(self) -> dict[str, float]:
        return percentiles_us(self.retx_delays_ns)

    @property
    def frames_per_wall_s(self) -> float:
        return self.generated / self.wall_s if self.wall_s else 0.0


def poisson_interval(count: int, confidence: float = 0.99) -> tuple[float, float]:
    """Exact two-sided interval of a Poisson mean from one observed count (by bisection on the
    Poisson CDF; no SciPy needed)."""
    alpha = (1.0 - confidence) / 2.0

    def cdf(k: int, mu: float) -> float:
        term = total = math.exp(-mu)
        for i in range(1, k + 1):
            term *= mu / i
            total += term
        return total

    def solve(f: Callable[[float], float]) -> float:
        lo, hi = 0.0, max(10.0, 4.0 * count + 40.0)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if count == 0 else solve(lambda mu: alpha - (1.0 - cdf(count - 1, mu)))
    high = solve(lambda mu: cdf(count, mu) - alpha)
    return low, high


def weighted_percentiles(samples: list[int], steady: int, steady_weight: int
                         ) -> dict[str, int]:
    """Percentiles of samples plus `steady_weight` more samples equal to `steady`."""
    values = sorted(samples)
    total = len(values) + steady_weight
    if total == 0:
        return {}
    out = {}
    for name, q in (("min", 0.0), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p99", 0.99),
                    ("max", 1.0)):
        rank = min(total - 1, int(q * total))
        out[name] = _rank(values, steady, steady_weight, rank)
    return out


def _rank(values: list[int], steady: int, weight: int, rank: int) -> int:
    """The rank-th smallest of values merged with `weight` copies of `steady`."""
    below = sum(1 for v in values if v < steady)  # values sorted: could bisect; few calls
    if rank < below:
        return values[rank]
    if rank < below + weight:
        return steady
    return values[rank - weight]


def percentiles_us(delays_ns: list[int]) -> dict[str, float]:
    values = sorted(delays_ns)
    if not values:
        return {}
    pick = {"min": 0.0, "p50": 0.5, "p90": 0.9, "p99": 0.99, "max": 1.0}
    return {k: values[min(len(values) - 1, int(q * len(values)))] / 1000 for k, q in
            pick.items()}


@dataclass
class SteadyWindows:
    """Loss-free stretches that stand for the frames a TruncatedGaps model cut out: from
    `settle` frames after a loss to the next loss, in each gap that was cut (the cut frames
    would have come right there). Accumulates time, frames and recirculations over them."""

    model: TruncatedGaps
    settle: int
    snapshot: Callable[[], tuple[int, int, int]]
    """(now ns, s1 recirculations, s2 recirculations)."""
    ns: int = 0
    frames: int = 0
    recirc: tuple[int, int] = (0, 0)
    windows: list[tuple[int, int]] = field(default_factory=list)
    _since_loss: int = -1
    _cut: bool = False
    _start: tuple[int, int, int] | None = None
    _data: int = 0

    def on_frame(self, data: bytes, lost: bool) -> None:
        if lost:
            if self._start is not None:
                (t0, a0, b0), (t1, a1, b1) = self._start, self.snapshot()
                self.ns += t1 - t0
                self.frames += self._data + 1  # frame intervals from the first to the loss
                self.recirc = (self.recirc[0] + a1 - a0, self.recirc[1] + b1 - b0)
                self.windows.append((t0, t1))
            self._since_loss, self._start, self._data = 0, None, 0
            return
        if self._since_loss < 0:
            return
        self._since_loss += 1
        if self._start is not None and is_data(data):
            self._data += 1
        if self._since_loss == 1:  # the gap after a loss is drawn at its first frame
            self._cut = self.model.cutting
        if self._cut and self._since_loss == self.settle:
            self._start = self.snapshot()


class StressRun:
    """Builds the network for a spec; `run()` returns the result."""

    def __init__(self, spec: StressSpec) -> None:
        self.spec = spec
        self.timing = spec.timing or TimingModel.for_link(spec.rate_gbps)
        self.params = spec.link_params()
        config = self.timing.scenario(ScenarioConfig(
            params=self.params, lg_on=spec.mode != "off", rate_bps=spec.rate_gbps * 1e9,
            seed=spec.seed, wire_log=False, keep_frames=False, engine=spec.engine))
        self.net = LGNet(config)
        self.s1, self.s2 = self.net.switches["s1"], self.net.switches["s2"]
        self.clock = self.net.net.clock
        self.frame_wire_bits = round(sum((s + ETHERNET_FRAMING_BYTES) * 8 * w
                                         for s, w in spec.sizes) / sum(w for _, w in spec.sizes))
        self.capacity_ids = spec.warmup_frames + spec.frames + 1
        self.model = spec.loss_model()
        self.steady: SteadyWindows | None = None
        if self.model is not None and spec.max_gap is not None:
            self.model = TruncatedGaps(self.model, spec.max_gap)
            self.steady = SteadyWindows(self.model, spec.max_gap // 2, self._snapshot)
        period_ps = spec.period_ps or self.frame_wire_bits * 1e12 / (spec.rate_gbps * 1e9)
        self.warmup_end_ns = int(spec.warmup_frames * period_ps / 1000)
        self.meter = WireMeter(bytearray(self.capacity_ids), count_from_ns=self.warmup_end_ns)
        self.sink = Sink(bytearray(self.capacity_ids))
        self.net.hosts["h2"].handlers.append(self.sink.receive)
        self.net.link.forward.taps.append(self.meter.tap)
        self.stream = FrameStream(HOSTS["h1"], HOSTS["h2"], spec.sizes, spec.seed)
        self.queue = self._paused_queue()
        link = self.net.link
        self.resumes = ResumeMeter(self.timing.egress_latency_ns, link.backward.delay_ns,
                                   link.backward.wire_ps)
        link.backward.taps.append(self.resumes.backward)
        link.forward.taps.append(self.resumes.forward)
        self.samples: list[tuple[int, int, int]] = []
        """(time ns, Tx buffer bytes, Rx buffer bytes) every sample_ns after the warm-up."""
        self.marks: dict[str, Any] = {}

    def _snapshot(self) -> tuple[int, int, int]:
        return self.clock.now_ns(), _loops(self.s1), _loops(self.s2)

    # ---- the generator ---------------------------------------------------------------------

    def _frames(self) -> Any:
        """Warm-up frames, then measured ones until the covered count is reached."""
        stream, spec, model = self.stream, self.spec, self.model
        for _ in range(spec.warmup_frames):
            yield stream.frame(stream.next_size())
        skipped = (lambda: model.skipped) if isinstance(model, TruncatedGaps) else (lambda: 0)
        for _ in range(spec.frames):
            if stream.next_id - spec.warmup_frames + skipped() >= spec.frames:
                return
            yield stream.frame(stream.next_size())

    def _paused_queue(self) -> PausedQueue:
        """The sender's normal queue in front of its pipeline (see PausedQueue)."""
        s1, timing = self.s1, self.timing
        prio = self.net.layout.prio_normal
        frame_ns = self.frame_wire_bits / self.spec.rate_gbps
        keep = math.ceil((timing.ingress_latency_ns + frame_ns) / frame_ns) + 1
        paused = _register(self.net, "s1", "lg_tx_paused")
        queue = PausedQueue(
            lambda data: s1.receive(HOST_PORT, data), paused,
            lambda: s1.tm.queue_depths(LINK_PORT)[prio], self.clock,
            timing.paused_queue_bytes, keep, timing.ingress_latency_ns)
        backward = self.net.link.backward
        deliver = backward.deliver

        def deliver_then_release(data: bytes) -> None:
            deliver(data)
            s1.tm.set_paused(LINK_PORT, prio, bool(paused.read(LINK_PORT)))
            queue.release()

        backward.deliver = deliver_then_release
        return queue

    # ---- running ---------------------------------------------------------------------------

    def run(self, progress: bool = False) -> StressResult:
        spec, clock, marks = self.spec, self.clock, self.marks
        source = LineRateSource(clock, self.queue.offer, spec.rate_gbps * 1e9, self._frames(),
                                period_ps=spec.period_ps, on_end=lambda: self._mark("gen_end"))
        self.net.net.every(spec.sample_ns, self._sampler())
        # The loss-free steady state: the second half of the warm-up.
        clock.call_at(self.warmup_end_ns // 2, self._mark, "half")
        clock.call_at(self.warmup_end_ns, self._mark, "end")
        clock.call_at(self.warmup_end_ns, self._start_losses)
        self.sink.window = (self.warmup_end_ns, 1 << 62)
        wall = time.perf_counter()
        events0 = clock.events_run
        self._run_generator(source, progress)
        # Let everything in flight finish: the paused queue's backlog, then recoveries,
        # timeouts and drained queues.
        while self.queue.backlog:
            clock.run_until(clock.now_ns() + 100_000)
        clock.run_until(max(clock.now_ns(), marks["gen_end"][3]) + 200_000)
        wall = time.perf_counter() - wall
        return self._result(wall, clock.events_run - events0, source.emitted)

    def _mark(self, key: str) -> None:
        self.marks[key] = (sum(self.sink.delivered), _loops(self.s1), _loops(self.s2),
                           self.clock.now_ns())
        if key == "gen_end":  # deliveries from now on are after the measurement window
            self.sink.window = (self.sink.window[0], self.clock.now_ns())
            self.marks["in_window"] = self.sink.in_window

    def _sampler(self) -> Callable[[int], None]:
        """Samples of the Tx and Rx buffers the paper's way: the recirculation queues'
        occupancy (cells x cell size); their watermarks count from the first sample."""
        recirc, cell = self.net.layout.recirc_port, self.timing.cell_bytes
        tx_tm, rx_tm = self.s1.tm, self.s2.tm
        samples, marks, start = self.samples, self.marks, self.warmup_end_ns // 2

        def sample(t: int) -> None:
            if t >= start and not samples:
                tx_tm.reset_watermarks()
                rx_tm.reset_watermarks()
            if t >= start and "gen_end" not in marks:
                samples.append((t, tx_tm.queue_cells(recirc, PRIO_LOOP)[0] * cell,
                                rx_tm.queue_cells(recirc, PRIO_LOOP)[0] * cell))

        return sample

    def _start_losses(self) -> None:
        self.net.link.forward.loss = self.model
        if self.steady is not None:
            steady = self.steady
            self.net.link.forward.taps.append(lambda data, lost, _t: steady.on_frame(data, lost))

    def _run_generator(self, source: LineRateSource, progress: bool) -> None:
        """Run until the generator's last frame has been handed over."""
        from tqdm import tqdm

        clock = self.clock
        total = self.spec.warmup_frames + self.spec.frames
        with tqdm(total=total, unit="frame", disable=not progress, leave=False) as bar:
            while "gen_end" not in self.marks:
                before = source.emitted
                if clock.next_timer_ns() is None:
                    raise RuntimeError("the simulation ran out of events before the end")
                clock.run_until(clock.now_ns() + 100_000)
                bar.update(source.emitted - before)

    # ---- results ---------------------------------------------------------------------------

    def _steady_state(self) -> tuple[float, float, float, int, int]:
        """(ns per frame, s1 and s2 recirculations per frame, Tx and Rx buffer bytes) of the
        loss-free steady state: over the cut gaps' windows, else the warm-up's second half
        (after a first loss the reordering buffer may keep a standing queue: see
        docs/vtime.md)."""
        steady, warm = self.steady, self.warmup_end_ns
        if steady is not None and steady.frames > 0:
            windows = steady.windows
            inside = [(tx, rx) for t, tx, rx in self.samples
                      if any(a <= t <= b for a, b in windows)]
            return (steady.ns / steady.frames, steady.recirc[0] / steady.frames,
                    steady.recirc[1] / steady.frames, _median([tx for tx, _ in inside]),
                    _median([rx for _, rx in inside]))
        (d0, a0, b0, t0), (d1, a1, b1, t1) = self.marks["half"], self.marks["end"]
        frames = max(1, d1 - d0)
        before = [(tx, rx) for t, tx, rx in self.samples if t < warm]
        return ((t1 - t0) / frames, (a1 - a0) / frames, (b1 - b0) / frames,
                _median([tx for tx, _ in before]), _median([rx for _, rx in before]))

    def _result(self, wall: float, events: int, generated: int) -> StressResult:
        spec, net, meter, sink, marks = self.spec, self.net, self.meter, self.sink, self.marks
        first = spec.warmup_frames
        protected = sum(meter.originals[first:])
        lost_onward = sum(1 for pid in range(first, self.stream.next_id)
                          if meter.originals[pid] and not sink.delivered[pid])
        skipped = self.model.skipped if isinstance(self.model, TruncatedGaps) else 0
        ns_per_frame, tx_per_frame, rx_per_frame, steady_tx, steady_rx = self._steady_state()
        _, a_end, b_end, gen_end_ns = marks["gen_end"]
        _, a_start, b_start, _ = marks["end"]
        measured = [(tx, rx) for t, tx, rx in self.samples if t >= self.warmup_end_ns]
        counters = {name: net.counter(sw, f"lg_cnt_{name}") for sw, name in (
            ("s2", "loss_events"), ("s2", "timeouts"), ("s2", "dups"), ("s1", "retx"),
            ("s2", "pauses"), ("s2", "resumes"), ("s1", "dummies"), ("s2", "acks"))}
        window_ns = gen_end_ns - self.warmup_end_ns
        result = StressResult(
            spec=spec, copies=self.params.n_copies, link_bps=spec.rate_gbps * 1e9,
            frame_wire_bits=self.frame_wire_bits, sim_ns=window_ns,
            covered=generated - first + skipped, skipped=skipped, protected=protected,
            lost_onward=lost_onward, sent=dict(meter.sent), lost=dict(meter.lost),
            bursts=dict(sorted(meter.bursts.items())), retx_delays_ns=meter.retx_delays_ns,
            unrecovered_holes=meter.unrecovered, delivered_in_window=marks["in_window"],
            window_ns=window_ns, steady_ns_per_frame=ns_per_frame,
            tx_samples=[tx for tx, _ in measured], rx_samples=[rx for _, rx in measured],
            steady_tx_bytes=steady_tx, steady_rx_bytes=steady_rx,
            steady_weight=round(skipped * ns_per_frame / spec.sample_ns),
            tx_max_bytes=self._watermark("s1"), rx_max_bytes=self._watermark("s2"),
            tx_alive_max_bytes=net.register("s1", "lg_tx_buf_max_bytes"),
            rx_alive_max_bytes=net.register("s2", "lg_rx_buf_max_bytes"),
            resume_flights_ns=self.resumes.flights_ns,
            recirculations={"tx": a_end - a_start, "rx": b_end - b_start},
            steady_recirc_per_frame={"tx": tx_per_frame, "rx": rx_per_frame},
            counters=counters, duplicates=sink.duplicates, out_of_order=sink.out_of_order,
            pipeline_capacity_pps=self.timing.pipeline_capacity_pps, wall_s=wall,
            events=events, generated=generated, tail_drops=self.queue.drops)
        result.digest = _digest(result, sink.delivered)
        return result


    def _watermark(self, switch: str) -> int:
        tm = self.net.switches[switch].tm
        return tm.queue_cells(self.net.layout.recirc_port, PRIO_LOOP)[1] * self.timing.cell_bytes


def _loops(switch: Switch) -> int:
    """Recirculations through the recirculation port proper (Table 4 counts these): not the
    passes of clones through its clone lane (the internal port the mirror sessions use)."""
    return switch.recirculations - switch.lane_recirculations


def _median(values: list[int]) -> int:
    return sorted(values)[len(values) // 2] if values else 0


def _register(net: LGNet, switch: str, name: str) -> Any:
    registers = net.pipelines[switch].registers
    matches = [r for qname, r in registers.items() if qname.split(".")[-1] == name]
    if len(matches) != 1:
        raise KeyError(f"no single register {name!r}")
    return matches[0]


def _digest(result: StressResult, delivered: bytearray) -> str:
    h = hashlib.sha256(bytes(delivered))
    h.update(repr((result.sent, result.lost, result.bursts, result.retx_delays_ns,
                   result.tx_samples, result.rx_samples, result.recirculations,
                   result.counters)).encode())
    return h.hexdigest()[:16]


def run_stress(spec: StressSpec, progress: bool = False) -> StressResult:
    """Run one stress-test point."""
    return StressRun(spec).run(progress)



def report(result: StressResult) -> str:
    """Human-readable summary of one point."""
    s = result.spec
    burst = "i.i.d." if s.burst == 1.0 else f"Gilbert-Elliott, bursts of {s.burst:g}"
    lines = [
        f"stress: {s.rate_gbps:g}G, mode {s.mode}, loss {s.loss:g} ({burst}), target "
        f"{s.target:g}, N = {result.copies}, seed {s.seed}; {result.covered} frames measured"
        + (f" ({result.skipped} of them in cut-out loss-free runs)" if result.skipped else "")
        + f" after {s.warmup_frames} warm-up frames",
        f"actual loss (B-C)/B: {result.actual_loss:.3g} (originals {result.original_loss:.3g}"
        + (f", retransmitted copies {result.retx_loss:.3g}" if result.retx_loss is not None
           else "") + ")",
    ]
    low, high = result.effective_loss_interval()
    lines.append(
        f"effective loss: {result.effective_loss:.3g} ({result.lost_onward} of "
        f"{result.protected + result.skipped} protected packets; 99% interval "
        f"[{low:.2g}, {high:.2g}]; p^(N+1) from the measured rates: {result.theory_loss():.2g})")
    lines.append(
        f"effective link speed: {result.effective_gbps:.2f} Gb/s of {s.rate_gbps:g} "
        f"({100 * result.speed_reduction:.2f}% less); frames the full paused queue dropped: "
        f"{result.tail_drops}")
    for which, maximum, alive in (("tx", result.tx_max_bytes, result.tx_alive_max_bytes),
                                  ("rx", result.rx_max_bytes, result.rx_alive_max_bytes)):
        pct = result.buffer_percentiles(which)
        lines.append(f"{which.upper()} buffer, recirculation queue (bytes): " + ", ".join(
            f"{k} {v}" for k, v in pct.items()) + f"; watermark {maximum}; most bytes alive "
            f"{alive}")
    delays = result.delay_percentiles()
    if delays:
        lines.append("retransmission delay (us): " + ", ".join(
            f"{k} {v:.2f}" for k, v in delays.items()) + f" over {len(result.retx_delays_ns)}")
    flights = percentiles_us(result.resume_flights_ns)
    if flights:
        lines.append("t_flight_resume (us): " + ", ".join(
            f"{k} {v:.2f}" for k, v in flights.items()) + f" over {len(result.resume_flights_ns)}")
    lines.append("consecutive losses: " + ", ".join(
        f"{k}: {v}" for k, v in result.bursts.items()))
    lines.append(
        f"recirculation: sender {result.recirc_overhead('tx'):.3f}%, receiver "
        f"{result.recirc_overhead('rx'):.3f}% of {result.pipeline_capacity_pps / 1e9:g} Gpps")
    c = result.counters
    lines.append(
        f"loss events {c['loss_events']}, ackNo timeouts {c['timeouts']}, retransmitted copies "
        f"{c['retx']}, pauses {c['pauses']}, duplicates delivered {result.duplicates}, "
        f"out of order {result.out_of_order}")
    lines.append(
        f"simulated {result.generated} frames in {result.wall_s:.1f} s "
        f"({result.frames_per_wall_s:.0f} frames/s, {result.events / result.wall_s:.0f} "
        f"events/s); digest {result.digest}")
    return "\n".join(lines)
