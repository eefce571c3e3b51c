"""Two switches joined by a protected link, a host on each side, all in virtual time.

    h1 --(1) s1 (2)==========(2) s2 (1)-- h2
                   protected

s1 is the LG sender on port 2 and s2 the receiver on port 2 (and the reverse too when
`bidirectional`). Losses on the protected link come from a seeded i.i.d. model or from exact
drop rules on the frames themselves.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lgkit.control.linkguardian import (
    DEFAULT_LAYOUT,
    LGLayout,
    LGParams,
    activate_receiver_ops,
    activate_sender_ops,
    apply_ops,
    corruption_ops,
    deactivate_receiver_ops,
    deactivate_sender_ops,
    ecn_ops,
    set_copies_ops,
    set_mode_ops,
    switch_setup_ops,
)
from lgkit.control.pipeline_writer import PipelineWriter
from lgkit.core.frames import LgWire, packet_id, parse_lg, udp_frame
from lgkit.sw.exec.interp.tables import Lpm, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.loss import IidLoss
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.vnet import ETHERNET_FRAMING_BYTES, VirtualNetwork

PROGRAM = Path(__file__).resolve().parents[2] / "p4" / "linkguardian.p4"
HOST_PORT = 1
LINK_PORT = 2
HOSTS = {
    "h1": ("00:00:00:00:01:01", "10.0.1.1"),
    "h2": ("00:00:00:00:02:02", "10.0.2.2"),
}


@functools.cache
def compiled_program() -> Any:
    """The LinkGuardian program, compiled once per process."""
    return compile_file(str(PROGRAM))


@dataclass
class ScenarioConfig:
    """The knobs of one run."""

    params: LGParams = field(default_factory=LGParams)
    lg_on: bool = True
    bidirectional: bool = False
    rate_bps: float = 25e9
    """Rate of the protected link."""
    host_rate_bps: float | None = None
    """Rate of the host links (None = rate_bps)."""
    delay_ns: int = 100
    pass_latency_ns: int = 300
    """Latency of each switch pass (ingress, egress, recirculation) unless given below."""
    ingress_latency_ns: int | None = None
    egress_latency_ns: int | None = None
    recirc_latency_ns: int | None = None
    clone_latency_ns: int = 0
    """Mirror-buffer latency of every clone (see Switch)."""
    rx_extra_delay_ns: int = 0
    """Extra delay of s1 -> s2 only, before s2's ingress (a receiver-side loopback filter)."""
    loss: float = 0.0
    """i.i.d. loss on s1 -> s2 (the protected direction)."""
    loss_back: float = 0.0
    """i.i.d. loss on s2 -> s1."""
    seed: int = 1
    recirc_queue_depth: int = 4096
    """Recirculation queue capacity (packets)."""
    recirc_buffer_bytes: int = 0
    """Recirculation queue capacity in bytes too (0 = packets only)."""
    recirc_rate_bps: float = 0.0
    """Bandwidth of the recirculation port (0 = unlimited: a loop costs only latency)."""
    mirror_rate_bps: float | None = None
    """Clones to the recirculation port get a serializer of their own at this rate (an
    internal recirculation port beside the loopback one); None = they share the port."""
    cell_bytes: int = 0
    """Count queue occupancy in cells of this size (0 = not counted)."""
    queue_buffer_bytes: int = 0
    """Capacity in bytes of each queue of the protected port (0 = packets only)."""
    queue_depth: int | None = None
    """Capacity in packets of each queue of the protected port (None = the TM's default)."""
    min_frame_bytes: int = 0
    """Short frames are padded to this on the protected link (60: Ethernet's minimum)."""
    wire_log: bool = True
    """Record every frame of the protected link (forward_log, backward_log, drop rules)."""
    keep_frames: bool = True
    """Hosts keep every frame they receive (`received`)."""
    loop_pps: float = 0.0
    """Queue rate of the loop port in packets/s (0: no loop port; Tx copies loop through the
    recirculation port, as on Tofino)."""
    engine: str | None = None
    """The switches' engine, "python" or "native" (None: LGKIT_ENGINE, else native, as
    Pipeline.load)."""


@dataclass
class DropRules:
    """Exact losses on one direction of the protected link, by what the frame carries."""

    originals: set[int] = field(default_factory=set)
    """17-bit sequence numbers whose original transmission is lost."""
    retx: dict[int, int] = field(default_factory=dict)
    """Sequence number -> how many of its retransmitted copies are lost (in order)."""
    dummies: int = 0
    """Lose this many dummies (the first ones)."""
    predicate: Callable[[LgWire | None, bytes], bool] | None = None
    """Any other rule: lose the frame when it returns True."""
    dropped: list[tuple[int, LgWire | None]] = field(default_factory=list)

    def should_drop(self, wire: LgWire | None, data: bytes) -> bool:
        if self.predicate is not None and self.predicate(wire, data):
            return True
        if wire is None or wire.seq is None:
            return False
        if wire.dummy:
            if self.dummies > 0:
                self.dummies -= 1
                return True
            return False
        if wire.retx:
            left = self.retx.get(wire.seq, 0)
            if left > 0:
                self.retx[wire.seq] = left - 1
                return True
            return False
        return wire.seq in self.originals


