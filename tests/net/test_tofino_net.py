"""The TNA LinkGuardian (p4/tofino/linkguardian.p4) in Mininet on the built-in target (Fig. 7,
1e-2 corruption on the wire): on both LG switches, and with the v1model program at the other
end both ways; effective loss 0 with LG on, measured as `lgkit run` measures it (a TNA end's
dummies and explicit ACKs from the model's packet generator), also when corruptd switches it on
mid-flow with a TCP flow in the reverse direction (new epochs while traffic runs: the control
plane resets the roles' registers; the reverse data carries piggybacked leading ACKs, which
must not overtake the loss notifications)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from test_net_support import assert_machine_clean, network_lock

from lgkit.control.corruptd import CorruptdParams
from lgkit.core.topology import load_spec
from lgkit.measure.results import RunStore
from lgkit.net.inject.injectors import NftInjector
from lgkit.net.runner import PhaseResult, PhaseRunner
from lgkit.net.spec.programs import LG_PROGRAMS, parse_programs
from lgkit.net.spec.scenario import Flow, Scenario
from lgkit.net.testbed.lgprotection import make_protection
from lgkit.net.testbed.testbed import Testbed
from lgkit.sw.switch.loss import LossModel
from lgkit.workloads.iperf import IperfServer, TcpFlow

LOSS = LossModel(0.01)
SCENARIO = Scenario("tna", "fig7", LOSS, Flow("h1", "h3", "cubic", 3.0), ["lg_on"],
                    CorruptdParams())
MID_FLOW = Scenario("tna", "fig7", LOSS, Flow("h1", "h3", "cubic", 4.0), ["lg_on", "corruptd"],
                    CorruptdParams(interval_s=0.25, window_frames=1000, threshold=2e-3))
"""LG on for a flow and off, then corruptd switching it on after ~1.5 s of the next flow (as in
tests/net/test_net_lg.py): the second epochs start from the state the first left, which the
control plane must reset (the data plane's first epoch starts from the declared values)."""

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not all(p.exists() for p in LG_PROGRAMS.values()),
                                 reason="a LinkGuardian program is missing from p4/"),
              pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 missing")]


REVERSE_PORT = 5202
"The reverse flow's iperf3 port (the scenario's flow has the default one)."


@contextmanager
def reverse_flow(bed: Testbed, flow: Flow, seconds: float) -> Iterator[None]:
    """A TCP flow from the scenario's server back to its client for `seconds`, across the
    protected link the other way (its data leaves the receiver's port at the normal priority)."""
    client, server = bed.network.node(flow.server), bed.network.node(flow.client)
    with IperfServer(server, REVERSE_PORT):
        tcp = TcpFlow(client, server.IP(), seconds, port=REVERSE_PORT).start()
        try:
            yield
        finally:
            result = tcp.wait()
    assert result.goodput_mbps > 0.1, result  # it ran: data went the other way


def _run(programs: str, scenario: Scenario, tmp_path, reverse_s: float = 0.0) -> PhaseResult:
    """The scenario's phases on one fig7 testbed with these programs at the protected link's
    ends (and a reverse flow of `reverse_s` seconds from the start when not 0); the last
    phase's result."""
    chosen = parse_programs(programs)
    spec = load_spec("fig7")
    sender, receiver = spec.protected
    with network_lock():
        bed = Testbed(spec, "builtin", tmp_path, program=chosen.others, log=lambda line: None,
                      programs={sender: chosen.sender, receiver: chosen.receiver})
        injector = None
        try:
            bed.start()
            injector = NftInjector(bed.network.wire_ingress(), LOSS)
            injector.start()
            protection = make_protection(bed, 1e-8)
            assert protection.tna == {s for s, p in ((sender, chosen.sender),
                                                     (receiver, chosen.receiver))
                                      if p == LG_PROGRAMS["tofino"]}
            store = RunStore("tna", {}, root=tmp_path)
            runner = PhaseRunner(bed, scenario, injector, store, protection, "local")
            if reverse_s:
                with reverse_flow(bed, scenario.flow, reverse_s):
                    results = [runner.run(phase) for phase in scenario.phases]
            else:
                results = [runner.run(phase) for phase in scenario.phases]
        finally:
            if injector is not None:
                injector.stop()
            bed.stop()
    assert_machine_clean()
    return results[-1]


@pytest.mark.parametrize("programs", ["tofino", "sender=tofino,receiver=v1model",
                                      "sender=v1model,receiver=tofino"])
def test_effective_loss_is_zero_with_lg_on(programs: str, tmp_path) -> None:
    result = _run(programs, SCENARIO, tmp_path)
    assert 0.003 < result.link_loss < 0.02, result  # the link corrupts ...
    assert result.effective_loss == 0.0, result  # ... but nothing is lost between A and D
    assert result.goodput_mbps > 1.0, result



def test_corruptd_switches_lg_on_mid_flow(tmp_path) -> None:
    result = _run("tofino", MID_FLOW, tmp_path, reverse_s=2 * MID_FLOW.flow.seconds + 2)
    assert result.lg_on_after_s is not None, result  # corruptd saw the loss and switched LG on
    assert result.effective_loss > 0, result  # before that, TCP lost packets ...
    assert result.effective_lg_on == 0.0, result  # ... from then on none
    assert result.retransmits_lg_on == 0, result
