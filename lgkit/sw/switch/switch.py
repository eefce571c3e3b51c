"""The v1model switch: ports, pipeline passes and the traffic manager, on any clock."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from lgkit.sw.exec.pfc import ETHERTYPE_PFC

from .clock import Clock, RealClock
from .tm import CLONE_INSTANCE_TYPES, TrafficManager
from .watchdog import Watchdog

if TYPE_CHECKING:
    from ..exec.jobs import EgressJob, IngressJob, IngressResult
    from ..exec.pipeline import Pipeline

RECIRC_QUEUE_CAPACITY = 1024
INPUT_QUEUE_CAPACITY = 1024
REAL_TIME_LATE_TOLERANCE_NS = 10_000_000
"""How late a real-time timer of the traffic manager may fire (the event loop busy with a batch of
passes, the process descheduled on a shared CPU) and still have its departure counted when it
was due, for queue rates and port rates alike: the following packets catch up, so a shaped port
keeps its rate. With LinkGuardian on at 60 Mb/s, the LG sender's timers fired 2-16 ms late
hundreds of times in a 5 s flow: with no tolerance on the port rate its protected port stood
idle 26% of the time while packets waited, with 2 ms 18%, with 10 ms 0.4%; the queue behind it
overflowed and lost packets LG never saw (docs/performance.md)."""


class PortBackend(Protocol):
    """Where a switch port's transmitted frames go (an AF_PACKET socket, a simulated link)."""

    def send(self, data: bytes) -> None: ...


class PortStats:
    """Frames and bytes received and transmitted on one port."""

    __slots__ = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")

    def __init__(self) -> None:
        self.rx_packets = self.rx_bytes = self.tx_packets = self.tx_bytes = 0

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


