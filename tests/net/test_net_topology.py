"""Topology specs, routes, and a Mininet Fig. 7 testbed on Linux bridges passing ping/iperf3."""

from __future__ import annotations

import pytest
from test_net_support import assert_machine_clean

from lgkit.core.topology import SPEC_DIR, SpecError, load_spec, next_hops
from lgkit.net.testbed.network import KitNetwork
from lgkit.workloads.iperf import IperfServer, run_tcp


def test_specs_load_and_name_points() -> None:
    for name in ("fig7", "leafspine"):
        spec = load_spec(name)
        assert set(spec.points) == {"A", "B", "C", "D"}
        assert spec.protected[0] in spec.switches and spec.protected[1] in spec.switches


def test_unknown_spec_lists_known_ones() -> None:
    with pytest.raises(SpecError, match="fig7"):
        load_spec("nonexistent")


def test_fig7_routes_cross_the_protected_link() -> None:
    spec = load_spec("fig7")
    assert next_hops(spec, "tx")["h3"] == "rx"
    assert next_hops(spec, "rx")["h1"] == "tx"
    assert next_hops(spec, "up")["h1"] == "h1"


def test_leafspine_prefers_the_protected_spine() -> None:
    spec = load_spec("leafspine")
    assert next_hops(spec, "l1")["h3"] == "s1"
    assert next_hops(spec, "s1")["h3"] == "l2"
    assert next_hops(spec, "l2")["h1"] in ("s1", "s2")


@pytest.mark.root
def test_fig7_on_linux_bridges_passes_ping_and_iperf3(mininet_lock) -> None:
    network = KitNetwork(load_spec("fig7"), "lxbr")
    try:
        network.start()
        h1, h3, h4 = network.node("h1"), network.node("h3"), network.node("h4")
        assert " 0% packet loss" in h1.cmd("ping -c 3 -i 0.2 -W 2", h3.IP())
        assert " 0% packet loss" in network.node("h2").cmd("ping -c 2 -i 0.2 -W 2", h4.IP())
        before = network.counter("B")
        with IperfServer(h3):
            result = run_tcp(h1, h3.IP(), 1.0, "cubic")
        assert result.goodput_mbps > 1.0
        assert network.counter("B") - before > 100
    finally:
        network.stop()
    assert_machine_clean()



def test_fig7_marks_its_forwarders_plain_and_plain_switches_are_checked(tmp_path) -> None:
    assert load_spec("fig7").plain == ["up", "dn"]
    text = (SPEC_DIR / "fig7.yaml").read_text().replace("plain: [up, dn]", "plain: [up, tx]")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(SpecError, match="plain switch tx"):
        load_spec(str(bad))
