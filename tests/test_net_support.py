"""Helpers for the harness tests: one network at a time, leftovers check."""

from __future__ import annotations

import os
import subprocess

from lgkit.core.lock import machine_lock
from lgkit.net.lifecycle.cleanup import leftovers, parent_chain


def network_lock():
    """Serialise tests that build networks (the kit's machine-wide network lock)."""
    return machine_lock()


def named_namespaces() -> set[str]:
    """`ip netns` names (the kit creates none; other areas' tests may have some)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def assert_machine_clean() -> None:
    """No host namespace, interface, process, nftables table or stale runtime file (pid file,
    run record) of the kit is left; kit processes another live run started (their parents lead
    to a process that is neither this test's nor the kit's) are that run's, not leftovers."""
    left = leftovers()
    left["processes"] = [pid for pid in left["processes"]
                         if not another_runs(pid, set(left["processes"]))]
    assert left == {"processes": [], "interfaces": [], "nft_tables": [], "runtime_files": []}, \
        left


def another_runs(pid: int, kit: set[int]) -> bool:
    """Whether kit process `pid` belongs to another live run: its parents do not lead through
    this test process but through a live process that is not the kit's (another pytest, an
    lgkit command); an orphan (parent pid 1) or this test's child is this test's."""
    parents = parent_chain(pid)[1:]
    return os.getpid() not in parents and any(p not in kit for p in parents)
