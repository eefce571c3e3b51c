"""P4Runtime features exercises use (PacketIn/Out metadata, digests, idle timeout, multicast,
clone sessions, counters, meters), driven by the tutorial-style helper library in the tutorial
environment against the kit's simple_switch_grpc, and against BMv2 where it is installed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest
from course_support import TUTORIALS, bmv2_env, free_port, kit_env, make_tutorial_env

from lgkit.course.toolchain import REPO

FEATURES = ("packet_io", "digest_and_idle_timeout", "multicast", "clone", "counters", "meter")


@pytest.fixture(scope="module", autouse=True)
def tutorial_env() -> None:
    make_tutorial_env()


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def run_features(tmp_path, env: dict[str, str]) -> str:
    work = tmp_path / "tutorials"
    shutil.copytree(TUTORIALS, work, ignore=shutil.ignore_patterns("build", "logs", "pcaps"))
    exercise = work / "p4runtime_features"
    build = subprocess.run(["make", "build"], cwd=exercise, env=env, capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    port = free_port()
    switch = subprocess.Popen(
        ["simple_switch_grpc", "--no-p4", "--device-id", "2", "--thrift-port", str(free_port()),
         "--", "--cpu-port", "255", "--grpc-server-addr", f"127.0.0.1:{port}"],
        cwd=exercise, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not listening(port) and time.monotonic() < deadline and switch.poll() is None:
            time.sleep(0.2)
        time.sleep(1)  # as the tutorials' runner does: BMv2 serves gRPC before its device is up
        check = subprocess.run(["python3", "check_features.py", f"127.0.0.1:{port}", "2"],
                               cwd=exercise, env=env, capture_output=True, text=True,
                               timeout=120)
    finally:
        switch.terminate()
        switch.wait(timeout=30)
    print(check.stdout)
    assert check.returncode == 0, check.stdout + check.stderr
    for feature in FEATURES:
        assert f"ok {feature}:" in check.stdout
    return check.stdout


@pytest.mark.slow
def test_on_the_kit(tmp_path):
    run_features(tmp_path, kit_env())


@pytest.mark.slow
def test_on_bmv2(tmp_path):
    env = bmv2_env()
    if env is None:
        pytest.skip("BMv2 simple_switch_grpc and p4c are not installed")
    run_features(tmp_path, env)


SHELL_SESSION = """
import sys
import p4runtime_sh.shell as sh
address, p4info, config = sys.argv[1:]
sh.setup(device_id=0, grpc_addr=address, election_id=(0, 1),
         config=sh.FwdPipeConfig(p4info, config))
entry = sh.TableEntry("MyIngress.dmac")(action="MyIngress.set_port")
entry.match["hdr.ethernet.dstAddr"] = "00:00:00:00:00:0a"
entry.action["port"] = "3"
entry.insert()
for read in sh.TableEntry("MyIngress.dmac").read():
    print("read", read.match["hdr.ethernet.dstAddr"].exact.value.hex(),
          read.action["port"].value.hex())
sh.teardown()
"""


def test_p4runtime_shell_programs_the_kit(tmp_path):
    """p4runtime-shell (`p4runtime_sh`, as flowcache's controller uses it) in the tutorial
    environment: it pushes a program, writes an entry and reads it back from the kit's switch."""
    env = kit_env()
    built = subprocess.run(
        ["p4c-bm2-ss", "-o", "basic.json", "--p4runtime-files", "basic.p4info.txt",
         str(REPO / "p4" / "basic.p4")], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120)
    assert built.returncode == 0, built.stderr
    port = free_port()
    switch = subprocess.Popen(["simple_switch_grpc", "--no-p4", "--grpc-server-addr",
                               f"127.0.0.1:{port}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        assert switch.stdout is not None and "ready" in switch.stdout.readline()
        session = subprocess.run(["python3", "-c", SHELL_SESSION, f"127.0.0.1:{port}",
                                  "basic.p4info.txt", "basic.json"], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=120)
    finally:
        switch.terminate()
        switch.wait(timeout=30)
    assert session.returncode == 0, session.stdout + session.stderr
    reads = [line for line in session.stdout.splitlines() if line.startswith("read ")]
    assert reads == ["read 0a 03"]  # the one entry, in P4Runtime's canonical bytes
