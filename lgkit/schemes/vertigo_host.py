"""Vertigo's host agent: marking on send and ordering on receive for one host, with iptables
NFQUEUE rules and a user-space loop (run it inside the host's network namespace).

    python -m lgkit.schemes.vertigo_host --dev h1-eth0 --framed-ports 5300,5301 \
        --framed-source-ports 5301 --tau-us 360 --stats vertigo-h1.json

Outgoing TCP (SYN, FIN, RST and data; pure ACKs pass by) leaves through queue 0 (mangle
POSTROUTING): the marker adds the flowinfo option. Incoming TCP that carries the option enters
through queue 1 (raw PREROUTING, before TCP): the orderer holds early packets' verdicts until
the packets before them arrive or tau passes. A bpf match in each rule keeps the packets the
agent would pass unchanged in the kernel (the agent's CPU is what a loaded machine lacks). The
rules use --queue-bypass, so traffic flows unmarked and unordered when the agent is not running.
Stop it with SIGTERM or SIGINT: it releases what it holds, removes its rules and writes its
counters.
The host's MTU (or its routes' advertised MSS) must leave 12 bytes for the option.
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from lgkit.schemes import flowinfo, vertigo_cagent
from lgkit.schemes.nfqueue import NfQueue
from lgkit.schemes.vertigo_marker import Marker
from lgkit.schemes.vertigo_orderer import FlowKey, Orderer

MARK_QUEUE, ORDER_QUEUE = 0, 1
STATS_EVERY_S = 1.0
MARK_FILTER = ("28,48 0 0 0,84 0 0 240,21 0 24 64,48 0 0 9,21 0 5 6,40 0 0 6,69 3 0 8191,"
               "177 0 0 0,80 0 0 13,69 16 0 7,40 0 0 2,2 0 0 6,48 0 0 0,84 0 0 15,100 0 0 2,"
               "2 0 0 10,177 0 0 0,80 0 0 12,84 0 0 240,116 0 0 2,7 0 0 14,96 0 0 10,"
               "12 0 0 0,7 0 0 14,96 0 0 6,45 0 1 0,6 0 0 65535,6 0 0 0")
"""Classic BPF for iptables' bpf match, the packets the marker needs: `tcp[tcpflags] &
(tcp-syn|tcp-fin|tcp-rst) != 0 or ip[2:2] > ((ip[0]&0xf)<<2) + ((tcp[12]&0xf0)>>2)` (a SYN, FIN
or RST, or TCP data), compiled with `tcpdump -ddd` on a raw-IP capture (nfbpf_compile RAW).
Pure ACKs, about a third of a host's packets, leave without a trip through user space."""
ORDER_FILTER = "8,48 0 0 0,84 0 0 240,21 0 4 64,48 0 0 0,84 0 0 15,37 0 1 5,6 0 0 65535,6 0 0 0"
"""The packets the orderer needs: `ip[0]&0xf > 5` (IPv4 with options: flowinfo), compiled the
same way. Packets without flowinfo (ACKs, SYNs) would be passed at once; they now go up to TCP
without waiting for the agent."""


Rule = tuple[str, str, list[str]]
"(table, chain, match and target arguments)"


def rules(dev: str, mark: bool, order: bool) -> list[Rule]:
    """The iptables rules the agent installs."""
    found = []
    target = ["-j", "NFQUEUE", "--queue-bypass", "--queue-num"]
    if mark:
        found.append(("mangle", "POSTROUTING", ["-o", dev, "-p", "tcp", "-m", "bpf",
                                                "--bytecode", MARK_FILTER, *target,
                                                str(MARK_QUEUE)]))
    if order:
        found.append(("raw", "PREROUTING", ["-i", dev, "-p", "tcp", "-m", "bpf", "--bytecode",
                                            ORDER_FILTER, *target, str(ORDER_QUEUE)]))
    return found


def iptables(action: str, rule: Rule, check: bool = True) -> None:
    """Add (-A) or delete (-D) one rule."""
    table, chain, args = rule
    subprocess.run(["iptables", "-t", table, action, chain, *args], check=check,
                   capture_output=True)


@contextmanager
def installed_rules(dev: str, mark: bool, order: bool) -> Iterator[None]:
    """The agent's rules while the block runs (CalledProcessError if one cannot be added)."""
    installed: list[Rule] = []
    try:
        for rule in rules(dev, mark, order):
            iptables("-A", rule)
            installed.append(rule)
        yield
    finally:
        for rule in installed:
            iptables("-D", rule, check=False)


def flow_key(ip: bytes, info: flowinfo.FlowInfo) -> tuple[FlowKey, int]:
    """The flow a marked IPv4/TCP packet belongs to, and its TCP payload length."""
    header = (ip[0] & 0x0F) * 4
    total = struct.unpack_from("!H", ip, 2)[0]
    sport, dport = struct.unpack_from("!HH", ip, header)
    payload = total - header - (ip[header + 12] >> 4) * 4
    return (ip[12:16], sport, ip[16:20], dport, info.flow_id), payload


class Agent:
    """The marking and ordering loop of one host."""

    def __init__(self, marker: Marker | None, tau_us: float, order: bool) -> None:
        self.marker = marker
        mark = marker is not None
        self.orderer = Orderer(tau_us) if order else None
        self.mark_queue = NfQueue(MARK_QUEUE) if mark else None
        self.order_queue = NfQueue(ORDER_QUEUE) if order else None
        self.stopping = False
        self.verdict_us = [0.0, 0.0]
        "Marking: total and longest time from reading a packet to its verdict (us)."

    def queues(self) -> list[NfQueue]:
        return [q for q in (self.mark_queue, self.order_queue) if q is not None]

    def run(self, stats_path: Path | None) -> None:
        """Serve until stop() is called."""
        next_stats = time.monotonic()
        while not self.stopping:
            select.select(self.queues(), [], [], self._wait_s())
            self._mark()
            self._order()
            if stats_path is not None and time.monotonic() >= next_stats:
                self.write_stats(stats_path)
                next_stats = time.monotonic() + STATS_EVERY_S

    def _wait_s(self) -> float:
        deadline = self.orderer.next_deadline() if self.orderer else None
        if deadline is None:
            return 0.2
        return min(0.2, max(0.0, (deadline - time.monotonic() * 1e6) / 1e6))

    def _mark(self) -> None:
        if self.mark_queue is None or self.marker is None:
            return
        for packet in self.mark_queue.packets():
            start = time.perf_counter()
            marked = self.marker.mark(packet.payload)
            self.mark_queue.verdict(packet.packet_id,
                                    payload=marked if marked is not packet.payload else None)
            took = (time.perf_counter() - start) * 1e6
            self.verdict_us = [self.verdict_us[0] + took, max(self.verdict_us[1], took)]

    def _order(self) -> None:
        if self.order_queue is None or self.orderer is None:
            return
        for packet in self.order_queue.packets():
            info = flowinfo.read(packet.payload)
            key, length = (flow_key(packet.payload, info) if info else (None, 0))
            for handle in self.orderer.arrive(packet.packet_id, key, info, length,
                                              time.monotonic() * 1e6):
                self.order_queue.verdict(handle)
        for handle in self.orderer.expire(time.monotonic() * 1e6):
            self.order_queue.verdict(handle)

    def stop(self, *_: object) -> None:
        self.stopping = True

    def close(self) -> None:
        """Release what is held and unbind."""
        if self.orderer is not None and self.order_queue is not None:
            for handle in self.orderer.flush():
                self.order_queue.verdict(handle)
        for queue in self.queues():
            queue.close()

    def write_stats(self, path: Path) -> None:
        """The counters as JSON (written whole, then renamed)."""
        stats = {"marker": asdict(self.marker.stats) if self.marker else None,
                 "orderer": asdict(self.orderer.stats) if self.orderer else None,
                 "overflows": sum(q.overflows for q in self.queues()),
                 "received": {q.queue_num: q.received for q in self.queues()},
                 "mark_verdict_us": {"total": round(self.verdict_us[0]),
                                     "max": round(self.verdict_us[1], 1)},
                 "engine": "python"}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats))
        tmp.replace(path)


def _ports(text: str) -> set[int]:
    return {int(p) for p in text.split(",") if p}


def c_agent(engine: str) -> Path | None:
    """The C agent's binary for `engine` (auto: if it builds, saying so in one line if not)."""
    if engine == "python":
        return None
    path, why = vertigo_cagent.build()
    if path is None:
        if engine == "c":
            raise OSError(f"the C agent cannot be built: {why}")
        print(f"lgkit: vertigo host agent: C agent unavailable ({why}); running the Python "
              "agent", file=sys.stderr, flush=True)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgkit.schemes.vertigo_host",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev", required=True, help="the host's interface")
    parser.add_argument("--framed-ports", default="", help="comma-separated TCP ports: what "
                        "this host sends to them is length-prefixed messages (flow sizes)")
    parser.add_argument("--framed-source-ports", default="", help="comma-separated TCP ports: "
                        "what this host sends from them is length-prefixed messages")
    parser.add_argument("--tau-us", type=float, default=360.0, help="reordering timeout")
    parser.add_argument("--no-mark", action="store_true", help="do not mark outgoing packets")
    parser.add_argument("--no-order", action="store_true", help="do not order incoming packets")
    parser.add_argument("--stats", type=Path, help="JSON file of the agent's counters")
    parser.add_argument("--engine", choices=("auto", "c", "python"), default="auto",
                        help="the per-packet work in C (built on first use) or in Python "
                             "(auto: C if it builds)")
    args = parser.parse_args(argv)
    mark, order = not args.no_mark, not args.no_order
    try:
        binary = c_agent(args.engine)
    except OSError as exc:
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    if binary is not None:
        return serve_c(binary, args, mark, order)
    marker = Marker(_ports(args.framed_ports), _ports(args.framed_source_ports)) if mark else None
    agent = Agent(marker, args.tau_us, order)
    signal.signal(signal.SIGTERM, agent.stop)
    signal.signal(signal.SIGINT, agent.stop)
    try:
        with installed_rules(args.dev, mark, order):
            print(json.dumps({"vertigo_host": "ready", "dev": args.dev}), flush=True)
            agent.run(args.stats)
    except subprocess.CalledProcessError as exc:
        print(f"lgkit: error: iptables: {exc.stderr.decode().strip()}", file=sys.stderr)
        return 1
    finally:
        agent.close()
        if args.stats is not None:
            agent.write_stats(args.stats)
    return 0


def serve_c(binary: Path, args: argparse.Namespace, mark: bool, order: bool) -> int:
    """The C agent binds the queues, then the rules go in; at SIGTERM or SIGINT the rules go,
    then the agent (it releases what it holds and writes its counters)."""
    argv = ["--framed-ports", args.framed_ports, "--framed-source-ports",
            args.framed_source_ports, "--tau-us", str(args.tau_us)]
    argv += ["--stats", str(args.stats)] if args.stats is not None else []
    argv += [flag for flag, off in (("--no-mark", not mark), ("--no-order", not order)) if off]
    waiter = Agent(None, 0.0, False)
    signal.signal(signal.SIGTERM, waiter.stop)
    signal.signal(signal.SIGINT, waiter.stop)
    child = subprocess.Popen([str(binary), *argv], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        if "ready" not in child.stdout.readline():
            return child.wait() or 1
        with installed_rules(args.dev, mark, order):
            print(json.dumps({"vertigo_host": "ready", "dev": args.dev, "engine": "c"}),
                  flush=True)
            while not waiter.stopping and child.poll() is None:
                time.sleep(0.2)
        return 0 if child.poll() is None else 1
    except subprocess.CalledProcessError as exc:
        print(f"lgkit: error: iptables: {exc.stderr.decode().strip()}", file=sys.stderr)
        return 1
    finally:
        if child.poll() is None:
            child.terminate()
        child.wait()


if __name__ == "__main__":
    sys.exit(main())
