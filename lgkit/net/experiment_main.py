"""One experiment from the command line: scenario -> testbed -> injector -> phases -> results."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from lgkit.control.build import BuildError
from lgkit.control.redis_server import RedisUnavailable
from lgkit.control.session import SessionError
from lgkit.net.inject.injectors import InjectorUnavailable, make_injector
from lgkit.net.lifecycle.experiment import experiment
from lgkit.net.runner import PhaseRunner, format_table
from lgkit.net.spec.scenario import ScenarioError, load_scenario
from lgkit.net.spec.topology import SpecError, load_spec
from lgkit.net.testbed.lgprotection import (
    LG_PROGRAM,
    frames_per_s,
    lg_available,
    make_protection,
    p4_injector,
)
from lgkit.net.testbed.p4switch import SwitchError, TargetUnavailable
from lgkit.net.testbed.testbed import Testbed
from lgkit.workloads.iperf import WorkloadError

EXPECTED = (BuildError, RedisUnavailable, InjectorUnavailable, TargetUnavailable, ScenarioError,
            SpecError, WorkloadError, SessionError, SwitchError)


class ExperimentError(RuntimeError):
    """The experiment could not run; the message is for the user."""


def run_experiment(args: argparse.Namespace, log=print) -> Path:
    """Run the scenario named in args; returns the results folder."""
    try:
        scenario = load_scenario(args.scenario)
        spec = load_spec(scenario.topology)
    except (ScenarioError, SpecError) as exc:
        raise ExperimentError(str(exc)) from exc
    scenario = _override(scenario, args)
    program = Path(args.program).resolve() if getattr(args, "program", None) else LG_PROGRAM
    if not program.exists():
        raise ExperimentError(f"no P4 program {program}")
    use_lg = args.target != "lxbr" and program == LG_PROGRAM and lg_available()
    phases = scenario.phases
    if not use_lg:
        why = ("Linux bridges run no P4" if args.target == "lxbr"
               else f"the program is {program.name}, not {LG_PROGRAM.name}")
        skipped = [p for p in phases if p != "lg_off"]
        if skipped:
            log(f"LinkGuardian: unavailable ({why}); skipping phases {', '.join(skipped)}")
        phases = [p for p in phases if p == "lg_off"]
    metadata = {"scenario": dataclasses.asdict(scenario), "target": args.target,
                "program": str(program),
                "topology": spec.name, "phases": phases, "injector_choice": args.injector}
    try:
        root = Path(args.results) if getattr(args, "results", None) else None
        with experiment(f"{scenario.name}-{args.target}", metadata, root=root, log=log) as store:
            _run_in(store, scenario, spec, phases, program, use_lg, args, log)
            return store.path
    except EXPECTED as exc:
        raise ExperimentError(str(exc)) from exc


def _override(scenario, args: argparse.Namespace):
    if getattr(args, "seconds", None):
        scenario = dataclasses.replace(
            scenario, flow=dataclasses.replace(scenario.flow, seconds=args.seconds))
    if getattr(args, "loss", None) is not None:
        scenario = dataclasses.replace(
            scenario, loss=dataclasses.replace(scenario.loss, rate=args.loss))
    if getattr(args, "phases", None):
        scenario = dataclasses.replace(scenario, phases=list(args.phases))
    return scenario


def _run_in(store, scenario, spec, phases, program: Path, use_lg: bool, args, log) -> None:
    testbed = Testbed(spec, args.target, store.path, program=program,
                      rate_mbps=args.rate_mbps, log=log)
    injector = None
    try:
        testbed.start()
        log(f"testbed: {spec.description} on {args.target}, program {program.name}")
        if args.injector == "p4":
            injector = p4_injector(testbed, scenario.loss, log)
        else:
            injector = make_injector(args.injector, testbed.network.wire_ports(),
                                     scenario.loss, log, frames_per_s(testbed))
        injector.start()
        store.note(injector=injector.describe(), link_rate_mbps=testbed.rate_mbps,
                   paper_link_gbps=spec.paper_link_gbps)
        protection = make_protection(testbed, scenario.target_loss) if use_lg else None
        runner = PhaseRunner(testbed, scenario, injector, store, protection, args.notifier, log)
        rows = []
        for phase in phases:
            log(f"phase {phase}: {scenario.flow.congestion} flow {scenario.flow.client} -> "
                f"{scenario.flow.server} for {scenario.flow.seconds:g} s")
            rows.append(runner.run(phase))
        log(format_table(rows))
    finally:
        if injector is not None:
            injector.stop()
        testbed.stop()
