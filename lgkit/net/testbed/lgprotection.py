"""LinkGuardian on the testbed's protected link, and the in-P4 dropper, over P4Runtime."""

from __future__ import annotations

from lgkit.control.linkguardian import (
    LGLayout,
    LGParams,
    ProtectedLink,
    apply_ops,
    switch_setup_ops,
)
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.control.tna_setup import TNA_LAYOUT, TnaLGWriter, timer_command, tna_params
from lgkit.core.targets import target_kind
from lgkit.net.testbed.testbed import FRAME_BITS, LG_PROGRAM, TNA_PROGRAM, Testbed, frames_per_s

TIMEOUT_FRAMES = 20
"ackNoTimeout on scaled links: at least this many full frame times (7 us is ~60 frames at 100G)."
RESUME_WINDOW_US = 20_000
"""The reordering buffer's resumeThreshold is what the link carries in half of this or of
TIMEOUT_FRAMES frame times, whichever is longer (at least the paper's 37 KB): sized for an
ordinary recovery, not for the timeout's margin, so backpressure still bounds a long stall."""
RECIRC_QUEUE_DEPTH = 1024
"""Packets the recirculation and loop ports may queue (clones on their way back to ingress,
reordered and held packets, Tx copies)."""
COURIER_RATE_SHARE = 0.5
"""Queue rate of the protected ports' courier queue (priority 0: the dummy and the explicit
ACK), as a multiple of the link's full-size frame rate. Each courier clones itself on every
departure while its budget lasts, so without a rate a receiver sends ~3 explicit ACKs per data
packet; each is a pipeline pass at both ends, which costs a software switch as much as the data.
At half the frame rate a courier still leaves within two frame times."""
LOOP_RATE_SHARE = 2.0
"""Queue rate of the loop port, where Tx-buffer copies wait for their ACK, as a multiple of the
link's full-size frame rate: each copy is checked about LOOP_RATE_SHARE times while the link
runs full, instead of spinning through the pipeline as fast as the CPU allows (like Tofino's
recirculation port, whose bandwidth is fixed). It must stay above 1: every copy needs at least
one check after its ACK arrives."""
MIN_LOSS = 1e-9
"Eq. 2 needs a loss rate > 0; a link measured loss-free is treated as this."



def lg_available() -> bool:
    """True when the LinkGuardian program is in p4/."""
    return LG_PROGRAM.exists()


class TestbedProtection:
    """Turns LG on and off on the testbed's protected link (receiver first, sender last)."""

    __test__ = False  # not a pytest class

    def __init__(self, testbed: Testbed, target_loss: float) -> None:
        sender, receiver = testbed.spec.protected
        self.testbed, self.target_loss = testbed, target_loss
        self.ports = (testbed.network.port(sender, receiver),
                      testbed.network.port(receiver, sender))
        self.tna = {s for s in (sender, receiver) if testbed.program_of(s) == TNA_PROGRAM}
        "The LG switches that run the TNA program (the rest run the v1model one)."
        self.layouts = {s: TNA_LAYOUT if s in self.tna else LGLayout() for s in (sender, receiver)}
        self.writers = {s: self._writer(s) for s in (sender, receiver)}
        self.loop_share = LOOP_RATE_SHARE
        self.courier_share = COURIER_RATE_SHARE
        for switch, writer in self.writers.items():
            layout = self.layouts[switch]
            apply_ops(writer, switch_setup_ops(layout, testbed.network.priority_queues))
            commands = [f"set_queue_depth {RECIRC_QUEUE_DEPTH} {port}"
                        for port in (layout.recirc_port, layout.loop_port)]
            if isinstance(writer, TnaLGWriter):
                writer.set_loop_ports([layout.recirc_port, layout.loop_port])
                writer.set_timer(self._role(switch), self._port(switch))
            testbed.network.node(switch).switch_cli(commands)

    def _role(self, switch: str) -> str:
        return "sender" if switch == self.testbed.spec.protected[0] else "receiver"

    def _port(self, switch: str) -> int:
        return self.ports[0 if self._role(switch) == "sender" else 1]

    def _timer_period_ns(self) -> int:
        """The TNA ends' packet-generator period: the v1model couriers' queue rate
        (COURIER_RATE_SHARE of the link's full-size frame rate), so that both programs send
        dummies and explicit ACKs at most as often."""
        return round(1e9 / (self.courier_share * frames_per_s(self.testbed.rate_mbps)))

    def _writer(self, switch: str) -> P4RuntimeLGWriter:
        session = self.testbed.sessions[switch]
        return TnaLGWriter(session) if switch in self.tna else P4RuntimeLGWriter(session)

    def params(self, loss: float) -> LGParams:
        """LG parameters for the measured loss, with timing scaled to the link rate and the
        target: the ackNoTimeout, and the reordering buffer's resumeThreshold (RESUME_WINDOW_US;
        the paper's 37 KB is 3 us at 100G; our recoveries take ms)."""
        rate_mbps = self.testbed.rate_mbps or 1000.0
        timeout_us = ack_timeout_us(self.testbed.target, rate_mbps)
        window_us = max(RESUME_WINDOW_US, frame_times_us(TIMEOUT_FRAMES, rate_mbps))
        resume = max(LGParams().resume_bytes, round(rate_mbps * window_us / 8 / 2))
        params = LGParams(target_loss=self.target_loss,
                          actual_loss=min(max(loss, MIN_LOSS), 0.5),
                          ack_timeout_us=timeout_us, resume_bytes=resume)
        return tna_params(params) if self.tna else params

    def _link(self, loss: float) -> ProtectedLink:
        sender, receiver = self.testbed.spec.protected
        return ProtectedLink(sender, self.ports[0], receiver, self.ports[1], self.params(loss))

    def queue_rates(self) -> dict[str, list[str]]:
        """Runtime-CLI lines for the current link rate: the loop port's queue rate, the
        recirculation port's (recirc_rate_lines) and the protected ports' courier queue rate (a
        share of 0 = unlimited; not on a TNA switch, whose dummies and explicit ACKs come from
        the packet generator: its timer's period instead)."""
        frames = frames_per_s(self.testbed.rate_mbps)
        lines = {switch: [f"set_queue_rate {self.loop_share * frames:.0f} {layout.loop_port}",
                          *recirc_rate_lines(self.testbed, layout)]
                 for switch, layout in self.layouts.items()}
        for switch in self.tna:
            lines[switch].append(timer_command(self._role(switch), self._timer_period_ns()))
        if self.testbed.network.priority_queues >= 3:  # else priority 0 carries everything
            for switch, port in zip(self.testbed.spec.protected, self.ports, strict=True):
                if switch not in self.tna:
                    lines[switch].append(
                        f"set_queue_rate {self.courier_share * frames:.0f} {port} 0")
        return lines

    def enable(self, loss: float) -> int:
        """Activate LG for this loss rate (queue rates and timer periods for the current link
        rate); returns N (Eq. 2)."""
        for switch, lines in self.queue_rates().items():
            self.testbed.network.node(switch).switch_cli(lines)
        link = self._link(loss)
        for switch, ops in link.activation():
            apply_ops(self.writers[switch], ops)
        return link.params.n_copies

    def disable(self) -> None:
        """Deactivate LG (sender first)."""
        for switch, ops in self._link(MIN_LOSS).deactivation():
            apply_ops(self.writers[switch], ops)


