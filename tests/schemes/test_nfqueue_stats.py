"""The kernel's NFQUEUE counters as the Vertigo run records them: a real queue bound in a
namespace, a SYN held in it, seen in /proc (root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from testpaths import REPO

from lgkit.schemes.nfqueue_stats import parse_proc, read_queues

NS = f"lgnfq{os.getpid()}"
HOLD = """
import sys, time
from lgkit.schemes.nfqueue import NfQueue
q = NfQueue(3)
print("bound", flush=True)
time.sleep(30)
"""
"Binds queue 3 and never gives a verdict."


def test_parse_proc_reads_the_kernels_format() -> None:
    # seq_printf(s, "%5u %6u %5u %1u %5u %5u %5u %8u %2d\n", ...) in nfnetlink_queue.c
    line = "    1 123456    17 2 65535     4     9      300  1\n"
    assert parse_proc(line) == [{"queue": 1, "queue_total": 17, "queue_dropped": 4,
                                 "user_dropped": 9, "id_sequence": 300}]
    assert parse_proc("") == []


@pytest.fixture
def namespace() -> Iterator[str]:
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", NS, "ip", "link", "set", "lo", "up"], check=True)
        yield NS
    finally:
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)


@pytest.mark.root
@pytest.mark.skipif(shutil.which("iptables") is None, reason="iptables missing (make setup)")
def test_a_held_syn_shows_in_the_queue_and_the_rule_count(namespace: str) -> None:
    def ns(*argv: str) -> str:
        return subprocess.run(["ip", "netns", "exec", namespace, *argv], capture_output=True,
                              text=True, check=True, timeout=30).stdout

    ns("iptables", "-t", "mangle", "-A", "POSTROUTING", "-o", "lo", "-p", "tcp", "--syn",
       "-j", "NFQUEUE", "--queue-bypass", "--queue-num", "3")
    holder = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, "-c", HOLD],
                              stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout is not None and "bound" in holder.stdout.readline()
        assert [q["queue"] for q in read_queues(holder.pid)] == [3]
        connect = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, "-c",
                                    "import socket; socket.create_connection"
                                    "(('127.0.0.1', 9), timeout=5)"], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not read_queues(holder.pid)[0]["queue_total"]:
            time.sleep(0.05)
        queue = read_queues(holder.pid)[0]
        assert (queue["queue_total"], queue["queue_dropped"], queue["user_dropped"],
                queue["id_sequence"]) == (1, 0, 0, 1)
        connect.kill()
        connect.wait()
    finally:
        holder.kill()
        holder.wait()
    assert read_queues(holder.pid) == []
