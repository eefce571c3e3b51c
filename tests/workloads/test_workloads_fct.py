"""The FCT workload: server and client on loopback, closed and open loop, new and persistent
connections, the CSV records and the command line."""

from __future__ import annotations

import asyncio
import csv
import gc
import json
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.workloads import fct
from lgkit.workloads.fct import ClientPlan, FctClient, FlowRecord, offered_rate


@pytest.fixture(scope="module")
def server_port() -> int:
    """A FCT server on 127.0.0.1 (ephemeral port) in a background event loop."""
    ready = threading.Event()
    port: list[int] = []
    loop = asyncio.new_event_loop()

    def on_ready(p: int) -> None:
        port.append(p)
        ready.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        task = loop.create_task(fct.serve("127.0.0.1", 0, "cubic", on_ready))
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield port[0]
    for task in asyncio.all_tasks(loop):
        loop.call_soon_threadsafe(task.cancel)
    thread.join(5)


def _run(plan: ClientPlan) -> list[FlowRecord]:
    records: list[FlowRecord] = []
    asyncio.run(FctClient(plan, records.append).run())
    return records


@pytest.mark.root  # server_port sets TCP_CONGESTION cubic: CAP_NET_ADMIN where not allowed
def test_closed_loop_fixed_size_on_new_connections(server_port: int) -> None:
    records = _run(ClientPlan("127.0.0.1", server_port, 40, lambda rng: 24_387,
                              congestion="cubic"))
    assert [r.flow for r in records] == list(range(40))
    assert all(r.size_bytes == 24_387 and r.new_conn and not r.error for r in records)
    assert all(r.fct_us > 0 and r.connect_us > 0 and r.rto_us > 0 for r in records)
    starts = [r.start_s for r in records]
    assert starts == sorted(starts)
    # closed loop: a flow starts only after the previous one finished
    for previous, current in zip(records, records[1:], strict=False):
        assert current.start_s >= previous.start_s + previous.fct_us / 1e6


def test_closed_loop_waits_for_the_servers_close_and_the_gap() -> None:
    linger_s, gap_s = 0.2, 0.1
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:  # answers each flow, then closes its side only after linger_s
        for _ in range(3):
            conn, _ = listener.accept()
            with conn:
                size, flow = fct.HEADER.unpack(conn.recv(fct.HEADER.size, socket.MSG_WAITALL))
                conn.recv(size - fct.HEADER.size, socket.MSG_WAITALL)
                conn.sendall(fct.ANSWER.pack(flow))
                time.sleep(linger_s)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    records = _run(ClientPlan("127.0.0.1", listener.getsockname()[1], 3, lambda rng: 143,
                              gap_s=gap_s))
    thread.join(5)
    listener.close()
    assert not any(r.error for r in records)
    for previous, current in zip(records, records[1:], strict=False):
        assert current.sched_s - previous.start_s >= linger_s + gap_s
        assert previous.fct_us < linger_s * 1e6  # the wait is not part of the flow


@pytest.mark.root  # server_port sets TCP_CONGESTION cubic: CAP_NET_ADMIN where not allowed
def test_persistent_connection_is_reused_and_tiny_flows_carry_the_header(
        server_port: int) -> None:
    records = _run(ClientPlan("127.0.0.1", server_port, 30, lambda rng: 3, persistent=True))
    assert [r.new_conn for r in records] == [True] + [False] * 29
    assert all(r.size_bytes == fct.MIN_SIZE and not r.error for r in records)
    assert all(r.connect_us == 0 for r in records[1:])


@pytest.mark.root  # server_port sets TCP_CONGESTION cubic: CAP_NET_ADMIN where not allowed
def test_open_loop_poisson_arrivals(server_port: int) -> None:
    rate = 400.0
    records = _run(ClientPlan("127.0.0.1", server_port, 400, lambda rng: 1000,
                              rate_per_s=rate, seed=5))
    assert len(records) == 400 and not any(r.error for r in records)
    sched = sorted(r.sched_s for r in records)
    gaps = [b - a for a, b in zip(sched, sched[1:], strict=False)]
    mean_gap = sum(gaps) / len(gaps)
    # exponential gaps with mean 1/rate: the mean of 399 is within 4 standard errors
    assert abs(mean_gap - 1 / rate) < 4 * (1 / rate) / len(gaps) ** 0.5
    assert all(r.start_s >= r.sched_s - 1e-3 for r in records)
    # the same seed gives the same arrival times
    again = _run(ClientPlan("127.0.0.1", server_port, 400, lambda rng: 1000,
                            rate_per_s=rate, seed=5))
    assert sorted(r.sched_s for r in again) == sched


