"""`lgkit bench-p4runtime`: N P4Runtime clients (each a StreamChannel plus Reads in a loop)
held against one switch, and how long a probe's unary RPCs take meanwhile.

The clients live in a child process on one asyncio loop (grpc.aio), so that the probe, in this
process, measures the server and not the clients' own GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import grpc
from finsy.proto import U128, p4r, p4r_grpc
from google.protobuf import text_format

DEVICE_ID = 1
PROBE_ELECTION = 2**64
"The probe's election id: above every load client's, so it is the primary."
GOAL_S = 1.0
READ_PAUSE_S = 0.05


async def _client(address: str, election: int, until: float, ready: asyncio.Event,
                  counts: dict[str, int]) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = p4r_grpc.P4RuntimeStub(channel)
        outbox: asyncio.Queue[p4r.StreamMessageRequest | None] = asyncio.Queue()
        update = p4r.MasterArbitrationUpdate(device_id=DEVICE_ID,
                                             election_id=U128.encode(election))
        await outbox.put(p4r.StreamMessageRequest(arbitration=update))

        async def requests():
            while (message := await outbox.get()) is not None:
                yield message

        stream = stub.StreamChannel(requests())
        await stream.read()  # the arbitration answer: this client is connected
        counts["streams"] += 1
        ready.set()
        read = p4r.ReadRequest(device_id=DEVICE_ID,
                               entities=[p4r.Entity(table_entry=p4r.TableEntry())])
        while time.monotonic() < until:
            try:
                async for _ in stub.Read(read, timeout=30):
                    pass
                counts["reads"] += 1
            except grpc.aio.AioRpcError as err:
                counts[f"read {err.code().name}"] = counts.get(f"read {err.code().name}", 0) + 1
            await asyncio.sleep(READ_PAUSE_S)
        await outbox.put(None)
        stream.cancel()


async def _hold(address: str, clients: int, seconds: float) -> dict[str, int]:
    counts = {"streams": 0, "reads": 0}
    until = time.monotonic() + seconds
    events = [asyncio.Event() for _ in range(clients)]
    tasks = [asyncio.create_task(_client(address, i + 1, until, events[i], counts))
             for i in range(clients)]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), timeout=120)
    print("ready", flush=True)
    await asyncio.gather(*tasks, return_exceptions=True)
    return counts


def generator_main() -> None:
    """The child process: `python -m lgkit.sw.tools.p4rt_load ADDRESS CLIENTS SECONDS`."""
    address, clients, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    counts = asyncio.run(_hold(address, clients, seconds))
    print(json.dumps(counts), flush=True)


def _timed(call: Any) -> float | None:
    started = time.monotonic()
    try:
        call()
    except grpc.RpcError:
        return None
    return time.monotonic() - started


def probe_under_load(address: str, clients: int, seconds: float) -> dict[str, Any]:
    """Hold `clients` clients for `seconds` and probe Capabilities and Read every 0.25 s;
    returns the latencies (None = no answer within 5 s) and the clients' counts."""
    gen = subprocess.Popen([sys.executable, "-m", "lgkit.sw.tools.p4rt_load", address,
                            str(clients), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert gen.stdout is not None
    if gen.stdout.readline().strip() != "ready":
        gen.kill()
        raise RuntimeError("the load clients did not connect")
    channel = grpc.insecure_channel(address)
    stub = p4r_grpc.P4RuntimeStub(channel)
    read = p4r.ReadRequest(device_id=DEVICE_ID,
                           entities=[p4r.Entity(table_entry=p4r.TableEntry())])
    caps: list[float | None] = []
    reads: list[float | None] = []
    end = time.monotonic() + seconds * 0.8
    while time.monotonic() < end:
        caps.append(_timed(lambda: stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)))
        reads.append(_timed(lambda: list(stub.Read(read, timeout=5))))
        time.sleep(0.25)
    channel.close()
    counts = json.loads(gen.stdout.readline() or "{}")
    gen.wait(60)
    return {"capabilities": caps, "read": reads, "clients": counts}


def _spread(values: list[float | None]) -> str:
    got = [v for v in values if v is not None]
    lost = len(values) - len(got)
    if not got:
        return f"no answer ({lost} probes)"
    return (f"min {min(got) * 1000:.1f} / median {statistics.median(got) * 1000:.1f} / "
            f"max {max(got) * 1000:.1f} ms over {len(got)} probes"
            + (f", {lost} unanswered" if lost else ""))


def start_switch(program: Path, workdir: Path) -> tuple[subprocess.Popen, str]:
    lgkit = [sys.executable, "-m", "lgkit.cli"]
    subprocess.run([*lgkit, "compile", str(program), "--out", str(workdir)], check=True,
                   capture_output=True, timeout=120)
    switch = subprocess.Popen([*lgkit, "switch", "--no-p4", "--device-id", str(DEVICE_ID),
                               "--grpc-server-addr", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, text=True)
    assert switch.stdout is not None
    address = switch.stdout.readline().rsplit("gRPC on ", 1)[-1].strip()
    config = p4r.ForwardingPipelineConfig(
        p4_device_config=(workdir / f"{program.stem}.json").read_bytes())
    text_format.Parse((workdir / f"{program.stem}.p4info.txt").read_text(), config.p4info)
    channel = grpc.insecure_channel(address)
    stub = p4r_grpc.P4RuntimeStub(channel)
    arbitration = p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=DEVICE_ID, election_id=U128.encode(PROBE_ELECTION)))
    done = threading.Event()

    def requests():
        yield arbitration
        done.wait()  # keep the stream (and primacy) until the config is in

    stream = stub.StreamChannel(requests())
    next(stream)
    stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID, election_id=U128.encode(PROBE_ELECTION), config=config,
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT), timeout=60)
    done.set()
    channel.close()
    return switch, address


def run_bench(clients: int, seconds: float, program: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        switch, address = start_switch(program, Path(tmp))
        try:
            result = probe_under_load(address, clients, seconds)
        finally:
            switch.terminate()
            switch.wait(10)
    counts = result["clients"]
    print(f"{clients} clients on lgkit switch ({address}), {seconds:g} s: "
          f"{counts.get('streams', 0)} streams open, {counts.get('reads', 0)} reads served "
          f"({counts.get('reads', 0) / seconds:.0f}/s)"
          + "".join(f", {k}: {v}" for k, v in counts.items() if k.startswith("read ")))
    print(f"probe Capabilities: {_spread(result['capabilities'])}")
    print(f"probe Read:         {_spread(result['read'])}")
    worst = [v for key in ("capabilities", "read") for v in result[key]]
    ok = all(v is not None and v < GOAL_S for v in worst)
    print(f"goal: every probe answered within {GOAL_S:g} s: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser(
        "bench-p4runtime", help="P4Runtime load: N clients (streams + reads) vs a probe",
        description="Start `lgkit switch` with p4/basic.p4, hold N P4Runtime clients against "
                    "it (each a StreamChannel and Reads in a loop) and print how long a probe's "
                    "Capabilities and Read take meanwhile (goal: every one within 1 s).")
    bench.add_argument("--clients", type=int, default=200, help="load clients (200)")
    bench.add_argument("--seconds", type=float, default=10.0, help="how long (10)")
    bench.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.clients <= 2000 or not 1 <= args.seconds <= 3600:
        print("lgkit: error: --clients must be in 1..2000 and --seconds in 1..3600",
              file=sys.stderr)
        return 1
    program = Path(__file__).resolve().parents[3] / "p4" / "basic.p4"
    return run_bench(args.clients, args.seconds, program)


if __name__ == "__main__":
    generator_main()
