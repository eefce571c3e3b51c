"""The randomized soak: many packets over a lossy protected link in virtual time, then checks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from lgkit.control.linkguardian import LGParams
from lgkit.sim.scenario import LGNet, ScenarioConfig, WireRecord

SEQ_SPACE = 1 << 17


@dataclass(frozen=True)
class SoakSpec:
    """What to run."""

    packets: int = 200_000
    loss: float = 1e-2
    target: float = 1e-6
    seed: int = 1
    mode: str = "lg"
    """'lg', 'lg_nb' or 'off'."""
    rate_bps: float = 25e9
    load: float = 0.8
    """Offered load as a share of the link rate."""
    size: int = 1000
    ack_timeout_us: int | None = None
    """ackNoTimeout (us); None = the paper's value for the link speed."""

    def __post_init__(self) -> None:
        if self.mode not in ("lg", "lg_nb", "off"):
            raise ValueError("mode must be lg, lg_nb or off")
        if self.packets < 1:
            raise ValueError("packets must be >= 1")
        if not 0.0 <= self.loss < 1.0:
            raise ValueError("loss must be in [0, 1)")
        if not 0.0 < self.target < 1.0:
            raise ValueError("target must be in (0, 1)")
        if not 0.0 < self.load <= 1.0:
            raise ValueError("load must be in (0, 1]")
        if not 64 <= self.size <= 1500:
            raise ValueError("size must be in 64..1500 bytes")


@dataclass
class SoakResult:
    """What the run measured."""

    spec: SoakSpec
    copies: int
    sent: int
    delivered: int
    unique: int
    in_order: bool
    link_losses: int
    """Frames of the protected direction the link lost (all kinds)."""
    loss_events: int
    retransmissions: int
    duplicates_dropped: int
    timeouts: int
    tx_buffer_max_bytes: int
    rx_buffer_max_bytes: int
    tx_buffer_end_bytes: int
    rx_buffer_end_bytes: int
    retx_delays_ns: list[int] = field(default_factory=list)
    lost_ids: set[int] = field(default_factory=set)
    all_copies_lost: set[int] = field(default_factory=set)
    """Packets whose original and every retransmitted copy the link dropped."""
    ack_timeout_us: int = 0
    digest: str = ""

    @property
    def effective_loss(self) -> float:
        return (self.sent - self.unique) / self.sent

    def problems(self) -> list[str]:
        """Broken promises: empty when LG did its job (or when LG is off, by definition)."""
        if self.spec.mode == "off":
            return []
        found = []
        recoverable = self.lost_ids - self.all_copies_lost
        if recoverable:
            found.append(f"{len(recoverable)} packets lost onward although a copy arrived")
        if self.delivered != self.unique:
            found.append(f"{self.delivered - self.unique} duplicates delivered")
        if self.spec.mode == "lg" and not self.in_order:
            found.append("LG delivered out of order")
        if self.tx_buffer_end_bytes or self.rx_buffer_end_bytes:
            found.append("buffers not empty at the end")
        return found

    def delay_percentiles(self) -> dict[str, int]:
        delays = sorted(self.retx_delays_ns)
        if not delays:
            return {}
        pick = {"min": 0.0, "p50": 0.5, "p90": 0.9, "p99": 0.99, "max": 1.0}
        return {k: delays[min(len(delays) - 1, int(q * len(delays)))] for k, q in pick.items()}


@dataclass
class WireAnalysis:
    """What the receiver's side of the protected link saw."""

    retx_delays_ns: list[int]
    """Per hole: from the arrival that revealed it to its first retransmitted copy."""
    uncovered: set[int]
    """Packets detected lost of which no retransmitted copy arrived either."""


def analyse_wire(log: list[WireRecord]) -> WireAnalysis:
    """Replay the receiver's loss detection over the frames that reached it.

    Sequence numbers are unwrapped across eras (packet i carries seq i mod 2^16), so
    `uncovered` holds absolute packet numbers.
    """
    expected = 0  # absolute number of the next in-order packet
    detected: dict[int, int] = {}
    delays = []
    for rec in log:
        wire = rec.wire
        if rec.dropped or wire is None or wire.seq is None:
            continue
        seq = _unwrap(wire.seq, expected)
        if wire.retx:
            t0 = detected.pop(seq, None)
            if t0 is not None:
                delays.append(rec.t_ns - t0)
            continue
        if seq >= expected:
            last_lost = seq if wire.dummy else seq - 1
            for lost in range(expected, last_lost + 1):
                detected[lost] = rec.t_ns
            expected = seq + 1
    return WireAnalysis(delays, set(detected))


def _unwrap(seq: int, near: int) -> int:
    """The absolute packet number with this 16-bit seq closest to `near`."""
    candidate = near - (near - seq) % SEQ_SPACE
    return candidate + SEQ_SPACE if near - candidate > SEQ_SPACE // 2 else candidate


def retransmission_delays(log: list[WireRecord]) -> list[int]:
    return analyse_wire(log).retx_delays_ns