def test_unreachable_server_is_recorded_as_errors() -> None:
    records = _run(ClientPlan("127.0.0.1", 1, 3, lambda rng: 100))
    assert len(records) == 3 and all(r.error.startswith("ConnectionRefusedError")
                                     for r in records)


def test_offered_rate_matches_the_load() -> None:
    assert offered_rate(0.5, 10.0, 1250.0) == pytest.approx(500.0)


def test_command_line_server_and_client_write_the_csv(tmp_path: Path) -> None:
    env_python = sys.executable
    server = subprocess.Popen([env_python, "-m", "lgkit.workloads.fct", "server", "--bind",
                               "127.0.0.1", "--port", "0"], stdout=subprocess.PIPE, text=True,
                              cwd=REPO)
    try:
        port = json.loads(server.stdout.readline())["listening"]
        out = tmp_path / "flows.csv"
        done = subprocess.run([env_python, "-m", "lgkit.workloads.fct", "client", "--server",
                               "127.0.0.1", "--port", str(port), "--flows", "25", "--cdf",
                               "google_rpc", "--seed", "3", "--out", str(out)],
                              capture_output=True, text=True, cwd=REPO, timeout=60)
    finally:
        server.terminate()
        server.wait(5)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["flows"] == 25 and summary["errors"] == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["flow"] for r in rows] == [str(i) for i in range(25)]
    assert list(rows[0]) == fct.COLUMNS
    rng = random.Random(3)
    from lgkit.workloads.cdf import load_cdf

    dist = load_cdf("google_rpc")
    assert [int(r["size_bytes"]) for r in rows] == [dist.sample(rng, fct.MIN_SIZE)
                                                     for _ in range(25)]


@pytest.fixture(scope="module")
def incast_servers() -> list[str]:
    """Three FCT servers on 127.0.0.1 (ephemeral ports) in one background event loop."""
    loop = asyncio.new_event_loop()
    ports: list[int] = []
    ready = threading.Event()

    def on_ready(p: int) -> None:
        ports.append(p)
        if len(ports) == 3:
            ready.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        for _ in range(3):
            loop.create_task(fct.serve("127.0.0.1", 0, None, on_ready))
        loop.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    assert ready.wait(10)
    return [f"127.0.0.1:{p}" for p in ports]


def test_incast_queries_fan_out_and_wait_for_every_reply(incast_servers: list[str]) -> None:
    queries: list[fct.QueryRecord] = []
    replies: list[FlowRecord] = []
    plan = fct.IncastPlan(incast_servers, 0, queries=5, reply_size=30_000, fanin=2, seed=3)
    asyncio.run(fct.IncastClient(plan, queries.append, replies.append).run())
    assert [q.query for q in queries] == list(range(5))
    assert all(q.fanin == 2 and q.replies == 2 and not q.error for q in queries)
    assert len(replies) == 10 and all(r.size_bytes == 30_000 and not r.error for r in replies)
    for q in queries:  # the query waits for its slowest reply
        mine = [r.fct_us for r in replies if r.flow // 3 == q.query]
        assert q.qct_us >= max(mine) > 0
    assert sum(r.new_conn for r in replies) <= 3  # connections are kept per server


def test_plain_flows_still_get_the_four_byte_answer_and_incast_runs_from_the_cli(
        incast_servers: list[str], tmp_path: Path) -> None:
    records: list[FlowRecord] = []
    host, port = incast_servers[0].split(":")
    plan = ClientPlan(host, int(port), 3, lambda _: 5000)
    asyncio.run(FctClient(plan, records.append).run())
    assert len(records) == 3 and not any(r.error for r in records)
    out = tmp_path / "q.csv"
    done = subprocess.run([sys.executable, "-m", "lgkit.workloads.fct", "incast", "--servers",
                           ",".join(incast_servers), "--queries", "3", "--reply-size", "9000",
                           "--rate", "20", "--out", str(out), "--flows-out",
                           str(tmp_path / "r.csv")], capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 3 and all(r["replies"] == "3" and not r["error"] for r in rows)
    assert len(list(csv.DictReader((tmp_path / "r.csv").open()))) == 9
    bad = subprocess.run([sys.executable, "-m", "lgkit.workloads.fct", "incast", "--servers",
                          "a", "--reply-size", "4", "--out", str(out)], capture_output=True,
                         text=True, cwd=REPO)
    assert bad.returncode == 2 and "--reply-size" in bad.stderr


def test_startup_objects_are_frozen_out_of_later_collections():
    startup = [object() for _ in range(3)]
    held = {"startup": startup}
    try:
        fct.freeze_startup()
        assert gc.get_freeze_count() > 0
        tracked = {id(o) for o in gc.get_objects()}
        assert id(held) not in tracked and id(startup) not in tracked
    finally:
        gc.unfreeze()
