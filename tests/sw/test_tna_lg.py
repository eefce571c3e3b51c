"""LinkGuardian's STF scenarios (tests/lg_stf), written once, on both programs on the built-in
target: p4/linkguardian.p4 as written, p4/tofino/linkguardian.p4 through its binding
(p4/tofino/linkguardian.stf.json, lgkit/tofino/scenarios.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import REPO, TESTS

from lgkit.sw.exec.interp.tables import Exact
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfResult, StfRunner, parse_stf
from lgkit.tofino.scenarios import Binding, bind_scenario, load_binding, run_scenario

PROGRAMS = {"v1model": REPO / "p4" / "linkguardian.p4",
            "tofino": REPO / "p4" / "tofino" / "linkguardian.p4"}
SCENARIOS = sorted((TESTS / "lg_stf").rglob("*.stf"))


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request: pytest.FixtureRequest) -> tuple[object, Binding]:
    path = PROGRAMS[request.param]
    return compile_file(str(path)), load_binding(path)


@pytest.mark.parametrize("stf", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_lg_scenario(program: tuple[object, Binding], stf: Path) -> None:
    compiled, binding = program
    scenario = bind_scenario(stf, binding)
    if scenario.skipped:
        pytest.skip(f"{binding.tag}: {scenario.skipped}")
    result = run_scenario(compiled, scenario, binding)
    assert result.passed, (result.diffs, result.check_failures)


def test_the_binding_renames_and_drops_with_reasons() -> None:
    binding = load_binding(PROGRAMS["tofino"])
    scenario = bind_scenario(TESTS / "lg_stf" / "receiver.stf", binding)
    tables = {getattr(s, "table", None) for s in scenario.stmts} - {None}
    assert tables == {"LgIngress.lg_global", "LgEgress.lg_global", "LgIngress.lg_port",
                      "LgEgress.lg_port", "LgIngress.ipv4_lpm"}
    assert any("lg_rx_notify_pending: notifications leave by an ingress mirror" in n
               for n in scenario.notes)
    # the port session (notifications) and its PFC twin truncate their copies, and the port
    # session's copies leave at the high priority (STF cannot say so)
    assert scenario.mirror_max_len == {3: 34, 515: 34}
    assert scenario.mirror_queue == {3: 0}  # receiver.stf's prio_high
    assert [s.words for s in scenario.stmts
            if getattr(s, "keyword", "") == "mirroring_add"] == [["511", "68"], ["3", "2"],
                                                                 ["515", "2"]]


def test_the_reference_program_runs_the_scenarios_unbound() -> None:
    binding = load_binding(PROGRAMS["v1model"])
    scenario = bind_scenario(TESTS / "lg_stf" / "receiver.stf", binding)
    assert binding.tag == "v1model" and not scenario.notes and not scenario.mirror_max_len
    assert not scenario.mirror_queue


# ---- TNA-only paths: packet-generator timers and PFC (tests/p4/tna/lg_timers) ---------------

TIMER_SCENARIOS = sorted((TESTS / "p4" / "tna" / "lg_timers").glob("*.stf"))
LOOP_PORTS = [68, 324]  # the recirculation and loop ports (the control plane sets both)
PKTGEN_PORT = 196  # pipe 1's generator port (the scenarios' pktgen_timer ... pipe=1)


def run_tna(stf: Path, pktgen_ports: list[int]) -> StfResult:
    """A TNA-only scenario on p4/tofino/linkguardian.p4, with the parser value sets the
    control plane fills (STF has no value-set command)."""
    compiled = compile_file(str(PROGRAMS["tofino"]))
    pl = Pipeline.load(compiled)
    pl.value_sets["LgIngressParser.lg_loop_ports"].set_members([[Exact(p)] for p in LOOP_PORTS])
    pl.value_sets["LgIngressParser.lg_pktgen_ports"].set_members(
        [[Exact(p)] for p in pktgen_ports])
    runner = StfRunner(pl, build_p4info(compiled.ir), str(stf))
    return runner.run(parse_stf(stf.read_text(), str(stf)))


@pytest.mark.parametrize("stf", TIMER_SCENARIOS, ids=[p.stem for p in TIMER_SCENARIOS])
def test_lg_timer_and_pfc_scenario(stf: Path) -> None:
    """Dummies and explicit ACKs from packet-generator timers, a receiver sending PFC, a sender
    held by PFC."""
    result = run_tna(stf, [PKTGEN_PORT])
    assert result.passed, (result.diffs, result.check_failures)


def test_without_the_generator_port_timer_packets_are_not_dummies() -> None:
    result = run_tna(TESTS / "p4" / "tna" / "lg_timers" / "dummy.stf", [])
    assert not result.passed  # port 196 not in lg_pktgen_ports: no dummy reaches port 2
    assert [d.port for d in result.diffs] == [2]
