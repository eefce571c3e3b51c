"""Shared fixtures for the harness tests: root check, one Mininet at a time, leftovers check."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from lgkit.net.lifecycle.cleanup import leftovers
from lgkit.net.lifecycle.lock import machine_lock

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet, nftables)")


def network_lock():
    """Serialise tests that build networks (the kit's machine-wide network lock)."""
    return machine_lock()


@pytest.fixture
def mininet_lock() -> Iterator[None]:
    """Hold the network lock for one test."""
    with network_lock():
        yield


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
