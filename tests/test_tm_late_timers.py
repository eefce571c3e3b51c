"""Traffic manager drop counters by queue, and `show_drops` naming the queue."""

from __future__ import annotations

from dataclasses import dataclass

from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.control_service import SwitchCommands
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.tm import TrafficManager

FRAME = 1500
RATE_BPS = FRAME * 8 * 1000  # one frame per ms


@dataclass
class Job:
    port: int = 1
    priority: int = 0
    length: int = FRAME
    instance_type: int = 0


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
