"""The testbed's ackNoTimeout: above the retransmission delays measured per target, while the
reordering buffer's backpressure keeps its former size (lgkit/net/testbed/lgprotection.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lgkit.control.linkguardian import LGLayout
from lgkit.core.targets import P4_TARGETS, TARGETS, Target
from lgkit.net.testbed.lgprotection import TestbedProtection, ack_timeout_us, frame_times_us

MEASURED_MAX_US = {"builtin": 122_000, "bmv2": 893_000}
"""Longest retransmission delays measured at the default rates (docs/performance.md): the
built-in target with two CPU hogs (on the wire), BMv2 (an arrived retransmission left waiting
behind the receiver's recirculating reordering buffer)."""


def params(target: str, rate_mbps: float):
    bed = SimpleNamespace(testbed=SimpleNamespace(target=target, rate_mbps=rate_mbps),
                          target_loss=1e-8, tna=set())
    return TestbedProtection.params(bed, 1e-2)  # type: ignore[arg-type]


@pytest.mark.parametrize("target", sorted(P4_TARGETS))
def test_timeout_is_above_the_measured_delays_with_margin(target: str) -> None:
    rate = TARGETS[target].link_rate_mbps
    assert rate is not None
    timeout = ack_timeout_us(target, rate)
    assert timeout >= 2 * MEASURED_MAX_US[target]
    assert params(target, rate).ack_timeout_us == timeout


def test_slow_links_wait_twenty_frames_and_unmeasured_targets_get_the_default() -> None:
    floor = TARGETS["builtin"].min_timeout_us
    assert ack_timeout_us("builtin", 0.1) == frame_times_us(20, 0.1) > floor
    assert ack_timeout_us("lxbr", 10.0) == Target.min_timeout_us


@pytest.mark.parametrize(("rate", "resume"), [(10.0, 37_000), (3.0, 37_000),
                                              (100.0, 125_000)])
def test_backpressure_thresholds_do_not_follow_the_timeout(rate: float, resume: int) -> None:
    for target in ("builtin", "bmv2"):
        got = params(target, rate)
        assert got.resume_bytes == resume
        assert got.pause_threshold == resume + 2 * 1514
        assert got.n_copies == 3


def recirc_lines(target: str) -> list[str]:
    testbed = SimpleNamespace(target=target, rate_mbps=3.0, spec=SimpleNamespace(
        protected=("tx", "rx")), network=SimpleNamespace(priority_queues=3))
    bed = SimpleNamespace(testbed=testbed, layouts={"tx": LGLayout(), "rx": LGLayout()},
                          ports=(2, 1), loop_share=2.0, courier_share=0.5, tna=set())
    lines = TestbedProtection.queue_rates(bed)  # type: ignore[arg-type]
    return [line for switch in ("tx", "rx") for line in lines[switch]
            if line.endswith(f" {LGLayout().recirc_port}")]


def test_bmv2_bounds_the_recirculation_port_and_the_built_in_target_does_not() -> None:
    frames = 3e6 / (1514 * 8)
    assert recirc_lines("bmv2") == [f"set_queue_rate {4 * frames:.0f} 68"] * 2
    assert recirc_lines("builtin") == []
