"""Helpers for the harness tests: one network at a time, leftovers check."""

from __future__ import annotations

import subprocess

from lgkit.core.lock import machine_lock
from lgkit.net.lifecycle.cleanup import leftovers


def network_lock():
    """Serialise tests that build networks (the kit's machine-wide network lock)."""
    return machine_lock()


def named_namespaces() -> set[str]:
    """`ip netns` names (the kit creates none; other areas' tests may have some)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def assert_machine_clean() -> None:
    """No host namespace, interface, process, nftables table or stale runtime file (pid file,
    run record) of the kit is left."""
    left = leftovers()
    assert left == {"processes": [], "interfaces": [], "nft_tables": [], "runtime_files": []}, \
        left
