"""Flow-completion-time workload: a server and a client that time each flow (runs in hosts).

A flow is `size` bytes from client to server on a TCP connection: an 8-byte header (size,
flow id; big endian) then filler, so flows shorter than 8 B are sent as 8 B. The server
answers each complete flow with its 4-byte flow id. The flow completion time (FCT) runs from
the client's first write to the arrival of that answer, so it covers the data, its last ACK
(the answer carries it) and no connection setup: on a new connection the handshake is timed
separately (`connect_us`), as the authors' traces time a flow from its first data packet.

    python -m lgkit.workloads.fct server --port 5300
    python -m lgkit.workloads.fct client --server 10.0.0.3 --port 5300 --flows 1000 \
        --size 143 --out flows.csv

Flows run closed-loop (one after the other) or open-loop (Poisson arrivals at `--rate`
flows per second, each on its own task), on a new connection each (default) or on persistent
connections. Closed loop on new connections, a flow's connection is shut down in order (the
client's FIN, the server's FIN back) before the next flow connects, and `--gap-ms` adds idle
time after that: the authors ran each flow as its own iperf process, so their network was idle
between flows, and here no flow shares the path with its predecessor's teardown. Each finished
flow is appended to the CSV at once, so an interrupted run keeps what it measured.

Incast (partition/aggregate): a query asks `--fanin` servers at once for `--reply-size` bytes
each; the query completes when the last reply has arrived (its query completion time, QCT).
A request's 4 bytes after the header give the reply size (0, as in every plain flow: the 4-byte
answer); a reply is framed like a flow (size, flow id, filler), so its size leads it.

    python -m lgkit.workloads.fct incast --servers 10.0.0.1,10.0.0.2 --port 5300 \
        --queries 100 --reply-size 20000 --rate 50 --out queries.csv --flows-out replies.csv
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import gc
import json
import random
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from lgkit.workloads.cdf import load_cdf

HEADER = struct.Struct("!II")
"size, flow id"
ANSWER = struct.Struct("!I")
REPLY = struct.Struct("!I")
"Reply size a request asks for (0: the 4-byte answer), right after the header."
MIN_SIZE = HEADER.size
REQUEST_SIZE = 64
"Bytes of an incast request."
CHUNK = 65536
TCP_INFO_FIELDS = {"rto_us": 8, "rtt_us": 68, "total_retrans": 100}
"Byte offsets of u32 fields in Linux's struct tcp_info."


@dataclass
class FlowRecord:
    """One flow as the client saw it."""

    flow: int
    size_bytes: int
    sched_s: float
    "When the flow was due (s since the client started; open-loop: its Poisson arrival)."
    start_s: float
    "When its first byte was written."
    fct_us: float
    connect_us: float
    "Handshake time for a new connection, 0 on a persistent one."
    new_conn: bool
    retrans: int
    "TCP segments the client retransmitted during this flow (tcp_info total_retrans)."
    rto_us: int
    "The connection's RTO when the flow ended."
    rtt_us: int
    "The connection's smoothed RTT when the flow ended."
    error: str = ""


COLUMNS = [f.name for f in fields(FlowRecord)]


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """rto_us, rtt_us and total_retrans of a connected TCP socket."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return {name: struct.unpack_from("I", raw, off)[0] for name, off in TCP_INFO_FIELDS.items()}


def tune(sock: socket.socket, congestion: str | None) -> None:
    """No Nagle; the congestion control asked for (raises OSError if the kernel lacks it)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if congestion:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion.encode())


# ----------------------------------------------------------------------------------- server


async def _serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            size, flow = HEADER.unpack(await reader.readexactly(HEADER.size))
            remaining = size - HEADER.size
            reply = 0
            if remaining >= REPLY.size:
                (reply,) = REPLY.unpack(await reader.readexactly(REPLY.size))
                remaining -= REPLY.size
            while remaining > 0:
                remaining -= len(await reader.readexactly(min(remaining, CHUNK)))
            writer.write(_payload(reply, flow) if reply else ANSWER.pack(flow))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(host: str, port: int, congestion: str | None,
                ready: Callable[[int], None] | None = None) -> None:
    """Answer flows until cancelled; `ready(port)` is called once listening (port 0 = any)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tune(sock, congestion)
    sock.bind((host, port))
    server = await asyncio.start_server(_serve_connection, sock=sock, backlog=1024)
    if ready is not None:
        ready(sock.getsockname()[1])
    async with server:
        await server.serve_forever()


