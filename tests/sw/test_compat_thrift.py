"""BMv2's Thrift runtime on `lgkit switch --thrift-port`: a raw Thrift client everywhere, and
BMv2's own simple_switch_CLI where it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from course_support import free_port
from testpaths import REPO
from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from lgkit.sw.switch.thrift_service import read_struct

ROOT = REPO
LGKIT = Path(sys.executable).parent / "lgkit"


@pytest.fixture
def switch():
    thrift_port = free_port()
    proc = subprocess.Popen([str(LGKIT), "switch", "--thrift-port", str(thrift_port),
                             str(ROOT / "p4" / "basic.p4"), "--", "--grpc-server-addr",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    ready = proc.stdout.readline()
    assert ready.startswith("lgkit switch: ready"), proc.stderr.read()
    yield thrift_port, ready.rsplit(" ", 1)[1].strip()
    proc.terminate()
    proc.wait(timeout=30)


def call(port: int, service: str, method: str, args: list[tuple[int, int, object]]) -> dict:
    """One multiplexed binary-protocol call; the result struct as {field id: value}."""
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    protocol = TMultiplexedProtocol.TMultiplexedProtocol(
        TBinaryProtocol.TBinaryProtocol(transport), service)
    transport.open()
    try:
        protocol.writeMessageBegin(method, TMessageType.CALL, 1)
        protocol.writeStructBegin("args")
        for fid, ttype, value in args:
            protocol.writeFieldBegin("a", ttype, fid)
            {TType.I32: protocol.writeI32, TType.STRING: protocol.writeString}[ttype](value)
            protocol.writeFieldEnd()
        protocol.writeFieldStop()
        protocol.writeStructEnd()
        protocol.writeMessageEnd()
        transport.flush()
        _, kind, _ = protocol.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            error = TApplicationException()
            error.read(protocol)
            raise error
        return read_struct(protocol)
    finally:
        transport.close()


def cli(address: str, *commands: str) -> str:
    args = [str(LGKIT), "switch-cli", "--grpc-server-addr", address]
    for command in commands:
        args += ["-c", command]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=True).stdout


def test_raw_thrift_calls(switch):
    port, address = switch
    config = json.loads(call(port, "standard", "bm_get_config", [])[0])
    assert "MyIngress.ipv4_lpm" in [t["name"] for t in config["pipelines"][0]["tables"]]
    assert call(port, "simple_pre_lag", "bm_mc_mgrp_create", [(1, TType.I32, 0),
                                                               (2, TType.I32, 7)]) == {0: 7}
    node = call(port, "simple_pre_lag", "bm_mc_node_create",
                [(1, TType.I32, 0), (2, TType.I32, 3), (3, TType.STRING, "1010")])
    call(port, "simple_pre_lag", "bm_mc_node_associate",
         [(1, TType.I32, 0), (2, TType.I32, 7), (3, TType.I32, node[0])])
    assert "mgrp 7: (rid=3, port=1) (rid=3, port=3)" in cli(address, "mc_dump")
    # a register that does not exist: the declared exception, code ERROR (3)
    failed = call(port, "standard", "bm_register_read", [(1, TType.I32, 0),
                                                         (2, TType.STRING, "nope"),
                                                         (3, TType.I32, 0)])
    assert failed == {1: {1: 3}}
    with pytest.raises(TApplicationException, match="not served"):
        call(port, "standard", "bm_swap_configs", [])
    assert call(port, "standard", "bm_get_config", [])[0]  # the server is still serving


def real_cli() -> str | None:
    path = os.environ.get("PATH", "") + ":/opt/bmv2/wrap"
    found = shutil.which("simple_switch_CLI", path=path)
    return found


def test_bmv2_simple_switch_cli(switch):
    tool = real_cli()
    if tool is None:
        pytest.skip("BMv2's simple_switch_CLI is not installed")
    port, address = switch
    commands = "\n".join([
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.1.1/32 => 00:00:00:00:01:01 1",
        "table_set_default ipv4_lpm drop", "counter_read MyIngress.ingress_packets 1",
        "mc_mgrp_create 1", "mc_node_create 0 1 2", "mc_node_associate 1 0",
        "mirroring_add 5 3", "set_queue_depth 50 1", "set_queue_rate 1000 1", ""])
    done = subprocess.run([tool, "--thrift-port", str(port)], input=commands, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Entry has been added with handle 0" in done.stdout
    assert "MyIngress.ingress_packets[1]= (0 bytes, 0 packets)" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    state = cli(address, "mc_dump", "mirroring_get 5", "show_queues")
    assert "mgrp 1: (rid=0, port=1) (rid=0, port=2)" in state and "port=3 rid=0" in state
    queues = json.loads(state[state.index("{"):])
    assert queues["ports"]["1"]["queues"][0] == {"depth": 50, "pps": 1000.0, "occupancy": 0}


def test_the_kits_simple_switch_cli(switch):
    port, address = switch
    shim = Path(sys.executable).parent / "lgkit-simple-switch-cli"
    commands = "mc_mgrp_create 4\nmc_node_create 1 2\nmc_node_associate 4 0\nbogus_command\n"
    done = subprocess.run([str(shim), "--thrift-port", str(port)], input=commands, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 1  # the bogus command failed; the others ran
    assert "RuntimeCmd: node handle: 0" in done.stdout
    assert "RuntimeCmd: error: unknown command 'bogus_command'" in done.stdout
    assert "mgrp 4: (rid=1, port=2)" in cli(address, "mc_dump")
    closed = subprocess.run([str(shim), "--thrift-port", str(free_port())], input="",
                            text=True, capture_output=True, timeout=60)
    assert closed.returncode == 1 and "Could not connect" in closed.stdout
