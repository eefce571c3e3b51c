"""The traffic manager in C (tm_c.py, the native port loop's and the virtual-time loop's) against
the Python TrafficManager (tm.py, the reference) on a virtual clock: the same jobs enqueued at
the same times give the same departures (time, queue values) and the same tail drops, for
shaped ports with bursts, framing and minimum frames, byte-capped queues, strict priorities,
queue packet rates, clone lanes and PFC pause/resume frames; every time an explicit now_ns."""

from __future__ import annotations

import ctypes
import random
from collections import Counter
from typing import Any

import pytest

from lgkit.sw.exec.jobs import EgressJob
from lgkit.sw.exec.native.build import compiler, shared_library
from lgkit.sw.exec.native.jobs_c import JOBS
from lgkit.sw.exec.native.tm_c import TM
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.tm import TrafficManager

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler (cc)")

HARNESS = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t u64;
""" + JOBS + TM + r"""
/* A traffic manager whose egress pass records each departure: (now, port, prio, length,
   enq_depth, deq_depth); a job of length 0 is one egress drops. */
typedef struct { tm_t tm; int status; u64 full, bad; u64 deps[6 * 8192]; int ndeps; } tmt_t;
static uint32_t tm_egress(tm_t *tm, job_t *j, u64 now, u64 enq_depth, u64 deq_depth) {
    tmt_t *x = tm->owner;
    if (x->ndeps < 8192) {
        u64 *d = x->deps + 6 * x->ndeps++;
        d[0] = now; d[1] = j->port; d[2] = j->prio; d[3] = j->length; d[4] = enq_depth;
        d[5] = deq_depth;
    }
    return (uint32_t)j->length;
}
static void tm_timer(tm_t *tm, port_t *st, u64 t) { (void)tm; (void)st; (void)t; }
static u64 qdrops[TM_PORTS * TM_PRIOS];
tmt_t *tmt_new(uint32_t nprio, u64 late_ns) {
    tmt_t *x = calloc(1, sizeof *x);
    tm_init(&x->tm, nprio, &x->status, &x->full, &x->bad);
    x->tm.owner = x; x->tm.late_ns = late_ns; x->tm.qdrops = qdrops;
    memset(qdrops, 0, sizeof qdrops);
    return x;
}
void tmt_rate(tmt_t *x, uint32_t port, int lane, u64 rate, u64 burst, u64 framing, u64 minf) {
    tm_set_rate(lane ? tm_lane(&x->tm, port) : tm_port(&x->tm, port), rate, burst, framing,
                minf);
}
void tmt_queue(tmt_t *x, uint32_t port, int lane, uint32_t prio, uint32_t depth, u64 bytes,
               u64 period_ns) {
    port_t *st = lane ? tm_lane(&x->tm, port) : tm_port(&x->tm, port);
    st->q[prio].depth = depth; st->q[prio].depth_bytes = bytes; st->q[prio].period_ns = period_ns;
}
void tmt_enqueue(tmt_t *x, uint32_t port, uint32_t prio, uint32_t len, uint32_t itype, u64 now) {
    job_t *j = calloc(1, sizeof *j);
    j->in = calloc(1, sizeof(frame_t)); j->in->refs = 1;
    j->port = port; j->prio = prio; j->length = len; j->itype = itype;
    tm_enqueue(&x->tm, j, now);
}
int tmt_pfc(tmt_t *x, uint32_t port, const uint8_t *frame, uint32_t len, u64 now) {
    return tm_pfc(&x->tm, port, frame, len, now);
}
/* The earliest armed wake (UINT64_MAX: none). */
u64 tmt_next(tmt_t *x) {
    u64 t = UINT64_MAX;
    for (int i = 0; i < x->tm.nall; i++)
        if (x->tm.all[i]->waking && x->tm.all[i]->wake_at < t) t = x->tm.all[i]->wake_at;
    return t;
}
/* The earliest time a wake may be served, its slack used (UINT64_MAX: none). */
u64 tmt_next_late(tmt_t *x) {
    u64 t = UINT64_MAX;
    for (int i = 0; i < x->tm.nall; i++) {
        port_t *st = x->tm.all[i];
        if (st->waking && st->wake_at + st->slack < t) t = st->wake_at + st->slack;
    }
    return t;
}
/* Every wake due by now served at now, as the port loop serves them. */
void tmt_serve_due(tmt_t *x, u64 now) {
    for (int i = 0; i < x->tm.nall; i++) {
        port_t *st = x->tm.all[i];
        if (st->waking && st->wake_at <= now) { st->waking = 0; tm_serve(&x->tm, st, now); }
    }
}
/* The wakes armed for time t, served at t. */
void tmt_wake(tmt_t *x, u64 t) {
    for (int i = 0; i < x->tm.nall; i++) tm_woken(&x->tm, x->tm.all[i], t);
}
u64 *tmt_deps(tmt_t *x, int *n) { *n = x->ndeps; return x->deps; }
u64 tmt_full(tmt_t *x) { return x->full; }
u64 tmt_qdrops(uint32_t port, uint32_t prio) { return qdrops[port * TM_PRIOS + prio]; }
void tmt_free(tmt_t *x) { tm_free(&x->tm); free(x); }
"""
PTR, U32, U64, INT = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
SIGNATURES = {
    "tmt_new": ([U32, U64], PTR), "tmt_rate": ([PTR, U32, INT, U64, U64, U64, U64], None),
    "tmt_queue": ([PTR, U32, INT, U32, U32, U64, U64], None),
    "tmt_enqueue": ([PTR, U32, U32, U32, U32, U64], None),
    "tmt_pfc": ([PTR, U32, ctypes.c_char_p, U32, U64], INT), "tmt_next": ([PTR], U64),
    "tmt_wake": ([PTR, U64], None), "tmt_next_late": ([PTR], U64),
    "tmt_serve_due": ([PTR, U64], None), "tmt_deps": ([PTR, ctypes.POINTER(INT)],
                                                  ctypes.POINTER(U64)),
    "tmt_full": ([PTR], U64), "tmt_qdrops": ([U32, U32], U64), "tmt_free": ([PTR], None),
}
NEVER = (1 << 64) - 1
Event = tuple[int, str, tuple[Any, ...]]


@pytest.fixture(scope="module")
def lib() -> ctypes.CDLL:
    library = ctypes.CDLL(str(shared_library(HARNESS, True)))
    for name, (args, result) in SIGNATURES.items():
        getattr(library, name).argtypes = args
        getattr(library, name).restype = result
    return library


def pfc(quanta: dict[int, int]) -> bytes:
    """An 802.1Qbb frame: class-enable vector and quanta per priority."""
    enabled = sum(1 << p for p in quanta)
    times = b"".join(quanta.get(p, 0).to_bytes(2, "big") for p in range(8))
    return (bytes.fromhex("0180c2000001") + b"\x04" * 6 + b"\x88\x08\x01\x01"
            + enabled.to_bytes(2, "big") + times).ljust(60, b"\0")


def python_run(nprio: int, setup: list[tuple], events: list[Event]) -> tuple[list, Counter]:
    """The Python TrafficManager on a VirtualClock: departures and queue drops."""
    clock = VirtualClock()
    deps: list[tuple[int, ...]] = []

    def transmit(job: EgressJob, now_us: int, enq: int, deq: int, _ts: int, _td: int) -> int:
        deps.append((clock.now_ns(), job.port, job.priority, job.length, enq, deq))
        return job.length

    tm = TrafficManager(clock, nprio, transmit)
    for kind, *args in setup:
        if kind == "rate":
            port, lane, rate, burst, framing, minf = args
            assert not lane
            tm.set_port_rate(rate, port, burst_bytes=burst, framing_bytes=framing,
                             min_frame_bytes=minf)
        elif kind == "lane":
            port, rate, framing, depth = args
            tm.set_clone_lane(port, rate, framing, depth)
        else:
            port, prio, depth, nbytes, pps = args
            tm.set_queue_depth(depth, port, prio)
            tm.set_queue_bytes(nbytes, port, prio)
            tm.set_queue_rate(pps, port, prio)
    for t, kind, args in events:
        clock.run_until(t)
        if kind == "job":
            port, prio, length, itype = args
            tm.enqueue(EgressJob(port, prio, itype, 0, length, None))
        else:
            tm.receive_pfc(args[0], args[1])
    clock.run_until(None)
    return deps, tm.queue_drops


def native_run(lib: ctypes.CDLL, nprio: int, setup: list[tuple], events: list[Event],
               late_ns: int = 0) -> tuple[list, Counter]:
    """tm_c.py's traffic manager, driven with each event's now_ns and its wakes at theirs;
    with `late_ns` (its late tolerance) each wake is served as late as its slack lets it, as
    the port loop serves them."""
    x = lib.tmt_new(nprio, late_ns)
    ports: set[tuple[int, int]] = set()
    try:
        for kind, *args in setup:
            if kind == "rate":
                port, lane, rate, burst, framing, minf = args
                lib.tmt_rate(x, port, lane, rate, burst, framing, minf)
            elif kind == "lane":
                port, rate, framing, depth = args
                lib.tmt_rate(x, port, 1, rate, 0, framing, 0)
                for prio in range(nprio):
                    lib.tmt_queue(x, port, 1, prio, depth, 0, 0)
            else:
                port, prio, depth, nbytes, pps = args
                lib.tmt_queue(x, port, 0, prio, depth, nbytes, int(1e9 / pps) if pps else 0)

        def wakes(until: int) -> None:
            while (t := lib.tmt_next(x)) != NEVER and t <= until:
                if late_ns:
                    lib.tmt_serve_due(x, min(lib.tmt_next_late(x), until))
                else:
                    lib.tmt_wake(x, t)

        for t, kind, args in events:
            wakes(t)
            if kind == "job":
                port, prio, length, itype = args
                ports.add((port, prio))
                lib.tmt_enqueue(x, port, prio, length, itype, t)
            else:
                assert lib.tmt_pfc(x, args[0], args[1], len(args[1]), t) == 1
        wakes(NEVER - 1)
        n = INT()
        raw = lib.tmt_deps(x, ctypes.byref(n))
        deps = [tuple(raw[6 * i + k] for k in range(6)) for i in range(n.value)]
        drops = Counter({key: lib.tmt_qdrops(*key) for key in ports if lib.tmt_qdrops(*key)})
        return deps, drops
    finally:
        lib.tmt_free(x)


def by_port(deps: list[tuple[int, ...]]) -> dict[int, list[tuple[int, ...]]]:
    """Departures per port, in order (ports served at the same instant may interleave)."""
    out: dict[int, list[tuple[int, ...]]] = {}
    for dep in deps:
        out.setdefault(dep[1], []).append(dep)
    return out


def random_jobs(rng: random.Random, n: int, ports: list[int], nprio: int, span_ns: int,
                itypes: tuple[int, ...] = (0,)) -> list[Event]:
    times = sorted(rng.randrange(span_ns) for _ in range(n))
    return [(t, "job", (rng.choice(ports), rng.randrange(nprio), rng.choice([64, 200, 1514]),
                        rng.choice(itypes))) for t in times]


def same(lib: ctypes.CDLL, nprio: int, setup: list[tuple], events: list[Event]) -> list:
    """Run both; assert the same departures per port and drops; the departures."""
    expected, expected_drops = python_run(nprio, setup, events)
    got, drops = native_run(lib, nprio, setup, events)
    assert by_port(got) == by_port(expected)
    assert drops == +expected_drops
    return got


@pytest.mark.parametrize("seed", range(6))
def test_shaped_ports_with_depths_and_priorities(lib, seed):
    rng = random.Random(seed)
    setup: list[tuple] = [("rate", 1, 0, 10_000_000, 3028, 24, 64),
                          ("rate", 2, 0, 1_000_000, 0, 0, 0),
                          ("queue", 1, 0, 5, 0, 0), ("queue", 1, 2, 8, 4000, 0),
                          ("queue", 2, 1, 3, 0, 0)]
    got = same(lib, 3, setup, random_jobs(rng, 300, [1, 2, 3], 3, 50_000_000))
    assert len(got) > 100
    gaps = [b[0] - a[0] for a, b in zip(got, got[1:], strict=False) if a[1] == b[1] == 2]
    assert min(gaps) >= 64 * 8 * 1000  # 1 Mb/s: a 64 B frame takes 512 us


def test_strict_priority_serves_the_highest_queue_first(lib):
    setup: list[tuple] = [("rate", 1, 0, 1_000_000, 0, 0, 0)]
    events: list[Event] = [(0, "job", (1, 0, 100, 0))]  # on the wire at once
    events += [(10, "job", (1, prio, 100, 0)) for prio in (0, 1, 2, 0, 2)]
    got = same(lib, 3, setup, events)
    assert [d[2] for d in got] == [0, 2, 2, 1, 0, 0]


@pytest.mark.parametrize("seed", range(3))
def test_queue_rates_and_clone_lanes(lib, seed):
    rng = random.Random(100 + seed)
    setup: list[tuple] = [("queue", 4, 0, 64, 0, 2000.0), ("queue", 4, 1, 64, 0, 500.0),
                          ("lane", 5, 5_000_000, 24, 10), ("rate", 5, 0, 20_000_000, 0, 24, 0)]
    events = random_jobs(rng, 200, [4, 5], 2, 20_000_000, itypes=(0, 1, 2))
    got = same(lib, 2, setup, events)
    assert len(got) > 50


def test_pfc_pauses_a_queue_and_a_zero_quanta_frame_resumes_it(lib):
    setup: list[tuple] = [("rate", 1, 0, 1_000_000, 0, 0, 0)]
    events: list[Event] = [(0, "pfc", (1, pfc({0: 100}))),  # 51.2 ms at 1 Mb/s
                           (1000, "job", (1, 0, 100, 0)), (2000, "job", (1, 1, 100, 0)),
                           (3000, "job", (1, 0, 100, 0)),
                           (60_000_000, "pfc", (1, pfc({1: 0xFFFF}))),
                           (60_000_100, "job", (1, 1, 100, 0)), (60_000_200, "job", (1, 0, 100, 0)),
                           (70_000_000, "pfc", (1, pfc({1: 0})))]
    got = same(lib, 2, setup, events)
    assert [(d[0], d[2]) for d in got] == [
        (2000, 1), (51_200_000, 0), (52_000_000, 0),  # priority 0 held until the pause ended
        (60_000_200, 0), (70_000_000, 1)]  # priority 1 held until the resume


def test_a_wake_served_within_its_slack_keeps_the_rates_and_serves_several_frames(lib):
    """The port loop sleeps up to a rate wake's slack longer (TM_SLACK_NS, at most half the
    port's burst): every frame still leaves in order, no earlier than on time and at most the
    slack later, so a port and a queue keep their rates, and one wake sends several frames."""
    slack_ns = 200_000
    setup: list[tuple] = [("rate", 1, 0, 100_000_000, 12_500, 24, 64),  # 1 ms burst
                          ("queue", 1, 0, 1000, 0, 0),
                          ("queue", 4, 0, 1000, 0, 20_000.0)]  # a frame every 50 us
    events: list[Event] = [(0, "job", (1, 0, 1514, 0)) for _ in range(300)]
    events += [(0, "job", (4, 0, 200, 0)) for _ in range(300)]
    on_time, _ = native_run(lib, 1, setup, events)
    assert by_port(on_time) == by_port(python_run(1, setup, events)[0])
    late, _ = native_run(lib, 1, setup, events, late_ns=10_000_000)
    for port in (1, 4):
        due, sent = by_port(on_time)[port], by_port(late)[port]
        assert len(sent) == len(due) == 300
        assert all(d[0] <= s[0] <= d[0] + slack_ns for d, s in zip(due, sent, strict=True))
        assert len({s[0] for s in sent}) < 0.6 * len({d[0] for d in due})  # fewer wakes
