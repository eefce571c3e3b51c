"""P4 switch nodes in Mininet: the built-in switch (and BMv2 where installed) forwarding
ping and iperf3 over the leaf-spine with p4/basic.p4, link rates applied on ports, the routes
taking the protected link."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_net_support import assert_machine_clean

from lgkit.core.targets import TARGETS, THRIFT_BASE_PORT, TargetUnavailable, grpc_address
from lgkit.core.topology import SPEC_DIR, load_spec
from lgkit.net.testbed.p4switch import wait_for_port
from lgkit.net.testbed.testbed import BASIC_PROGRAM, Testbed
from lgkit.workloads.iperf import IperfServer, run_tcp

RATE_MBPS = 10.0


def test_port_commands_per_target() -> None:
    assert TARGETS["builtin"].port_commands([1, 2], 20.0) == [
        "set_queue_depth 1024 1", "set_queue_depth 1024 2",
        "set_port_rate 20000000 1", "set_port_rate 20000000 2"]
    assert TARGETS["bmv2"].port_commands([3], 12.0) == ["set_queue_depth 256 3",
                                                         "set_queue_rate 1000 3"]


def test_switch_ports_lie_below_the_ephemeral_range() -> None:
    """Outgoing connections take their local ports from the kernel's ephemeral range; a switch
    port inside it can be taken when a testbed starts (seen once with 50051 + k)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    most = max(len(load_spec(str(path)).switches) for path in SPEC_DIR.glob("*.yaml"))
    grpc = {int(grpc_address(k).rsplit(":", 1)[1]) for k in range(1, most + 1)}
    thrift = {THRIFT_BASE_PORT + k for k in range(1, most + 1)}
    assert max(grpc | thrift) < low and not grpc & thrift


def test_p4_targets_start_with_the_same_options(monkeypatch) -> None:
    ports = [(1, "lgs1-eth1"), (2, "lgs1-eth2")]
    monkeypatch.delenv("LGKIT_ENGINE", raising=False)
    builtin = TARGETS["builtin"].switch_argv(ports, 3, 3, False, None)
    assert builtin[1:6] == ["-m", "lgkit.cli", "switch", "--engine", "native"]
    monkeypatch.setenv("LGKIT_ENGINE", "python")  # names another engine
    assert TARGETS["builtin"].switch_argv(ports, 3, 3, False, None)[4:6] == ["--engine",
                                                                             "python"]
    assert builtin[6:] == ["-i", "1@lgs1-eth1", "-i", "2@lgs1-eth2", "--device-id", "3",
                           "--no-p4", "--grpc-server-addr", "127.0.0.1:9562", "--cpu-port",
                           "510", "--priority-queues", "3"]
    if shutil.which("simple_switch_grpc") is None:
        with pytest.raises(TargetUnavailable, match="simple_switch_grpc is not installed"):
            TARGETS["bmv2"].switch_argv(ports, 3, 3, False, None)


def test_a_bmv2_without_thrift_is_named_in_one_line(tmp_path, monkeypatch) -> None:
    fake = tmp_path / "simple_switch_grpc"
    fake.write_text("#!/bin/sh\necho 'Usage: SWITCH_NAME [options]'\necho '  --no-p4'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TargetUnavailable, match="built without Thrift"):
        TARGETS["bmv2"].switch_command()


def test_bmv2_logs_nothing_unless_asked(tmp_path, monkeypatch) -> None:
    """BMv2's default log level is trace, and with no log sink it still formats every line
    (a third of its CPU on the LG testbed, docs/bmv2.md): the kit turns it off."""
    fake = tmp_path / "simple_switch_grpc"
    fake.write_text("#!/bin/sh\necho '  --thrift-port arg'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    ports = [(1, "lgs1-eth1")]
    silent = TARGETS["bmv2"].switch_argv(ports, 2, 3, False, None)
    assert silent == [str(fake), "-i", "1@lgs1-eth1", "--device-id", "2", "--no-p4",
                      "--log-level", "off", "--thrift-port", "9092", "--",
                      "--grpc-server-addr", "127.0.0.1:9561", "--cpu-port", "510",
                      "--priority-queues", "3"]
    logging = TARGETS["bmv2"].switch_argv(ports, 2, 3, True, None)
    assert "--log-console" in logging and "--log-level" not in logging
    assert "--log-level" not in TARGETS["builtin"].switch_argv(ports, 2, 3, False, None)


@pytest.mark.bmv2("simple_switch_grpc", "simple_switch_CLI")
def test_bmv2_starts_with_the_kits_flags() -> None:
    """The real simple_switch_grpc accepts the flags the kit gives it (no interfaces: no root),
    and its runtime CLI the port commands; a command it does not know is an error (its CLI
    exits 0 after one)."""
    device_id = 90  # clear of the testbeds' switches 1..n
    bmv2 = TARGETS["bmv2"]
    process = subprocess.Popen(bmv2.switch_argv([], device_id, 3, False, None),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for_port(grpc_address(device_id), 30.0, process)
        bmv2.run_cli(device_id, bmv2.port_commands([1], 10.0), 30.0)
        with pytest.raises(RuntimeError, match="does not know 'set_port_rate 1 1'"):
            bmv2.run_cli(device_id, ["set_port_rate 1 1"], 30.0)
    finally:
        process.terminate()
        process.wait(10)


def _forward_through(target: str, tmp_path) -> None:
    testbed = Testbed(load_spec("leafspine"), target, tmp_path, program=BASIC_PROGRAM,
                      rate_mbps=RATE_MBPS, log=lambda line: None)
    try:
        testbed.start()
        h1, h3, h4 = (testbed.network.node(h) for h in ("h1", "h3", "h4"))
        assert " 0% packet loss" in h1.cmd("ping -c 3 -i 0.2 -W 2", h3.IP())
        assert " 0% packet loss" in testbed.network.node("h2").cmd("ping -c 2 -W 2", h4.IP())
        on_protected = testbed.network.counter("B")
        with IperfServer(h3):
            result = run_tcp(h1, h3.IP(), 2.0, "cubic")
        assert 0.5 < result.goodput_mbps < RATE_MBPS * 1.1
        frames = result.bytes_received // 1500
        assert testbed.network.counter("B") - on_protected >= frames
    finally:
        testbed.stop()
    assert_machine_clean()


@pytest.mark.root
def test_builtin_switches_forward_ping_and_iperf3(mininet_lock, tmp_path) -> None:
    _forward_through("builtin", tmp_path)


@pytest.mark.root
@pytest.mark.bmv2("simple_switch_grpc", "p4c")
def test_bmv2_switches_forward_ping_and_iperf3(mininet_lock, tmp_path) -> None:
    _forward_through("bmv2", tmp_path)
