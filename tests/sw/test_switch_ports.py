"""`lgkit switch` on real veths between two namespaced hosts: forwarding, switch-cli, pcap files,
clean exit on SIGTERM, nothing left changed or claimed after SIGKILL, interface claims between
switches, and command-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from test_reliability_switch import claim_holder
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.switch.claims import claim_owner
from lgkit.sw.tools.bench_switch import HostPair, start_switch, stop_process

ROOT = TESTS.parent
BASIC = str(ROOT / "p4" / "basic.p4")
LGKIT = [sys.executable, "-m", "lgkit.cli"]



def lgkit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LGKIT, *args], capture_output=True, text=True, input=stdin,
                          timeout=60, cwd=ROOT)


def link_state(ifname: str) -> dict:
    out = subprocess.run(["ip", "-d", "-j", "link", "show", "dev", ifname], capture_output=True,
                         text=True, check=True).stdout
    (info,) = json.loads(out)
    return {key: info.get(key) for key in ("flags", "promiscuity", "mtu", "address",
                                           "operstate", "allmulti")}


def free_addr() -> str:
    return f"127.0.0.1:{30000 + os.getpid() % 20000}"


@pytest.mark.root
def test_switch_forwards_between_namespaces_with_pcap(tmp_path, capsys):
    from scapy.layers.inet import ICMP, IP
    from scapy.utils import rdpcap

    addr = free_addr()
    with HostPair(f"t1{os.getpid() % 10000}") as pair:
        switch = start_switch([*LGKIT, "switch", "-i", f"1@{pair.sw1}", "-i", f"2@{pair.sw2}",
                               "--pcap", str(tmp_path), "--grpc-server-addr", addr, BASIC])
        try:
            stdin = "\n".join(pair.entries()) + "\n# a comment\n"
            cli = lgkit("switch-cli", "--grpc-server-addr", addr, stdin=stdin)
            assert cli.returncode == 0, cli.stderr
            ping = pair.ns(pair.ns1, "ping", "-c", "3", "-i", "0.2", "-W", "2", pair.H2_IP,
                           check=False)
            assert ping.returncode == 0, ping.stdout + ping.stderr
            assert " 0% packet loss" in ping.stdout
            status = main(["switch-cli", "--grpc-server-addr", addr, "-c", "show_ports",
                           "-c", "counter_read ingress_packets 1"])
            out = capsys.readouterr().out
            assert status == 0
            assert "packets=3 " in out  # the three echo requests entered on port 1
            status = main(["switch-cli", "--grpc-server-addr", addr, "-c", "set_queue_rate x"])
            assert status == 1 and "must be a number" in capsys.readouterr().err
        finally:
            switch.send_signal(signal.SIGTERM)
            assert switch.wait(10) == 0
    inbound = rdpcap(str(tmp_path / f"{pair.sw1}_in.pcap"))
    outbound = rdpcap(str(tmp_path / f"{pair.sw2}_out.pcap"))
    requests_in = [p for p in inbound if ICMP in p and p[ICMP].type == 8]
    requests_out = [p for p in outbound if ICMP in p and p[ICMP].type == 8]
    assert len(requests_in) == len(requests_out) == 3
    assert all(p[IP].ttl == q[IP].ttl - 1 for p, q in zip(requests_out, requests_in,
                                                           strict=True))
    assert requests_out[0].dst == pair.H2_MAC


@pytest.mark.root
def test_killed_switch_leaves_interfaces_unchanged():
    with HostPair(f"t2{os.getpid() % 10000}") as pair:
        before = {ifname: link_state(ifname) for ifname in (pair.sw1, pair.sw2)}
        switch = start_switch([*LGKIT, "switch", "--no-p4", "-i", f"1@{pair.sw1}", "-i",
                               f"2@{pair.sw2}", "--grpc-server-addr", free_addr()])
        try:
            running = link_state(pair.sw1)
            assert running["promiscuity"] == before[pair.sw1]["promiscuity"] + 1
        finally:
            switch.send_signal(signal.SIGKILL)
            switch.wait(10)
        after = {ifname: link_state(ifname) for ifname in (pair.sw1, pair.sw2)}
        assert after == before
        assert claim_owner(pair.sw1) is None and claim_owner(pair.sw2) is None


@pytest.mark.root
def test_the_claim_of_a_killed_process_does_not_block_a_new_switch():
    with HostPair(f"t4{os.getpid() % 10000}") as pair:
        argv = ["switch", "--no-p4", "-i", f"1@{pair.sw1}", "--grpc-server-addr", free_addr()]
        holder = claim_holder(pair.sw1)
        try:
            refused = lgkit(*argv)
            assert refused.returncode == 1
            assert (f"interface {pair.sw1} is already used by another lgkit switch "
                    f"(pid {holder.pid})") in refused.stderr
        finally:
            holder.kill()
            holder.wait()
        switch = start_switch([*LGKIT, *argv])
        try:
            assert claim_owner(pair.sw1) == switch.pid
        finally:
            stop_process(switch)
        assert switch.returncode == 0
        assert claim_owner(pair.sw1) is None


@pytest.mark.root
def test_sigint_stops_switch_cleanly():
    with HostPair(f"t3{os.getpid() % 10000}") as pair:
        switch = start_switch([*LGKIT, "switch", "--no-p4", "-i", f"1@{pair.sw1}",
                               "--grpc-server-addr", free_addr()])
        switch.send_signal(signal.SIGINT)
        try:
            assert switch.wait(10) == 0
        finally:
            stop_process(switch)


@pytest.mark.parametrize("args, status, message", [
    (["--no-p4", "--", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["--no-p4", "-i", "eth0"], 2, "expected PORT@IFACE"),
    (["--no-p4", "--", "--cpu-port", "600"], 2, "--cpu-port must be in 1..511"),
    (["-i", "1@lo"], 2, "give a PROGRAM"),
    (["--no-p4", "--", "--grpc-server-ssl"], 2, "TLS is not supported"),
    (["/nonexistent/prog.p4"], 1, "cannot read /nonexistent/prog.p4"),
    (["--no-p4", "--thrift-port", "9090", "-i", "1@nosuchif0"], 1, "no such interface"),
])
def test_bad_command_lines(args, status, message, capsys):
    assert main(["switch", *args]) == status
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_unknown_option_exits_2():
    result = lgkit("switch", "--bogus", "--no-p4")
    assert result.returncode == 2
    assert "unrecognized arguments: --bogus" in result.stderr


def test_irrelevant_option_warns(capsys):
    main(["switch", "--no-p4", "--nanolog", "ipc:///tmp/x.ipc", "-i", "1@nosuchif0"])
    assert "warning: --nanolog has no effect" in capsys.readouterr().err


def test_switch_cli_without_switch_fails_clearly(capsys):
    assert main(["switch-cli", "--grpc-server-addr", "127.0.0.1:1", "-c", "show_drops"]) == 1
    assert "cannot reach the switch at 127.0.0.1:1" in capsys.readouterr().err
