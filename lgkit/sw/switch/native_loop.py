"""The switch's native port loop: a C thread runs the packet path of the real ports (passes,
jobs, traffic manager) while the port loop's Python thread keeps tables, the traffic manager's
settings, counters, timers, the CPU port and logs in step."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lgkit.sw.exec.native.device import NativeDevice, monotonic_start
from lgkit.sw.exec.native.device_c import PRIORITIES
from lgkit.sw.exec.native.select import NativeUntimed, jobs_settings

from .tm import period_ns

if TYPE_CHECKING:
    from lgkit.sw.exec.native.engine import NativeEngine

    from .switch import Switch

POLL_S = 0.005
"""How often the Python thread copies changed tables and traffic manager settings into the C
loop and hands the CPU port's frames on: a table write or a rate reaches the packets within
about this."""
SYNC_S = 0.05
"""How often it adds the loop's counters into the switch's. At 2 ms the Python thread took 9%
of the native switch's CPU under 64 B floods (perf, docs/performance.md)."""
COUNTS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")
"""The port counters the switch keeps too (PortStats)."""
DROPS = {"ingress_drop": "ingress_drop", "egress_drop": "egress_drop",
         "no_such_port": "no_such_port", "tx_error": "tx_error",
         "rx_truncated": "rx_truncated", "bad_priority": "bad_priority",
         "queue_full": "queue_full", "recirc_queue_full": "recirc_queue_full",
         "out_of_memory": "native_out_of_memory", "cpu_queue_full": "cpu_queue_full",
         "pass_timeout": "pass_timeout"}
"""The device's counters that are drops, by the switch's name for them."""
PASSES = ("ingress", "egress", "recirc")


def native_engine_of(switch: Switch, pcap_dir: str | None, log: logging.Logger
                     ) -> NativeEngine | None:
    """The native engine of the switch's pipeline when the C loop can carry its packets: no
    pass latencies (virtual time), pcap or debug log, and a traffic manager with nothing
    queued or paused and no recirculation in flight (it takes over from there)."""
    pl = switch.pipeline
    if pl is None or not isinstance(pl.arch, NativeUntimed) or switch.timed:
        return None
    if pcap_dir is not None or log.isEnabledFor(logging.DEBUG):
        return None
    return pl.arch.native if switch.tm.idle() and switch.quiet() else None


class NativeSession:
    """One run of the C loop over `ports` ((switch port, socket fd) pairs), each read through
    a PACKET_MMAP ring where one can be set up (`no_ring`: (port, errno) of those that could
    not): `push` copies the settings into it, `sync` adds what it counted since the last call
    into the switch's counters, `take` hands its CPU port's frames on."""

    def __init__(self, switch: Switch, engine: NativeEngine,
                 ports: list[tuple[int, int]]) -> None:
        self.switch = switch
        self.engine = engine
        self.device = NativeDevice(engine, monotonic_start(switch.clock.now_ns()))
        self.ports = [port for port, _ in ports]
        try:
            for port, fd in ports:
                self.device.add_port(port, fd)
        except ValueError:
            self.device.close()
            raise
        if switch.cpu_port is not None:
            self.device.set_cpu_port(switch.cpu_port)
        self._settings: tuple | None = None
        self._jobs: tuple[list[int], list[int]] | None = None
        self.push()
        errors = ((port, self.device.add_ring(port)) for port in self.ports)
        self.no_ring = [(port, err) for port, err in errors if err]
        self._seen: dict[str, int] = {}
        self._port_seen: dict[int, dict[str, int]] = {p: dict.fromkeys(COUNTS, 0)
                                                      for p in self.ports}
        self._queue_drops = self.device.queue_drops()

    def push(self) -> None:
        """The traffic manager's settings and the pipeline's clone sessions and multicast
        groups into the loop, when they changed (under the switch's lock)."""
        settings = self.switch.tm.settings()
        pl = self.switch.pipeline
        jobs = jobs_settings(pl) if pl is not None else ([], [])
        if settings == self._settings and jobs == self._jobs:
            return
        device = self.device
        with device.locked():
            if settings != self._settings:
                nprio, cell, late_ns, depths, rates, ports = settings
                device.set_tm(nprio, cell, late_ns)
                for prio, (depth, pps) in enumerate(zip(depths, rates, strict=True)):
                    device.set_defaults(prio, depth, period_ns(pps))
                for lane, port, rate, burst, framing, min_frame, queues in ports:
                    device.set_rate(port, lane, rate, burst, framing, min_frame)
                    for prio, (depth, depth_bytes, pps) in enumerate(queues):
                        device.set_queue(port, lane, prio, depth, depth_bytes, period_ns(pps))
            if jobs != self._jobs:
                device.set_sessions(jobs[0])
                device.set_groups(jobs[1])
        self._settings, self._jobs = settings, jobs
        device.kick()

    def take(self) -> None:
        """The frames the loop sent to the CPU port, to the switch's packet-in handlers."""
        switch = self.switch
        for port, data in self.device.take():
            switch.deliver(port, data)

    def inject(self, port: int, data: bytes) -> bool:
        """A controller's frame into the loop (Switch.injector)."""
        return self.device.inject(port, data)

    def start(self) -> None:
        """Run the C loop, its passes under the switch's pass watchdog when it has one."""
        self.device.start()
        if self.switch.guard is not None:
            self.switch.guard.watch_loop(self.device)

    def stop(self) -> bool:
        """Stop the C loop (the watchdog still guarding a pass it is stuck in), then no longer
        watch it; False when it did not end in time."""
        stopped = self.device.stop()
        if self.switch.guard is not None:
            self.switch.guard.watch_loop(None)
        return stopped

    def sync(self) -> dict[str, int]:
        """Collect the device's counters into the switch's (under its lock); returns the new
        counts by device name."""
        switch = self.switch
        now = self.device.counters()
        new = {k: v - self._seen.get(k, 0) for k, v in now.items() if v != self._seen.get(k, 0)}
        self._seen = now
        ring_drops = self.device.ring_drops()
        if ring_drops:
            switch.drops["rx_socket_overflow"] += ring_drops
        for name, count in new.items():
            if name in DROPS:
                switch.drops[DROPS[name]] += count
            elif name in PASSES:
                switch.passes[name] += count
        switch.recirculations += new.get("recirculations", 0)
        switch.lane_recirculations += new.get("lane_recirculations", 0)
        if new.get("queue_full"):
            self._count_queue_drops()
        for port in self.ports:
            counts = self.device.port_counters(port)
            seen = self._port_seen[port]
            stats = switch.stats(port)
            for name in COUNTS:
                if counts[name] != seen[name]:
                    setattr(stats, name, getattr(stats, name) + counts[name] - seen[name])
            self._port_seen[port] = counts
        return new

    def _count_queue_drops(self) -> None:
        drops = self.device.queue_drops()
        queue_drops = self.switch.tm.queue_drops
        for i, (now, seen) in enumerate(zip(drops, self._queue_drops, strict=True)):
            if now != seen:
                queue_drops[divmod(i, PRIORITIES)] += now - seen
        self._queue_drops = drops

    def failed_ports(self) -> list[tuple[int, int]]:
        """(port, errno) of the ports a socket error took out of the loop."""
        errors = ((port, self.device.port_counters(port)["error"]) for port in self.ports)
        return [(port, err) for port, err in errors if err]
