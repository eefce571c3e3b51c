"""The native engine: the router on both engines packet by packet (tables changed between
packets), its build cache, and the one-line fallback to the Python engine."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_expr_differential import SPEC_SEEDS as EXPR_SEEDS
from test_interp_helpers import PRELUDE
from test_interp_loop_bound import PROGRAM as LOOP_PROGRAM
from test_interp_loop_bound import frame
from testpaths import TESTS
from tools.exprdiff import check_seed

from lgkit.cli import main
from lgkit.sw.exec.native import select
from lgkit.sw.exec.native.build import CACHE_ENV, compiler, shared_library
from lgkit.sw.exec.native.select import NativeUntimed, native_engine, use_engine
from lgkit.sw.exec.pipeline import ENGINE_ENV, Exact, Lpm, Pipeline, TableEntry
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.watchdog import Watchdog
from lgkit.sw.tools.bench_pipeline import ROUTER_P4, router_packet
from lgkit.sw.tools.stf import StfRunner, parse_stf

REGISTERS_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> idx; bit<8> val; }
struct headers { h_t h; }
struct meta_t { bit<8> got; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) regs;
    counter(4, CounterType.packets_and_bytes) ctr;
    apply {
        regs.read(m.got, (bit<32>)hdr.h.idx);
        regs.write((bit<32>)hdr.h.idx, hdr.h.val);
        ctr.count((bit<32>)hdr.h.idx);
        hdr.h.val = m.got;
        sm.egress_spec = 2;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
REGISTERS_STF = """
register_write I.regs 2 42
packet 1 0205
expect 2 022A
packet 1 0105
packet 1 0107
expect 2 0100
expect 2 0105
packet 1 0909
expect 2 0900
register_read I.regs 1
counter_read I.ctr 1
"""
STACKS_P4 = """#include <core.p4>
#include <v1model.p4>
header tag_t { bit<7> v; bit<1> bos; }
header eth_t { bit<8> kind; }
struct headers { eth_t eth; tag_t[3] tags; }
struct meta_t { bit<32> last; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition tags; }
    state tags { pk.extract(hdr.tags.next);
                 transition select(pk.lookahead<bit<8>>()[0:0]) { 1: accept; default: more; } }
    state more { transition select(hdr.tags[0].bos) { 1: accept; default: tags; } }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.last = hdr.tags.lastIndex;
        if (hdr.eth.kind == 1) {
            hdr.tags.push_front(1); hdr.tags[0].setValid(); hdr.tags[0].v = 99;
        }
        else if (hdr.eth.kind == 2) { hdr.tags.pop_front(2); }
        hdr.eth.kind = (bit<8>)m.last;
        sm.egress_spec = 2;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