# ----------------------------------------------------------------------------------- client


@dataclass(frozen=True)
class ClientPlan:
    """What the client runs."""

    server: str
    port: int
    flows: int
    sizes: Callable[[random.Random], int]
    rate_per_s: float = 0.0
    "0: closed loop (one flow after another); > 0: Poisson arrivals at this rate."
    persistent: bool = False
    congestion: str | None = None
    seed: int = 1
    max_inflight: int = 512
    "Open loop: flows started but not finished at most; later arrivals wait for a slot."
    timeout_s: float = 30.0
    "A flow not finished after this long is recorded with an error."
    gap_s: float = 0.0
    "Closed loop: idle time between one flow's closed connection and the next flow."


class _Connection:
    """A client connection: its socket, streams and the counters before the current flow."""

    def __init__(self, sock: socket.socket, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.sock, self.reader, self.writer = sock, reader, writer

    @classmethod
    async def open(cls, plan: ClientPlan) -> tuple[_Connection, float]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tune(sock, plan.congestion)
        sock.setblocking(False)
        began = time.perf_counter()
        await asyncio.get_running_loop().sock_connect(sock, (plan.server, plan.port))
        connect_us = (time.perf_counter() - began) * 1e6
        reader, writer = await asyncio.open_connection(sock=sock)
        return cls(sock, reader, writer), connect_us

    def close(self) -> None:
        self.writer.close()

    async def shut_down(self, timeout_s: float) -> None:
        """Close in order: our FIN, then wait for the peer's (its EOF), then release."""
        try:
            if self.writer.can_write_eof():
                self.writer.write_eof()
            await asyncio.wait_for(self.reader.read(), timeout_s)
        except (OSError, TimeoutError):
            pass
        finally:
            self.close()


def _payload(size: int, flow: int) -> bytes:
    size = max(size, MIN_SIZE)
    return HEADER.pack(size, flow) + bytes(size - HEADER.size)


class FctClient:
    """Runs a ClientPlan and hands each finished flow to `record`."""

    def __init__(self, plan: ClientPlan, record: Callable[[FlowRecord], None]) -> None:
        self.plan, self.record = plan, record
        self._idle: list[_Connection] = []
        self._t0 = 0.0

    async def _flow(self, flow: int, size: int, sched_s: float) -> None:
        plan = self.plan
        new = not plan.persistent or not self._idle
        conn: _Connection | None = None
        connect_us, start_s, error, fct_us = 0.0, 0.0, "", 0.0
        info_before = {"total_retrans": 0}
        try:
            if new:
                conn, connect_us = await _Connection.open(plan)
            else:
                conn = self._idle.pop()
                info_before = tcp_info(conn.sock)
            data = _payload(size, flow)
            began = time.perf_counter()
            start_s = began - self._t0
            conn.writer.write(data)
            answer = await asyncio.wait_for(conn.reader.readexactly(ANSWER.size),
                                            plan.timeout_s)
            fct_us = (time.perf_counter() - began) * 1e6
            if ANSWER.unpack(answer)[0] != flow:
                error = "answer for another flow"
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        info = tcp_info(conn.sock) if conn is not None else {k: 0 for k in TCP_INFO_FIELDS}
        self.record(FlowRecord(
            flow=flow, size_bytes=max(size, MIN_SIZE), sched_s=round(sched_s, 6),
            start_s=round(start_s, 6), fct_us=round(fct_us, 1), connect_us=round(connect_us, 1),
            new_conn=new, retrans=info["total_retrans"] - info_before["total_retrans"],
            rto_us=info["rto_us"], rtt_us=info["rtt_us"], error=error))
        if conn is not None:
            if plan.persistent and not error:
                self._idle.append(conn)
            elif plan.rate_per_s <= 0 and not error:
                await conn.shut_down(plan.timeout_s)
            else:
                conn.close()

    def _arrivals(self, rng: random.Random) -> Iterator[tuple[int, int, float]]:
        at = 0.0
        for flow in range(self.plan.flows):
            if self.plan.rate_per_s > 0:
                at += rng.expovariate(self.plan.rate_per_s)
            yield flow, self.plan.sizes(rng), at

    async def run(self) -> None:
        """Run every flow of the plan."""
        rng = random.Random(self.plan.seed)
        self._t0 = time.perf_counter()
        if self.plan.rate_per_s <= 0:
            for flow, size, _ in self._arrivals(rng):
                if flow and self.plan.gap_s > 0:
                    await asyncio.sleep(self.plan.gap_s)
                await self._flow(flow, size, time.perf_counter() - self._t0)
        else:
            await self._open_loop(rng)
        for conn in self._idle:
            conn.close()

    async def _open_loop(self, rng: random.Random) -> None:
        slots = asyncio.Semaphore(self.plan.max_inflight)
        tasks: set[asyncio.Task] = set()

        async def one(flow: int, size: int, at: float) -> None:
            async with slots:
                await self._flow(flow, size, at)

        for flow, size, at in self._arrivals(rng):
            delay = self._t0 + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(one(flow, size, at))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)


