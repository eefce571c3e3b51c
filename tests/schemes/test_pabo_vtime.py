"""PABO in virtual time and pass by pass: the tree burst test at a small scale, the bounce
probability drawn against the threshold table, the bounce queue's priority, the loop bound."""

from __future__ import annotations

import math

import pytest

from lgkit.core.topology import load_spec
from lgkit.schemes import bounce, ipoption
from lgkit.schemes.entries import Write, to_pipeline
from lgkit.schemes.pabo_burst import BurstSetup, run_burst, udp_packet
from lgkit.schemes.pabo_control import (
    BOUNCE_PRIORITY,
    MAX_THRESHOLD,
    PaboParams,
    settings_write,
    topology_writes,
)
from lgkit.schemes.vfabric import compiled
from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.exec.interp.tables import Exact
from lgkit.sw.exec.pipeline import Pipeline

SMALL = PaboParams(capacity=50, bounce_capacity=50)


@pytest.mark.parametrize("burst", [50, 150, 250])
def test_without_pabo_the_last_hop_drops_what_exceeds_its_queue(burst: int) -> None:
    result = run_burst(BurstSetup(burst, False, SMALL))
    # fluid picture: 3 x burst arrive at 3x the rate s7 can send; it sends one third of them
    # and keeps a full queue (100 packets without PABO): the rest is dropped, all at s7
    expected = max(0, 3 * burst - burst - 100)
    assert abs(result.sent - result.delivered - expected) <= 2
    assert sum(result.drops_by_switch.values()) == result.sent - result.delivered
    assert result.drops_by_switch["s7"] == result.sent - result.delivered
    assert sum(result.bounces_by_switch.values()) == 0 and result.tm_drops == 0


@pytest.mark.slow
def test_with_pabo_bursts_are_absorbed_upstream_and_hosts_never_see_a_bounce() -> None:
    mild = run_burst(BurstSetup(50, True, SMALL))
    assert mild.delivered == mild.sent and mild.duplicates == 0 and mild.stray == 0
    assert [s for s, n in mild.bounces_by_switch.items() if n] == ["s7"]  # only the last hop
    assert 0.3 < mild.bounced_share < 0.8
    moderate = run_burst(BurstSetup(150, True, SMALL))
    assert moderate.delivered == moderate.sent and moderate.stray == 0 and moderate.tm_drops == 0
    assert all(moderate.bounces_by_switch[s] for s in ("s4", "s5", "s6", "s7"))
    assert moderate.bounced_share > mild.bounced_share
    assert min(moderate.total_hops) == 3  # never bounced: s1/s4/s7
    assert max(moderate.max_distance) >= 1
    # the loop bound: one bounce per packet at most, then a full queue drops
    bounded = run_burst(BurstSetup(250, True, PaboParams(capacity=50, bounce_capacity=50,
                                                          max_bounces=1)))
    assert max(bounded.max_distance) <= 1 and max(bounded.total_hops) <= 5
    assert bounded.stray == 0 and bounded.tm_drops == 0


def _switch(writes: list[Write]) -> Pipeline:
    pipeline = Pipeline.load(compiled("pabo"), seed=7)
    to_pipeline(pipeline, writes)
    return pipeline


def _s4() -> tuple[Pipeline, bytes]:
    """s4 of the tree: port 1 toward s1, port 2 toward s7; a packet h1 -> h4."""
    spec = load_spec("pabo_tree")
    ports = {("s4", "s1"): 1, ("s4", "s7"): 2}
    pipeline = _switch([settings_write(PaboParams(capacity=20, bounce_capacity=20), True)]
                       + topology_writes(spec, "s4", lambda s, n: ports[(s, n)]))
    frame = udp_packet(spec.host_ip("h1"), spec.host_ip("h4"), spec.host_mac("h1"),
                       spec.host_mac("h4"), 1)
    return pipeline, frame


def test_the_threshold_table_sets_the_bounce_probability() -> None:
    pipeline, frame = _s4()
    probability = 0.25
    to_pipeline(pipeline, [Write("PaboIngress.bounce_threshold", "PaboIngress.set_threshold",
                                 {"threshold": round(probability * MAX_THRESHOLD)},
                                 {"meta.row": Exact(0), "meta.occupancy": Exact(10)})])
    pipeline.registers["pabo_qlen"].write(2 * 2, 10)  # port 2, normal queue: 10 packets
    n = 2000
    back = sum(run_untimed(pipeline, 1, frame)[0][0] == 1 for _ in range(n))
    sigma = math.sqrt(n * probability * (1 - probability))
    assert abs(back - n * probability) < 5 * sigma
    pipeline.registers["pabo_qlen"].write(2 * 2, 9)  # no entry for 9 packets: P = 0
    assert all(run_untimed(pipeline, 1, frame)[0][0] == 2 for _ in range(200))


def test_bounced_packets_take_the_highest_priority_queue() -> None:
    pipeline, frame = _s4()
    result = pipeline.ingress(1, frame, 0)
    assert [(j.port, j.priority) for j in result.egress] == [(2, 0)]
    pipeline.registers["pabo_qlen"].write(2 * 2, 20)  # full normal queue: bounced back
    result = pipeline.ingress(1, frame, 0)
    assert [(j.port, j.priority) for j in result.egress] == [(1, BOUNCE_PRIORITY)]
    # once bounced, a packet stays in the bounce queue when forwarded again
    bounced = ipoption.insert(frame[14:], bounce.BounceInfo(1, 1, 1, 2, True).pack())
    result = pipeline.ingress(2, frame[:14] + bounced, 0)
    assert [(j.port, j.priority) for j in result.egress] == [(2, BOUNCE_PRIORITY)]
