"""The switch's native port loop: a C thread runs the packet path of the real ports while the
port loop's Python thread keeps tables, counters, timers and logs in step."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lgkit.sw.exec.native.device import NativeDevice, monotonic_start
from lgkit.sw.exec.native.select import NativeUntimed

if TYPE_CHECKING:
    from lgkit.sw.exec.native.engine import NativeEngine

    from .switch import Switch

POLL_S = 0.005
"""How often the Python thread copies changed tables into the C loop: a table write reaches the
packets within about this."""
SYNC_S = 0.05
"""How often it adds the loop's counters into the switch's and checks that the traffic manager
still sends at once (a rate set on a port takes effect within about this). At 2 ms for both the
Python thread took 9% of the native switch's CPU under 64 B floods (perf, docs/performance.md)."""
COUNTS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")
"""The port counters the switch keeps too (PortStats)."""
DROPS = {"ingress_drop": "ingress_drop", "egress_drop": "egress_drop",
         "no_such_port": "no_such_port", "tx_error": "tx_error",
         "needs_python": "native_unsupported", "rx_truncated": "rx_truncated",
         "bad_priority": "bad_priority", "pass_timeout": "pass_timeout"}
"""The device's counters that are drops, by the switch's name for them."""


def native_engine_of(switch: Switch, pcap_dir: str | None, log: logging.Logger
                     ) -> NativeEngine | None:
    """The native engine of the switch's pipeline when the C loop can carry its packets: a
    program without clones, recirculation, resubmission, multicast or truncation, a traffic
    manager that sends at once, no CPU port, pass latencies, pcap or debug log."""
    pl = switch.pipeline
    if pl is None or not isinstance(pl.arch, NativeUntimed):
        return None
    engine = pl.arch.native
    if engine.program.requests or switch.cpu_port is not None or switch.timed:
        return None
    if pcap_dir is not None or log.isEnabledFor(logging.DEBUG):
        return None
    return engine if switch.tm.sends_at_once() else None


class NativeSession:
    """One run of the C loop over `ports` ((switch port, socket fd) pairs); `sync` adds what
    it counted since the last call into the switch's counters."""

    def __init__(self, switch: Switch, engine: NativeEngine,
                 ports: list[tuple[int, int]]) -> None:
        self.switch = switch
        self.engine = engine
        self.device = NativeDevice(engine, monotonic_start(switch.clock.now_ns()))
        self.device.set_priority_queues(switch.tm.priority_queues)
        self.ports = [port for port, _ in ports]
        try:
            for port, fd in ports:
                self.device.add_port(port, fd)
        except ValueError:
            self.device.close()
            raise
        self._seen: dict[str, int] = {}
        self._port_seen: dict[int, dict[str, int]] = {p: dict.fromkeys(COUNTS, 0)
                                                      for p in self.ports}

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
        for name, count in new.items():
            if name in DROPS:
                switch.drops[DROPS[name]] += count
            elif name in ("ingress", "egress"):
                switch.passes[name] += count
        for port in self.ports:
            counts = self.device.port_counters(port)
            seen = self._port_seen[port]
            stats = switch.stats(port)
            for name in COUNTS:
                if counts[name] != seen[name]:
                    setattr(stats, name, getattr(stats, name) + counts[name] - seen[name])
            self._port_seen[port] = counts
        return new

    def failed_ports(self) -> list[tuple[int, int]]:
        """(port, errno) of the ports a socket error took out of the loop."""
        errors = ((port, self.device.port_counters(port)["error"]) for port in self.ports)
        return [(port, err) for port, err in errors if err]
