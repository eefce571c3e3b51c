"""Run a scenario's phases on a testbed and record one row per phase in the results store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Protocol

from lgkit.control.corruptd import Corruptd
from lgkit.control.notify import LocalNotifier, Notifier, ProtectRequest, RedisNotifier
from lgkit.control.redis_server import RedisServer
from lgkit.measure.collect import CounterSampler
from lgkit.measure.loss import PointCounts
from lgkit.measure.results import RunStore
from lgkit.net.inject.injectors import Injector
from lgkit.net.spec.scenario import Scenario
from lgkit.net.testbed.testbed import Testbed
from lgkit.workloads.iperf import IperfServer, run_tcp

Log = Callable[[str], None]
SETTLE_S = 0.5
"Wait after a flow before reading counters, so that frames in flight are counted."


class Protection(Protocol):
    """Turns LinkGuardian on or off on the protected link of a testbed."""

    def enable(self, loss: float) -> int:
        """Protect the link for a measured loss rate; returns the copies per retransmission."""

    def disable(self) -> None:
        """Stop protecting the link."""


@dataclass
class PhaseResult:
    """One row of the phases table."""

    phase: str
    configured_loss: float
    link_loss: float
    effective_loss: float
    retransmits: int
    goodput_mbps: float
    frames_on_link: int
    lg_on_after_s: float | None = None
    "corruptd phase: seconds from the flow's start until LinkGuardian came on."
    effective_lg_on: float | None = None
    "Effective loss while LinkGuardian was on."
    retransmits_lg_on: int | None = None
    "TCP retransmissions in the 1 s intervals that began with LinkGuardian on."


@dataclass(frozen=True)
class Activation:
    """When corruptd switched LinkGuardian on, and the counters at that moment."""

    at_s: float
    counts: PointCounts


class PhaseRunner:
    """Runs phases on one testbed with one injector."""

    def __init__(self, testbed: Testbed, scenario: Scenario, injector: Injector | None,
                 store: RunStore, protection: Protection | None, notifier: str = "redis",
                 log: Log = print) -> None:
        self.testbed, self.scenario, self.injector = testbed, scenario, injector
        self.store, self.protection, self.notifier_kind, self.log = (
            store, protection, notifier, log)
        self._flow_start = time.monotonic()
        self._activation: Activation | None = None

    def run(self, phase: str) -> PhaseResult:
        """Run one phase: lg_off, lg_on or corruptd."""
        if phase == "lg_off":
            result = self._measure(phase)
        elif self.protection is None:
            raise RuntimeError(f"phase {phase} needs LinkGuardian, which this testbed lacks")
        elif phase == "corruptd":
            result = self._with_corruptd()
        elif phase == "lg_on":
            result = self._with_lg(self.protection)
        else:
            result = self._measure(phase)
        self.store.append("phases", asdict(result))
        return result

    def _with_lg(self, protection: Protection) -> PhaseResult:
        """The lg_on phase: LinkGuardian on for the whole flow."""
        copies = protection.enable(self.scenario.loss.rate)
        self.log(f"LinkGuardian on ({copies} copies per retransmission)")
        try:
            result = self._measure("lg_on")
        finally:
            protection.disable()
        result.effective_lg_on = result.effective_loss
        result.retransmits_lg_on = result.retransmits
        return result

    def _record_drops(self, phase: str, before: dict[tuple[str, str], int]) -> None:
        """Append the switches' drops during the phase, by cause, to the `drops` table."""
        for (switch, cause), count in sorted(self.testbed.drop_counts().items()):
            if count > before.get((switch, cause), 0):
                self.store.append("drops", {"phase": phase, "switch": switch, "cause": cause,
                                            "packets": count - before.get((switch, cause), 0)})

    def _measure(self, phase: str) -> PhaseResult:
        flow = self.scenario.flow
        client = self.testbed.network.node(flow.client)
        server = self.testbed.network.node(flow.server)
        drops_before = self.testbed.drop_counts()
        with IperfServer(server), CounterSampler(self.store, phase, self.testbed.counts):
            before = self.testbed.counts()
            self._flow_start = time.monotonic()
            tcp = run_tcp(client, server.IP(), flow.seconds, flow.congestion)
            time.sleep(SETTLE_S)
            end = self.testbed.counts()
        delta = end - before
        self._record_drops(phase, drops_before)
        result = PhaseResult(phase, self.scenario.loss.rate, delta.actual_loss,
                             delta.effective_loss, tcp.retransmits, tcp.goodput_mbps, delta.b)
        if self._activation is not None:
            result.lg_on_after_s = round(self._activation.at_s, 3)
            result.effective_lg_on = (end - self._activation.counts).effective_loss
            result.retransmits_lg_on = tcp.retransmits_from(self._activation.at_s)
        return result

    def _notifier(self, stack: list) -> Notifier:
        if self.notifier_kind == "local":
            return LocalNotifier()
        server = RedisServer().start()
        stack.append(server.stop)
        self.log(f"corruptd: Redis pub/sub on {server.url}")
        return RedisNotifier(server.url)

    def _with_corruptd(self) -> PhaseResult:
        cleanups: list[Callable[[], None]] = []
        self._activation = None
        try:
            notifier = self._notifier(cleanups)
            cleanups.append(notifier.close)
            notifier.subscribe(self._on_request)
            daemon = Corruptd(notifier, self.scenario.corruptd)
            a, b = self.testbed.spec.protected
            daemon.watch(f"{a}-{b}", self._link_frames)
            daemon.start()
            cleanups.append(daemon.stop)
            return self._measure("corruptd")
        finally:
            for cleanup in reversed(cleanups):
                cleanup()
            if self._activation is not None and self.protection is not None:
                self.protection.disable()
            self._activation = None

    def _link_frames(self) -> tuple[int, int]:
        counts = self.testbed.counts()
        return counts.b, counts.c

    def _on_request(self, request: ProtectRequest) -> None:
        assert self.protection is not None
        if request.protect:
            copies = self.protection.enable(request.loss)
            self._activation = Activation(time.monotonic() - self._flow_start,
                                          self.testbed.counts())
            self.log(f"corruptd: link {request.link} loss {request.loss:.2e} over "
                     f"{request.frames} frames -> LinkGuardian on ({copies} copies)")
        else:
            self.protection.disable()
            self.log(f"corruptd: link {request.link} repaired -> LinkGuardian off")


def format_table(rows: list[PhaseResult]) -> str:
    """The short per-phase table printed by `lgkit demo` and `lgkit run`: the whole phase, then
    the part with LinkGuardian on."""
    header = (f"{'phase':<10}{'configured':>11}{'link loss':>11}{'effective':>11}"
              f"{'retx':>6}{'goodput':>13} |{'LG on at':>9}{'effective':>11}{'retx':>6}")
    lines = [header, "-" * len(header)]
    for r in rows:
        at = f"{r.lg_on_after_s:.1f} s" if r.lg_on_after_s is not None else "-"
        if r.phase == "lg_on":
            at = "start"
        eff = f"{r.effective_lg_on:.2e}" if r.effective_lg_on is not None else "-"
        retx = str(r.retransmits_lg_on) if r.retransmits_lg_on is not None else "-"
        lines.append(f"{r.phase:<10}{r.configured_loss:>11.2e}{r.link_loss:>11.2e}"
                     f"{r.effective_loss:>11.2e}{r.retransmits:>6}"
                     f"{r.goodput_mbps:>8.2f} Mb/s |{at:>9}{eff:>11}{retx:>6}")
    return "\n".join(lines)
