"""Traffic manager with timers that fire late (a busy or descheduled real-time event loop): a
backlogged port keeps its bit rate within the late tolerance, an idle port gains no credit; and
its drop counters by queue, with `show_drops` naming the queue."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.control_service import SwitchCommands
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.tm import TrafficManager, wire_start_ps

MS = 1_000_000
FRAME = 1500
RATE_BPS = FRAME * 8 * 1000  # one frame per ms


class LateClock(VirtualClock):
    """Virtual time whose timers all run `late_ns` after they were due."""

    def __init__(self, late_ns: int) -> None:
        super().__init__()
        self.late_ns = late_ns

    def call_at(self, t_ns: int, fn, *args) -> None:  # type: ignore[no-untyped-def]
        super().call_at(max(t_ns, self.now_ns()) + self.late_ns, fn, *args)


@dataclass
class Job:
    port: int = 1
    priority: int = 0
    length: int = FRAME
    instance_type: int = 0


def shaped_port(late_ns: int, tolerance_ns: int, depth: int = 1000
                ) -> tuple[LateClock, TrafficManager, list[int]]:
    """A TM whose port 1 sends one frame per ms with a 1 ms burst; departures in ns."""
    clock = LateClock(late_ns)
    sent: list[int] = []

    def transmit(job: Job, *_: int) -> int:
        sent.append(clock.now_ns())
        return job.length

    tm = TrafficManager(clock, 1, transmit, late_tolerance_ns=tolerance_ns)
    tm.set_queue_depth(depth)
    tm.set_port_rate(RATE_BPS, 1, burst_bytes=FRAME)
    return clock, tm, sent


@pytest.mark.parametrize(("late_ns", "tolerance_ns", "lowest_share"), [
    (0, 0, 0.99),            # timers on time: the exact rate
    (3 * MS, 10 * MS, 0.99),  # late within the tolerance: the departures catch up
])
def test_a_backlogged_port_keeps_its_rate_when_timers_fire_late(
        late_ns: int, tolerance_ns: int, lowest_share: float) -> None:
    clock, tm, sent = shaped_port(late_ns, tolerance_ns)
    for _ in range(500):
        tm.enqueue(Job())
    clock.run_until(400 * MS)
    assert len(sent) >= lowest_share * 400


def test_without_a_tolerance_late_timers_idle_the_wire() -> None:
    """The failure the tolerance removes: each late wake-up loses the time it was late."""
    clock, tm, sent = shaped_port(3 * MS, 0)
    for _ in range(500):
        tm.enqueue(Job())
    clock.run_until(400 * MS)
    assert len(sent) < 0.7 * 400


def test_lateness_beyond_the_tolerance_is_lost() -> None:
    clock, tm, sent = shaped_port(5 * MS, 2 * MS)
    for _ in range(500):
        tm.enqueue(Job())
    clock.run_until(400 * MS)
    assert len(sent) < 0.8 * 400


def test_an_idle_port_gains_no_credit_from_the_tolerance() -> None:
    """A frame that arrives at an idle port starts when it arrived, not when the wire became
    free: after one frame and a pause of 5 ms, three frames take three frame times (less the
    1 ms burst), as without a tolerance."""
    clock, tm, sent = shaped_port(0, 10 * MS)
    tm.enqueue(Job())
    clock.run_until(6 * MS)
    for _ in range(3):
        tm.enqueue(Job())
    clock.run_until(20 * MS)
    assert sent[0] == 0 and sent[1] == 6 * MS
    assert sent[3] - sent[1] == pytest.approx(1 * MS, abs=1000)


def test_wire_start_counts_a_late_departure_from_when_it_was_due() -> None:
    tat_ps = 10 * MS * 1000
    assert wire_start_ps(10 * MS, tat_ps + 5000) == tat_ps + 5000  # wire busy: back to back
    assert wire_start_ps(13 * MS, tat_ps) == 13 * MS * 1000  # no tolerance: now
    assert wire_start_ps(13 * MS, tat_ps, 0, 5 * MS) == tat_ps  # late 3 ms of 5: when due
    assert wire_start_ps(13 * MS, tat_ps, 12 * MS, 5 * MS) == 12 * MS * 1000  # queued at 12
    assert wire_start_ps(16 * MS, tat_ps, 0, 5 * MS) == 16 * MS * 1000  # late 6 ms: now


def test_tail_drops_are_counted_per_queue() -> None:
    """Port 2 at one frame per ms with a 1 ms burst: of six frames at once two leave, two wait
    in the 2-packet queue and two are dropped there; the priority-2 frame waits in its own."""
    tm = TrafficManager(VirtualClock(), 3, lambda job, *_: job.length)
    tm.set_queue_depth(2, port=2, prio=1)
    tm.set_port_rate(RATE_BPS, 2, burst_bytes=FRAME)
    for _ in range(6):
        tm.enqueue(Job(port=2, priority=1))
    tm.enqueue(Job(port=2, priority=2))
    assert tm.drops["queue_full"] == 2
    assert tm.queue_drops == {(2, 1): 2}


def test_show_drops_names_the_queue_of_each_tail_drop() -> None:
    switch = Switch(clock=VirtualClock(), priority_queues=3)
    switch.tm.set_queue_depth(0, port=2, prio=1)
    for _ in range(3):
        switch.tm.enqueue(Job(port=2, priority=1))
    assert SwitchCommands(switch).run("show_drops").splitlines() == [
        "queue_full: 3", "queue_full port 2 prio 1: 3"]
