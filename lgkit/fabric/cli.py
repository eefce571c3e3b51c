"""`lgkit fabric`: run, sweep, benchmark and plot the large-scale deployment simulation."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from lgkit.core.argtypes import SHARE, host_port, ranged
from lgkit.core.writable import check_writable
from lgkit.fabric import artifact, runs
from lgkit.fabric.lgperf import DEFAULT_TABLE, LOOKUP_SCALES
from lgkit.fabric.repairs import REPAIR_DRAWS
from lgkit.fabric.report import describe_run
from lgkit.fabric.runs import MAX_LINKS, RunSpec
from lgkit.fabric.simulate import REFAILURES, ModelChoices, Policy
from lgkit.fabric.topology import Fabric, facebook_fabric, fat_tree
from lgkit.fabric.trace import TraceParams, generate_trace

DEFAULT_RESULTS = Path("measurements/fabric")
BENCH_GOAL_SECONDS = {0.5: 60.0, 0.75: 600.0}
"""Issue 6: a 1-year full-size run within 1 min at 50% and 10 min at 75% on 2 cores."""
MAX_DAYS = 100_000.0
MAX_MTTF_HOURS = 1e12
MAX_SEED = 2**63 - 1
MAX_WORKERS = 64
MAX_LIST = 1_000
MAX_K = 1_000


class _FabricParser(argparse.ArgumentParser):
    """Usage errors as one line `lgkit: error: ...` with exit status 1, as the kit's others."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"lgkit: error: {self.prog.removeprefix('lgkit ')}: {message}\n")


_constraint = ranged(float, 0.0, 1.0, above=True)
_seed = ranged(int, 0, MAX_SEED)
_count = ranged(int, 1, MAX_LINKS)


def _list_of(item: Callable[[str], Any]) -> Callable[[str], list]:
    def parse(text: str) -> list:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not parts:
            raise argparse.ArgumentTypeError("empty list")
        if len(parts) > MAX_LIST:
            raise argparse.ArgumentTypeError(f"more than {MAX_LIST} items")
        return [item(part) for part in parts]

    return parse


def _add_topology_options(parser: argparse.ArgumentParser) -> None:
    topo = parser.add_argument_group("topology (default: the paper's ~100K-link FB fabric)")
    topo.add_argument("--topology", choices=("fb", "fattree"), default="fb")
    topo.add_argument("--pods", type=_count, default=261)
    topo.add_argument("--tors-per-pod", type=_count, default=48)
    topo.add_argument("--planes", type=_count, default=4,
                      help="fabric switches per pod = spine planes")
    topo.add_argument("--spines-per-plane", type=_count, default=48)
    topo.add_argument("--k", type=ranged(int, 2, MAX_K, even=True), default=8,
                      help="fat-tree arity (even)")


