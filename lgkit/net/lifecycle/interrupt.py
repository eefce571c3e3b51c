"""Interruption test: experiments killed at random moments with random signals must leave
nothing behind after at most one `lgkit clean`, and every run must end complete or incomplete.

Each run is `lgkit run` of a short scenario in its own session; a "Ctrl-C" is SIGINT to that
session's process group, as a terminal sends it. The actions: SIGINT once, SIGINT three times
0.3 s apart, SIGINT a random number of times at random gaps, SIGTERM, SIGKILL of the runner,
of its watchdog then the runner, or of both at once. A first run goes uninterrupted: it must
end complete and clean, and its length bounds the random moments of the others, so that each
signal lands while its run is alive.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lgkit.core import naming
from lgkit.core.lock import machine_lock
from lgkit.core.targets import target_kind
from lgkit.measure.results import read_metadata
from lgkit.net.lifecycle.cleanup import clean, leftovers

ACTIONS = ("sigint", "sigint x3", "sigint burst", "sigterm", "kill runner", "kill reaper+runner",
           "kill both")
SCENARIO = """\
topology: fig7
loss_rate: 0.01
flow: {{client: h1, server: h3, congestion: cubic, seconds: {seconds}}}
phases: {phases}
corruptd: {{interval_s: 0.5, window_frames: 2000, threshold: 0.001}}
"""
SELF_CLEAN_S = 45.0
"How long the runner or its watchdog may take to clean up by themselves."


@dataclass
class Outcome:
    """What one interrupted run left."""

    action: str
    at_s: float
    exit_code: int | None
    status: str
    "The run's final metadata status ('none' if it was killed before its folder existed)."
    needed_clean: bool
    delivered: bool
    "Whether the run was still alive when the action came (else it had already ended)."
    left: dict[str, list] = field(default_factory=dict)
    "What was still there after the one `lgkit clean` (empty when all is well)."

    @property
    def ok(self) -> bool:
        return self.status in ("complete", "incomplete", "none") and not any(self.left.values())


def _reaper_pid(runner: int) -> int | None:
    path = naming.pid_file("reaper", str(runner))
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _kill(pid: int | None, sig: int) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _interrupt(proc: subprocess.Popen, action: str, rng: random.Random) -> None:
    """Deliver `action` to the run (SIGINTs go to its process group, like Ctrl-C)."""
    group = os.getpgid(proc.pid)
    if action.startswith("sigint"):
        count = {"sigint": 1, "sigint x3": 3}.get(action, rng.randint(2, 6))
        for i in range(count):
            try:
                os.killpg(group, signal.SIGINT)
            except ProcessLookupError:
                return
            if i + 1 < count:
                time.sleep(0.3 if action == "sigint x3" else rng.uniform(0.05, 1.5))
    elif action == "sigterm":
        _kill(proc.pid, signal.SIGTERM)
    elif action == "kill runner":
        _kill(proc.pid, signal.SIGKILL)
    elif action == "kill reaper+runner":
        _kill(_reaper_pid(proc.pid), signal.SIGKILL)
        time.sleep(rng.uniform(0.0, 1.0))
        _kill(proc.pid, signal.SIGKILL)
    else:  # kill both at once
        reaper = _reaper_pid(proc.pid)
        _kill(proc.pid, signal.SIGKILL)
        _kill(reaper, signal.SIGKILL)


def _results_folder(log: Path) -> Path | None:
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        if line.startswith("results: "):
            return Path(line.split(" ", 1)[1].strip())
    return None


def _wait_until_clean(seconds: float) -> dict[str, list]:
    deadline = time.monotonic() + seconds
    while True:
        left = leftovers()
        if not any(left.values()) or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def interrupt_run(index: int, action: str, at_s: float, workdir: Path, target: str,
                  seconds: float, rng: random.Random, after: str = "") -> Outcome:
    """Start one run and interrupt it `at_s` seconds after its log first shows `after` (a line's
    beginning; "": after it started)."""
    phases = "[lg_off, corruptd]" if target_kind(target).runs_p4 else "[lg_off]"
    scenario = workdir / f"run{index}.yaml"
    scenario.write_text(SCENARIO.format(seconds=seconds, phases=phases))
    log = workdir / f"run{index}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lgkit.cli", "run", str(scenario), "--target", target,
             "--results", str(workdir / "runs")],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if after:
        _wait_for_line(proc, log, after)
    time.sleep(at_s)
    delivered = action != "none" and proc.poll() is None
    if delivered:
        _interrupt(proc, action, rng)
    try:
        exit_code: int | None = proc.wait(SELF_CLEAN_S + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        exit_code = proc.wait()
    with machine_lock():  # after the run's own cleanup; no other run may clean for it
        left = _wait_until_clean(SELF_CLEAN_S)
        needed_clean = any(left.values())
        if needed_clean:
            clean()
            left = leftovers()
    run_dir = _results_folder(log)
    status = read_metadata(run_dir).get("status", "?") if run_dir else "none"
    return Outcome(action, at_s, exit_code, status, needed_clean, delivered, left)


def _wait_for_line(proc: subprocess.Popen, log: Path, start: str) -> None:
    """Until the run's log has a line beginning with `start` or the run has ended (a run's
    progress, not the wall clock, decides when it is interrupted)."""
    while proc.poll() is None:
        if any(line.startswith(start) for line in log.read_text(errors="replace").splitlines()):
            return
        time.sleep(0.05)


def calibrate(workdir: Path, target: str, seconds: float) -> tuple[Outcome, float]:
    """One uninterrupted run: its outcome and its length in seconds."""
    start = time.monotonic()
    outcome = interrupt_run(-1, "none", 0.0, workdir, target, seconds, random.Random(0))
    return outcome, time.monotonic() - start


def interrupt_runs(runs: int, seed: int, target: str, seconds: float, workdir: Path,
                   span: float, progress: Callable[[int, Outcome], None] | None = None
                   ) -> list[Outcome]:
    """`runs` runs, each interrupted by a random action at a random moment in 0.5..`span` s
    after its start (`span`: a little less than an uninterrupted run lasts)."""
    rng = random.Random(seed)
    outcomes = []
    for index in range(runs):
        action = ACTIONS[index % len(ACTIONS)] if index < len(ACTIONS) else rng.choice(ACTIONS)
        outcome = interrupt_run(index, action, round(rng.uniform(0.5, span), 2), workdir,
                                target, seconds, rng)
        outcomes.append(outcome)
        if progress is not None:
            progress(index, outcome)
    return outcomes


def format_outcomes(outcomes: list[Outcome]) -> str:
    """The table printed by `lgkit interrupt-test`."""
    lines = [f"{'#':>3} {'action':<20}{'at':>7} {'exit':>5} {'status':<11}{'clean':<7}left",
             "-" * 64]
    for i, o in enumerate(outcomes):
        left = ", ".join(f"{k}: {len(v)}" for k, v in o.left.items() if v) or "nothing"
        action = o.action if o.delivered else f"({o.action})"
        lines.append(f"{i:>3} {action:<20}{o.at_s:>6.1f}s {o.exit_code!s:>5} {o.status:<11}"
                     f"{'yes' if o.needed_clean else 'no':<7}{left}")
    bad = [o for o in outcomes if not o.ok]
    late = sum(not o.delivered for o in outcomes)
    lines.append(f"{len(outcomes) - late} runs interrupted while alive, {late} ended before "
                 f"their signal; {sum(o.needed_clean for o in outcomes)} needed "
                 f"`lgkit clean` (expected only when the watchdog was killed too); "
                 f"{len(bad)} left something behind or ended without a final status")
    return "\n".join(lines)
