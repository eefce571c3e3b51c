"""One experiment from the command line: scenario -> testbed -> injector -> phases -> results."""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lgkit.control.redis_server import RedisUnavailable
from lgkit.control.session import SessionError
from lgkit.core.targets import DEFAULT_TARGET, BuildError, TargetUnavailable, target_kind
from lgkit.core.topology import SpecError, TopologySpec, load_spec
from lgkit.measure.results import RESULTS_ROOT
from lgkit.net.inject.injectors import InjectorUnavailable
from lgkit.net.lifecycle.experiment import experiment
from lgkit.net.runner import PhaseRunner, format_table
from lgkit.net.spec.programs import LGPrograms, ProgramError, parse_programs
from lgkit.net.spec.scenario import (
    FLOW_RATE_MBPS,
    Scenario,
    ScenarioError,
    at_link_rate,
    check_scenario,
    in_range,
    load_scenario,
)
from lgkit.net.testbed.lgprotection import lg_available, make_protection
from lgkit.net.testbed.network import NameClash
from lgkit.net.testbed.p4switch import SwitchError
from lgkit.net.testbed.testbed import Testbed
from lgkit.workloads.iperf import WorkloadError

EXPECTED = (BuildError, RedisUnavailable, InjectorUnavailable, TargetUnavailable, ScenarioError,
            SpecError, WorkloadError, SessionError, SwitchError, NameClash)


class ExperimentError(RuntimeError):
    """The experiment could not run; the message is for the user."""


@dataclass(frozen=True)
class Plan:
    """A checked experiment: the scenario with its overrides, the topology, the programs, the
    phases that will run and where the results go."""

    scenario: Scenario
    spec: TopologySpec
    programs: LGPrograms
    phases: list[str]
    use_lg: bool
    results_root: Path | None
    target: str
    injector: str
    "A name of the injector registry, or auto."
    notifier: str
    "corruptd's channel to the switch control (redis | local)."
    rate_mbps: float | None
    "The link rate; None: the target's."
    fixed_seconds: bool
    "The flow length was given: it does not follow the link rate."


def plan_experiment(args: argparse.Namespace, log=print) -> Plan:
    """Check everything before anything is built: the options, the scenario and its topology,
    the program and the results folder (ExperimentError with a one-line message)."""
    try:
        _check_options(args)
        scenario = _override(load_scenario(args.scenario), args)
        spec = load_spec(scenario.topology)
        check_scenario(scenario, spec.hosts)
        programs = parse_programs(getattr(args, "program", None))
    except (ScenarioError, SpecError, ProgramError) as exc:
        raise ExperimentError(str(exc)) from exc
    if programs.uses_tna and args.target != DEFAULT_TARGET:
        raise ExperimentError(f"--program {args.program}: the TNA program runs on the built-in "
                              f"target only (--target {DEFAULT_TARGET}), not on {args.target}")
    root = Path(args.results) if getattr(args, "results", None) else None
    _check_results(root or RESULTS_ROOT)
    runs_p4 = target_kind(args.target).runs_p4
    use_lg = runs_p4 and programs.is_lg and lg_available()
    phases = scenario.phases
    if not use_lg:
        why = (f"{args.target} runs no P4" if not runs_p4
               else f"the program is {programs.sender.name}, not a LinkGuardian program")
        skipped = [p for p in phases if p != "lg_off"]
        if skipped:
            log(f"LinkGuardian: unavailable ({why}); skipping phases {', '.join(skipped)}")
        phases = [p for p in phases if p == "lg_off"]
    return Plan(scenario, spec, programs, phases, use_lg, root, args.target, args.injector,
                args.notifier, args.rate_mbps, getattr(args, "seconds", None) is not None)


def run_experiment(plan: Plan, log=print) -> Path:
    """Run a planned experiment; returns the results folder."""
    scenario = plan.scenario
    metadata = {"scenario": dataclasses.asdict(scenario), "target": plan.target,
                "program": str(plan.programs.sender), "programs": {
                    role: str(getattr(plan.programs, role))
                    for role in ("sender", "receiver", "others")},
                "topology": plan.spec.name,
                "phases": plan.phases, "injector_choice": plan.injector}
    try:
        with experiment(f"{scenario.name}-{plan.target}", metadata, root=plan.results_root,
                        log=log) as store:
            _run_in(store, plan, log)
            return store.path
    except EXPECTED as exc:
        raise ExperimentError(str(exc)) from exc


def _check_options(args: argparse.Namespace) -> None:
    """--loss, --seconds and --rate-mbps: finite and in range (ScenarioError)."""
    if getattr(args, "loss", None) is not None:
        in_range("--loss", args.loss, 0, 1, high_open=True)
    if getattr(args, "seconds", None) is not None:
        in_range("--seconds", args.seconds, 0, 86400, low_open=True)
    if getattr(args, "rate_mbps", None) is not None:
        in_range("--rate-mbps", args.rate_mbps, 0, 100_000, low_open=True)


def _check_results(root: Path) -> None:
    """The results folder exists (made if needed) and takes files."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as exc:
        raise ExperimentError(f"results folder {root}: {exc.strerror or exc}") from None


def _override(scenario, args: argparse.Namespace):
    if getattr(args, "seconds", None) is not None:
        scenario = dataclasses.replace(
            scenario, flow=dataclasses.replace(scenario.flow, seconds=args.seconds))
    if getattr(args, "loss", None) is not None:
        scenario = dataclasses.replace(
            scenario, loss=dataclasses.replace(scenario.loss, rate=args.loss))
    if getattr(args, "phases", None):
        scenario = dataclasses.replace(scenario, phases=list(args.phases))
    return scenario


def _run_in(store, plan: Plan, log) -> None:
    scenario, spec, programs = plan.scenario, plan.spec, plan.programs
    sender, receiver = spec.protected
    testbed = Testbed(spec, plan.target, store.path, program=programs.others,
                      rate_mbps=plan.rate_mbps, log=log, injector=plan.injector,
                      programs={sender: programs.sender, receiver: programs.receiver})
    if not plan.fixed_seconds:
        slower = at_link_rate(scenario, testbed.rate_mbps)
        if slower.flow.seconds != scenario.flow.seconds:
            log(f"flows: {slower.flow.seconds:g} s at {testbed.rate_mbps:g} Mb/s (the scenario's "
                f"{scenario.flow.seconds:g} s are for {FLOW_RATE_MBPS:g} Mb/s links)")
        scenario = slower
    try:
        testbed.start()
        log(f"testbed: {spec.description} on {plan.target}, program {programs.describe()}")
        injector = testbed.corrupt(scenario.loss, log=log)
        store.note(injector=injector.describe(), link_rate_mbps=testbed.rate_mbps,
                   paper_link_gbps=spec.paper_link_gbps, flow_seconds=scenario.flow.seconds)
        protection = make_protection(testbed, scenario.target_loss) if plan.use_lg else None
        runner = PhaseRunner(testbed, scenario, injector, store, protection, plan.notifier, log)
        rows = []
        for phase in plan.phases:
            log(f"phase {phase}: {scenario.flow.congestion} flow {scenario.flow.client} -> "
                f"{scenario.flow.server} for {scenario.flow.seconds:g} s")
            rows.append(runner.run(phase))
        log(format_table(rows))
    finally:
        testbed.stop()