def _add_trace_options(parser: argparse.ArgumentParser) -> None:
    trace = parser.add_argument_group("trace")
    trace.add_argument("--days", type=ranged(float, 0.0, MAX_DAYS, above=True), default=365.0,
                       help="measured period (default 365)")
    trace.add_argument("--warmup-days", type=ranged(float, 0.0, MAX_DAYS), default=4.0,
                       help="simulated before the measured period (default 4)")
    trace.add_argument("--mttf-hours", type=ranged(float, 0.0, MAX_MTTF_HOURS, above=True),
                       default=10_000.0, help="mean time to corruption of a link (default 10000)")


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    model = parser.add_argument_group("solutions and model choices")
    model.add_argument("--trace", type=Path,
                       help="replay a saved trace: lgkit's .npz or the authors' JSON")
    model.add_argument("--deploy", type=_list_of(SHARE), default=[1.0],
                       help="LinkGuardian deployment shares, e.g. 1.0 or 0.25,0.5,1.0")
    model.add_argument("--lg-table", type=Path, default=DEFAULT_TABLE,
                       help="LinkGuardian performance CSV (default: the paper's 100G numbers)")
    model.add_argument("--solutions", type=_list_of(Policy), default=list(Policy),
                       help="comma list of: " + ", ".join(Policy))
    model.add_argument("--lg-lookup", choices=LOOKUP_SCALES, default="linear",
                       help="LG table row of a loss rate: nearest on a linear scale (default, as "
                            "the authors' simulator) or in log10")
    model.add_argument("--refailure", choices=REFAILURES, default="update",
                       help="a new onset on a corrupting link: update its loss rate and re-run "
                            "the fast checker (default, as the authors' simulator) or ignore it")
    model.add_argument("--repair-draws", choices=REPAIR_DRAWS, default="trace",
                       help="repair times: drawn with each trace event (default) or as the "
                            "authors' simulator draws them (seeded stream, events 1 s apart)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _fabric(args: argparse.Namespace) -> Fabric:
    if args.topology == "fattree":
        return fat_tree(args.k)
    return facebook_fabric(args.pods, args.tors_per_pod, args.planes, args.spines_per_plane)


def _params(args: argparse.Namespace, seed: int) -> TraceParams:
    return TraceParams(seed=seed, days=args.days, warmup_days=args.warmup_days,
                       mttf_hours=args.mttf_hours)


def _base_spec(
    args: argparse.Namespace, constraint: float, seed: int, fabric: Fabric | None = None
) -> RunSpec:
    choices = ModelChoices(args.lg_lookup, args.refailure, args.repair_draws)
    spec = RunSpec(fabric or _fabric(args), constraint, _params(args, seed), tuple(args.deploy),
                   tuple(dict.fromkeys(args.solutions)), str(args.lg_table),
                   str(args.trace) if args.trace else None, choices)
    runs.check_spec(spec)
    return spec


@contextmanager
def _writing(where: Path) -> Iterator[None]:
    """An OSError of the block names `where` if it names no file (a full disk shows on a write
    to an open file); what the block left half-written is removed by the writers."""
    try:
        yield
    except OSError as error:
        if error.filename:
            raise
        raise OSError(error.errno, error.strerror, str(where)) from None


def _run(args: argparse.Namespace) -> int:
    specs = [_base_spec(args, constraint, args.seed) for constraint in args.constraint]
    check_writable(args.out)
    for spec in specs:
        result = runs.execute(spec, progress=not args.no_progress)
        with _writing(args.out):
            folder = runs.save(result, args.out)
        print(describe_run(result))
        print(f"  saved to {folder}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from lgkit.fabric.sweep import run_sweep, sweep_specs

    specs = sweep_specs(_base_spec(args, args.constraints[0], args.seeds[0]), args.seeds,
                        args.constraints)
    check_writable(args.out)
    where = args.scheduler or f"a local Dask cluster of {args.workers} workers"
    print(f"{len(specs)} runs on {where}", file=sys.stderr)
    with _writing(args.out):
        folders = run_sweep(specs, args.out, args.scheduler, args.workers, not args.no_progress)
    for folder in folders:
        print(describe_run(runs.load(folder)))
    print(f"results in {args.out}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    specs = [_base_spec(args, constraint, args.seed, facebook_fabric())
             for constraint in args.constraints]
    print(f"benchmark: {args.days:g}-day run of the full-size FB fabric, seed {args.seed}")
    for constraint, spec in zip(args.constraints, specs, strict=True):
        started = time.perf_counter()
        result = runs.execute(spec, progress=not args.no_progress)
        wall = time.perf_counter() - started
        print(describe_run(result))
        goal = BENCH_GOAL_SECONDS.get(constraint)
        verdict = "" if goal is None else (
            f" (goal <= {goal:.0f} s: {'met' if wall <= goal else 'MISSED'})")
        print(f"  => {constraint:.0%} constraint: {wall:.1f} s wall for trace + "
              f"{len(spec.policies)} solutions{verdict}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    from lgkit.fabric.figures import fig13, fig14, save_figure

    figures = {"13": lambda: fig13(args.results, args.week_start_day),
               "14": lambda: fig14(args.results)}
    chosen = figures if args.fig == "all" else {args.fig: figures[args.fig]}
    check_writable(args.out)
    for number, draw in chosen.items():
        with _writing(args.out / f"fig{number}.png"):
            print(save_figure(draw(), args.out / f"fig{number}.png"))
    return 0


def _trace(args: argparse.Namespace) -> int:
    fabric = _fabric(args)
    params = _params(args, args.seed)
    runs.check_spec(RunSpec(fabric, 1.0, params, deploys=()))
    form = args.format or ("artifact" if args.out.suffix == ".json" else "npz")
    if form == "artifact":
        artifact.topology_of(fabric)
    if args.out.is_dir():
        raise ValueError(f"cannot write to {args.out}: it is a folder; name a file")
    check_writable(args.out.parent, args.out)
    trace = generate_trace(fabric.n_links, params)
    with _writing(args.out):
        if form == "artifact":
            artifact.write_trace(trace, fabric, args.out)
        else:
            trace.save(args.out)
    print(f"{len(trace):,} onsets on {trace.n_links:,} links written to {args.out} ({form})")
    return 0


def _guarded(action: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return action(args)
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            print(f"lgkit: error: {where}{error.strerror or error}", file=sys.stderr)
            return 1
        except ValueError as error:
            print(f"lgkit: error: {error}", file=sys.stderr)
            return 1

    return run


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `lgkit fabric {run,sweep,bench,plot,trace}`."""
    fabric = subparsers.add_parser("fabric", help="large-scale CorrOpt vs CorrOpt + LG simulation")
    commands = fabric.add_subparsers(dest="fabric_command", metavar="ACTION", required=True,
                                     parser_class=_FabricParser)

    run = commands.add_parser("run", help="simulate one seed at one or more constraints")
    run.add_argument("--constraint", type=_list_of(_constraint), default=[0.5],
                     help="capacity constraint(s), e.g. 0.5 or 0.5,0.75")
    run.add_argument("--seed", type=_seed, default=1)
    run.add_argument("--out", type=Path, default=DEFAULT_RESULTS, help="results folder")
    _add_topology_options(run)
    _add_trace_options(run)
    _add_model_options(run)
    run.set_defaults(func=_guarded(_run))

    sweep = commands.add_parser("sweep", help="seeds x constraints on a Dask cluster")
    sweep.add_argument("--seeds", type=_list_of(_seed), default=[1])
    sweep.add_argument("--constraints", type=_list_of(_constraint), default=[0.5, 0.75])
    sweep.add_argument("--scheduler", type=host_port,
                       help="Dask scheduler address HOST:PORT (default: a LocalCluster)")
    sweep.add_argument("--workers", type=ranged(int, 1, MAX_WORKERS), default=2,
                       help="LocalCluster worker processes")
    sweep.add_argument("--out", type=Path, default=DEFAULT_RESULTS, help="results folder")
    _add_topology_options(sweep)
    _add_trace_options(sweep)
    _add_model_options(sweep)
    sweep.set_defaults(func=_guarded(_sweep))

    bench = commands.add_parser("bench", help="wall time of the full-size 1-year run")
    bench.add_argument("--constraints", type=_list_of(_constraint), default=[0.5, 0.75])
    bench.add_argument("--seed", type=_seed, default=1)
    _add_trace_options(bench)
    _add_model_options(bench)
    bench.set_defaults(func=_guarded(_bench))

    plot = commands.add_parser("plot", help="draw Fig. 13 / Fig. 14 PNGs from a results folder")
    plot.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    plot.add_argument("--fig", choices=("13", "14", "all"), default="all")
    plot.add_argument("--week-start-day", type=ranged(float, 0.0, MAX_DAYS),
                      help="Fig. 13 window (default: warm-up end)")
    plot.add_argument("--out", type=Path, default=Path("measurements/figures"))
    plot.set_defaults(func=_guarded(_plot))

    trace = commands.add_parser("trace", help="draw a corruption trace and save it")
    trace.add_argument("--seed", type=_seed, default=1)
    trace.add_argument("--out", type=Path, required=True)
    trace.add_argument("--format", choices=("npz", "artifact"),
                       help="lgkit's .npz or the authors' JSON trace (default: artifact for a "
                            ".json --out, else npz)")
    _add_topology_options(trace)
    _add_trace_options(trace)
    trace.set_defaults(func=_guarded(_trace))