def run_soak(spec: SoakSpec) -> SoakResult:
    """Send `spec.packets` frames h1 -> h2 at `load` through the protected link."""
    params = LGParams.for_link(
        round(spec.rate_bps / 1e9), mode=spec.mode if spec.mode != "off" else "lg",
        target_loss=spec.target, actual_loss=spec.loss if spec.loss > 0 else spec.target)
    if spec.ack_timeout_us is not None:
        params = replace(params, ack_timeout_us=spec.ack_timeout_us)
    config = ScenarioConfig(params=params, lg_on=spec.mode != "off", rate_bps=spec.rate_bps,
                            loss=spec.loss, seed=spec.seed)
    net = LGNet(config)
    wire_bits = (spec.size + 24) * 8
    pps = spec.load * spec.rate_bps / wire_bits
    net.send_stream(spec.packets, pps=pps, size=spec.size)
    net.run(int(spec.packets / pps * 1e9) + 1_000_000)
    ids = net.delivered()
    result = SoakResult(
        spec=spec,
        copies=params.n_copies,
        sent=spec.packets,
        delivered=len(ids),
        unique=len(set(ids)),
        in_order=all(a < b for a, b in zip(ids, ids[1:], strict=False)),
        link_losses=net.link.forward.lost,
        loss_events=net.counter("s2", "lg_cnt_loss_events"),
        retransmissions=net.counter("s1", "lg_cnt_retx"),
        duplicates_dropped=net.counter("s2", "lg_cnt_dups"),
        timeouts=net.counter("s2", "lg_cnt_timeouts"),
        tx_buffer_max_bytes=net.register("s1", "lg_tx_buf_max_bytes"),
        rx_buffer_max_bytes=net.register("s2", "lg_rx_buf_max_bytes"),
        tx_buffer_end_bytes=net.register("s1", "lg_tx_buf_bytes"),
        rx_buffer_end_bytes=net.register("s2", "lg_rx_buf_bytes"),
    )
    result.ack_timeout_us = params.ack_timeout_us
    analysis = analyse_wire(net.forward_log)
    result.retx_delays_ns = analysis.retx_delays_ns
    result.lost_ids = set(range(spec.packets)) - set(ids)
    result.all_copies_lost = analysis.uncovered
    result.digest = _digest(ids, result)
    return result


def _digest(ids: list[int], result: SoakResult) -> str:
    h = hashlib.sha256()
    h.update(",".join(map(str, ids)).encode())
    h.update(repr((result.link_losses, result.retransmissions, result.duplicates_dropped,
                   result.timeouts, result.tx_buffer_max_bytes, result.rx_buffer_max_bytes,
                   result.retx_delays_ns)).encode())
    return h.hexdigest()[:16]


def _expected_residual(result: SoakResult) -> float:
    """Packets expected to lose the original and all N copies: sent * p^(N+1)."""
    if result.spec.mode == "off":
        return result.sent * result.spec.loss
    return result.sent * result.spec.loss ** (result.copies + 1)


def report(result: SoakResult) -> str:
    """Human-readable summary."""
    s = result.spec
    lines = [
        f"soak: {s.packets} packets, mode {s.mode}, link loss {s.loss:g}, target {s.target:g}, "
        f"N = {result.copies if s.mode != 'off' else 0} copies, seed {s.seed}, "
        f"{s.rate_bps / 1e9:g} Gb/s at {s.load:.0%} load, ackNoTimeout {result.ack_timeout_us} us",
        f"link losses (protected direction, all frames): {result.link_losses}",
        f"delivered: {result.delivered} ({result.unique} unique) of {result.sent}",
        f"effective loss rate: {result.effective_loss:.3g} ({len(result.lost_ids)} lost onward"
        + (f"; original and all N copies dropped by the link: {len(result.all_copies_lost)}"
           if s.mode != "off" else "")
        + f"; expected about {_expected_residual(result):.2g})",
        f"order preserved: {'yes' if result.in_order else 'no'}",
        f"loss events: {result.loss_events}, retransmitted copies: {result.retransmissions}, "
        f"duplicates dropped: {result.duplicates_dropped}, ackNo timeouts: {result.timeouts}",
        f"Tx buffer max: {result.tx_buffer_max_bytes} B, Rx buffer max: "
        f"{result.rx_buffer_max_bytes} B (end: {result.tx_buffer_end_bytes} B / "
        f"{result.rx_buffer_end_bytes} B)",
    ]
    pct = result.delay_percentiles()
    if pct:
        lines.append("retransmission delay (us): " + ", ".join(
            f"{k} {v / 1000:.2f}" for k, v in pct.items()) + f" over {len(result.retx_delays_ns)}")
    lines.append(f"digest: {result.digest}")
    problems = result.problems()
    if s.mode == "off":
        lines.append("checks: none (LG off: the loss above is the link's)")
    else:
        lines.append("checks: " + ("all passed" if not problems
                                   else "FAILED: " + "; ".join(problems)))
    return "\n".join(lines)