class Switch:
    """A v1model switch. The same object runs on real ports (RealClock, AF_PACKET backends) and
    in a virtual-time network (VirtualClock, simulated links).

    A packet's path: `receive` -> ingress pass -> `tm` queue -> egress pass -> port backend (or
    `packet_in_handlers` for the CPU port). Resubmitted and recirculated packets re-enter the
    ingress through a 1024-packet queue served before new packets.

    Latencies (for virtual time; pipelined, they delay but do not limit throughput), each
    `pass_latency_ns` unless given: `ingress_latency_ns` from a pass's start (arrival or
    recirculation) to the TM queue, `egress_latency_ns` from the dequeue to the wire,
    `recirc_latency_ns` from the dequeue at the recirculation port (after its serialization, if
    the port has a rate) back to the ingress; `clone_latency_ns` (default 0)
    delays a clone's entry into its queue (a mirror buffer). Each pass computes at its start;
    the latency is paid after it.
    """

    def __init__(self, device_id: int = 0, cpu_port: int | None = None, priority_queues: int = 1,
                 drop_port: int = 511, clock: Clock | None = None,
                 log: logging.Logger | None = None, pass_latency_ns: int = 0,
                 ingress_latency_ns: int | None = None, egress_latency_ns: int | None = None,
                 recirc_latency_ns: int | None = None, clone_latency_ns: int = 0,
                 max_parser_transitions: int | None = None,
                 max_loop_iterations: int | None = None) -> None:
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.max_parser_transitions = max_parser_transitions
        "Parser states a packet may visit, set on every pipeline installed (None: its default)."
        self.max_loop_iterations = max_loop_iterations
        "Loop iterations a pass may run, set on every pipeline installed (None: its default)."
        self.clock: Clock = clock if clock is not None else RealClock()
        self.log = log if log is not None else logging.getLogger("lgkit.switch")
        self.ingress_latency_ns = _given(ingress_latency_ns, pass_latency_ns)
        self.egress_latency_ns = _given(egress_latency_ns, pass_latency_ns)
        self.recirc_latency_ns = _given(recirc_latency_ns, pass_latency_ns)
        self.clone_latency_ns = clone_latency_ns
        if min(self.ingress_latency_ns, self.egress_latency_ns, self.recirc_latency_ns,
               clone_latency_ns) < 0:
            raise ValueError("latencies must be >= 0")
        self.timed = bool(self.ingress_latency_ns or self.egress_latency_ns
                          or self.recirc_latency_ns or clone_latency_ns)
        """Whether passes take time (virtual time): then arrivals wait in a bounded input
        queue while their ingress pass is in flight."""
        self.lock = threading.RLock()
        self.pipeline: Pipeline | None = None
        self.drops: Counter[str] = Counter()
        self.passes: Counter[str] = Counter()
        "Pipeline passes by kind: ingress (new packets), recirc (recirculated), egress."
        late_tolerance_ns = REAL_TIME_LATE_TOLERANCE_NS if isinstance(self.clock, RealClock) else 0
        self.tm = TrafficManager(self.clock, priority_queues, self._egress_pass, self.drops,
                                 late_tolerance_ns)
        self.ports: dict[int, PortBackend] = {}
        self.port_stats: dict[int, PortStats] = {}
        self.packet_in_handlers: list[Callable[[bytes], None]] = []
        self.on_pipeline_change: list[Callable[[Pipeline | None], None]] = []
        self.on_entries_added: list[Callable[[int], None]] = []
        "Called by a control plane with the number of table entries a write request added."
        self.guard: Watchdog | None = None
        "Aborts passes that run too long (real time, set by the port loop); None: unguarded."
        self.injector: Callable[[int, bytes], bool] | None = None
        """Where a controller's frame goes instead of `receive` while another data path carries
        the packets (the native port loop): False when it had no room."""
        self._generation = 0
        self._recirc_pending = 0
        self._input_pending = 0
        self.recirculations = 0
        """Packets sent back to ingress (recirculated or resubmitted) since start."""
        self.lane_recirculations = 0
        """Of those, clones recirculated from a clone lane (TrafficManager.set_clone_lane)."""

    # ---- configuration -------------------------------------------------------------------

    def set_pipeline(self, pipeline: Pipeline | None) -> None:
        """Install a program (fresh state); queued and in-flight packets of the old one drop."""
        with self.lock:
            self._generation += 1
            self.tm.flush()
            self._recirc_pending = 0
            self._input_pending = 0
            if pipeline is not None and hasattr(pipeline, "drop_port"):
                pipeline.drop_port = self.drop_port
                if self.max_parser_transitions is not None:
                    pipeline.max_parser_transitions = self.max_parser_transitions
                if self.max_loop_iterations is not None:
                    pipeline.max_loop_iterations = self.max_loop_iterations
            self.pipeline = pipeline
            for hook in self.on_pipeline_change:
                hook(pipeline)

    def add_port(self, port: int, backend: PortBackend) -> None:
        if not 0 <= port < 512:
            raise ValueError(f"port {port} does not fit bit<9>")
        if port == self.cpu_port:
            raise ValueError(f"port {port} is the CPU port")
        if port in self.ports:
            raise ValueError(f"port {port} is already attached")
        self.ports[port] = backend
        self.port_stats[port] = PortStats()

    def stats(self, port: int) -> PortStats:
        st = self.port_stats.get(port)
        if st is None:
            st = self.port_stats[port] = PortStats()
        return st

    # ---- data path -----------------------------------------------------------------------

    def receive(self, port: int, data: bytes) -> None:
        """A frame arrived on `port`."""
        st = self.port_stats.get(port) or self.stats(port)
        st.rx_packets += 1
        st.rx_bytes += len(data)
        if data[12:14] == ETHERTYPE_PFC:  # the MAC's: PFC pauses this port's queues (tm.py)
            with self.lock:
                if self.tm.receive_pfc(port, data):
                    return
        if self.timed:
            if self._input_pending >= INPUT_QUEUE_CAPACITY:
                self.drops["input_queue_full"] += 1
                return
            self._input_pending += 1
        self._ingress(port, data, self._generation)

    def packet_out(self, data: bytes) -> None:
        """A controller packet (starting with the packet_out header) enters on the CPU port."""
        if self.cpu_port is None:
            raise ValueError("the switch has no CPU port (--cpu-port)")
        with self.lock:
            if self.injector is None:
                self.receive(self.cpu_port, data)
                return
            st = self.stats(self.cpu_port)
            st.rx_packets += 1
            st.rx_bytes += len(data)
            if not self.injector(self.cpu_port, data):
                self.drops["packet_out_full"] += 1

    def quiet(self) -> bool:
        """Whether no packet is between passes (recirculating, or waiting for its ingress)."""
        return not (self._recirc_pending or self._input_pending)

    def _ingress(self, port: int, packet: bytes | IngressJob, generation: int) -> None:
        """One ingress pass of a frame that arrived on `port` or of a resubmitted/recirculated
        job."""
        with self.lock:
            if generation != self._generation:
                return
            pipeline = self.pipeline
            if pipeline is None:
                self.drops["no_pipeline"] += 1
                return
            now_us = self.clock.now_ns() // 1000
            new_packet = isinstance(packet, bytes)
            self.passes["ingress" if new_packet else "recirc"] += 1
            guard = self.guard
            if guard is None:
                result = pipeline.ingress(port, packet, now_us) if isinstance(packet, bytes) \
                    else pipeline.ingress_job(packet, now_us)
            else:
                result = guard.run(pipeline.ingress, port, packet, now_us) if new_packet \
                    else guard.run(pipeline.ingress_job, packet, now_us)
                if result is None:
                    self.drops["pass_timeout"] += 1
                    if self.timed and new_packet:
                        self._input_pending -= 1
                    return
            if result.drops:
                self.drops["ingress_drop"] += result.drops
            if self.timed:
                self.clock.call_later(self.ingress_latency_ns, self._after_ingress, result,
                                      new_packet, generation)
                return
            enqueue = self.tm.enqueue
            for egress_job in result.egress:
                enqueue(egress_job)
            if result.resubmit is not None:
                self._recirculate(result.resubmit)

    def _after_ingress(self, result: IngressResult, new_packet: bool, generation: int) -> None:
        with self.lock:
            if generation != self._generation:
                return
            if new_packet:
                self._input_pending -= 1
            enqueue = self.tm.enqueue
            for job in result.egress:
                if self.clone_latency_ns and job.instance_type in CLONE_INSTANCE_TYPES:
                    self._clone(job)
                else:
                    enqueue(job)
            if result.resubmit is not None:
                self._recirculate(result.resubmit)

    def _clone(self, job: EgressJob) -> None:
        """A clone enters its queue after the mirror buffer's latency."""
        self.clock.call_later(self.clone_latency_ns, self._enqueue_clone, job, self._generation)

    def _enqueue_clone(self, job: EgressJob, generation: int) -> None:
        with self.lock:
            if generation == self._generation:
                self.tm.enqueue(job)

    def _recirculate(self, job: IngressJob, from_lane: bool = False, wire_ns: int = 0) -> None:
        """Queue a resubmitted or recirculated packet for another ingress pass (served first),
        after the recirculation latency and `wire_ns`, its serialization at the recirculation
        port's rate (the port's rate limiter paces the next packet, not this one)."""
        if self._recirc_pending >= RECIRC_QUEUE_CAPACITY:
            self.drops["recirc_queue_full"] += 1
            return
        self._recirc_pending += 1
        self.recirculations += 1
        if from_lane:
            self.lane_recirculations += 1
        self.clock.call_later(self.recirc_latency_ns + wire_ns, self._recirc_ingress, job,
                              self._generation)

    def _recirc_ingress(self, job: IngressJob, generation: int) -> None:
        if generation != self._generation:
            return
        self._recirc_pending -= 1
        self._ingress(0, job, generation)

    def _egress_pass(self, job: EgressJob, now_us: int, enq_qdepth: int, deq_qdepth: int,
                     enq_timestamp: int, deq_timedelta: int) -> int:
        """Called by the TM at dequeue; returns the bytes put on the wire or looped back to
        ingress (so a rate on the recirculation port limits recirculation), 0 if none."""
        self.passes["egress"] += 1
        pipeline = self.pipeline
        if pipeline is None:  # the TM was flushed with the old program; nothing is queued
            return 0
        egress = pipeline.egress
        if self.guard is None:
            result = egress(job, now_us, enq_qdepth, deq_qdepth, enq_timestamp, deq_timedelta)
        else:
            result = self.guard.run(egress, job, now_us, enq_qdepth, deq_qdepth, enq_timestamp,
                                    deq_timedelta)
            if result is None:
                self.drops["pass_timeout"] += 1
                return 0
        if result.clones:
            for clone in result.clones:
                if self.clone_latency_ns:
                    self._clone(clone)
                else:
                    self.tm.enqueue(clone)
        if result.recirculate is not None:
            lanes = self.tm.clone_lanes
            from_lane = bool(lanes) and job.port in lanes \
                and job.instance_type in CLONE_INSTANCE_TYPES
            nbytes = len(result.recirculate.data)
            self._recirculate(result.recirculate, from_lane,
                              self.tm.wire_ns(job.port, nbytes, from_lane))
            return nbytes
        out = result.out
        if out is None:
            if result.dropped:
                self.drops["egress_drop"] += 1
            return 0
        port, data = out
        if self.timed:
            self.clock.call_later(self.egress_latency_ns, self._transmit, port, data,
                                  self._generation)
            return len(data)
        backend = self.ports.get(port)
        if backend is None or port == self.cpu_port:  # the rare cases
            self._transmit(port, data, self._generation)
            return len(data)
        st = self.port_stats[port]
        st.tx_packets += 1
        st.tx_bytes += len(data)
        backend.send(data)
        return len(data)

    def deliver(self, port: int, data: bytes) -> None:
        """A frame another data path sent to `port` (the native loop's CPU port frames)."""
        self._transmit(port, data, self._generation)

    def _transmit(self, port: int, data: bytes, generation: int) -> None:
        if generation != self._generation:
            return
        if port == self.cpu_port:
            st = self.port_stats.get(port) or self.stats(port)
            st.tx_packets += 1
            st.tx_bytes += len(data)
            for handler in self.packet_in_handlers:
                handler(data)
            return
        backend = self.ports.get(port)
        if backend is None:
            self.drops["no_such_port"] += 1
            return
        st = self.port_stats[port]
        st.tx_packets += 1
        st.tx_bytes += len(data)
        backend.send(data)

    def counters(self) -> dict[str, Any]:
        """Drop counters by cause (with the program's dropped digests), the traffic manager's
        tail drops by (port, priority) queue, pipeline passes by kind and per-port frame
        counters."""
        with self.lock:
            drops = dict(self.drops)
            if self.pipeline is not None and self.pipeline.digests.dropped:
                drops["digest_dropped"] = self.pipeline.digests.dropped
            return {
                "drops": dict(sorted(drops.items())),
                "queue_drops": dict(sorted(self.tm.queue_drops.items())),
                "passes": dict(sorted(self.passes.items())),
                "ports": {p: s.as_dict() for p, s in sorted(self.port_stats.items())},
            }


def _given(value: int | None, default: int) -> int:
    return default if value is None else value