def frame_times_us(frames: float, rate_mbps: float) -> int:
    """How long `frames` full-size frames take on the link (us)."""
    return round(frames * FRAME_BITS / rate_mbps)


def ack_timeout_us(target: str, rate_mbps: float) -> int:
    """The testbed's ackNoTimeout (us) for a target at a link rate: at least TIMEOUT_FRAMES
    frame times and the target's `min_timeout_us`, above the retransmission delays measured on
    it (the paper, App. B.1, sets the timeout above the measured maximum; docs/performance.md
    has the measurements, `lgkit reproduce lgrate` prints them). On a software switch the delay
    is not the wire's: the buffered copy waits for its next pass through the loop port and for
    the sender switch's CPU (up to 122 ms on the built-in target at 10 Mb/s with two CPU hogs,
    324 ms on BMv2 at 3 Mb/s with other work on the machine), and a receiver's BMv2 ingress
    thread serves its recirculating reordering buffer before newly arrived frames, so an arrived
    retransmission can wait there (up to 0.9 s measured). The former 20 ms floor skipped those
    sequence numbers: each late retransmission was a packet lost for good. A longer timeout
    costs only when no copy arrives (all N + 1 lost, p^(N+1) = 1e-8 at 1e-2 with N = 3; a burst
    beyond K holes): delivery behind that hole then stalls this long, the reordering buffer held
    by pause/resume meanwhile."""
    return max(target_kind(target).min_timeout_us, frame_times_us(TIMEOUT_FRAMES, rate_mbps))


def recirc_rate_lines(testbed: Testbed, layout: LGLayout) -> list[str]:
    """Runtime-CLI lines for the recirculation port's queue rate on this target.

    The recirculation port's queue rate is the target's `recirc_rate_share` times the link's
    full-size frame rate (None: unlimited). On BMv2 the receiver's reordering buffer
    recirculates through it while a hole is open, and BMv2's one ingress thread serves
    recirculated packets strictly before newly received ones: unlimited, the buffer can starve
    every new frame, the retransmission that would close the hole among them, until the
    ackNoTimeout skips the hole (measured: a retransmission delay of 1.9 s, and arrived
    retransmissions left 0.9 s in the input queue). Four times the frame rate drains the buffer
    four times faster than the link fills it and leaves the ingress thread time for the link.
    The built-in target's event loop alternates its timers and its sockets, so it has no such
    starvation there, and its recirculation port stays unlimited (docs/protocol.md §3.1):
    limited to the link's rate, a FIFO whose buffered packets loop behind newly arrived ones
    needs ~2 passes per in-order delivery, so a burst held behind one hole was released at
    ~0.45x the link rate (fig10 at 10 Mb/s: 24 KB flows up to 21 ms slower; docs/reproduce.md)."""
    share = target_kind(testbed.target).recirc_rate_share
    if not share:
        return []
    return [f"set_queue_rate {share * frames_per_s(testbed.rate_mbps):.0f} {layout.recirc_port}"]


def make_protection(testbed: Testbed, target_loss: float) -> TestbedProtection:
    """LG control of the testbed's protected link (switch setup written once)."""
    return TestbedProtection(testbed, target_loss)
