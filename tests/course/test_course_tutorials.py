"""Tutorial-style exercises (tests/tutorials: the P4 tutorials' layout, Makefile and P4Runtime
helper library, in the kit's own words) run unmodified with only the kit's entry points on PATH:
`make run` compiles with p4c-bm2-ss, starts simple_switch_grpc in Mininet, programs it over
P4Runtime, and the Mininet CLI reads the check's commands from stdin."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from course_support import SHIMS, TUTORIALS, kit_env, make_tutorial_env
from test_net_support import network_lock

from lgkit.course.exercise import wait_for

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("mn") is None, reason="Mininet is not installed"),
]


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    """PATH with the tutorial Python, the kit's BMv2-named shims and the system, nothing else."""
    make_tutorial_env()
    return kit_env()


@pytest.fixture(autouse=True)
def one_network_at_a_time() -> Iterator[None]:
    """The machine's network lock: tutorial networks use fixed names (s1, h1) and ports
    (9090+, 50051+) that a kit run or another tutorial may hold."""
    with network_lock():
        yield


@pytest.fixture
def exercises(tmp_path) -> Path:
    shutil.copytree(TUTORIALS, tmp_path / "tutorials",
                    ignore=shutil.ignore_patterns("build", "logs", "pcaps"))
    return tmp_path / "tutorials"


def run_exercise(exercises: Path, name: str, env: dict[str, str], commands: list[str],
                 timeout: float = 240) -> str:
    """`make run` in the exercise with `commands` for the Mininet CLI; its whole output."""
    result = subprocess.run(["make", "run"], cwd=exercises / name, env=env, text=True,
                            input="\n".join([*commands, "exit", ""]), capture_output=True,
                            timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for which in ("p4c-bm2-ss", "simple_switch_grpc"):
        resolved = subprocess.run(["sh", "-c", f"command -v {which}"], env=env,
                                  capture_output=True, text=True).stdout.strip()
        assert resolved == str(SHIMS / which), f"{which} is {resolved}, not the kit's shim"
    return output


def receive(host: str, out: Path, options: str) -> list[str]:
    """Mininet CLI lines: `host` records packets into `out` in the background; wait until it
    listens."""
    return [f"{host} python3 ../utils/packets.py receive {out} --ready {out}.ready {options} &",
            wait_for(Path(f"{out}.ready"))]


def received(output: str) -> int:
    match = re.search(r"(\d+) received", output)
    assert match, output
    return int(match.group(1))


def test_basic_forwarding(exercises, env):
    output = run_exercise(exercises, "basic", env, ["h1 ping -c 3 -W 3 10.0.2.2"])
    assert received(output) == 3
    assert "ttl=62" in output  # two hops, each decrementing the TTL
    assert (exercises / "basic" / "logs" / "s1-p4runtime-requests.txt").stat().st_size > 0


def test_basic_with_simple_switch_cli(exercises, env):
    output = run_exercise(exercises, "basic_cli", env, ["h1 ping -c 3 -W 3 10.0.2.2"])
    assert received(output) == 3  # the tables came from sX-commands.txt over Thrift
    log = (exercises / "basic_cli" / "logs" / "s1_cli_output.log").read_text()
    assert log.count("RuntimeCmd: ") >= 3 and "error" not in log


def test_basic_tunnel(exercises, env):
    out = exercises / "basic_tunnel" / "h2.txt"
    run_exercise(exercises, "basic_tunnel", env, [
        *receive("h2", out, "--expect 2 --seconds 30"),
        "h1 python3 ../utils/packets.py send 10.0.2.2 routed",
        "h1 python3 ../utils/packets.py send 10.0.3.3 tunnelled --tunnel 2",
        "h2 wait",
    ])
    lines = out.read_text().splitlines()
    assert "udp tos=0x0 dst=10.0.2.2 msg=routed" in lines
    # 10.0.3.3 has no route: only the tunnel header's dst_id brings it to h2
    assert "tunnel dst_id=2 udp tos=0x0 dst=10.0.3.3 msg=tunnelled" in lines


def test_ecn_marks_behind_a_slow_link(exercises, env):
    out = exercises / "ecn" / "h2.txt"
    run_exercise(exercises, "ecn", env, [
        *receive("h2", out, f"--seconds 60 --stop-file {out}.stop --idle 2"),
        "h1 python3 ../utils/packets.py send 10.0.2.2 probe --tos 1 --count 40 --interval 0.25 &",
        "sh sleep 2",
        "h11 python3 ../utils/packets.py send 10.0.2.22 flood --count 300 --size 1000",
        "h1 wait",
        f"sh touch {out}.stop",
        "h2 wait",
    ])
    tos = [line.split()[1] for line in out.read_text().splitlines() if "msg=probe" in line]
    # the s1-s2 link is shaped to 0.5 Mbit/s: the flood queues in s1's traffic manager
    assert "tos=0x1" in tos[:3], tos
    assert "tos=0x3" in tos, tos


def test_multicast_floods_broadcasts(exercises, env):
    out = exercises / "multicast" / "h3.txt"
    output = run_exercise(exercises, "multicast", env, [
        *receive("h3", out, "--expect 1 --seconds 30"),
        "h1 ping -c 2 -W 3 10.0.0.2",
        "h3 wait",
    ])
    assert received(output) == 2
    assert "arp who-has 10.0.0.2" in out.read_text().splitlines()


def test_p4runtime_controller(exercises, env):
    output = run_exercise(exercises, "p4runtime", env, [
        "sh python3 mycontroller.py install",
        "h1 ping -c 3 -W 3 10.0.2.2",
        "sh python3 mycontroller.py counters",
    ])
    assert "s1: pipeline set, 3 tunnel entries installed" in output
    assert received(output) == 3
    for line in ("s1 ingressTunnelCounter[100] packets=3", "s2 egressTunnelCounter[100] packets=3",
                 "s2 ingressTunnelCounter[200] packets=3", "s1 egressTunnelCounter[200] packets=3"):
        assert line in output, output


def test_a_name_clash_is_one_line_naming_the_holder(exercises, env):
    """An interface of the exercise's network exists already (another Mininet's s1-eth1): one
    line naming it and its holder, nothing built, nothing left."""
    before = set(os.listdir("/sys/class/net"))
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-i",
                               "1@s1-eth1"])  # names the interface as a switch would
    made = subprocess.run(["ip", "link", "add", "s1-eth1", "type", "veth", "peer", "name",
                           "s1-clash-peer"], capture_output=True)
    try:
        if made.returncode != 0:
            pytest.skip(f"cannot add s1-eth1: {made.stderr.decode().strip()}")
        result = subprocess.run(["make", "run"], cwd=exercises / "basic", env=env, text=True,
                                input="exit\n", capture_output=True, timeout=240)
    finally:
        holder.kill()
        holder.wait()
        subprocess.run(["ip", "link", "del", "s1-eth1"], capture_output=True)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors[0].startswith(
        f"run_exercise.py: error: interface s1-eth1 exists, held by pid {holder.pid} (")
    assert errors[0].endswith(" -i 1@s1-eth1): another Mininet network uses these names (stop "
                              "it first; `mn -c` removes a stale one)"), result.stderr
    assert set(os.listdir("/sys/class/net")) - before == set()  # others' may come and go
