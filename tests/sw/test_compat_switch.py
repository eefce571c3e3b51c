"""simple_switch(_grpc) command lines on `lgkit switch`, and port rates from --port-rate or tc."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.cli import build_parser
from lgkit.sw.switch.linkrate import parse_port_rates, parse_rate, shaped_rate_bps
from lgkit.sw.switch.switch_main import UsageError, resolve_options

BIN = Path(sys.executable).parent
BASIC = REPO / "p4" / "basic.p4"


def resolve(line: str):
    return resolve_options(build_parser("switch").parse_args(["switch", *line.split()]))


def test_the_tutorials_command_line_is_understood():
    args = resolve("-i 1@s1-eth1 -i 2@s1-eth2 --pcap /tmp/pcaps --nanolog "
                   "ipc:///tmp/bm-0-log.ipc --device-id 3 build/basic.json --log-console "
                   "--thrift-port 9090 -- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255")
    assert args.program == "build/basic.json"
    assert args.ports == [(1, "s1-eth1"), (2, "s1-eth2")]
    assert (args.device_id, args.cpu_port, args.pcap) == (3, 255, "/tmp/pcaps")
    assert args.grpc_server_addr == "0.0.0.0:50051" and args.log_console
    assert args.opt_nanolog == "ipc:///tmp/bm-0-log.ipc" and args.thrift_port == 9090


@pytest.mark.parametrize("line", [
    "prog.json -i 1@a -L debug --log-file /tmp/x --packet-in ipc:///p",
    "-i 1@a --use-files 0 --dump-packet-data 64 prog.json -- --priority-queues 3 --enable-swap",
    "-i 1@a prog.json -- --load-modules x.so --drop-port 511 --port-rate 2:10M",
])
def test_options_before_or_after_the_program_and_after_the_separator(line):
    args = resolve(line)
    assert args.program == "prog.json" and args.ports == [(1, "a")]


@pytest.mark.parametrize(("line", "message"), [
    ("-i 1@a prog.json --bogus 3", "unrecognized arguments: --bogus 3"),
    ("prog.json -- other.json", "unexpected other.json"),
    ("prog.json --port-rate 1:fast", "bad rate 'fast'"),
    ("prog.json --port-rate 600:1M", "the port must be in 0..511"),
])
def test_bad_command_lines_are_one_usage_error(line, message):
    with pytest.raises(UsageError, match=message):
        resolve(line)


def test_options_the_kit_cannot_honour_warn_once_each(tmp_path):
    proc = subprocess.Popen(
        [str(BIN / "lgkit-simple-switch-grpc"), "--nanolog", "ipc:///tmp/x.ipc", "--no-p4",
         "--packet-in", "ipc:///tmp/p.ipc", "--", "--grpc-server-addr", "127.0.0.1:0",
         "--enable-swap"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("lgkit switch: ready")
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    lines = stderr.splitlines()
    assert proc.returncode == 0
    assert lines[0].startswith("simple_switch_grpc: the lgkit built-in target")
    for option in ("--nanolog", "--packet-in", "--enable-swap"):
        assert sum(option in line for line in lines) == 1, lines
    assert "Traceback" not in stderr


def test_rates():
    assert parse_rate("10M") == 10e6 and parse_rate("512kbit") == 512e3
    assert parse_rate("1e9") == 1e9 and parse_rate("1mbps") == 8e6
    assert parse_port_rates(["1M", "3:2G"]) == (1e6, {3: 2e9})
    with pytest.raises(ValueError):
        parse_rate("-1M")


@pytest.mark.root
def test_the_rate_a_tc_qdisc_shapes_a_link_to(tmp_path):
    name = "lgr" + uuid.uuid4().hex[:8]
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"],
                   check=True)
    try:
        assert shaped_rate_bps(name) is None
        run = ["tc", "qdisc", "add", "dev", name, "root", "handle", "5:0", "htb", "default", "1"]
        subprocess.run(run, check=True)
        subprocess.run(["tc", "class", "add", "dev", name, "parent", "5:0", "classid", "5:1",
                        "htb", "rate", "512kbit", "burst", "15k"], check=True)
        assert shaped_rate_bps(name) == 512e3  # Mininet's TCLink(bw=0.512)
        subprocess.run(["tc", "qdisc", "replace", "dev", name + "p", "root", "tbf", "rate",
                        "10mbit", "burst", "15000", "latency", "50ms"], check=True)
        assert shaped_rate_bps(name + "p") == 10e6  # TCLink(bw=10, use_tbf=True)
    finally:
        subprocess.run(["ip", "link", "del", name], check=False)