STACKS_STF = """
packet 1 01 02 04 06 07 AA
expect 2 02C6020407AA
packet 1 02 02 04 06 07 AA
expect 2 020607AA
packet 1 03 03 AA
expect 2 0003AA
packet 1 01 02 04 06 08 0A 0C
expect 2 02C60204080A0C
packet 1 02 02
expect 2 00
"""
RUNTIME_INDEX_P4 = """#include <core.p4>
#include <v1model.p4>
header tag_t { bit<8> v; }
header eth_t { bit<8> i; bit<8> j; bit<8> k; }
struct headers { eth_t eth; tag_t[2] tags; }
struct meta_t { }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition select(hdr.eth.i) { 9: stack; default: at; } }
    state stack { pk.extract(hdr.tags.next); transition accept; }
    state at { pk.extract(hdr.tags[hdr.eth.i]); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (hdr.eth.j < 2 && hdr.tags[hdr.eth.j].isValid()) {
            hdr.tags[hdr.eth.j].v = hdr.tags[hdr.eth.j].v + 1;
        }
        hdr.tags[hdr.eth.k].v = 7;
        hdr.eth.j = 0xEE;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { hdr.tags.last.v = hdr.tags.last.v | 0x10; hdr.eth.i = 0xDD; }
}
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
RUNTIME_INDEX_STF = """
packet 1 09 00 00 30 AA
expect 2 DD EE 00 17 AA
packet 1 01 01 01 30 AA
expect 2 01 EE 01 07 AA
packet 1 00 05 05 30 AA
expect 2 00 05 05 30 AA
packet 1 05 05 00 30 AA
expect 2 05 EE 00 30 AA
"""
DIGESTING_P4 = ROUTER_P4.replace("l2_check.apply();",
                                 "l2_check.apply(); digest<bit<32>>(1, hdr.ipv4.srcAddr);")
HASHES_P4 = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<8> c; }
header o_t { bit<8> x; }
struct headers { h_t h; o_t o; }
struct meta_t { bit<32> v; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition select(hdr.h.a) { 1: opt; default: accept; } }
    state opt { pk.extract(hdr.o); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
bit<8> first(in h_t h) { return h.a + h.c; }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(32) res;
    apply {
        bit<32> at = (bit<32>)hdr.h.a * 16;
        hash(m.v, HashAlgorithm.crc16, 32w0, {hdr.h.b, hdr.o.x, hdr.h.c}, 32w0); res.write(at, m.v);
        hash(m.v, HashAlgorithm.crc16, 32w0, {hdr.h.b, hdr.o.x, hdr.h.c}, 32w65536);
        res.write(at + 1, m.v);
        hash(m.v, HashAlgorithm.crc32, 32w7, {hdr.h, hdr.o}, 32w1000); res.write(at + 2, m.v);
        hash(m.v, HashAlgorithm.xor16, 32w0, {hdr.h.a, hdr.o, 4w9}, 32w1 << 20);
        res.write(at + 3, m.v);
        hash(m.v, HashAlgorithm.identity, 32w0, {hdr.h.c, hdr.h.b}, 32w0xFFFFFFFF);
        res.write(at + 4, m.v);
        hash(m.v, HashAlgorithm.csum16, 32w0, {hdr.h.b, hdr.o.x}, 32w65536);
        res.write(at + 5, m.v);
        hash(m.v, HashAlgorithm.random, 32w3, {hdr.h.b}, 32w1 << 30); res.write(at + 6, m.v);
        random(m.v, 32w10, 32w1 << 31); res.write(at + 7, m.v);
        m.v = 77; random(m.v, 32w5, 32w4); res.write(at + 8, m.v);
        res.write(at + 9, (bit<32>)first(hdr.h));
        mark_to_drop(sm);
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
NESTED_P4 = (REGISTERS_P4[:REGISTERS_P4.index("control I(")].replace("idx", "a").replace("val", "b")
             + """control Add(inout bit<8> x) {
    action add(bit<8> d) { x = x + d; }
    table t { key = { x: exact; } actions = { add; NoAction; } default_action = add(1); }
    apply { t.apply(); }
}
control Twice(inout bit<8> x) { Add() inner; apply { inner.apply(x); inner.apply(x); } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    Twice() first;
    Twice() second;
    apply { first.apply(hdr.h.a); second.apply(hdr.h.b); sm.egress_spec = 2; }
}
"""
             + REGISTERS_P4[REGISTERS_P4.index("control E("):])
NESTED_STF = """
setdefault I.second.inner.t I.second.inner.add(d:16)
packet 1 0000
expect 2 0220
"""
HASHES_STF = """
packet 1 00 1234 56
packet 1 01 abcd ef 99
"""


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def router(optimise: bool = True) -> tuple[Pipeline, Pipeline]:
    """The benchmark router loaded twice: the second runs its untimed passes natively."""
    compiled = compile_source(ROUTER_P4, "router.p4")
    python = Pipeline.load(compiled, optimise=optimise, engine="python")
    native = Pipeline.load(compiled, optimise=optimise, engine="python")
    assert use_engine(native, compiled.ir, "native") is not None
    return python, native


def test_router_packets_are_the_same_on_both_engines() -> None:
    rng = random.Random(7)
    python, native = router()
    packets = 0
    for step in range(400):
        if step % 40 == 0:  # change the tables between packets: the engine follows
            route = TableEntry([Lpm(0x0A000000 | (step << 8) | rng.randrange(256),
                                    16 + step // 40)], "MyIngress.ipv4_forward",
                               [rng.randrange(1 << 48), rng.randrange(1, 9)])
            mac = TableEntry([Exact(rng.randrange(1 << 48))], "MyIngress.set_l2", [step % 8])
            for pl in (python, native):
                pl.tables["MyIngress.ipv4_lpm"].insert(route)
                pl.tables["MyIngress.l2_check"].insert(mac)
        data = bytearray(router_packet(0x0A000000 | rng.randrange(1 << 15), rng.randrange(200)))
        data[22] = rng.choice((0, 1, 2, 64))  # TTL: dropped at 0 and 1
        if rng.random() < 0.1:
            data[12:14] = b"\x86\xdd"  # not IPv4: dropped
        if rng.random() < 0.1:
            data = data[: rng.randrange(20, 40)]  # too short: the parser stops
        port = rng.randrange(1, 5)
        expected = python.run_untimed(port, bytes(data))
        assert native.run_untimed(port, bytes(data)) == expected, step
        packets += len(expected)
    assert 100 < packets < 400  # forwarded and dropped both happened
    assert python.untimed_clock.now_ns == native.untimed_clock.now_ns  # the same passes ran


def test_the_switch_passes_are_the_same_on_both_engines() -> None:
    """Pipeline.ingress / .egress (what the traffic manager calls), with several packets
    between their ingress and egress passes, served in another order, queue values given."""
    rng = random.Random(3)
    python, native = router()
    for pl in (python, native):
        pl.tables["MyIngress.ipv4_lpm"].insert(TableEntry(
            [Lpm(0x0A000000, 16)], "MyIngress.ipv4_forward", [0xAABBCCDDEEFF, 3]))
    for burst in range(20):
        packets = [router_packet(0x0A000000 | rng.randrange(1 << 17), rng.randrange(100))
                   for _ in range(8)]
        outs = []
        for pl in (python, native):
            jobs = [job for i, data in enumerate(packets)
                    for job in pl.ingress(1 + i % 3, data, burst * 100 + i).egress]
            outs.append([(job.port, job.length, job.priority, job.rid,
                          pl.egress(job, burst * 100 + 50, 2, 1, 7, 9))
                         for job in reversed(jobs)])
        assert outs[0] == outs[1], burst
        assert 0 < len(outs[0]) < 8  # some leave, some (10.1.x.x) are dropped


class Wire:
    """A port backend that records what the switch transmits."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.frames.append(data)


