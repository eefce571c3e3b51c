"""Reliability of `lgkit switch` and `switch-cli` under bad input: range checks as BMv2's types
allow, a bounded and linear command tokenizer, one-line errors for bad options, invalid
addresses refused, and interface claims between switches."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_tm_queues import network
from testpaths import TESTS

from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.claims import NAME_PREFIX, InterfaceBusy, InterfaceClaim, claim_owner
from lgkit.sw.switch.control_service import (
    MAX_LINE_BYTES,
    CommandError,
    ControlClient,
    SwitchCommands,
    control_handler,
    split_words,
)

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")
LGKIT = [sys.executable, "-m", "lgkit.cli"]


@pytest.fixture(scope="module")
def cli():
    _, s1, _ = network(compile_file(str(PROGRAM)))
    s1.pipeline.registers["r"] = _Array("r", 4)
    s1.pipeline.counters["c"] = _Array("c", 4)
    return SwitchCommands(s1)


class _Array:
    """A 4-cell register/counter stand-in (the TM test program declares none)."""

    def __init__(self, name: str, size: int) -> None:
        self.name, self.size, self.values = name, size, list(range(10, 10 + size))

    def read(self, index: int):
        return self.values[index]

    def write(self, index: int, value: int) -> None:
        self.values[index] = value


@pytest.mark.parametrize(("line", "message"), [
    ("mc_mgrp_create -1", "mgrp must be in 0..65535, got -1"),
    ("mc_mgrp_create 65536", "mgrp must be in 0..65535"),
    ("mirroring_add 99999 1", "session must be in 0..32767, got 99999"),
    ("mirroring_add 5 600", "port must be in 0..511, got 600"),
    ("mc_node_create 1 999999", "port must be in 0..511, got 999999"),
    ("mc_node_create 70000 1", "rid must be in 0..65535"),
    ("set_queue_depth 10 9999", "port must be in 0..511, got 9999"),
    ("set_queue_depth -1", "depth must be in 0..2147483647"),
    ("set_queue_rate 10 1 7", "priority must be in 0..2, got 7"),
    ("register_read r -1", "invalid index -1 for r (size 4)"),
    ("register_read r 4", "invalid index 4 for r (size 4)"),
    ("register_write r 9 1", "invalid index 9"),
    ("counter_read c -1", "invalid index -1 for c"),
    ("set_port_rate inf", "rate must be a finite number >= 0, got 'inf'"),
    ("set_port_rate nan 1", "finite number"),
    ("set_queue_rate -5", "finite number >= 0"),
    ("set_port_rate 1000 1 -3", "burst must be in 0..2147483647"),
])
def test_out_of_range_arguments_are_refused(cli, line, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        cli.run(line)


def test_in_range_arguments_still_work(cli):
    assert cli.run("register_read r 3") == "13"
    cli.run("mc_mgrp_create 65535")
    assert cli.run("mc_node_create 65535 0 511").startswith("node handle:")
    cli.run("mirroring_add 32767 511")
    assert cli.run("mirroring_get 32767") == "port=511 rid=0"


def test_a_huge_line_is_refused_quickly(cli):
    # both steps take under 5 ms here: 0.5 s is 100x that, room for a busy machine, while a
    # quadratic tokenizer would take far longer
    started = time.monotonic()
    with pytest.raises(CommandError, match="command line too long"):
        cli.run("table_add " + "x" * 500_000)
    assert time.monotonic() - started < 0.5
    # the tokenizer is linear: a line at the limit splits in well under a second
    line = "mc_node_create 1 " + "1 " * (MAX_LINE_BYTES // 2 - 10)
    started = time.monotonic()
    assert len(split_words(line)) > 8000
    assert time.monotonic() - started < 0.5


def test_comments_and_whitespace_split_like_runtime_cli():
    assert split_words("  table_add t a 1 => 2  # note") == ["table_add", "t", "a", "1", "=>",
                                                            "2"]
    assert split_words("# only a comment") == []


def test_control_service_answers_bad_requests_with_errors(cli):
    from lgkit.sw.p4runtime.server import P4RuntimeServer

    server = P4RuntimeServer(cli.switch, "127.0.0.1:0", extra_handlers=(control_handler(cli),))
    server.start()
    client = ControlClient(f"127.0.0.1:{server.port}")
    try:
        with pytest.raises(CommandError, match="finite number"):
            client.run("set_port_rate inf")
        with pytest.raises(CommandError, match="request too large"):
            client.run("x" * 100_000)
        assert client.run("register_read r 0") == "10"
    finally:
        client.close()
        server.stop()


def _lgkit(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LGKIT, *args], capture_output=True, text=True, timeout=timeout)


def test_log_file_in_a_missing_folder_is_one_line(tmp_path):
    done = _lgkit("switch", "--no-p4", "--log-file", str(tmp_path / "no" / "such" / "x.log"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"lgkit: error: --log-file {tmp_path}/no/such/x.log: No such file or directory"]


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1",
                                     ":9559", "127.0.0.1:abc", "[::1]:70000"])
def test_invalid_grpc_addresses_are_refused(address):
    done = _lgkit("switch", "--no-p4", "--grpc-server-addr", address)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"lgkit: error: --grpc-server-addr {address}: expected "
                                   "HOST:PORT with PORT in 0..65535")


def test_port_zero_listens_on_a_free_port_and_says_which():
    proc = subprocess.Popen([*LGKIT, "switch", "--no-p4", "--grpc-server-addr", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.rsplit(":", 1)[1])
        assert line.startswith("lgkit switch: ready;") and port > 0
        client = ControlClient(f"127.0.0.1:{port}")
        assert "no drops" in client.run("show_drops")
        client.close()
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_an_interface_claim_is_exclusive_and_names_the_owner():
    name = f"lgtest{os.getpid() % 100000}"
    first = InterfaceClaim(name)
    try:
        with pytest.raises(InterfaceBusy, match=rf"{name} is already used by another lgkit "
                                                rf"switch \(pid {os.getpid()}\)"):
            InterfaceClaim(name)
    finally:
        first.release()
    InterfaceClaim(name).release()  # free again once released


def claim_holder(name: str) -> subprocess.Popen:
    """Another process that claims `name` and holds the claim for a minute."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; from lgkit.sw.switch.claims import "
         f"InterfaceClaim; c = InterfaceClaim({name!r}); print('held', flush=True); "
         "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_claim_dies_with_its_process():
    name = f"lgtest{os.getpid() % 100000}k"
    holder = claim_holder(name)
    try:
        with pytest.raises(InterfaceBusy, match=f"pid {holder.pid}"):
            InterfaceClaim(name)
    finally:
        holder.kill()
        holder.wait()
    InterfaceClaim(name).release()


def _bound_claims() -> set[str]:
    """Interfaces with a claim socket in this network namespace (from /proc/net/unix)."""
    names = [line.split()[-1] for line in Path("/proc/net/unix").read_text().splitlines()[1:]]
    return {n.removeprefix(f"@{NAME_PREFIX}") for n in names if n.startswith(f"@{NAME_PREFIX}")}


def test_a_killed_claim_leaves_nothing_and_a_live_one_stays():
    name = f"lgtest{os.getpid() % 100000}s"
    holder = claim_holder(name)
    live = InterfaceClaim(f"{name}l")
    try:
        assert {name, f"{name}l"} <= _bound_claims()
        assert claim_owner(name) == holder.pid and claim_owner(f"{name}l") == os.getpid()
        holder.kill()
        holder.wait()
        assert name not in _bound_claims() and claim_owner(name) is None
        assert f"{name}l" in _bound_claims()
        with pytest.raises(InterfaceBusy):
            InterfaceClaim(f"{name}l")
    finally:
        live.release()
    assert f"{name}l" not in _bound_claims() and claim_owner(f"{name}l") is None
