"""`lgkit bench-tables`: a large exact table written over P4Runtime, and writes and Reads during
traffic, on the built-in switch and BMv2 side by side; STF adds interleaved with packets."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from finsy.proto import U128, p4r, p4r_grpc
from google.protobuf import text_format

from lgkit.sw.p4runtime.codec import encode
from lgkit.sw.p4runtime.errors import MAX_WRITE_UPDATES
from lgkit.sw.tools.bench_switch import HostPair, start_switch, stop_process
from lgkit.sw.tools.bmv2_stf import free_tcp_port

DEVICE_ID = 1
ELECTION = 1
TABLE = "MyIngress.hosts"
ACTION = "MyIngress.forward"
BULK_BASE = 0x0B000000  # 11.0.0.0: the bulk entries (no traffic goes there)
CHURN_BASE = 0x0C000000  # 12.0.0.0: the entries written during traffic
PROBE_PORT = 9001
MAX_MESSAGE = 1 << 30
PROBE_PERIOD_S = 0.001
IDLE_S = 2.0
"How long the switch's CPU use is measured with the table full and no traffic, no writes."

SENDER = """
import socket, struct, sys, time
dst, port, period = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((dst, port))
seq, due = 0, time.monotonic()
while True:
    due += period
    s.send(struct.pack("!QQ", seq, time.time_ns()) + b"x" * 48)
    seq += 1
    time.sleep(max(0.0, due - time.monotonic()))
"""

RECEIVER = """
import json, socket, struct, sys
SO_TIMESTAMPNS = 35  # Linux: the kernel's receive time of each datagram (CLOCK_REALTIME)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
print("listening", flush=True)
s.settimeout(60)
got = []
try:
    while True:
        data, ancillary, _, _ = s.recvmsg(2048, 64)
        sec, nsec = struct.unpack("qq", ancillary[0][2][:16])
        seq, sent = struct.unpack("!QQ", data[:16])
        got.append((seq, sent, sec * 1_000_000_000 + nsec - sent))
        s.settimeout(1)
except (TimeoutError, socket.timeout):
    pass
print(json.dumps(got))
"""
"""The probe's receiver: a packet's delay runs from the sender's clock read just before its
send to the kernel's receive timestamp, so the receiver's own scheduling delays do not count."""


@dataclass
class Config:
    """What to run: sizes of the insert, traffic and STF parts."""

    entries: int = 1_000_000
    batch: int = 1000
    block: int = 100_000
    installed: int = 100_000
    write_seconds: float = 5.0
    write_period_s: float = 0.01
    stf_adds: int = 5000


@dataclass
class Result:
    """One switch's figures: seconds per insert block, packet delays (ns) per phase, etc."""

    blocks: list[float] = field(default_factory=list)
    write_rpc_s: list[float] = field(default_factory=list)
    read_s: float = 0.0
    read_count: int = 0
    phases: dict[str, list[int]] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)
    note: str = ""
    idle_cpu: float = 0.0


class Client:
    """The primary P4Runtime client of one device (its stream open while in use)."""

    def __init__(self, address: str) -> None:
        options = [("grpc.max_receive_message_length", MAX_MESSAGE),
                   ("grpc.max_send_message_length", MAX_MESSAGE)]
        self.channel = grpc.insecure_channel(address, options=options)
        grpc.channel_ready_future(self.channel).result(timeout=60)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._done = threading.Event()
        arbitration = p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=DEVICE_ID, election_id=U128.encode(ELECTION)))

        def requests():  # noqa: ANN202 - a generator of stream messages
            yield arbitration
            self._done.wait()

        self._stream = self.stub.StreamChannel(requests())
        next(self._stream)

    def set_config(self, config: p4r.ForwardingPipelineConfig) -> None:
        self.stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID, election_id=U128.encode(ELECTION), config=config,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT), timeout=120)

    def write(self, updates: list[p4r.Update]) -> None:
        self.stub.Write(p4r.WriteRequest(device_id=DEVICE_ID, election_id=U128.encode(ELECTION),
                                         updates=updates), timeout=120)

    def read_count(self, table_id: int) -> int:
        request = p4r.ReadRequest(device_id=DEVICE_ID, entities=[
            p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id))])
        return sum(len(r.entities) for r in self.stub.Read(request, timeout=300))

    def close(self) -> None:
        self._done.set()
        self._stream.cancel()
        self.channel.close()


