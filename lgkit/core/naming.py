"""Names of everything the kit creates on the machine, so that cleanup touches nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

PREFIX = "lg"
"Every Mininet node name starts with this, so every root-namespace interface does too."

NFT_TABLE_PREFIX = "lgkit_"
"Every nftables table the kit adds is named with this prefix."

RUNTIME_DIR = Path("/run/lgkit")
"Pid files of the processes the kit starts (switches, redis-server, reapers)."

HOST_SHELL_MARK = "mininet:" + PREFIX
"Mininet starts each node's shell as `bash ... mininet:NAME`; ours carry the prefix."


def node_name(base: str) -> str:
    """Kit-prefixed node name (`up` -> `lgup`); interfaces become `lgup-eth1`."""
    return base if base.startswith(PREFIX) else PREFIX + base


NODE_PORT = re.compile(rf"^{PREFIX}[a-z0-9]+-eth\d+$")
NODE = re.compile(rf"^{PREFIX}[a-z0-9]+$")


def is_kit_interface(name: str, kind: str) -> bool:
    """True for a root-namespace interface the kit created: a node port or a node's bridge."""
    return bool(NODE_PORT.match(name)) or (kind == "bridge" and bool(NODE.match(name)))


def pid_file(kind: str, name: str) -> Path:
    """Where the pid of the process `name` of kind `kind` (switch, redis, reaper) is kept."""
    return RUNTIME_DIR / f"{kind}-{name}.pid"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks (tells a reused pid from the original)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def write_pid(kind: str, name: str, pid: int) -> Path:
    """Record a started process (pid and start time) so `lgkit clean` can find it."""
    RUNTIME_DIR.mkdir(parents=True, exist_ok=True)
    path = pid_file(kind, name)
    path.write_text(f"{pid} {start_time(pid)}\n")
    return path


def recorded_pids() -> list[int]:
    """Pids from the pid files that still name the same, live process."""
    pids = []
    for path in RUNTIME_DIR.glob("*.pid") if RUNTIME_DIR.exists() else []:
        try:
            pid_text, started = path.read_text().split()[:2]
        except (OSError, ValueError):
            continue
        if pid_text.isdigit() and str(start_time(int(pid_text))) == started:
            pids.append(int(pid_text))
    return pids


def write_run_record(pid: int, run_dir: Path) -> Path:
    """Record a running experiment (its runner's pid and start time, and its results folder),
    so that `lgkit clean` can mark it incomplete if its runner and watchdog are both killed."""
    RUNTIME_DIR.mkdir(parents=True, exist_ok=True)
    path = RUNTIME_DIR / f"run-{pid}.json"
    path.write_text(json.dumps({"pid": pid, "started": start_time(pid),
                                "run_dir": str(run_dir)}) + "\n")
    return path


def dead_run_records() -> list[tuple[Path, Path | None]]:
    """(record, results folder) of every recorded experiment whose runner is gone."""
    found: list[tuple[Path, Path | None]] = []
    for path in sorted(RUNTIME_DIR.glob("run-*.json")) if RUNTIME_DIR.exists() else []:
        try:
            record = json.loads(path.read_text())
            pid, started, run_dir = int(record["pid"]), record["started"], record["run_dir"]
        except (OSError, ValueError, KeyError, TypeError):
            found.append((path, None))
            continue
        if start_time(pid) != started:
            found.append((path, Path(run_dir)))
    return found
