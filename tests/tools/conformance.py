"""Conformance on p4c's own STF tests (tests/p4c_corpus): every program through the built-in
target and, with --bmv2, through p4c-bm2-ss + simple_switch; one line per program, then the
counts and the pass ratio.

    .venv/bin/python tests/tools/conformance.py [--bmv2] [-k SUBSTRING] [--corpus DIR]

Outcomes of one target: pass, fail (the packets differ from the test's), unsupported (refused
at load with `unsupported: ...`), rejected (a compile error: p4c-bm2-ss's, or the kit's
frontend), stf-error (the test file itself is malformed), error (BMv2 could not run it),
crash (an internal error of the kit: always a bug). The verdict: pass, unsupported, fail,
p4c-rejects (both reject the program: the test does not fit this compiler), rejected (the kit
rejects it; without --bmv2 nobody knows whether p4c does too), bad-test (the STF is malformed),
bmv2-only-fails (the kit passes where BMv2 fails). Exit status 1 if any verdict is fail.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from tqdm import tqdm

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lgkit.sw.exec.pipeline import Pipeline  # noqa: E402
from lgkit.sw.lang.frontend import P4Error  # noqa: E402
from lgkit.sw.lang.frontend.compiler import compile_file  # noqa: E402
from lgkit.sw.lang.p4info import build_p4info  # noqa: E402
from lgkit.sw.tools.bmv2_stf import (  # noqa: E402
    Bmv2Error,
    Bmv2StfRun,
    compile_bmv2,
    failed_checks,
    missing_tools,
)
from lgkit.sw.tools.stf import (  # noqa: E402
    ExpectStmt,
    StfError,
    StfRunner,
    expect_diffs,
    parse_stf,
)

CORPUS = Path(__file__).resolve().parent.parent / "p4c_corpus"
KIT_TIMEOUT_S = 60


@dataclass
class Outcome:
    """One target's result on one program, with the first line of its reason."""

    kind: str
    reason: str = ""


def programs(corpus: Path, pattern: str = "") -> list[Path]:
    """The corpus's tests: NAME.stf beside NAME.p4, sorted by name."""
    return sorted(p for p in corpus.glob("*.stf")
                  if p.with_suffix(".p4").is_file() and pattern in p.stem)


def _first(text: str) -> str:
    """The first error line of a compiler's or runner's message (else its first line)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [""])[0][:160]


def _timeout(signum: int, frame: FrameType | None) -> None:
    raise TimeoutError(f"more than {KIT_TIMEOUT_S} s")


def run_kit(stf: Path) -> Outcome:
    """The test on the built-in target, in this process (bounded by SIGALRM)."""
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(KIT_TIMEOUT_S)
    try:
        return _run_kit(stf)
    except TimeoutError as exc:
        return Outcome("crash", f"timeout: {exc}")
    except Exception as exc:  # noqa: BLE001 - an internal error is an outcome to report
        return Outcome("crash", f"{type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _run_kit(stf: Path) -> Outcome:
    try:
        stmts = parse_stf(stf.read_text(errors="replace"), str(stf))
    except StfError as exc:
        return Outcome("stf-error", str(exc))
    try:
        compiled = compile_file(str(stf.with_suffix(".p4")))
        pipeline = Pipeline.load(compiled)
    except P4Error as exc:
        text = "\n".join(str(d) for d in exc.diagnostics)
        kind = "unsupported" if "error: unsupported:" in text else "rejected"
        return Outcome(kind, _first(text))
    try:
        result = StfRunner(pipeline, build_p4info(compiled.ir), str(stf)).run(stmts)
    except StfError as exc:
        return Outcome("stf-error", str(exc))
    if result.passed:
        return Outcome("pass")
    diff = result.diffs[0] if result.diffs else None
    reason = (f"port {diff.port}: expected {len(diff.expected)} packet(s), got "
              f"{len(diff.received)}" if diff else result.check_failures[0])
    return Outcome("fail", reason)


def run_bmv2(stf: Path, work: Path) -> Outcome:
    """The test on simple_switch (p4c-bm2-ss's JSON), judged by its expects."""
    try:
        stmts = parse_stf(stf.read_text(errors="replace"), str(stf))
    except StfError as exc:
        return Outcome("stf-error", str(exc))
    try:
        json_path, info = compile_bmv2(stf.with_suffix(".p4"), work)
    except Bmv2Error as exc:
        return Outcome("rejected", _first(str(exc).split("\n", 1)[-1]))
    try:
        run = Bmv2StfRun(json_path, info, work).run(stmts)
    except (Bmv2Error, StfError, ValueError) as exc:
        return Outcome("error", _first(str(exc)))
    diffs = expect_diffs([s for s in stmts if isinstance(s, ExpectStmt)], run.received)
    failures = failed_checks(stmts, run.state)
    if not diffs and not failures:
        return Outcome("pass")
    return Outcome("fail", f"{len(diffs)} port(s) differ" if diffs else failures[0])


def verdict(kit: Outcome, bmv2: Outcome | None) -> str:
    if kit.kind == "pass":
        return "pass" if bmv2 is None or bmv2.kind == "pass" else "bmv2-only-fails"
    if kit.kind == "unsupported":
        return "unsupported"
    if kit.kind == "stf-error" and (bmv2 is None or bmv2.kind in ("stf-error", "error")):
        return "bad-test"
    if kit.kind == "rejected" and bmv2 is None:
        return "rejected"
    if kit.kind == "rejected" and bmv2 is not None and bmv2.kind == "rejected":
        return "p4c-rejects"
    return "fail"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bmv2", action="store_true",
                        help="also run every test on p4c-bm2-ss + simple_switch")
    parser.add_argument("-k", dest="pattern", default="", help="only names containing this")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="NAME.p4 + NAME.stf files")
    args = parser.parse_args(argv)
    if args.bmv2 and missing_tools():
        print(f"conformance: BMv2 tools not on PATH: {', '.join(missing_tools())}",
              file=sys.stderr)
        return 2
    tests = programs(args.corpus, args.pattern)
    verdicts: Counter[str] = Counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lgkit-conformance-") as tmp:
        for stf in tqdm(tests, desc="programs", unit="prog", file=sys.stderr):
            kit = run_kit(stf)
            bmv2 = run_bmv2(stf, Path(tmp) / stf.stem) if args.bmv2 else None
            result = verdict(kit, bmv2)
            verdicts[result] += 1
            rows.append((stf.stem, result, kit, bmv2))
    for name, result, kit, bmv2 in rows:
        line = f"{name:44} {result:16} kit={kit.kind}"
        if bmv2 is not None:
            line += f" bmv2={bmv2.kind}"
        reasons = [r for r in (kit.reason, bmv2.reason if bmv2 else "") if r]
        print(line + (f"  # {' | '.join(reasons)}" if reasons else ""))
    print(summary(verdicts, len(rows)))
    return 1 if verdicts["fail"] else 0


def summary(verdicts: Counter[str], total: int) -> str:
    """The counts and the pass ratios: over every program, and over the valid tests (those
    neither malformed nor rejected by p4c-bm2-ss as well)."""
    kit_pass = verdicts["pass"] + verdicts["bmv2-only-fails"]
    valid = total - verdicts["p4c-rejects"] - verdicts["bad-test"]
    lines = ["counts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
             f"built-in target passes {kit_pass}/{total} programs"
             f" ({kit_pass / max(total, 1):.1%}); {kit_pass}/{valid} valid tests"
             f" ({kit_pass / max(valid, 1):.1%}); fail {verdicts['fail']}"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
