"""Differential test of expressions: random programs (p4exprgen) through the built-in target,
against the spec's rules and, where p4c and BMv2 are installed, against simple_switch.

    .venv/bin/python tests/tools/exprdiff.py --start 1 --count 500 [--no-bmv2] [--out DIR]

prints one line per disagreement and a summary; programs that disagree are written to DIR with
their inputs and the three outputs. The test suite runs a few seeds (test_expr_differential.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lgkit.sw.exec.arch.v1model.passes import run_untimed  # noqa: E402
from lgkit.sw.exec.pipeline import Pipeline  # noqa: E402
from lgkit.sw.lang.frontend import P4Error  # noqa: E402
from lgkit.sw.lang.frontend.compiler import compile_file  # noqa: E402
from tools import bmv2, p4exprgen  # noqa: E402

PACKETS_PER_PROGRAM = 4


@dataclass
class Outcome:
    """One program's result: 'ok', 'kit-error' (refused at load), 'p4c-rejects', or a
    disagreement 'kit!=spec' / 'bmv2!=spec' with a report."""

    seed: int
    kind: str
    report: str = ""


def check_seed(seed: int, workdir: Path, use_bmv2: bool, **shape: int) -> Outcome:
    prog = p4exprgen.random_program(seed, **shape)
    rng = random.Random(seed * 7919)
    values = [p4exprgen.random_inputs(prog, rng) for _ in range(PACKETS_PER_PROGRAM)]
    packets = [prog.in_bytes(v) for v in values]
    expected = [prog.out_bytes(v) for v in values]
    source = workdir / f"expr{seed}.p4"
    source.write_text(prog.source())
    try:
        pipeline = Pipeline.load(compile_file(str(source)))
    except P4Error as exc:
        return Outcome(seed, "kit-error", str(exc))
    kit = [b"".join(d for _, d in run_untimed(pipeline, 0, p)) for p in packets]
    got = {"kit": kit}
    if use_bmv2:
        try:
            bmv2.compile_p4(source, source.with_suffix(".json"))
        except bmv2.CompileError as exc:
            return Outcome(seed, "p4c-rejects", str(exc))
        out = bmv2.run(source.with_suffix(".json"), [(0, p) for p in packets],
                       expected_outputs=len(packets))
        got["bmv2"] = out.get(0, [])
    for who, outputs in got.items():
        for i, want in enumerate(expected):
            have = outputs[i] if i < len(outputs) else None
            if have != want:
                lines = [f"{source}: packet {i} in  {packets[i].hex()}",
                         f"  spec {want.hex()}"]
                lines += [f"  {w:4} {o[i].hex() if i < len(o) else '(none)'}"
                          for w, o in got.items()]
                return Outcome(seed, f"{who}!=spec", "\n".join(lines))
    return Outcome(seed, "ok")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=1, help="first seed")
    ap.add_argument("--count", type=int, default=100, help="number of programs")
    ap.add_argument("--no-bmv2", action="store_true", help="compare with the spec only")
    ap.add_argument("--depth", type=int, default=4, help="expression depth")
    ap.add_argument("--max-width", type=int, default=64, help="widest bit<W>/int<W>")
    ap.add_argument("--out", default=None, help="where to keep disagreeing programs")
    args = ap.parse_args(argv)
    use_bmv2 = not args.no_bmv2
    if use_bmv2 and bmv2.missing_tools():
        print(f"exprdiff: {', '.join(bmv2.missing_tools())} not on PATH: comparing with the "
              "spec only", file=sys.stderr)
        use_bmv2 = False
    out = Path(args.out or tempfile.mkdtemp(prefix="exprdiff-"))
    out.mkdir(parents=True, exist_ok=True)
    from tqdm import tqdm

    counts: dict[str, int] = {}
    for seed in tqdm(range(args.start, args.start + args.count), desc="programs", unit="prog"):
        outcome = check_seed(seed, out, use_bmv2, depth=args.depth, max_width=args.max_width)
        counts[outcome.kind] = counts.get(outcome.kind, 0) + 1
        if outcome.kind == "ok":
            (out / f"expr{seed}.p4").unlink(missing_ok=True)
            (out / f"expr{seed}.json").unlink(missing_ok=True)
        else:
            tqdm.write(f"seed {seed}: {outcome.kind}\n{outcome.report}")
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    print(f"exprdiff: {args.count} programs x {PACKETS_PER_PROGRAM} packets "
          f"({'spec, kit, BMv2' if use_bmv2 else 'spec, kit'}): {summary}; kept in {out}")
    bad = sum(n for kind, n in counts.items() if "!=" in kind)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