# ----------------------------------------------------------------------------------- incast


@dataclass
class QueryRecord:
    """One incast query as the client saw it."""

    query: int
    fanin: int
    reply_bytes: int
    sched_s: float
    start_s: float
    qct_us: float
    "From the first request written to the last reply received."
    retrans: int
    "TCP segments the client retransmitted during the query (its requests and ACKs)."
    replies: int
    "Replies received in full."
    error: str = ""


QUERY_COLUMNS = [f.name for f in fields(QueryRecord)]


@dataclass(frozen=True)
class IncastPlan:
    """What the incast client runs."""

    servers: list[str]
    "Addresses, each optionally with its own port (`10.0.0.2` or `127.0.0.1:5301`)."
    port: int
    queries: int
    reply_size: int
    fanin: int = 0
    "Servers asked per query (0: all); a random sample of them otherwise."
    rate_qps: float = 0.0
    "0: closed loop (one query after another); > 0: Poisson query arrivals at this rate."
    congestion: str | None = None
    seed: int = 1
    timeout_s: float = 30.0


class IncastClient:
    """Runs an IncastPlan; each query goes to `record_query`, each reply to `record_flow`."""

    def __init__(self, plan: IncastPlan, record_query: Callable[[QueryRecord], None],
                 record_flow: Callable[[FlowRecord], None] | None = None) -> None:
        self.plan, self.record_query, self.record_flow = plan, record_query, record_flow
        self._idle: dict[str, list[_Connection]] = {server: [] for server in plan.servers}
        self._t0 = 0.0

    async def _reply(self, server: str, flow: int, sched_s: float) -> tuple[int, str]:
        """Ask one server; returns (retransmissions, error)."""
        plan = self.plan
        conn: _Connection | None = None
        began, fct_us, error, connect_us, retrans = time.perf_counter(), 0.0, "", 0.0, 0
        new = not self._idle[server]
        try:
            if new:
                host, _, port = server.partition(":")
                conn, connect_us = await _Connection.open(ClientPlan(
                    host, int(port or plan.port), 0, lambda _: 0, congestion=plan.congestion))
            else:
                conn = self._idle[server].pop()
            before = tcp_info(conn.sock)["total_retrans"]
            began = time.perf_counter()
            conn.writer.write(HEADER.pack(REQUEST_SIZE, flow) + REPLY.pack(plan.reply_size)
                              + bytes(REQUEST_SIZE - HEADER.size - REPLY.size))
            size, answered = HEADER.unpack(await asyncio.wait_for(
                conn.reader.readexactly(HEADER.size), plan.timeout_s))
            await asyncio.wait_for(conn.reader.readexactly(size - HEADER.size), plan.timeout_s)
            fct_us = (time.perf_counter() - began) * 1e6
            retrans = tcp_info(conn.sock)["total_retrans"] - before
            if answered != flow or size != plan.reply_size:
                error = "reply for another flow"
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        if self.record_flow is not None:
            info = tcp_info(conn.sock) if conn is not None else {k: 0 for k in TCP_INFO_FIELDS}
            self.record_flow(FlowRecord(
                flow=flow, size_bytes=plan.reply_size, sched_s=round(sched_s, 6),
                start_s=round(began - self._t0, 6), fct_us=round(fct_us, 1),
                connect_us=round(connect_us, 1), new_conn=new, retrans=retrans,
                rto_us=info["rto_us"], rtt_us=info["rtt_us"], error=error))
        if conn is not None:
            if error:
                conn.close()
            else:
                self._idle[server].append(conn)
        return retrans, error

    async def _query(self, query: int, servers: list[str], sched_s: float) -> None:
        began = time.perf_counter()
        results = await asyncio.gather(*(self._reply(server, query * len(self.plan.servers) + i,
                                                     sched_s)
                                         for i, server in enumerate(servers)))
        errors = [e for _, e in results if e]
        self.record_query(QueryRecord(
            query=query, fanin=len(servers), reply_bytes=self.plan.reply_size,
            sched_s=round(sched_s, 6), start_s=round(began - self._t0, 6),
            qct_us=round((time.perf_counter() - began) * 1e6, 1),
            retrans=sum(r for r, _ in results), replies=len(servers) - len(errors),
            error=errors[0] if errors else ""))

    async def run(self) -> None:
        """Run every query of the plan."""
        plan = self.plan
        rng = random.Random(plan.seed)
        fanin = plan.fanin or len(plan.servers)
        self._t0 = time.perf_counter()
        tasks: set[asyncio.Task] = set()
        at = 0.0
        for query in range(plan.queries):
            servers = rng.sample(plan.servers, fanin)
            if plan.rate_qps <= 0:
                await self._query(query, servers, time.perf_counter() - self._t0)
                continue
            at += rng.expovariate(plan.rate_qps)
            delay = self._t0 + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(self._query(query, servers, at))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)
        for conns in self._idle.values():
            for conn in conns:
                conn.close()


