"""`lgkit bench-engines`: per-packet pipeline cost (ingress + egress passes, no I/O) of the
benchmark router and of p4/linkguardian.p4 on the python and the native engine, measured in
the same run (min/median/max of rounds) with the ratio of the medians; and ctypes' cost of
one call into the native engine."""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lgkit.sw.exec.native.engine import NativeEngine
from lgkit.sw.exec.native.layout import Unsupported
from lgkit.sw.exec.native.select import native_engine
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.tools.bench_pipeline import ROUTER_P4, build_router, router_packet

LG_P4 = Path(__file__).resolve().parents[3] / "p4" / "linkguardian.p4"
MAX_PACKETS = 1_000_000
Run = Callable[[int, bytes, int], bytes | None]


def python_run(pl: Pipeline) -> Run:
    """One packet through the Python engine's passes: the last transmitted bytes, if any."""
    ingress, egress = pl.ingress, pl.egress

    def run(port: int, data: bytes, now: int) -> bytes | None:
        sent = None
        for job in ingress(port, data, now).egress:
            out = egress(job, now).out
            if out is not None:
                sent = out[1]
        return sent

    return run


def native_run(engine: NativeEngine) -> Run:
    """One packet through the native engine's passes (tables copied once, before)."""
    engine.refresh()
    both = engine.run

    def run(port: int, data: bytes, now: int) -> bytes | None:
        return both(port, data, now, now)[1]

    return run


def rounds_us(run: Run, packets: list[bytes], count: int, rounds: int) -> list[float]:
    """Microseconds per packet of each round of `count` packets."""
    for i, data in enumerate(packets[:64]):  # warm-up
        run(1, data, i)
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        for i in range(count):
            run(1, packets[i & 255], i)
        out.append((time.perf_counter() - start) * 1e6 / count)
    return out


def call_overhead_us(engine: NativeEngine, count: int, rounds: int) -> list[float]:
    """Microseconds of one ctypes call of an empty native function with ingress's arguments."""
    nop = engine.lib.lg_nop
    nop.argtypes = engine.lib.lg_ingress.argtypes
    nop.restype = ctypes.c_long
    ctx, data = engine.ctx, b"x" * 64
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        for i in range(count):
            nop(ctx, 1, data, 64, i)
        out.append((time.perf_counter() - start) * 1e6 / count)
    return out


def spread(values: list[float]) -> str:
    return (f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f} us "
            "(min/median/max)")


def compare(name: str, pl: Pipeline, program: object, count: int, rounds: int) -> int:
    """Print one program's costs on both engines; 1 when they transmit different bytes."""
    packets = [router_packet(0x0A000000 | ((i % 300) << 8) | 7, 64) for i in range(256)]
    print(f"{name}: us per packet, {rounds} rounds of {count} packets (64 B UDP payload)")
    py = python_run(pl)
    py_us = rounds_us(py, packets, count, rounds)
    print(f"  python: {spread(py_us)}")
    try:
        engine = native_engine(pl, program.ir)  # type: ignore[attr-defined]
    except Unsupported as exc:
        print(f"  native: unsupported {exc.what} (the python engine runs it)")
        return 0
    nat = native_run(engine)
    if [py(1, p, 0) for p in packets] != [nat(1, p, 0) for p in packets]:
        print("  native: transmits other bytes than python: not measured", file=sys.stderr)
        return 1
    nat_us = rounds_us(nat, packets, count, rounds)
    ratio = statistics.median(py_us) / statistics.median(nat_us)
    print(f"  native: {spread(nat_us)}; python/native {ratio:.1f}x (medians); same output bytes")
    over = call_overhead_us(engine, count, rounds)
    print(f"  ctypes: one empty call {spread(over)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.packets <= MAX_PACKETS or not 1 <= args.rounds <= 100:
        print(f"lgkit: error: --packets must be in 1..{MAX_PACKETS:,} and --rounds in 1..100",
              file=sys.stderr)
        return 1
    from lgkit.sw.lang.frontend.compiler import compile_file, compile_source

    router = compile_source(ROUTER_P4, "bench_router.p4")
    status = compare("router (bench-pipeline's IPv4 router, 256+1 LPM and 64 exact entries)",
                     build_router(), router, args.packets, args.rounds)
    lg = compile_file(str(LG_P4))
    status |= compare("linkguardian (p4/linkguardian.p4, no entries: plain IPv4 frames)",
                      Pipeline.load(lg, engine="python"), lg, args.packets, args.rounds)
    return status


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench-engines", help="per-packet pipeline cost on the python and native engines")
    p.add_argument("--packets", type=int, default=20_000, help="packets per round")
    p.add_argument("--rounds", type=int, default=5, help="rounds (min/median/max of them)")
    p.set_defaults(func=_run)
