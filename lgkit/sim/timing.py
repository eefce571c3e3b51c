"""The timing model of the virtual-time stress tests: switch and link timing of a Tofino testbed.

Every number is a parameter with a default and the reason for it (docs/vtime.md has the
calibration against the paper's measured retransmission delays, App. B.1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lgkit.sim.scenario import ScenarioConfig

ETHERNET_MIN_FRAME_BYTES = 60  # 64-byte minimum frame less the FCS (counted in the framing)


@dataclass(frozen=True)
class TimingModel:
    """Switch and link timing; `for_link` gives the calibrated defaults per link speed."""

    pass_latency_ns: int = 700
    """Latency of each half of a switch traversal (ns): arrival -> queue (ingress pipeline),
    dequeue -> wire (egress pipeline + MAC), and recirculation -> ingress. A port-to-port
    traversal costs two, a recirculation loop two plus the wait in the recirculation queue.
    Calibrated: with 400 ns, the modelled maximum retransmission delays come out near the
    paper's 6 us (25G) and 5.5 us (100G)."""
    link_delay_ns: int = 50
    """Propagation delay of the protected link (ns): ~10 m of fibre at 5 ns/m (the testbed's
    OM4 patch fibre with the attenuator; the paper does not give its length)."""
    recirc_rate_bps: float = 0.0
    """Bandwidth of the recirculation port (b/s): a Tofino recirculation port runs at 100G;
    buffered copies and reordered packets share it, so at 100G line rate its queue is what
    sets the loop time (0 = unlimited, loops cost latency only)."""
    recirc_buffer_bytes: int = 200_000
    """Recirculation queue buffer (bytes): the paper restricts the recirculation buffers of
    both switches to 200 KB (§4, testbed setup)."""
    queue_buffer_bytes: int = 200_000
    """Buffer of each egress queue of the protected port (bytes). Under a line-rate generator
    the sender's normal queue is always full (LG's header and recoveries make the link slower
    than the generator), so this only bounds the backlog; 200 KB, like the recirculation
    buffer."""
    hold_buffer_bytes: int = 48_000
    """Backlog the sender may hold while paused (bytes, in frames of the stream's mean size).
    Tofino pauses the normal queue: arrivals wait in it (tail-dropped when its buffer is full)
    and it drains at line rate on resume. Our v1model sender holds packets by recirculating
    them, and the P4 program does not bound the hold; a sender faster than the link would keep
    every packet in the hold for ever, and held packets are released only as they come round,
    in order, which cannot keep a line-rate link busy once the hold is full. So the stress
    test's generator plays the paused queue's admission: while paused, frames enter up to this
    buffer; while the hold drains after a resume, new frames are dropped (on Tofino they would
    queue behind the backlog, which drains at line rate either way); otherwise all enter.
    48 KB (31 MTU frames) is more than what arrives in one pause at 25G."""
    min_frame_bytes: int = ETHERNET_MIN_FRAME_BYTES
    """Short frames (ACKs, notifications, dummies: 17-20 B) are padded to Ethernet's minimum
    on the wire."""
    pipeline_capacity_pps: float = 1e9
    """Packets per second one pipeline can process, the unit of the recirculation overhead
    (Table 4). The paper's own figure: its 10 Mpps timer packets are "~1% of switch's pipeline
    processing capacity" (§3.5), i.e. ~1 Gpps."""

    def __post_init__(self) -> None:
        for name in ("pass_latency_ns", "link_delay_ns", "recirc_buffer_bytes",
                     "queue_buffer_bytes", "hold_buffer_bytes", "min_frame_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.recirc_rate_bps < 0 or self.pipeline_capacity_pps <= 0:
            raise ValueError("recirc_rate_bps must be >= 0 and pipeline_capacity_pps > 0")

    @classmethod
    def for_link(cls, gbps: float, **overrides: object) -> TimingModel:
        """The calibrated model for a 25G or 100G protected link (the same switch either way)."""
        return replace(cls(), **overrides)  # type: ignore[arg-type]

    def scenario(self, config: ScenarioConfig) -> ScenarioConfig:
        """`config` with this model's timing and buffers."""
        return replace(
            config, pass_latency_ns=self.pass_latency_ns, delay_ns=self.link_delay_ns,
            recirc_rate_bps=self.recirc_rate_bps, recirc_buffer_bytes=self.recirc_buffer_bytes,
            queue_buffer_bytes=self.queue_buffer_bytes, queue_depth=1 << 20,
            recirc_queue_depth=1 << 20, min_frame_bytes=self.min_frame_bytes)
