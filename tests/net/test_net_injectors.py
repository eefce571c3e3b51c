"""Corruption injectors: nft and netem drops measured against their models, tc lines, GE maths."""

from __future__ import annotations

import math
import re

import pytest
from test_net_support import assert_machine_clean

from lgkit.core.topology import load_spec
from lgkit.net.inject.injectors import (
    InjectorUnavailable,
    LinkAccess,
    NetemInjector,
    NftInjector,
    WirePorts,
    netem_status,
)
from lgkit.net.inject.registry import AUTO, CHOICES, INJECTORS, factory, make_injector
from lgkit.net.testbed.network import KitNetwork
from lgkit.sw.switch.loss import LossModel
from lgkit.workloads.iperf import wait_listening

PINGS = 2000
RATE = 0.2
BOUND = 5 * math.sqrt(RATE * (1 - RATE) / PINGS)
"Five binomial standard deviations (a false failure about once in two million runs)."
IID = LossModel(RATE)
GE = LossModel(RATE, "ge", bad_loss=0.8, mean_burst=4)
"Bursty 20%: bad 1/4 of the time, losing 80% there. bad_loss != 0.5 tells 1-h from h."


def needs_netem() -> None:
    """Skip, with the probe's reason, where the kernel has no sch_netem."""
    available, why = netem_status()
    if not available:
        pytest.skip(f"netem: unavailable ({why})")


def test_gilbert_elliott_parameters_give_the_mean_rate() -> None:
    model = LossModel(0.01, "ge", bad_loss=0.5, mean_burst=4)
    p, r = model.p_good_to_bad, model.p_bad_to_good
    stationary_bad = p / (p + r)
    assert stationary_bad * model.bad_loss == pytest.approx(0.01)
    assert r == pytest.approx(0.25)


def test_loss_model_rejects_bad_values() -> None:
    with pytest.raises(ValueError):
        LossModel(1.5)
    with pytest.raises(ValueError):
        LossModel(0.1, "ge", bad_loss=0.05)
    with pytest.raises(ValueError):
        LossModel(0.1, "pareto")


def test_the_registry_names_every_injector_once() -> None:
    assert CHOICES == ("auto", *INJECTORS) and set(AUTO) <= set(INJECTORS)
    assert all(callable(factory(name)) for name in INJECTORS)
    with pytest.raises(ValueError, match="unknown injector 'laser'"):
        factory("laser")


def test_the_p4_dropper_needs_the_lg_program() -> None:
    with pytest.raises(InjectorUnavailable, match="^p4: unavailable"):
        make_injector("p4", LinkAccess(WirePorts("a", "b"), 5000.0), LossModel(0.1),
                      log=lambda line: None)


def _measure(injector_name: str, lines: list[str],
             model: LossModel = IID) -> tuple[float, int, list[bool]]:
    """(B - C) / B and B over PINGS pings h1 -> h3, and per ping whether it got no reply."""
    network = KitNetwork(load_spec("fig7"), "lxbr")
    injector = None
    try:
        network.start()
        injector = make_injector(injector_name, LinkAccess(network.wire_ports(), 5000.0), model,
                                 log=lines.append)
        injector.start()
        h1, h3 = network.node("h1"), network.node("h3")
        b0, c0 = network.counter("B"), network.counter("C")
        out = h1.cmd(f"ping -c {PINGS} -i 0.001 -W 1", h3.IP())
        b, c = network.counter("B") - b0, network.counter("C") - c0
        replied = {int(seq) for seq in re.findall(r"icmp_seq=(\d+) ", out)}
        return (b - c) / b, b, [seq not in replied for seq in range(1, PINGS + 1)]
    finally:
        if injector is not None:
            injector.stop()
        network.stop()


@pytest.mark.root
def test_nft_injector_loses_the_configured_share(mininet_lock) -> None:
    lines: list[str] = []
    loss, frames, lost = _measure("nft", lines)
    assert frames >= PINGS
    assert abs(loss - RATE) < BOUND, (loss, lines)
    assert abs(sum(lost) / PINGS - RATE) < BOUND, lines
    assert any(line.startswith("injector: nft numgen drop on lgw1-eth1") for line in lines)
    assert_machine_clean()


@pytest.mark.root
def test_auto_choice_says_why_netem_is_passed_over(mininet_lock) -> None:
    available, why = netem_status()
    lines: list[str] = []
    loss, _, _ = _measure("auto", lines)
    assert abs(loss - RATE) < BOUND
    if available:
        assert lines[-1].startswith("injector: netem")
    else:
        assert lines[0] == f"netem: unavailable ({why})"
        assert lines[1].startswith("injector: nft")
    assert_machine_clean()