class CsvRecorder:
    """Appends flow records to a CSV file, flushed row by row."""

    def __init__(self, path: Path, columns: list[str] = COLUMNS) -> None:
        self._handle = path.open("w", newline="")
        self._writer = csv.DictWriter(self._handle, fieldnames=columns)
        self._writer.writeheader()
        self.count = 0
        self.errors = 0

    def __call__(self, record: FlowRecord | QueryRecord) -> None:
        self._writer.writerow(asdict(record))
        self._handle.flush()
        self.count += 1
        self.errors += bool(record.error)

    def close(self) -> None:
        self._handle.close()


def freeze_startup() -> None:
    """Leave the interpreter's startup objects (modules, classes) out of every later garbage
    collection: a full collection walking them stopped the server for 6.3 ms once in 16,000
    flows on loopback (2.1 ms with them frozen), and that flow's FCT carries the pause."""
    gc.collect()
    gc.freeze()


def offered_rate(load: float, link_mbps: float, mean_bytes: float) -> float:
    """Poisson arrival rate (flows/s) that offers `load` x the link rate."""
    return load * link_mbps * 1e6 / (8 * mean_bytes)


# -------------------------------------------------------------------------------------- CLI


def _size_source(args: argparse.Namespace) -> tuple[Callable[[random.Random], int], float]:
    if args.cdf:
        dist = load_cdf(args.cdf)
        return (lambda rng: dist.sample(rng, MIN_SIZE)), dist.mean()
    return (lambda rng: args.size), float(args.size)


def _client(args: argparse.Namespace) -> int:
    sizes, mean = _size_source(args)
    rate = args.rate
    if args.load:
        rate = offered_rate(args.load, args.link_mbps, mean)
    plan = ClientPlan(args.server, args.port, args.flows, sizes, rate, args.persistent,
                      args.congestion, args.seed, timeout_s=args.timeout,
                      gap_s=args.gap_ms / 1000)
    recorder = CsvRecorder(Path(args.out))
    began = time.perf_counter()
    interrupted = False
    try:
        freeze_startup()
        asyncio.run(FctClient(plan, recorder).run())
    except KeyboardInterrupt:
        interrupted = True  # Ctrl-C or SIGINT from a harness: keep what was recorded
    finally:
        recorder.close()
        print(json.dumps({"flows": recorder.count, "errors": recorder.errors,
                          "rate_per_s": rate, "interrupted": interrupted,
                          "seconds": round(time.perf_counter() - began, 3)}))
    return 0