def test_a_switch_forwards_the_same_on_both_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Switch (traffic manager, virtual clock) with LGKIT_ENGINE=native, as
    `lgkit switch --engine native` runs it, against the Python engine."""
    compiled = compile_source(ROUTER_P4, "router.p4")
    rng = random.Random(5)
    packets = [(rng.randrange(1, 4), router_packet(0x0A000000 | rng.randrange(1 << 17), 64))
               for _ in range(200)]
    seen = []
    for engine in ("python", "native"):
        monkeypatch.setenv(ENGINE_ENV, engine)
        pl = Pipeline.load(compiled)
        assert (pl.ingress.__name__ == "ingress_pass") == (engine == "native")
        pl.tables["MyIngress.ipv4_lpm"].insert(TableEntry(
            [Lpm(0x0A000000, 16)], "MyIngress.ipv4_forward", [0x0000000000AA, 2]))
        clock = VirtualClock()
        switch = Switch(clock=clock)
        switch.set_pipeline(pl)
        wires = {port: Wire() for port in range(1, 4)}
        for port, wire in wires.items():
            switch.add_port(port, wire)
        for port, data in packets:
            switch.receive(port, data)
            clock.run_until()
        seen.append({port: wire.frames for port, wire in wires.items()})
    assert seen[0] == seen[1]
    assert 50 < len(seen[0][2]) < 200


def stf_on_both(tmp_path: Path, capsys: pytest.CaptureFixture[str], p4: str, stf: str
                ) -> str:
    """`lgkit stf -v` of a program on both engines: what it printed, the same on both."""
    program, test = tmp_path / "t.p4", tmp_path / "t.stf"
    program.write_text(p4)
    test.write_text(stf)
    outputs = []
    for engine in ("python", "native"):
        assert main(["stf", str(program), str(test), "-v", "--engine", engine]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1]  # the native run printed no fallback line either
    return outputs[1].out


def test_registers_counters_and_their_errors_are_shared(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Control-plane writes reach the native engine, its updates reach the reads, and an
    out-of-range access is logged as the Python engine logs it."""
    monkeypatch.setenv(ENGINE_ENV, "python")  # so that it is restored after `--engine native`
    out = stf_on_both(tmp_path, capsys, REGISTERS_P4, REGISTERS_STF)
    assert "I.regs[1] = 7" in out and "I.ctr[1] = 2 packets, 4 bytes" in out
    assert "error: register I.regs: write index 9 out of range" in out


