"""The timing model of the virtual-time stress tests: switch and link timing of a Tofino testbed.

Every number is a parameter with a default, the reason for it and its source (docs/vtime.md has
the calibration against the paper's measurements: App. B.1's retransmission delays and
t_flight_resume, §4.5's buffer maxima, Table 4).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lgkit.sim.scenario import ScenarioConfig

ETHERNET_MIN_FRAME_BYTES = 60  # 64-byte minimum frame less the FCS (counted in the framing)
MTU_WIRE_BYTES = 1514 + 24  # a 1514 B frame with preamble, FCS and inter-frame gap


@dataclass(frozen=True)
class TimingModel:
    """Switch and link timing; `for_link` gives the calibrated defaults per link speed."""

    ingress_latency_ns: int = 350
    """From a packet's arrival (from the wire, a loopback or the recirculation) to its TM
    queue: MAC, parser, ingress pipeline, deparser. With the egress latency, a Tofino
    port-to-port traversal of ~0.7 us, which App. B.1's t_flight_resume pins: in the model it
    is 2 x egress + 2 x link + a frame + the resume frame + the receiver's filter loop (an
    ingress pass among them), 1.65 us at 100G against the paper's 1.6 (docs/vtime.md)."""
    egress_latency_ns: int = 350
    """From the dequeue to the first bit on the wire: egress pipeline, deparser, MAC (see the
    ingress latency)."""
    recirc_latency_ns: int = 250
    """From the end of the packet's serialization at the recirculation port (`recirc_rate_bps`)
    back to the ingress: the egress pass the authors bypass, the MAC loopback of their
    front-panel recirculation port. A loop is ingress + 123 ns + this = 723 ns for an MTU
    copy at 100G, ~2.5 loops per copy at 25G (Table 4's 0.42-0.45%)."""
    clone_latency_ns: int = 400
    """A clone's way through the mirror buffer into its queue (Tofino mirrors at the end of a
    pipeline). Sets the first check of a Tx copy and the explicit ACK's and the dummy's period
    (each is an E2E clone of the previous one). Calibrated on the paper's 25G numbers: 400 ns
    keeps the Tx buffer at two copies (<= 3.6 KB) and the sender's overhead at 0.42% (paper
    0.44-0.45%); 250 ns gives three copies and 0.46%."""
    link_delay_ns: int = 50
    """Propagation delay of the protected link (ns): ~10 m of fibre at 5 ns/m (the testbed's
    OM4 patch fibre with the attenuator; the paper does not give its length)."""
    receiver_filter_loop: bool = True
    """The authors' receiver sends every frame of the protected port through a front-panel
    port in loopback before LG sees it (their loss-emulation filter: `filter_via_lpbk`, port
    44, in NUS-SNL/linkguardian's receiver set-up): one more ingress pass, a 100G
    serialization and the loopback. It delays detection, ACKs and resumes, not the
    retransmission delay (both its ends pass the filter)."""
    recirc_rate_bps: float = 100e9
    """Bandwidth of the recirculation port that Tx copies (sender) and reordered packets
    (receiver) loop through: the authors' front-panel ports in MAC loopback (19/0 on both
    switches) run at 100G at both link speeds. Its queue is what the paper's Tx and Rx buffers
    measure."""
    mirror_rate_bps: float = 100e9
    """Bandwidth of the port that clones to the recirculation port enter: the authors' mirror
    sessions deliver Tx copies (sender) and ACK updates (receiver) to the internal
    recirculation port 68 (100G), not the loopback port."""
    recirc_buffer_bytes: int = 200_000
    """Recirculation queue buffer (bytes): the paper restricts the recirculation buffers of
    both switches to 200 KB (§4, testbed setup)."""
    queue_buffer_bytes: int = 200_000
    """Buffer of each egress queue of the protected port (bytes); the stress test keeps the
    sender's normal queue short (`paused_queue_bytes` holds the backlog)."""
    paused_queue_bytes: int = 560_000
    """The sender's normal queue, which the receiver's pause stops in place (PFC). The
    authors fix it at 7000 cells of 80 B (config_pktgen.py: `set_q_app_pool_usage(32, 0,
    base_use_limit=7000)`); the stress test keeps this backlog in front of the sender's
    pipeline and feeds the pipeline only while the link is not paused (see stress.py)."""
    cell_bytes: int = 80
    """Tofino's buffer cell: queue occupancy is counted in cells (the authors' `usage_cells`
    and `watermark_cells`, times 80 for bytes)."""
    min_frame_bytes: int = ETHERNET_MIN_FRAME_BYTES
    """Short frames (ACKs, notifications, dummies: 17-20 B) are padded to Ethernet's minimum
    on the wire (and the TM's port rate charges them the same)."""
    pipeline_capacity_pps: float = 1.2e9
    """Packets per second one pipeline can process, the unit of the recirculation overhead
    (Table 4): a Tofino pipe, 4.8 Bpps over 4 pipes (the paper's "10 Mpps, ~1%" agrees in
    order). Table 4 itself implies it: at 100G the sender's overhead is proportional to the
    effective link speed, 0.663 / 0.657 / 0.608 % at 98.76 / 98.74 / 90.88 Gb/s, which is one
    loop per delivered 1538-byte frame at 1.21-1.22 Gpps."""

    def __post_init__(self) -> None:
        for name in ("ingress_latency_ns", "egress_latency_ns", "recirc_latency_ns",
                     "clone_latency_ns", "link_delay_ns", "recirc_buffer_bytes",
                     "queue_buffer_bytes", "paused_queue_bytes", "min_frame_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.recirc_rate_bps < 0 or self.mirror_rate_bps < 0:
            raise ValueError("recirculation rates must be >= 0 (0 = unlimited)")
        if self.pipeline_capacity_pps <= 0 or self.cell_bytes <= 0:
            raise ValueError("pipeline_capacity_pps and cell_bytes must be > 0")

    @classmethod
    def for_link(cls, gbps: float, **overrides: object) -> TimingModel:
        """The calibrated model for a 25G or 100G protected link (the same switch either way)."""
        return replace(cls(), **overrides)  # type: ignore[arg-type]

    @property
    def receiver_filter_ns(self) -> int:
        """The receiver's filter loop: an ingress pass, an MTU frame at 100G, the loopback."""
        if not self.receiver_filter_loop:
            return 0
        return self.ingress_latency_ns + round(MTU_WIRE_BYTES * 8 / 100) + self.recirc_latency_ns

    def scenario(self, config: ScenarioConfig) -> ScenarioConfig:
        """`config` with this model's timing and buffers."""
        return replace(
            config, ingress_latency_ns=self.ingress_latency_ns,
            egress_latency_ns=self.egress_latency_ns, recirc_latency_ns=self.recirc_latency_ns,
            clone_latency_ns=self.clone_latency_ns, delay_ns=self.link_delay_ns,
            rx_extra_delay_ns=self.receiver_filter_ns, recirc_rate_bps=self.recirc_rate_bps,
            mirror_rate_bps=self.mirror_rate_bps, recirc_buffer_bytes=self.recirc_buffer_bytes,
            queue_buffer_bytes=self.queue_buffer_bytes, queue_depth=1 << 20,
            recirc_queue_depth=1 << 20, min_frame_bytes=self.min_frame_bytes,
            cell_bytes=self.cell_bytes)