def _incast(args: argparse.Namespace) -> int:
    plan = IncastPlan(args.servers.split(","), args.port, args.queries, args.reply_size,
                      args.fanin, args.rate, args.congestion, args.seed, args.timeout)
    queries = CsvRecorder(Path(args.out), QUERY_COLUMNS)
    flows = CsvRecorder(Path(args.flows_out)) if args.flows_out else None
    began = time.perf_counter()
    interrupted = False
    try:
        freeze_startup()
        asyncio.run(IncastClient(plan, queries, flows).run())
    except KeyboardInterrupt:
        interrupted = True  # keep what was recorded
    finally:
        queries.close()
        if flows is not None:
            flows.close()
        print(json.dumps({"queries": queries.count, "errors": queries.errors,
                          "interrupted": interrupted,
                          "seconds": round(time.perf_counter() - began, 3)}))
    return 0


def _server(args: argparse.Namespace) -> int:
    def ready(port: int) -> None:
        print(json.dumps({"listening": port}), flush=True)

    try:
        freeze_startup()
        asyncio.run(serve(args.bind, args.port, args.congestion, ready))
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgkit.workloads.fct",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="role", required=True)
    server = sub.add_parser("server", help="answer flows")
    server.add_argument("--bind", default="0.0.0.0")
    server.add_argument("--port", type=int, default=5300)
    server.add_argument("--congestion", help="TCP congestion control of the answers")
    client = sub.add_parser("client", help="run flows and record their completion times")
    client.add_argument("--server", required=True)
    client.add_argument("--port", type=int, default=5300)
    client.add_argument("--flows", type=int, default=1000)
    size = client.add_mutually_exclusive_group()
    size.add_argument("--size", type=int, default=143, help="fixed flow size in bytes")
    size.add_argument("--cdf", help="flow sizes drawn from workloads/cdf/NAME.txt (or a path)")
    client.add_argument("--rate", type=float, default=0.0,
                        help="open loop: Poisson arrivals per second (0: closed loop)")
    client.add_argument("--load", type=float, help="open loop: offered load (0..1) of --link-mbps")
    client.add_argument("--link-mbps", type=float, default=10.0)
    client.add_argument("--persistent", action="store_true", help="reuse connections")
    client.add_argument("--gap-ms", type=float, default=0.0,
                        help="closed loop: idle ms between flows (after the previous flow's "
                             "connection has closed)")
    client.add_argument("--congestion", help="TCP congestion control (cubic, bbr, dctcp, ...)")
    client.add_argument("--seed", type=int, default=1)
    client.add_argument("--timeout", type=float, default=30.0, help="seconds per flow at most")
    client.add_argument("--out", required=True, help="CSV file of per-flow records")
    incast = sub.add_parser("incast", help="run queries that fan out to many servers")
    incast.add_argument("--servers", required=True,
                        help="comma-separated server addresses (ADDRESS or ADDRESS:PORT)")
    incast.add_argument("--port", type=int, default=5300)
    incast.add_argument("--queries", type=int, default=100)
    incast.add_argument("--reply-size", type=int, default=20_000,
                        help="bytes each server sends back (at least 8)")
    incast.add_argument("--fanin", type=int, default=0, help="servers per query (0: all)")
    incast.add_argument("--rate", type=float, default=0.0,
                        help="Poisson queries per second (0: closed loop)")
    incast.add_argument("--congestion", help="TCP congestion control")
    incast.add_argument("--seed", type=int, default=1)
    incast.add_argument("--timeout", type=float, default=30.0, help="seconds per reply at most")
    incast.add_argument("--out", required=True, help="CSV file of per-query records")
    incast.add_argument("--flows-out", help="CSV file of per-reply records")
    args = parser.parse_args(argv)
    if args.role == "incast":
        if args.reply_size < MIN_SIZE:
            parser.error(f"--reply-size must be at least {MIN_SIZE}")
        if not 0 <= args.fanin <= len(args.servers.split(",")):
            parser.error("--fanin must be between 0 and the number of servers")
        return _incast(args)
    return _client(args) if args.role == "client" else _server(args)


if __name__ == "__main__":
    sys.exit(main())