def test_header_stacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    """extract(next) up to StackOutOfBounds, lookahead up to PacketTooShort, push_front,
    pop_front, lastIndex, emit of a stack, on both engines."""
    monkeypatch.setenv(ENGINE_ENV, "python")
    assert "PASS" in stf_on_both(tmp_path, capsys, STACKS_P4, STACKS_STF)


def test_stack_elements_at_run_time_indices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """extract into, read and write stack[expression] and `.last`; out of bounds the parser
    fails (StackOutOfBounds, the payload after what it extracted) and a control block ends with
    the Python engine's log line; && skips an index it does not evaluate."""
    monkeypatch.setenv(ENGINE_ENV, "python")
    out = stf_on_both(tmp_path, capsys, RUNTIME_INDEX_P4, RUNTIME_INDEX_STF)
    assert "PASS" in out
    assert out.count("header stack index out of bounds in ingress; the block ended") == 1
    assert out.count("header stack index out of bounds in egress; the block ended") == 3


@pytest.mark.slow  # 30 libraries to build
def test_random_expressions_compute_what_the_spec_says_natively(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """tests/sw/test_expr_differential.py's random expression programs (calls with side
    effects among the operands, signed and unsigned widths, casts) on the native engine (those
    with fields wider than 64 bits stay on the Python engine)."""
    monkeypatch.setenv(ENGINE_ENV, "native")
    for seed in EXPR_SEEDS:
        outcome = check_seed(seed, tmp_path, use_bmv2=False)
        assert outcome.kind == "ok", outcome.report
    fallbacks = capsys.readouterr().err.splitlines()
    assert all("wider than 64 bits" in line for line in fallbacks)  # the rest ran natively
    assert len(fallbacks) < len(EXPR_SEEDS) // 2


def test_loops_and_their_bound() -> None:
    """tests/sw/test_interp_loop_bound.py's program on both engines: loops within the bound,
    past it in ingress and in egress (the pass ends, its packet dropped, one line naming the
    loop), the bound changed between packets."""
    compiled = compile_source(PRELUDE + LOOP_PROGRAM, "test.p4")
    seen = []
    for engine in ("python", "native"):
        pl = Pipeline.load(compiled, seed=1, engine="python")
        assert (use_engine(pl, compiled.ir, engine) is not None) == (engine == "native")
        sent = [pl.run_untimed(0, frame(5, 3)), pl.run_untimed(0, frame(0xFFFFFFFF))]
        pl.max_loop_iterations = 20
        sent += [pl.run_untimed(0, frame(0, 4)), pl.run_untimed(0, frame(0, 5)),
                 pl.run_untimed(0, frame(2))]
        seen.append((sent, pl.logs))
    assert seen[0] == seen[1]
    assert [len(s) for s in seen[1][0]] == [1, 0, 1, 0, 1] and len(seen[1][1]) == 2


@pytest.mark.parametrize("optimise", [True, False], ids=["opt", "no-opt"])
def test_hashes_random_and_struct_parameters(optimise: bool) -> None:
    """Every v1model hash algorithm over field lists (an invalid header's fields left out),
    random() and HashAlgorithm.random drawn from the pipeline's generator (the same numbers on
    both engines, seeded alike), a header passed to a function by value."""
    compiled = compile_source(HASHES_P4, "hashes.p4")
    seen = []
    for engine in ("python", "native"):
        pl = Pipeline.load(compiled, seed=5, optimise=optimise, engine="python")
        assert (use_engine(pl, compiled.ir, engine) is not None) == (engine == "native")
        result = StfRunner(pl, build_p4info(compiled.ir), "t.stf").run(parse_stf(HASHES_STF))
        assert result.passed
        seen.append(list(pl.registers["I.res"].values))
    assert seen[0] == seen[1]
    values = seen[1][:10] + seen[1][16:26]
    assert values[8] == values[18] == 77  # lo > hi: unchanged
    assert values[9] == 0x56 and values[19] == 0xF0  # first(): a + c
    assert values[0] == 0 and values[1] == 0xFB36  # max 0: the base; CRC-16/ARC of 12 34 56
    assert len({values[6], values[16]}) == 2  # HashAlgorithm.random: drawn
    assert len({values[7], values[17]}) == 2 and min(values[7], values[17]) >= 10


def test_a_control_instance_inside_two_instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A control that instantiates another, itself instantiated twice: one C function and one
    table per instance (I.first.inner.t, I.second.inner.t)."""
    monkeypatch.setenv(ENGINE_ENV, "python")
    assert "PASS" in stf_on_both(tmp_path, capsys, NESTED_P4, NESTED_STF)


def test_the_build_is_cached_and_no_opt_builds_without_optimisation(cache: Path) -> None:
    router()
    libraries = sorted(cache.glob("*.so"))
    assert len(libraries) == 1
    stamp = libraries[0].stat().st_mtime_ns
    router()
    assert [p.stat().st_mtime_ns for p in cache.glob("*.so")] == [stamp]  # built once
    router(optimise=False)
    assert len(list(cache.glob("*.so"))) == 2  # -O0: another library
    assert not list(cache.glob(".*tmp"))


def test_loads_at_once_build_a_program_once(cache: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds of one source at once on a cold cache (a network's switches loading one
    program) run the C compiler once: the second waits on the lock and takes the library."""
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "cc"
    wrapper.write_text(f'#!/bin/sh\necho run >> {log}\nsleep 0.5\nexec {compiler()} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    with ThreadPoolExecutor(2) as pool:
        built = list(pool.map(lambda _: shared_library("int one(void) { return 1; }\n", True),
                              range(2)))
    assert built[0] == built[1] and built[0].is_file()
    assert log.read_text() == "run\n"
    assert list(cache.glob("*.so")) == [built[0]] and not list(cache.glob(".*tmp"))


def test_an_unsupported_construct_falls_back_with_one_line(capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    compiled = compile_source(DIGESTING_P4, "digesting.p4")
    pl = Pipeline.load(compiled, engine="python")
    assert use_engine(pl, compiled.ir, "native") is None
    err = capsys.readouterr().err
    assert err == "native: unsupported extern digest; using the python engine\n"
    assert pl.run_untimed(1, router_packet(0x0A000107)) == []  # python runs it (no entries)


@pytest.mark.parametrize(("variable", "value", "what"), [
    ("CC", "/nonexistent/cc", "no C compiler (cc)"),
    (CACHE_ENV, "/proc/lgkit-no-cache", "build cache /proc/lgkit-no-cache (No such file or "
                                        "directory)")])
def test_no_c_compiler_or_cache_falls_back_with_one_line(
        variable: str, value: str, what: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv(ENGINE_ENV, "python")  # so that it is restored after `--engine native`
    stf = TESTS / "stf" / "basic.stf"
    code = main(["stf", str(stf.with_suffix(".p4")), str(stf), "--engine", "native"])
    out = capsys.readouterr()
    assert code == 0
    assert out.err == f"native: unsupported {what}; using the python engine\n"
    assert f"PASS {stf}" in out.out


def test_by_default_a_path_without_a_c_compiler_falls_back_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """No cc or gcc on PATH (an empty folder): the default engine says so in one line (once
    for all the loads of a process: a network's switches) and the Python engine runs."""
    monkeypatch.setattr(select, "_SAID", set())
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))  # nothing built before
    stf = TESTS / "stf" / "basic.stf"
    code = main(["stf", str(stf.with_suffix(".p4")), str(stf)])
    out = capsys.readouterr()
    assert code == 0
    assert out.err == "native: unsupported no C compiler (cc); using the python engine\n"
    assert f"PASS {stf}" in out.out
    assert not (tmp_path / "cache").exists()
    compiled = compile_source(ROUTER_P4, "router.p4")
    assert not isinstance(Pipeline.load(compiled).arch, NativeUntimed)
    assert capsys.readouterr().err == ""  # said already


def test_the_native_engine_is_the_default_where_it_builds(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Native by default; a program it does not cover stays on the Python engine silently
    unless native was asked for; `engine="python"` and LGKIT_ENGINE=python choose the
    reference."""
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    compiled = compile_source(ROUTER_P4, "router.p4")
    assert isinstance(Pipeline.load(compiled).arch, NativeUntimed)
    assert not isinstance(Pipeline.load(compiled, engine="python").arch, NativeUntimed)
    digesting = compile_source(DIGESTING_P4, "digesting.p4")
    assert not isinstance(Pipeline.load(digesting).arch, NativeUntimed)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(ENGINE_ENV, "python")
    assert not isinstance(Pipeline.load(compiled).arch, NativeUntimed)
    pl = Pipeline.load(compiled)
    assert use_engine(pl, compiled.ir, "python") is None
    assert native_engine(pl, compiled.ir).program.tables  # native builds when asked
    monkeypatch.setenv(ENGINE_ENV, "native")
    assert not isinstance(Pipeline.load(digesting).arch, NativeUntimed)
    assert capsys.readouterr().err == "native: unsupported extern digest; using the python engine\n"


def test_the_watchdog_stops_a_native_pass_spinning_in_a_loop() -> None:
    """A 4e9-iteration loop in C (hours in the Python engine, seconds here) is ended by the
    watchdog within its budget, dropped without the loop bound's log line, and the next pass
    runs as usual (the stop request withdrawn)."""
    compiled = compile_file(str(TESTS / "p4" / "reliability" / "slow_pass.p4"))
    pl = Pipeline.load(compiled, engine="python")
    pl.max_loop_iterations = 1 << 62  # the watchdog, not the loop bound, ends the pass
    native = native_engine(pl, compiled.ir)
    dog = Watchdog(0.05)
    dog.start()
    try:
        started = time.thread_time()
        assert dog.run(native.ingress_pass, 1, bytes([1, 2]) + bytes(60), 0) is None
        assert dog.timeouts == 1
        assert time.thread_time() - started < 1.0  # CPU time: the loop did not run on
        assert pl.logs == []
        result = dog.run(native.ingress_pass, 1, bytes([0, 2]) + bytes(60), 1)
        assert [job.port for job in result.egress] == [2]
    finally:
        dog.stop()
