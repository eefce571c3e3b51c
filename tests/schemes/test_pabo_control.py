"""PABO's control plane: Eq. 4, its threshold table, the settings and the topology entries."""

from __future__ import annotations

import math

import pytest

from lgkit.core.topology import load_spec
from lgkit.schemes.pabo_control import (
    MAX_THRESHOLD,
    PaboParams,
    bounce_probability,
    settings_write,
    threshold,
    threshold_writes,
    topology_writes,
)


def test_eq4_boundaries_shape_and_decay_with_bounces() -> None:
    theta, lam = 0.5, 5.0
    assert bounce_probability(0.3, 0, theta, lam) == 0.0
    assert bounce_probability(theta, 0, theta, lam) == 0.0
    assert bounce_probability(1.0, 0, theta, lam) == 1.0
    # the paper's Fig. 3a: theta 0.5, lambda 5, n_p = 0 at u = 0.6: (e^-0.5 - 1) / (e^-2.5 - 1)
    assert bounce_probability(0.6, 0, theta, lam) == pytest.approx(
        (math.exp(-0.5) - 1) / (math.exp(-2.5) - 1))
    us = [0.5 + k / 100 for k in range(1, 50)]
    for n in range(3):
        values = [bounce_probability(u, n, theta, lam) for u in us]
        assert values == sorted(values) and all(0 < v < 1 for v in values)
    for u in us:  # PRCP-3: a packet bounced before gets a smaller probability
        assert (bounce_probability(u, 0, theta, lam) > bounce_probability(u, 1, theta, lam)
                > bounce_probability(u, 2, theta, lam))
    # larger lambda bounces more at the same utilization (Fig. 3b)
    assert bounce_probability(0.6, 0, 0.5, 25) > bounce_probability(0.6, 0, 0.5, 5)


def test_threshold_table_covers_the_rising_part_of_each_row() -> None:
    params = PaboParams(theta=0.8, lam=50, capacity=100, bounce_capacity=50, max_bounces=3)
    writes = threshold_writes(params)
    rows: dict[int, list[int]] = {}
    for w in writes:
        rows.setdefault(w.match["meta.row"].value, []).append(w.match["meta.occupancy"].value)
        assert 0 < w.params["threshold"] <= MAX_THRESHOLD
    assert sorted(rows) == [0, 1, 2]  # one row per bounce count below max_bounces
    assert rows[0] == list(range(81, 100))  # u = q / 100 above theta = 0.8, below full
    assert rows[1] == list(range(41, 50))  # bounced packets: the bounce queue's 50 places
    row0 = {w.match["meta.occupancy"].value: w.params["threshold"] for w in writes
            if w.match["meta.row"].value == 0}
    assert row0[90] == threshold(bounce_probability(0.9, 0, 0.8, 50))
    assert threshold(1.0) == MAX_THRESHOLD and threshold(0.0) == 0


def test_settings_baseline_doubles_the_normal_queue_and_params_are_checked() -> None:
    params = PaboParams(capacity=500, bounce_capacity=500)
    assert settings_write(params, enabled=True).params["capacity"] == 500
    assert settings_write(params, enabled=False).params["capacity"] == 1000
    assert settings_write(params, enabled=False).params["enabled"] == 0
    for bad in ({"theta": 1.0}, {"lam": 0}, {"capacity": 0}, {"max_bounces": 0}):
        with pytest.raises(ValueError):
            PaboParams(**bad)


def test_tree_entries_route_upstream_and_mark_host_ports() -> None:
    spec = load_spec("pabo_tree")
    ports = {("s4", "s1"): 1, ("s4", "s7"): 2, ("s1", "h1"): 1, ("s1", "s4"): 2}
    writes = topology_writes(spec, "s4", lambda s, n: ports[(s, n)])
    routes = {w.match["hdr.ipv4.dst_addr"].value: w.params for w in writes
              if w.table == "PaboIngress.routes"}
    assert routes[0x0A000004]["p0"] == 2 and routes[0x0A000004]["count"] == 1  # h4 via s7
    assert routes[0x0A000001]["p0"] == 1  # h1 back via s1
    assert routes[0x0A000002]["p0"] == 2  # h2 through s7 and s5
    upstream = {w.match["hdr.ipv4.src_addr"].value: w.params for w in writes
                if w.table == "PaboIngress.upstream"}
    assert upstream[0x0A000001] == {"port": 1, "host": 0}
    assert not [w for w in writes if w.table.endswith("host_ports")]  # s4 faces no host
    edge = topology_writes(spec, "s1", lambda s, n: ports[(s, n)])
    assert {w.table for w in edge if w.table.endswith("host_ports")} == {
        "PaboIngress.host_ports", "PaboEgress.host_ports"}
    assert [w.params for w in edge if w.table == "PaboIngress.upstream"
            and w.match["hdr.ipv4.src_addr"].value == 0x0A000001] == [{"port": 1, "host": 1}]
