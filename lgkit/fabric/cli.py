"""`lgkit fabric`: run, sweep, benchmark and plot the large-scale deployment simulation."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lgkit.fabric import runs
from lgkit.fabric.lgperf import DEFAULT_TABLE
from lgkit.fabric.report import describe_run
from lgkit.fabric.runs import RunSpec
from lgkit.fabric.simulate import Policy
from lgkit.fabric.topology import Fabric, facebook_fabric, fat_tree
from lgkit.fabric.trace import TraceParams, generate_trace

DEFAULT_RESULTS = Path("measurements/fabric")
BENCH_GOAL_SECONDS = {0.5: 60.0, 0.75: 600.0}
"""Issue 6: a 1-year full-size run within 1 min at 50% and 10 min at 75% on 2 cores."""


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a share within [0, 1] (0.5 = 50%)")
    return value


def _constraint(text: str) -> float:
    value = _share(text)
    if value == 0.0:
        raise argparse.ArgumentTypeError("a capacity constraint must be above 0")
    return value


def _positive(kind: Callable[[str], float | int]) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a valid {kind.__name__}: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be positive")
        return value

    return parse


def _list_of(item: Callable[[str], object]) -> Callable[[str], list]:
    def parse(text: str) -> list:
        parts = [part for part in text.split(",") if part.strip()]
        if not parts:
            raise argparse.ArgumentTypeError("empty list")
        return [item(part.strip()) for part in parts]

    return parse


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer seed: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("seeds must be non-negative")
    return value


def _add_topology_options(parser: argparse.ArgumentParser) -> None:
    topo = parser.add_argument_group("topology (default: the paper's ~100K-link FB fabric)")
    topo.add_argument("--topology", choices=("fb", "fattree"), default="fb")
    topo.add_argument("--pods", type=_positive(int), default=261)
    topo.add_argument("--tors-per-pod", type=_positive(int), default=48)
    topo.add_argument("--planes", type=_positive(int), default=4,
                      help="fabric switches per pod = spine planes")
    topo.add_argument("--spines-per-plane", type=_positive(int), default=48)
    topo.add_argument("--k", type=_positive(int), default=8, help="fat-tree arity")


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    model = parser.add_argument_group("trace and solutions")
    model.add_argument("--days", type=_positive(float), default=365.0)
    model.add_argument("--warmup-days", type=float, default=4.0)
    model.add_argument("--mttf-hours", type=_positive(float), default=10_000.0)
    model.add_argument("--trace", type=Path, help="replay a saved trace (.npz)")
    model.add_argument("--deploy", type=_list_of(_share), default=[1.0],
                       help="LinkGuardian deployment shares, e.g. 1.0 or 0.25,0.5,1.0")
    model.add_argument("--lg-table", type=Path, default=DEFAULT_TABLE,
                       help="LinkGuardian performance CSV (default: the paper's 100G numbers)")
    model.add_argument("--solutions", type=_list_of(Policy), default=list(Policy),
                       help="comma list of: " + ", ".join(Policy))
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _fabric(args: argparse.Namespace) -> Fabric:
    if args.topology == "fattree":
        return fat_tree(args.k)
    return facebook_fabric(args.pods, args.tors_per_pod, args.planes, args.spines_per_plane)


def _base_spec(
    args: argparse.Namespace, constraint: float, seed: int, fabric: Fabric | None = None
) -> RunSpec:
    params = TraceParams(seed=seed, days=args.days, warmup_days=args.warmup_days,
                         mttf_hours=args.mttf_hours)
    return RunSpec(fabric or _fabric(args), constraint, params, tuple(args.deploy),
                   tuple(dict.fromkeys(args.solutions)), str(args.lg_table),
                   str(args.trace) if args.trace else None)


def _run(args: argparse.Namespace) -> int:
    for constraint in args.constraint:
        result = runs.execute(_base_spec(args, constraint, args.seed),
                              progress=not args.no_progress)
        folder = runs.save(result, args.out)
        print(describe_run(result))
        print(f"  saved to {folder}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from lgkit.fabric.sweep import run_sweep, sweep_specs

    specs = sweep_specs(_base_spec(args, args.constraints[0], args.seeds[0]), args.seeds,
                        args.constraints)
    where = args.scheduler or f"a local Dask cluster of {args.workers} workers"
    print(f"{len(specs)} runs on {where}", file=sys.stderr)
    folders = run_sweep(specs, args.out, args.scheduler, args.workers, not args.no_progress)
    for folder in folders:
        print(describe_run(runs.load(folder)))
    print(f"results in {args.out}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    print(f"benchmark: {args.days:g}-day run of the full-size FB fabric, seed {args.seed}")
    for constraint in args.constraints:
        spec = _base_spec(args, constraint, args.seed, facebook_fabric())
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
    for number, draw in chosen.items():
        print(save_figure(draw(), args.out / f"fig{number}.png"))
    return 0


def _trace(args: argparse.Namespace) -> int:
    params = TraceParams(seed=args.seed, days=args.days, warmup_days=args.warmup_days,
                         mttf_hours=args.mttf_hours)
    trace = generate_trace(_fabric(args).n_links, params)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    trace.save(args.out)
    print(f"{len(trace):,} onsets on {trace.n_links:,} links written to {args.out}")
    return 0


def _guarded(action: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return action(args)
        except (ValueError, OSError) as error:
            print(f"lgkit fabric: error: {error}", file=sys.stderr)
            return 2

    return run


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `lgkit fabric {run,sweep,bench,plot,trace}`."""
    fabric = subparsers.add_parser("fabric", help="large-scale CorrOpt vs CorrOpt + LG simulation")
    commands = fabric.add_subparsers(dest="fabric_command", metavar="ACTION", required=True)

    run = commands.add_parser("run", help="simulate one seed at one or more constraints")
    run.add_argument("--constraint", type=_list_of(_constraint), default=[0.5],
                     help="capacity constraint(s), e.g. 0.5 or 0.5,0.75")
    run.add_argument("--seed", type=_seed, default=1)
    run.add_argument("--out", type=Path, default=DEFAULT_RESULTS, help="results folder")
    _add_topology_options(run)
    _add_model_options(run)
    run.set_defaults(func=_guarded(_run))

    sweep = commands.add_parser("sweep", help="seeds x constraints on a Dask cluster")
    sweep.add_argument("--seeds", type=_list_of(_seed), default=[1])
    sweep.add_argument("--constraints", type=_list_of(_constraint), default=[0.5, 0.75])
    sweep.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    sweep.add_argument("--workers", type=_positive(int), default=2,
                       help="LocalCluster worker processes")
    sweep.add_argument("--out", type=Path, default=DEFAULT_RESULTS, help="results folder")
    _add_topology_options(sweep)
    _add_model_options(sweep)
    sweep.set_defaults(func=_guarded(_sweep))

    bench = commands.add_parser("bench", help="wall time of the full-size 1-year run")
    bench.add_argument("--constraints", type=_list_of(_constraint), default=[0.5, 0.75])
    bench.add_argument("--seed", type=_seed, default=1)
    _add_model_options(bench)
    bench.set_defaults(func=_guarded(_bench))

    plot = commands.add_parser("plot", help="draw Fig. 13 / Fig. 14 PNGs from a results folder")
    plot.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    plot.add_argument("--fig", choices=("13", "14", "all"), default="all")
    plot.add_argument("--week-start-day", type=float, help="Fig. 13 window (default: warm-up end)")
    plot.add_argument("--out", type=Path, default=Path("measurements/figures"))
    plot.set_defaults(func=_guarded(_plot))

    trace = commands.add_parser("trace", help="draw a corruption trace and save it (.npz)")
    trace.add_argument("--seed", type=_seed, default=1)
    trace.add_argument("--out", type=Path, required=True)
    _add_topology_options(trace)
    _add_model_options(trace)
    trace.set_defaults(func=_guarded(_trace))
