"""`lgkit clean`: remove every process, interface, namespace and nftables table the kit made.

Mininet hosts live in unnamed network namespaces (not in `ip netns`) that exist only while a
process holds them; killing every process inside them removes the namespaces and their veths.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from lgkit.core import naming
from lgkit.measure.results import mark_incomplete_if_running


@dataclass
class CleanReport:
    """What a cleanup removed."""

    processes: list[int] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    nft_tables: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    "Results folders of killed runs, marked incomplete."

    def summary(self) -> str:
        """One line for the user."""
        line = (f"clean: {len(self.processes)} processes (with their host namespaces), "
                f"{len(self.interfaces)} interfaces, {len(self.nft_tables)} nftables tables "
                "removed")
        if self.runs:
            line += f"; {len(self.runs)} killed runs marked incomplete: {', '.join(self.runs)}"
        return line


def _run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=False).stdout


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _net_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def holder_of(interface: str) -> str:
    """'pid N (command)' of the process that holds a kit interface (a switch whose -i names
    it, or the Mininet shell of its node), or why none was found."""
    node = interface.partition("-eth")[0]
    for pid in _all_pids():
        argv = _cmdline(pid)
        if pid != os.getpid() and any(arg.endswith((f"@{interface}", f"mininet:{node}"))
                                      for arg in argv):
            return f"pid {pid} ({' '.join(argv)[:200]})"
    return "no process (left by a killed run: `lgkit clean` removes it)"


def _is_kit_process(argv: list[str]) -> bool:
    """A Mininet shell of a kit node, or a process whose arguments name a kit interface."""
    if any(arg.startswith(naming.HOST_SHELL_MARK) for arg in argv):
        return True
    return any(naming.NODE_PORT.match(arg.partition("@")[2]) for arg in argv if "@" in arg)


def _namespace_has_kit_interface(pid: int) -> bool:
    try:
        lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    names = [line.split(":", 1)[0].strip() for line in lines]
    return any(naming.NODE_PORT.match(name) for name in names)


def kit_process_ids() -> set[int]:
    """Pids of everything the kit started: recorded pids, node shells, switch processes, and
    every process living in a network namespace that holds a kit interface (Mininet hosts)."""
    pids = set(naming.recorded_pids())
    all_pids = _all_pids()
    pids |= {pid for pid in all_pids if _is_kit_process(_cmdline(pid))}
    own_ns = _net_ns(os.getpid())
    verdict: dict[str, bool] = {}
    for pid in all_pids if own_ns is not None else []:
        ns = _net_ns(pid)
        if ns is None or ns == own_ns:
            continue
        if ns not in verdict:
            verdict[ns] = _namespace_has_kit_interface(pid)
        if verdict[ns]:
            pids.add(pid)
    return pids - _ancestors()


def _ancestors() -> set[int]:
    """This process, its parents up to pid 1, and pid 1: never to be killed by a cleanup."""
    return {1, *parent_chain(os.getpid())}


def parent_chain(pid: int) -> list[int]:
    """`pid` and its parents, nearest first, up to (not including) pid 1; empty if it is gone."""
    chain: list[int] = []
    while pid > 1 and pid not in chain:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        chain.append(pid)
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return chain


def processes_in_namespace_of(pid: int) -> set[int]:
    """Every process sharing pid's network namespace (a Mininet host's programs)."""
    ns = _net_ns(pid)
    if ns is None or ns == _net_ns(os.getpid()):
        return set()
    return {p for p in _all_pids() if _net_ns(p) == ns} - _ancestors()


def kill_processes(pids: set[int]) -> list[int]:
    """SIGTERM, then SIGKILL after 2 s; returns the pids signalled."""
    return _kill(pids - _ancestors())


def _kill(pids: set[int]) -> list[int]:
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            killed.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in killed):
        time.sleep(0.05)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return killed


def kit_interfaces() -> list[str]:
    """Root-namespace interfaces the kit created."""
    try:
        links = json.loads(_run("ip", "-d", "-j", "link", "show") or "[]")
    except json.JSONDecodeError:
        return []
    names = []
    for link in links:
        name = link.get("ifname", "")
        kind = link.get("linkinfo", {}).get("info_kind", "")
        if naming.is_kit_interface(name, kind):
            names.append(name)
    return names


def kit_nft_tables() -> list[tuple[str, str]]:
    """(family, name) of every nftables table the kit added."""
    tables = []
    for line in _run("nft", "list", "tables").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith(naming.NFT_TABLE_PREFIX):
            tables.append((parts[1], parts[2]))
    return tables


def runtime_files() -> list[str]:
    """Pid files and run records of processes that are gone."""
    if not naming.RUNTIME_DIR.exists():
        return []
    files = [p for p in naming.RUNTIME_DIR.glob("*.pid") if _recorded_pid(p) not in
             set(naming.recorded_pids())]
    files += [record for record, _ in naming.dead_run_records()]
    return sorted(str(p) for p in files)


def leftovers() -> dict[str, list]:
    """Everything of the kit still present (empty lists when the machine is clean)."""
    return {
        "processes": sorted(kit_process_ids()),
        "interfaces": kit_interfaces(),
        "nft_tables": [name for _, name in kit_nft_tables()],
        "runtime_files": runtime_files(),
    }


def clean(spare: frozenset[int] = frozenset()) -> CleanReport:
    """Remove everything of the kit but the processes in `spare` (a run's own watchdog while
    the run cleans); mark experiments whose runner is gone incomplete. Safe to run at any time
    and more than once."""
    report = CleanReport()
    report.processes = _kill(kit_process_ids() - spare)
    for family, name in kit_nft_tables():
        subprocess.run(["nft", "delete", "table", family, name], capture_output=True, check=False)
        report.nft_tables.append(name)
    for name in kit_interfaces():
        subprocess.run(["ip", "link", "delete", name], capture_output=True, check=False)
        report.interfaces.append(name)
    if naming.RUNTIME_DIR.exists():
        for path in naming.RUNTIME_DIR.glob("*.pid"):
            if _recorded_pid(path) not in spare:
                path.unlink(missing_ok=True)
    report.runs = mark_dead_runs()
    return report


def _recorded_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def mark_dead_runs() -> list[str]:
    """Mark every recorded experiment whose runner is gone (killed with its watchdog) as
    incomplete, and drop its record; returns the results folders marked."""
    marked = []
    for record, run_dir in naming.dead_run_records():
        if run_dir is not None and (run_dir / "metadata.json").is_file():
            try:
                if mark_incomplete_if_running(run_dir, "the runner and its watchdog were killed; "
                                                       "marked by lgkit clean"):
                    marked.append(str(run_dir))
            except (OSError, ValueError):
                pass  # an unreadable metadata.json: nothing to mark
        record.unlink(missing_ok=True)
    return marked
