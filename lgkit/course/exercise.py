"""`lgkit exercise check NAME`: a LinkGuardian exercise's STF tests and a short Mininet run.

The STF tests (exercises/NAME/tests/*.stf) run the student's program on the built-in target;
the Mininet check builds the exercise as the course Makefile does (p4c-bm2-ss, then
simple_switch_grpc, real or the kit's shims: --target) and sends numbered probes from h1 to h2
over the link s1 -> s2, which loses 5% of its frames (the program's corruption emulator).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lgkit.core.lock import machine_lock
from lgkit.core.targets import DEFAULT_TARGET
from lgkit.course.generate import EXERCISES_DIR, FOLDERS, PROGRAM
from lgkit.course.toolchain import REPO, target_env

NUMBERS = {folder: number for number, folder in FOLDERS.items()}
CONTROLLER = "lgcontrol.py"
PROBES, PROBE_INTERVAL_S = 200, 0.02
IDLE_S = 3          # h2 stops this long after its last probe once h1 is done (> the ackNo timeout)
RECEIVE_LIMIT_S = 240
SETTLE_S = 0.5      # a switch is quiet when its counters stay the same this long
P4INFO = "build/lglite.p4.p4info.txtpb"
SWITCHES = {"s1": ("127.0.0.1:50051", 0), "s2": ("127.0.0.1:50052", 1)}
STAT = {"revealed": 0, "received": 1, "loss_events": 2, "notified": 3, "retx": 4,
        "delivered": 5, "duplicates": 6, "timeouts": 7}


@dataclass
class Result:
    """One checked behaviour: passed or not, what was seen, and a hint when it failed."""

    name: str
    passed: bool
    detail: str = ""
    hint: str = ""


def exercise_dir(name: str) -> Path:
    """exercises/NAME (NAME may also be the exercise's number); ValueError if unknown."""
    folder = FOLDERS.get(int(name)) if name.isdigit() else name
    if folder not in NUMBERS:
        raise ValueError(f"no exercise {name!r}; exercises: "
                         + ", ".join(f"{n} {f}" for n, f in FOLDERS.items()))
    return EXERCISES_DIR / folder


# ---------------------------------------------------------------------------- STF tests


def stf_results(directory: Path, program: Path) -> list[Result]:
    """Compile the program (a load error counts too), then each tests/*.stf."""
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang.frontend.compiler import compile_file
    from lgkit.sw.lang.frontend.diagnostics import P4Error
    from lgkit.sw.lang.p4info import build_p4info
    from lgkit.sw.tools.stf import StfError, StfRunner, format_result, parse_stf

    try:
        compiled = compile_file(str(program))
        info = build_p4info(compiled.ir)
        Pipeline.load(compiled)
    except P4Error as exc:
        detail = "\n".join(str(d) for d in exc.diagnostics[:5])
        return [Result("compiles", False, detail, "fix the compile errors first")]
    results = [Result("compiles", True)]
    for test in sorted((directory / "tests").glob("*.stf")):
        hint = leading_comment(test.read_text())
        try:
            outcome = StfRunner(Pipeline.load(compiled), info, str(test)).run(
                parse_stf(test.read_text(), str(test)))
        except StfError as exc:
            results.append(Result(f"stf {test.name}", False, str(exc), hint))
            continue
        detail = "" if outcome.passed else format_result(outcome)
        results.append(Result(f"stf {test.name}", outcome.passed, detail, hint))
    return results


def leading_comment(text: str) -> str:
    """The comment block an STF test starts with: what the test checks."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    return " ".join(lines)


# ---------------------------------------------------------------------------- the controller


def eq2(loss: float, target: float) -> int:
    """Eq. 2 (the reference the student's controller is checked against)."""
    if loss <= 0:
        return 0
    return max(0, math.ceil(round(math.log(target) / math.log(loss), 9)) - 1)


UNIT_CASES = [("copies(1e-5, 1e-8)", 1), ("copies(1e-4, 1e-8)", 1), ("copies(1e-3, 1e-8)", 2),
              ("copies(0.0, 1e-8)", 0), ("loss_rate(1000, 990)", 0.01), ("loss_rate(0, 0)", 0)]


def controller_results(workdir: Path, env: dict[str, str]) -> list[Result]:
    """The controller's loss_rate() and copies() against the paper's numbers."""
    calls = "; ".join(f"print(repr(c.{call}))" for call, _ in UNIT_CASES)
    done = subprocess.run(["python3", "-c", f"import lgcontrol as c; {calls}"], cwd=workdir,
                          env=env, capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    if done.returncode != 0:
        return [Result("controller imports", False, done.stderr.strip()[-500:])]
    results = []
    for (call, want), got in zip(UNIT_CASES, lines, strict=False):
        ok = got not in ("None", "") and math.isclose(float(got), want, abs_tol=1e-12)
        results.append(Result(f"controller {call} == {want}", ok, f"got {got}",
                              "Eq. 2: N = ceil(log(target) / log(loss)) - 1; loss = (B - C) / B"))
    return results


# ---------------------------------------------------------------------------- Mininet


def wait_for(path: Path, seconds: int = 60) -> str:
    """A Mininet CLI line that waits until `path` exists (at most `seconds`)."""
    return f"sh for i in $(seq {seconds * 10}); do [ -e {path} ] && break; sleep 0.1; done"


def read_counters(name: str, *counters: str) -> str:
    """A Mininet CLI line printing a switch's counters once they stopped changing."""
    address, device = SWITCHES[name]
    return (f"sh python3 ../utils/read_counters.py --settle {SETTLE_S} {name} {address} "
            f"{device} {P4INFO} {' '.join(counters)}")


def mininet_commands(number: int, out: Path) -> list[str]:
    """The Mininet CLI script: probes h1 -> h2 (for exercise 5, first a measurement run and the
    student's controller once both switches are quiet), then every switch's counters. h2
    listens before h1 sends and stops once h1 is done and nothing came for IDLE_S."""
    ready, stop = out.with_suffix(".ready"), out.with_suffix(".stop")
    commands = []
    if number == 5:
        commands += [f"h1 python3 ../utils/packets.py send 10.0.0.2 measure --count {PROBES * 2}"
                     " --interval 0.002",
                     read_counters("s1", "MyEgress.lg_sent"),
                     read_counters("s2", "MyIngress.lg_stats"),
                     f"sh python3 {CONTROLLER} --target-loss 1e-6"]
    commands += [f"h2 python3 ../utils/packets.py receive {out} --expect {PROBES} "
                 f"--ready {ready} --stop-file {stop} --idle {IDLE_S} "
                 f"--seconds {RECEIVE_LIMIT_S} &",
                 wait_for(ready),
                 f"h1 python3 ../utils/packets.py send 10.0.0.2 probe --count {PROBES} "
                 f"--interval {PROBE_INTERVAL_S} --numbered",
                 f"sh touch {stop}",
                 "h2 wait"]
    commands += [read_counters(name, "MyIngress.lg_stats", "MyEgress.lg_sent")
                 for name in SWITCHES]
    return commands


def run_network(workdir: Path, env: dict[str, str], commands: list[str]) -> str:
    """`make run` with `commands` for the Mininet CLI, holding the machine's network lock (the
    exercise's switch names and ports 9090+/50051+ are those of every tutorial network)."""
    with machine_lock():
        done = subprocess.run(["make", "run"], cwd=workdir, env=env, text=True,
                              input="\n".join([*commands, "exit", ""]), capture_output=True,
                              timeout=300)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"`make run` failed (exit {done.returncode}):\n{output[-3000:]}")
    return output


def parse_counters(output: str) -> dict[tuple[str, str, int], int]:
    found = {}
    # a line may follow the Mininet prompt: "mininet> s2 MyIngress.lg_stats[0] packets=..."
    for sw, name, index, packets in re.findall(r"\b(s\d) (\S+)\[(\d+)\] packets=(\d+)", output):
        found[(sw, name.split(".")[-1], int(index))] = int(packets)
    return found


def missing_runs(received: list[int]) -> int:
    """Maximal runs of probe numbers missing before the last one received."""
    seen, runs, inside = set(received), 0, False
    for index in range(max(received, default=-1) + 1):
        if index not in seen and not inside:
            runs += 1
        inside = index not in seen
    return runs


def mininet_results(number: int, output: str, received: list[int]) -> list[Result]:
    counters = parse_counters(output)

    def stat(sw: str, what: str) -> int:
        return counters.get((sw, "lg_stats", STAT[what]), 0)

    last = max(received, default=-1)
    complete_to_last = sorted(set(received)) == list(range(last + 1))
    results = [Result("probes arrive at h2", bool(received), f"{len(received)} of {PROBES}",
                      "nothing reached h2: is the packet delivered to HOST_PORT?"),
               Result("no probe delivered twice", len(set(received)) == len(received),
                      f"{len(received) - len(set(received))} duplicates",
                      "a retransmitted copy must be delivered only while its hole is open")]
    if number == 1:
        gaps = missing_runs(received)
        results += [
            Result("every gap is a loss event at s2", stat("s2", "loss_events") == gaps > 0,
                   f"loss events {stat('s2', 'loss_events')}, gaps seen by h2 {gaps}",
                   "count one loss event per gap in loss_detected()"),
            Result("s1 receives one notification per loss event",
                   stat("s1", "notified") == stat("s2", "loss_events"),
                   f"notified {stat('s1', 'notified')}",
                   "send_ack() after loss_detected(); the ACK carries hole_size > 0")]
    if number >= 2:
        results.append(Result(
            "lost probes are retransmitted and delivered", complete_to_last
            and stat("s1", "retx") > 0, f"missing before #{last}: "
            f"{sorted(set(range(last + 1)) - set(received))[:10]}, retransmissions "
            f"{stat('s1', 'retx')}", "the Tx copy loops until tx_acked passes it; a hole "
            "bit set by a notification makes it go out as N copies"))
    if number >= 3:
        results.append(Result("probes arrive in order", received == sorted(received),
                              f"first out of order: {first_disorder(received)}",
                              "Algorithm 1: hold seq > ackNo in the reordering buffer"))
    if number >= 4:
        results += [
            Result("every probe arrives, the last ones too", sorted(received) ==
                   list(range(PROBES)), f"{len(set(received))} of {PROBES}",
                   "a lost tail is only noticed when the dummy arrives"),
            Result("dummies reveal losses", stat("s2", "revealed") > 0,
                   f"losses revealed by a dummy: {stat('s2', 'revealed')}",
                   "the dummy carries the last seq sent; the receiver treats it as a probe "
                   "that is never delivered")]
    return results


def first_disorder(received: list[int]) -> str:
    for a, b in zip(received, received[1:], strict=False):
        if b < a:
            return f"#{b} after #{a}"
    return "none"


def controller_run_results(output: str) -> list[Result]:
    match = re.search(r"measured loss (\S+) .*?N = (\d+) copies", output)
    if not match:
        return [Result("controller measures the loss and picks N", False, output[-800:],
                       "print 'measured loss L (...); N = n copies ...' as the skeleton does")]
    loss, n = float(match.group(1)), int(match.group(2))
    line = output[match.start():output.find("\n", match.start())]
    return [Result("controller measures the loss and picks N", n == eq2(loss, 1e-6) and
                   0.01 < loss < 0.15, f"{line} (Eq. 2 gives {eq2(loss, 1e-6)})",
                   "loss = (B - C) / B from MyEgress.lg_sent (s1) and lg_stats[1] (s2)"),
            Result("controller switches LinkGuardian on", "LinkGuardian on" in output, "",
                   "activate(): the multicast group with N replicas, then configure()")]


@contextmanager
def workspace(directory: Path, solution: bool) -> Iterator[Path]:
    """A temporary copy of the exercise (with solution/ over it) next to a copy of utils/."""
    with tempfile.TemporaryDirectory(prefix="lgkit-exercise-") as tmp:
        work = Path(tmp) / directory.name
        shutil.copytree(EXERCISES_DIR / "utils", Path(tmp) / "utils")
        shutil.copytree(directory, work, ignore=shutil.ignore_patterns(
            "build", "logs", "pcaps", "solution", "tests"))
        if solution:
            for file in (directory / "solution").iterdir():
                shutil.copy(file, work / file.name)
        yield work


def make_tutorial_env() -> None:
    subprocess.run(["bash", str(REPO / "scripts" / "tutorial-env.sh")], check=True,
                   capture_output=True, timeout=600)


def controller_check(directory: Path, solution: bool) -> list[Result]:
    """Exercise 5's unit checks: the controller's functions in the tutorial environment."""
    make_tutorial_env()
    with workspace(directory, solution) as work:
        return controller_results(work, target_env(DEFAULT_TARGET))


def mininet_check(directory: Path, number: int, target: str, solution: bool) -> list[Result]:
    env = target_env(target)
    if os.geteuid() != 0:
        return [Result("mininet", False, "skipped: the Mininet check needs root")]
    make_tutorial_env()
    with workspace(directory, solution) as work:
        out = work / "h2.txt"
        output = run_network(work, env, mininet_commands(number, out))
        received = [int(m) for m in re.findall(r"msg=probe#(\d+)", out.read_text())] \
            if out.exists() else []
        results = controller_run_results(output) if number == 5 else []
        return results + mininet_results(min(number, 4), output, received)


# ---------------------------------------------------------------------------- the command


def check(name: str, target: str = DEFAULT_TARGET, solution: bool = False,
          mininet: bool = True) -> int:
    """Print each check's outcome (with a hint when it fails); 0 if all passed."""
    directory = exercise_dir(name)
    number = NUMBERS[directory.name]
    program = directory / ("solution" if solution else "") / PROGRAM
    print(f"exercise {number} ({directory.name}): {program.relative_to(REPO)}")
    results = stf_results(directory, program) if number < 5 else \
        controller_check(directory, solution)
    if mininet and all(r.passed for r in results):
        print(f"Mininet check on the {target} target (a minute) ...", flush=True)
        try:
            results += mininet_check(directory, number, target, solution)
        except (RuntimeError, ValueError, subprocess.SubprocessError) as exc:
            results.append(Result("mininet", False, str(exc)))
    elif mininet:
        results.append(Result("mininet", False, "not run: fix the failures above first"))
    for result in results:
        print(f"{'PASS' if result.passed else 'FAIL'} {result.name}"
              + (f": {result.detail}" if result.detail and result.passed else ""))
        if not result.passed:
            for line in result.detail.splitlines()[:12]:
                print(f"     {line}")
            if result.hint:
                print(f"     hint: {result.hint}")
    passed = sum(r.passed for r in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


def check_all(target: str = DEFAULT_TARGET, solution: bool = False, mininet: bool = True) -> int:
    """`check` for every exercise in turn, then one summary line each; 0 if all passed."""
    outcomes = {}
    for folder in FOLDERS.values():
        outcomes[folder] = check(folder, target, solution, mininet)
        print()
    for number, folder in FOLDERS.items():
        print(f"{'PASS' if outcomes[folder] == 0 else 'FAIL'} exercise {number} ({folder})")
    return 0 if not any(outcomes.values()) else 1
