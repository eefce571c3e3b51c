"""Two BMv2 builds compared on LinkGuardian's highest link rate: `lgkit reproduce lgrate
--target bmv2` run alternately with each build's simple_switch_grpc, then min/median/max per
build and the ratio of the medians, in one command (docs/bmv2.md, "A faster BMv2 build"); and
the four switches' CPU (cores, summed) during each run's first probe, at the same rate for both.

The kit runs the simple_switch_grpc it finds on PATH; each run gets a PATH whose first folder
holds only a link to that build's binary (its runtime CLI stays the one installed) and an
LD_LIBRARY_PATH that starts with the build's lib folder. Needs root, like every Mininet run.

    scripts/bmv2_builds.py --rounds 3 /opt/bmv2 /opt/bmv2-fast -- --seconds 8
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lgkit.reproduce.lgrate import summary


def build_env(prefix: Path, links: Path) -> dict[str, str]:
    """The environment of one run on the build installed under `prefix`."""
    binary = prefix / "bin" / "simple_switch_grpc"
    if not binary.is_file():
        raise SystemExit(f"bmv2_builds: error: {binary} does not exist")
    folder = links / prefix.name
    folder.mkdir(exist_ok=True)
    (folder / binary.name).symlink_to(binary)
    env = dict(os.environ)
    env["PATH"] = f"{folder}:{env.get('PATH', '')}"
    env["LD_LIBRARY_PATH"] = ":".join(
        p for p in (str(prefix / "lib"), env.get("LD_LIBRARY_PATH", "")) if p)
    return env


def one_run(env: dict[str, str], results: Path,
            lgrate_args: list[str]) -> tuple[list[float | None], float]:
    """One `lgkit reproduce lgrate --target bmv2`: the highest rates its searches found, and the
    switches' CPU during its first probe."""
    before = set(results.iterdir())
    log = results / f"run{len(list(results.glob('run*.log'))) + 1}.log"
    with log.open("w") as out:
        subprocess.run([sys.executable, "-m", "lgkit.cli", "reproduce", "lgrate", "--target",
                        "bmv2", "--results", str(results), *lgrate_args], env=env, stdout=out,
                       stderr=subprocess.STDOUT, check=False)
    runs = [p for p in set(results.iterdir()) - before if p.is_dir()]
    if len(runs) != 1:
        raise SystemExit(f"bmv2_builds: error: lgrate left no run folder (see {log})")
    found = json.loads((runs[0] / "metadata.json").read_text()).get("highest_rate_mbps")
    with (runs[0] / "probes.csv").open() as probes:
        first = next(csv.DictReader(probes))
    # cpu_share reads "up 0.14 tx 0.44 rx 0.27 dn 0.17"
    return found or [None], sum(float(v) for v in first["cpu_share"].split()[1::2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs=2, type=Path, help="install prefixes (bin/, lib/)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per build (default 3)")
    parser.add_argument("--results", type=Path, default=Path("measurements/runs"))
    parser.add_argument("lgrate_args", nargs="*", help="after --: options of lgrate")
    args = parser.parse_args()
    found: dict[Path, list[float | None]] = {prefix: [] for prefix in args.builds}
    cpu: dict[Path, list[float]] = {prefix: [] for prefix in args.builds}
    args.results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        envs = {prefix: build_env(prefix, Path(tmp)) for prefix in args.builds}
        results = Path(tempfile.mkdtemp(prefix="bmv2-builds-", dir=args.results))
        for round_ in range(args.rounds):
            for prefix in args.builds:
                rates, first_cpu = one_run(envs[prefix], results, args.lgrate_args)
                found[prefix] += rates
                cpu[prefix].append(first_cpu)
                print(f"round {round_ + 1}, {prefix}: highest LG link rate {summary(rates)}, "
                      f"switches' CPU in the first probe {first_cpu:.2f} cores", flush=True)
    medians = {}
    for prefix, rates in found.items():
        medians[prefix] = statistics.median(0.0 if r is None else r for r in rates)
        cores = sorted(cpu[prefix])
        print(f"{prefix}: highest LG link rate {summary(rates)}; switches' CPU in the first "
              f"probe {cores[0]:.2f} / {statistics.median(cores):.2f} / {cores[-1]:.2f} cores "
              f"(min/median/max)")
    first, second = args.builds
    if medians[first]:
        print(f"{second} / {first}: {medians[second] / medians[first]:.2f}x (medians); "
              f"runs in {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