class Entries:
    """P4Runtime updates of the benchmark's table from its P4Info."""

    def __init__(self, p4info: Any) -> None:
        table = next(t for t in p4info.tables if t.preamble.name == TABLE)
        action = next(a for a in p4info.actions if a.preamble.name == ACTION)
        self.table_id = table.preamble.id
        self.field_id = table.match_fields[0].id
        self.action_id = action.preamble.id
        self.param_ids = [p.id for p in action.params]

    def update(self, kind: p4r.Update.Type.ValueType, ip: int, mac: int = 0x000000000202,
               port: int = 2) -> p4r.Update:
        entry = p4r.TableEntry(table_id=self.table_id)
        entry.match.add(field_id=self.field_id).exact.value = encode(ip)
        call = entry.action.action
        call.action_id = self.action_id
        for pid, value in zip(self.param_ids, (mac, port), strict=True):
            call.params.add(param_id=pid, value=encode(value))
        return p4r.Update(type=kind, entity=p4r.Entity(table_entry=entry))


class BuiltinTarget:
    """`lgkit switch --no-p4`, configured over P4Runtime with `lgkit compile`'s output."""

    name = "built-in"

    def __init__(self, program: Path, work: Path) -> None:
        self.program, self.work = program, work


    def config(self) -> p4r.ForwardingPipelineConfig:
        subprocess.run([sys.executable, "-m", "lgkit.cli", "compile", str(self.program),
                        "--out", str(self.work)], check=True, capture_output=True, timeout=300)
        stem = self.work / self.program.stem
        return _config(Path(f"{stem}.json"), Path(f"{stem}.p4info.txt"))

    def start(self, pair: HostPair, address: str) -> subprocess.Popen[str]:
        return start_switch([sys.executable, "-m", "lgkit.cli", "switch", "--no-p4",
                             "--device-id", str(DEVICE_ID), "-i", f"1@{pair.sw1}", "-i",
                             f"2@{pair.sw2}", "--grpc-server-addr", address])