@pytest.mark.root
def test_netem_alone_is_unavailable_with_one_clear_line_or_works() -> None:
    available, why = netem_status()
    if available:
        pytest.skip("this kernel has netem; covered by the auto-choice test")
    lines: list[str] = []
    with pytest.raises(InjectorUnavailable, match=r"^netem: unavailable \("):
        make_injector("netem", LinkAccess(WirePorts("lgnone-eth0", "lgnone-eth1"), 5000.0),
                      LossModel(0.1), log=lines.append)
    assert lines == [f"netem: unavailable ({why})"]


@pytest.mark.root
def test_nft_gilbert_elliott_keeps_its_mean_for_open_loop_traffic(mininet_lock) -> None:  # noqa: E501
    network = KitNetwork(load_spec("fig7"), "lxbr")
    injector = None
    try:
        network.start()
        model = LossModel(0.2, "ge", bad_loss=0.5, mean_burst=20)
        injector = NftInjector(network.wire_ingress(), model, frames_per_s=1000, seed=3)
        injector.start()
        h1, h3 = network.node("h1"), network.node("h3")
        server = h3.popen(["iperf3", "-s", "-1"])
        wait_listening(server)
        b0, c0 = network.counter("B"), network.counter("C")
        h1.cmd("iperf3 -u -c", h3.IP(), "-b 8M -l 1000 -t 4")
        server.wait(10)
        b, c = network.counter("B") - b0, network.counter("C") - c0
    finally:
        if injector is not None:
            injector.stop()
        network.stop()
    assert b > 3500
    assert 0.1 < (b - c) / b < 0.3  # ~80 good/bad cycles: a loose bound on a time average
    assert_machine_clean()


def test_netem_tc_command_lines_for_both_models() -> None:
    iid = NetemInjector.qdisc_argv("lgw1-eth2", LossModel(0.01))
    assert iid == ["tc", "qdisc", "replace", "dev", "lgw1-eth2", "root", "netem",
                   "loss", "random", "1.000000%"]
    # p = r * pi / (1 - pi) with r = 1/4 and pi = 0.2 / 0.8 = 1/4: p = 1/12
    ge = NetemInjector.qdisc_argv("lgw1-eth2", GE)
    assert ge == ["tc", "qdisc", "replace", "dev", "lgw1-eth2", "root", "netem",
                  "loss", "gemodel", "8.333333%", "25.000000%", "80.000000%", "0%"]
    small = NetemInjector.qdisc_argv("x", LossModel(0.01, "ge", bad_loss=0.5, mean_burst=4))
    p, r, bad, good = (float(x.rstrip("%")) / 100 for x in small[9:])
    assert (r, bad, good) == (0.25, 0.5, 0.0)
    assert p / (p + r) * bad == pytest.approx(0.01, rel=1e-5)


@pytest.mark.root
def test_netem_iid_loses_the_configured_share(mininet_lock) -> None:
    needs_netem()
    lines: list[str] = []
    loss, frames, lost = _measure("netem", lines)
    assert frames >= PINGS
    assert abs(loss - RATE) < BOUND, (loss, lines)
    assert abs(sum(lost) / PINGS - RATE) < BOUND, lines
    assert lines == ["injector: netem on lgw1-eth2 egress, i.i.d. 0.2"]
    assert_machine_clean()


@pytest.mark.root
def test_netem_gilbert_elliott_gives_its_mean_and_its_bursts(mininet_lock) -> None:
    """Per packet, netem's chain: the mean within 5 sigmas of a Markov-modulated Bernoulli sum,
    and P(lost | previous lost) = (1 - r) * bad_loss = 0.6, where i.i.d. losses would give 0.2."""
    needs_netem()
    lines: list[str] = []
    loss, frames, lost = _measure("netem", lines, GE)
    pi, r, bad = GE.bad_share, GE.p_bad_to_good, GE.bad_loss
    keep = 1 - GE.p_good_to_bad - r  # correlation of the state from one packet to the next
    variance = RATE * (1 - RATE) + 2 * bad * bad * pi * (1 - pi) * keep / (1 - keep)
    assert frames >= PINGS
    assert abs(loss - RATE) < 5 * math.sqrt(variance / PINGS), (loss, lines)
    after_loss = [now for before, now in zip(lost, lost[1:], strict=False) if before]
    burst = (1 - r) * bad
    assert abs(sum(after_loss) / len(after_loss) - burst) < 5 * math.sqrt(
        burst * (1 - burst) / (PINGS * RATE)), lines
    assert lines[0].startswith("injector: netem on lgw1-eth2 egress, Gilbert-Elliott mean 0.2")
    assert_machine_clean()