@dataclass
class WireRecord:
    """One frame seen at the far end of a link direction (before any drop rule)."""

    t_ns: int
    wire: LgWire | None
    length: int
    dropped: bool


class LGNet:
    """The two-switch network, configured and ready to run."""

    def __init__(self, config: ScenarioConfig | None = None,
                 layout: LGLayout = DEFAULT_LAYOUT) -> None:
        self.config = cfg = config or ScenarioConfig()
        self.layout = layout if cfg.loop_pps else replace(layout, loop_port=0)
        "Without a loop rate, Tx copies loop through the recirculation port (Tofino's model)."
        self.net = VirtualNetwork(seed=cfg.seed)
        program = compiled_program()
        self.pipelines = {name: Pipeline.load(program, seed=cfg.seed * 7 + i,
                                             engine=cfg.engine)
                          for i, name in enumerate(("s1", "s2"))}
        self.writers = {name: PipelineWriter(p) for name, p in self.pipelines.items()}
        self.switches = {
            name: self.net.add_switch(
                name, p, pass_latency_ns=cfg.pass_latency_ns, priority_queues=3,
                ingress_latency_ns=cfg.ingress_latency_ns,
                egress_latency_ns=cfg.egress_latency_ns,
                recirc_latency_ns=cfg.recirc_latency_ns, clone_latency_ns=cfg.clone_latency_ns)
            for name, p in self.pipelines.items()
        }
        self.hosts = {name: self.net.add_host(name, cfg.keep_frames) for name in HOSTS}
        s1, s2 = self.switches["s1"], self.switches["s2"]
        host_rate = cfg.host_rate_bps or cfg.rate_bps
        self.net.link(self.hosts["h1"], s1, port=HOST_PORT, rate_bps=host_rate, delay_ns=50)
        self.net.link(self.hosts["h2"], s2, port=HOST_PORT, rate_bps=host_rate, delay_ns=50)
        self.link = self.net.link(
            s1, s2, port_a=LINK_PORT, port_b=LINK_PORT, rate_bps=cfg.rate_bps,
            delay_ns=cfg.delay_ns, loss=IidLoss(cfg.loss) if cfg.loss else None,
            loss_back=IidLoss(cfg.loss_back) if cfg.loss_back else None,
            min_frame_bytes=cfg.min_frame_bytes)
        self.link.forward.delay_ns += cfg.rx_extra_delay_ns
        self.forward_rules = DropRules()
        self.backward_rules = DropRules()
        self.forward_log: list[WireRecord] = []
        self.backward_log: list[WireRecord] = []
        if cfg.wire_log:
            self._observe(self.link.forward, self.forward_rules, self.forward_log)
            self._observe(self.link.backward, self.backward_rules, self.backward_log)
        for name, switch in self.switches.items():
            self._configure_queues(switch)
            self._install_routes(name)
            apply_ops(self.writers[name], switch_setup_ops(self.layout))
        if cfg.lg_on:
            self.protect("s1", "s2", cfg.params)
            if cfg.bidirectional:
                self.protect("s2", "s1", cfg.params)

    # ---- set-up ----------------------------------------------------------------------------

    def _configure_queues(self, switch: Switch) -> None:
        cfg, tm, recirc = self.config, switch.tm, self.layout.recirc_port
        tm.set_queue_depth(cfg.recirc_queue_depth, port=recirc)
        if cfg.loop_pps:
            tm.set_queue_depth(cfg.recirc_queue_depth, port=self.layout.loop_port)
            tm.set_queue_rate(cfg.loop_pps, port=self.layout.loop_port)
        if cfg.recirc_buffer_bytes:
            tm.set_queue_bytes(cfg.recirc_buffer_bytes, port=recirc)
        if cfg.recirc_rate_bps:
            tm.set_port_rate(cfg.recirc_rate_bps, recirc, burst_bytes=0,
                             framing_bytes=ETHERNET_FRAMING_BYTES)
        if cfg.mirror_rate_bps is not None:
            tm.set_clone_lane(recirc, cfg.mirror_rate_bps, ETHERNET_FRAMING_BYTES,
                              depth=cfg.recirc_queue_depth, depth_bytes=cfg.recirc_buffer_bytes)
        if cfg.cell_bytes:
            tm.count_cells(cfg.cell_bytes)
        if cfg.queue_depth is not None:
            tm.set_queue_depth(cfg.queue_depth, port=LINK_PORT)
        if cfg.queue_buffer_bytes:
            tm.set_queue_bytes(cfg.queue_buffer_bytes, port=LINK_PORT)

    def _install_routes(self, name: str) -> None:
        table = self.pipelines[name].tables["LgIngress.forwarding.ipv4_lpm"]
        local = "h1" if name == "s1" else "h2"
        for host, (mac, ip) in HOSTS.items():
            port = HOST_PORT if host == local else LINK_PORT
            value = int.from_bytes(bytes(int(x) for x in ip.split(".")), "big")
            table.insert(TableEntry([Lpm(value, 32)], "LgIngress.forwarding.ipv4_forward",
                                    [int(mac.replace(":", ""), 16), port]))

    def _observe(self, direction: Any, rules: DropRules, log: list[WireRecord]) -> None:
        deliver = direction.deliver
        clock = self.net.clock

        def observed(data: bytes) -> None:
            wire = parse_lg(data)
            drop = rules.should_drop(wire, data)
            log.append(WireRecord(clock.now_ns(), wire, len(data), drop))
            if drop:
                rules.dropped.append((clock.now_ns(), wire))
                return
            deliver(data)

        direction.deliver = observed

    def protect(self, sender: str, receiver: str, params: LGParams) -> None:
        """Activate LG on the link from `sender` to `receiver` (receiver first)."""
        apply_ops(self.writers[receiver], activate_receiver_ops(LINK_PORT, params, self.layout))
        apply_ops(self.writers[sender], activate_sender_ops(LINK_PORT, params, self.layout))

    def unprotect(self, sender: str, receiver: str) -> None:
        """Deactivate LG on the link from `sender` to `receiver` (sender first)."""
        apply_ops(self.writers[sender], deactivate_sender_ops(LINK_PORT))
        apply_ops(self.writers[receiver], deactivate_receiver_ops(LINK_PORT))

    def set_mode(self, sender: str, mode: str) -> None:
        apply_ops(self.writers[sender], set_mode_ops(LINK_PORT, mode))

    def set_copies(self, sender: str, copies: int) -> None:
        apply_ops(self.writers[sender], set_copies_ops(LINK_PORT, copies, self.layout))

    def set_corruption(self, sender: str, probability: float) -> None:
        apply_ops(self.writers[sender], corruption_ops(LINK_PORT, probability))

    def set_ecn(self, switch: str, port: int, qdepth: int) -> None:
        apply_ops(self.writers[switch], ecn_ops(port, qdepth))

    # ---- traffic ---------------------------------------------------------------------------

    def frame(self, src: str, dst: str, pid: int, size: int = 1000, ecn: int = 0) -> bytes:
        (smac, sip), (dmac, dip) = HOSTS[src], HOSTS[dst]
        return udp_frame(smac, dmac, sip, dip, pid, size, ecn)

    def send_stream(self, count: int, pps: float, src: str = "h1", dst: str = "h2",
                    start_ns: int = 0, size: int = 1000, first_id: int = 0) -> None:
        """`count` frames from `src` to `dst`, ids first_id.., one every 1/pps seconds."""
        frames = (self.frame(src, dst, first_id + k, size) for k in range(count))
        self.hosts[src].send_at_rate(frames, pps, start_ns)

    def run(self, until_ns: int) -> None:
        self.net.run(until_ns)

    # ---- observation -----------------------------------------------------------------------

    def delivered(self, host: str = "h2") -> list[int]:
        """Packet ids that reached `host`, in arrival order."""
        ids = (packet_id(data) for _, data in self.hosts[host].received)
        return [i for i in ids if i is not None]

    def register(self, switch: str, name: str, index: int = LINK_PORT) -> int:
        return self.writers[switch].read_register(name, index)

    def counter(self, switch: str, name: str, index: int = LINK_PORT) -> int:
        """Packets counted by counter `name` at `index`."""
        return int(self.pipelines[switch].counters[name].read(index)[0])

    def queue_depths(self, switch: str, port: int = LINK_PORT) -> list[int]:
        return self.switches[switch].tm.queue_depths(port)

    def wire_kinds(self, log: list[WireRecord]) -> Counter[str]:
        """How many frames of each kind crossed a direction."""
        kinds: Counter[str] = Counter()
        for rec in log:
            kinds[wire_kind(rec.wire)] += 1
        return kinds


def wire_kind(wire: LgWire | None) -> str:
    """A short name for what a frame is: data, retx, dummy, ack, notify, pause, resume, plain."""
    if wire is None:
        return "plain"
    if wire.seq is not None:
        return "dummy" if wire.dummy else "retx" if wire.retx else "data"
    if wire.holes is not None:
        return "notify"
    if wire.pause is not None:
        return "pause" if wire.pause else "resume"
    return "ack_piggyback" if wire.piggybacked else "ack"
