"""Run packets through real BMv2 simple_switch (the program compiled by p4c-bm2-ss), the way
p4c's STF runner does: one pcap file per port (--use-files), table commands through
simple_switch_CLI. The tools are found on PATH; callers skip when `missing_tools()` is not empty.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

TOOLS = ("p4c-bm2-ss", "simple_switch", "simple_switch_CLI")
QUIET_S = 0.3
"""After the packets expected (or after BMv2 read its inputs), the output stays quiet this long
(BMv2 takes milliseconds per packet; a later extra packet goes unseen)."""


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


class CompileError(Exception):
    """p4c rejected the program."""


def compile_p4(src: Path, out_json: Path) -> None:
    r = subprocess.run(["p4c-bm2-ss", "-o", str(out_json), str(src)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise CompileError(r.stderr.strip() or r.stdout.strip())


def write_pcap(path: Path, packets: list[bytes]) -> None:
    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(packets):
            f.write(struct.pack("<IIII", i, 0, len(p), len(p)))
            f.write(p)


def read_pcap(path: Path) -> list[bytes]:
    if not path.exists():
        return []
    data = path.read_bytes()
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    out, pos = [], 24
    while pos + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[pos:pos + 16])
        pos += 16
        out.append(data[pos:pos + incl])
        pos += incl
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(json_path: Path, packets: list[tuple[int, bytes]], cli: tuple[str, ...] = (),
             expected_outputs: int | None = None, timeout: float = 20.0,
             ports: tuple[int, ...] = (), priority_queues: int = 1,
             start_delay_s: int = 1) -> dict[int, list[bytes]]:
    """Feed packets (port, bytes) into simple_switch; returns the packets sent out per port.

    Port 0, `ports` and every port that receives a packet exist (as pcap files). The switch
    reads its input files `start_delay_s` after it starts: the CLI commands must be done by
    then. Waits, once the inputs are read, until at least `expected_outputs` packets came out
    (any number if None) and the output has then been quiet for QUIET_S: an extra packet, or
    one that should have been dropped, is seen unless it comes later than that."""
    work = Path(tempfile.mkdtemp(prefix="bmv2run-"))
    ports = tuple(sorted({p for p, _ in packets} | {0} | set(ports)))
    for port in ports:
        write_pcap(work / f"p{port}_in.pcap", [d for p, d in packets if p == port])
    thrift = _free_port()
    device = thrift  # one notifications socket per device id: parallel switches never clash
    args = ["simple_switch", "--use-files", str(start_delay_s), "--thrift-port", str(thrift),
            "--device-id", str(device), "--notifications-addr", f"ipc://{work}/notify.ipc"]
    for port in ports:
        args += ["-i", f"{port}@p{port}"]
    args.append(str(json_path.resolve()))
    if priority_queues != 1:
        args += ["--", "--priority-queues", str(priority_queues)]
    sw = subprocess.Popen(args, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    reading = time.monotonic() + start_delay_s
    try:
        if cli:
            _wait_port(thrift)
            r = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)],
                               input="\n".join(cli) + "\n", capture_output=True, text=True,
                               timeout=60)
            if "Error" in r.stdout or r.returncode:
                raise RuntimeError(f"CLI failed: {r.stdout[-2000:]}")
        deadline = max(reading, time.monotonic()) + timeout
        last, quiet_since = -1, time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            n = sum(len(read_pcap(work / f"p{p}_out.pcap")) for p in ports)
            now = time.monotonic()
            if n != last:
                last, quiet_since = n, now
            enough = expected_outputs is None or n >= expected_outputs
            if enough and now - max(quiet_since, reading) > QUIET_S:
                break
    finally:
        sw.terminate()
        sw.wait(timeout=10)
    out = {p: read_pcap(work / f"p{p}_out.pcap") for p in ports}
    shutil.rmtree(work, ignore_errors=True)
    return out


def _wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("simple_switch did not open its Thrift port")