class Bmv2Target:
    """simple_switch_grpc --no-p4, configured over P4Runtime with p4c-bm2-ss's output."""

    name = "BMv2"

    def __init__(self, program: Path, work: Path) -> None:
        self.program, self.work = program, work / "bmv2"

    @staticmethod
    def missing() -> list[str]:
        return [t for t in ("simple_switch_grpc", "p4c-bm2-ss") if not shutil.which(t)]

    def config(self) -> p4r.ForwardingPipelineConfig:
        self.work.mkdir(exist_ok=True)
        json_path, info_path = self.work / "program.json", self.work / "program.p4info.txt"
        subprocess.run(["p4c-bm2-ss", "-o", str(json_path), "--p4runtime-files", str(info_path),
                        str(self.program)], check=True, capture_output=True, timeout=300)
        return _config(json_path, info_path)

    def start(self, pair: HostPair, address: str) -> subprocess.Popen[str]:
        """Log level off: at its default BMv2 formats every log line (docs/bmv2.md)."""
        return subprocess.Popen(
            ["simple_switch_grpc", "--no-p4", "--device-id", str(DEVICE_ID), "-i",
             f"1@{pair.sw1}", "-i", f"2@{pair.sw2}", "--thrift-port", str(free_tcp_port()),
             "--log-level", "off", "--notifications-addr",
             f"ipc://{self.work.resolve()}/notifications.ipc", "--",
             "--grpc-server-addr", address],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def _config(device: Path, p4info: Path) -> p4r.ForwardingPipelineConfig:
    config = p4r.ForwardingPipelineConfig(p4_device_config=device.read_bytes())
    text_format.Parse(p4info.read_text(), config.p4info)
    return config


class Traffic:
    """A probe flow h1 -> h2, one timestamped packet per PROBE_PERIOD_S, and its delays."""

    def __init__(self, pair: HostPair) -> None:
        self.pair = pair
        self.receiver = pair.popen(pair.ns2, sys.executable, "-c", RECEIVER, str(PROBE_PORT))
        assert self.receiver.stdout is not None
        self.receiver.stdout.readline()
        self.sender = pair.popen(pair.ns1, sys.executable, "-c", SENDER, pair.H2_IP,
                                 str(PROBE_PORT), str(PROBE_PERIOD_S))

    def stop(self) -> list[tuple[int, int, int]]:
        """(sequence number, send time, delay) of every packet received, in ns."""
        stop_process(self.sender)
        try:
            out, _ = self.receiver.communicate(timeout=90)
        finally:
            stop_process(self.receiver)
        return [tuple(x) for x in json.loads(out or "[]")]


def _idle_cpu(pid: int, seconds: float) -> float:
    """The share of one core process `pid` uses while nothing happens for `seconds`."""

    def cpu_s() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before, started = cpu_s(), time.monotonic()
    time.sleep(seconds)
    return (cpu_s() - before) / (time.monotonic() - started)


def _phase(got: list[tuple[int, int, int]], start: int, end: int) -> tuple[list[int], int]:
    """Delays of the packets sent in [start, end] and how many of those were lost."""
    inside = [(seq, delay) for seq, sent, delay in got if start <= sent <= end]
    if not inside:
        return [], 0
    seqs = [s for s, _ in inside]
    return [d for _, d in inside], max(seqs) - min(seqs) + 1 - len(seqs)


def run_target(target: Any, cfg: Config, pair: HostPair) -> Result:
    """Insert cfg.entries in batches; after cfg.installed, the traffic phases."""
    config = target.config()
    entries = Entries(config.p4info)
    address = f"127.0.0.1:{free_tcp_port()}"
    switch = target.start(pair, address)
    result = Result()
    client = None
    try:
        client = Client(address)
        client.set_config(config)
        client.write([entries.update(p4r.Update.INSERT, int.from_bytes(
            bytes(map(int, pair.H2_IP.split("."))), "big"))])
        done, block_start = 0, time.perf_counter()
        while done < cfg.entries:
            n = min(cfg.batch, cfg.entries - done, cfg.block - done % cfg.block)
            client.write([entries.update(p4r.Update.INSERT, BULK_BASE + done + i)
                          for i in range(n)])
            done += n
            if done % cfg.block == 0 or done == cfg.entries:
                result.blocks.append(time.perf_counter() - block_start)
                if done == cfg.installed:
                    result.idle_cpu = _idle_cpu(switch.pid, IDLE_S)
                    _traffic_phases(client, entries, cfg, pair, result)
                block_start = time.perf_counter()
    finally:
        if client is not None:
            client.close()
        stop_process(switch)
        if switch.stdout is not None:
            result.note = " ".join(switch.stdout.read().split("stopped; ")[1:]).strip()
    return result


def _traffic_phases(client: Client, entries: Entries, cfg: Config, pair: HostPair,
                    result: Result) -> None:
    """Baseline, one write per cfg.write_period_s, then a Read of the whole table."""
    traffic = Traffic(pair)
    try:
        time.sleep(0.5)  # the flow reaches its steady state
        marks = [time.time_ns()]
        time.sleep(1.0)
        marks.append(time.time_ns())
        due = time.monotonic()
        for i in range(int(cfg.write_seconds / cfg.write_period_s)):
            kind = p4r.Update.INSERT if i % 2 == 0 else p4r.Update.DELETE
            started = time.perf_counter()
            client.write([entries.update(kind, CHURN_BASE + i // 2)])
            result.write_rpc_s.append(time.perf_counter() - started)
            due += cfg.write_period_s
            time.sleep(max(0.0, due - time.monotonic()))
        marks.append(time.time_ns())
        time.sleep(0.2)
        marks.append(time.time_ns())
        started = time.perf_counter()
        result.read_count = client.read_count(entries.table_id)
        result.read_s = time.perf_counter() - started
        marks.append(time.time_ns())
        time.sleep(0.3)
    finally:
        got = traffic.stop()
    for name, (start, end) in (("baseline", marks[0:2]), ("writes", marks[1:3]),
                               ("read", marks[3:5])):
        result.phases[name], result.lost[name] = _phase(got, start, end)


def stf_bench(program: Path, adds: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per `add` and per `packet` statement of an STF with `adds` adds, interleaved
    with packets (one after each add) and with the adds first, on the built-in target."""
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang.frontend.compiler import compile_file
    from lgkit.sw.lang.p4info import build_p4info
    from lgkit.sw.tools.stf import AddStmt, StfRunner, parse_stf

    compiled = compile_file(str(program))
    info = build_p4info(compiled.ir)
    adds_text = [f"add {TABLE} hdr.ipv4.dstAddr:{CHURN_BASE + i} "
                 f"{ACTION}(dstAddr:0x202, port:2)" for i in range(adds)]
    packets = [f"packet 1 {_probe_frame(CHURN_BASE + i).hex()}" for i in range(adds)]
    orders = {"interleaved": [x for pair in zip(adds_text, packets, strict=True) for x in pair],
              "adds first": adds_text + packets}
    out = {}
    for name, lines in orders.items():
        stmts = parse_stf("\n".join(lines))
        runner = StfRunner(Pipeline.load(compiled), info)
        runner.ports = {2}
        times: dict[str, list[float]] = {"add": [], "packet": []}
        for stmt in stmts:
            started = time.perf_counter()
            runner.execute(stmt)
            times["add" if isinstance(stmt, AddStmt) else "packet"].append(
                time.perf_counter() - started)
        if len(runner.received.get(2, [])) != adds:
            raise RuntimeError(f"STF {name}: {len(runner.received.get(2, []))} of {adds} "
                               "packets forwarded")
        out[name] = times
    return out


def _probe_frame(dst: int) -> bytes:
    """A minimal Ethernet/IPv4 frame to `dst`."""
    eth = bytes.fromhex("000000000201" "000000000101" "0800")
    ip = bytes.fromhex("4500002e0000000040110000" "0a000101") + dst.to_bytes(4, "big")
    return eth + ip + bytes(26)


def _ms(values: Sequence[float], scale: float = 1e3) -> str:
    """min / median / 99th percentile / max, in ms."""
    if not values:
        return "n/a"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return " / ".join(f"{v * scale:.2f}" for v in (ordered[0], statistics.median(ordered), p99,
                                                   ordered[-1])) + " ms"


def report(name: str, cfg: Config, r: Result) -> None:
    total = sum(r.blocks)
    rates = [cfg.block / s for s in r.blocks if s]
    print(f"{name}: {cfg.entries:,} inserts in batches of {cfg.batch:,}: {total:.1f} s "
          f"({cfg.entries / total:,.0f}/s); per {cfg.block:,}-entry block "
          + ", ".join(f"{s:.1f}" for s in r.blocks) + " s"
          + (f"; rate min / median / max {min(rates):,.0f} / {statistics.median(rates):,.0f} "
             f"/ {max(rates):,.0f} entries/s" if rates else ""))
    print(f"  idle, {cfg.installed:,} entries in (no timeout set), no traffic: "
          f"{r.idle_cpu:.3f} of a core")
    base = r.phases.get("baseline", [])
    median = statistics.median(base) if base else 0
    for phase, label in (("baseline", "no writes"),
                         ("writes", f"one write per {cfg.write_period_s * 1e3:g} ms"),
                         ("read", f"Read of {r.read_count:,} entries ({r.read_s:.2f} s)")):
        delays = r.phases.get(phase, [])
        added = (max(delays) - median) / 1e6 if delays else float("nan")
        print(f"  packet delay (min / median / p99 / max), {label}: {_ms(delays, 1e-6)} over "
              f"{len(delays)} packets, {r.lost.get(phase, 0)} lost; worst added to the "
              f"baseline median: {added:.2f} ms")
    print(f"  Write RPC of one entry during traffic: {_ms(r.write_rpc_s)}")
    if r.note:
        print(f"  switch: {r.note}")


def run_bench(cfg: Config, program: Path, with_bmv2: bool = True) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        targets: list[Any] = [BuiltinTarget(program, Path(tmp))]
        bmv2 = Bmv2Target(program, Path(tmp))
        if not with_bmv2:
            print("BMv2: not run (--no-bmv2)")
        elif bmv2.missing():
            print(f"BMv2: not installed ({', '.join(bmv2.missing())} missing): "
                  "the built-in switch alone")
        else:
            targets.append(bmv2)
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        print(f"{when} UTC, {os.cpu_count()} cores, load average "
              + " ".join(f"{x:.2f}" for x in os.getloadavg())
              + f"; {program.name}; {' then '.join(t.name for t in targets)}")
        with HostPair() as pair:
            for target in targets:
                report(target.name, cfg, run_target(target, cfg, pair))
    for name, times in stf_bench(program, cfg.stf_adds).items():
        total = sum(times["add"]) + sum(times["packet"])
        print(f"STF, {cfg.stf_adds:,} adds {name} (built-in): {total:.2f} s; per add "
              f"{_ms(times['add'])}; per packet {_ms(times['packet'])} (min / median / p99 / max)")
    return 0


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser(
        "bench-tables", help="table scale: 1M P4Runtime inserts, writes and Reads during traffic",
        description="Insert --entries exact entries over P4Runtime in batches (time per block); "
                    "with --installed entries in, send a probe flow between two namespaced "
                    "hosts and measure each packet's delay with no writes, with one write per "
                    "10 ms and during a Read of the whole table; then STF adds interleaved "
                    "with packets vs adds first. The built-in switch and, when installed, "
                    "BMv2 (simple_switch_grpc), in the same run. Needs root.")
    defaults = Config()
    for name, kind, default, what in (
            ("--entries", int, defaults.entries, "entries to insert"),
            ("--batch", int, defaults.batch, "updates per Write"),
            ("--block", int, defaults.block, "entries per timed block"),
            ("--installed", int, defaults.installed, "entries in when traffic runs"),
            ("--write-seconds", float, defaults.write_seconds, "length of the write phase"),
            ("--stf-adds", int, defaults.stf_adds, "STF add lines")):
        bench.add_argument(name, type=kind, default=default, help=f"{what} ({default:g})")
    bench.add_argument("--no-bmv2", action="store_true", help="the built-in switch alone")
    bench.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    cfg = Config(args.entries, args.batch, args.block, args.installed, args.write_seconds,
                 stf_adds=args.stf_adds)
    problem = _check(cfg)
    if problem:
        print(f"lgkit: error: {problem}", file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("lgkit: error: bench-tables needs root (network namespaces)", file=sys.stderr)
        return 1
    program = Path(__file__).resolve().parents[3] / "p4" / "bench_tables.p4"
    try:
        return run_bench(cfg, program, not args.no_bmv2)
    except grpc.RpcError as exc:
        print(f"lgkit: error: bench-tables failed: P4Runtime {exc.code().name}: "
              f"{exc.details()}", file=sys.stderr)
        return 1
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"lgkit: error: bench-tables failed: {exc}".splitlines()[0], file=sys.stderr)
        return 1


def _check(cfg: Config) -> str | None:
    if not 1 <= cfg.batch <= MAX_WRITE_UPDATES:
        return f"--batch must be in 1..{MAX_WRITE_UPDATES} (the built-in server's batch limit)"
    if not 1 <= cfg.entries <= 1_000_000:
        return "--entries must be in 1..1000000"
    if not 1 <= cfg.block <= cfg.entries:
        return "--block must be in 1..--entries"
    if not 1 <= cfg.installed <= cfg.entries or cfg.installed % cfg.block:
        return "--installed must be a multiple of --block, at most --entries"
    if not 0.05 <= cfg.write_seconds <= 600:
        return "--write-seconds must be in 0.05..600"
    if not 1 <= cfg.stf_adds <= 1_000_000:
        return "--stf-adds must be in 1..1000000"
    return None
