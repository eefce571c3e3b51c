"""The stress test (stress.py) on the native event loop: StressRun's network, generator, paused
queue, meters, sampler and marks run in C, and what they measured is put back into StressRun's
own meters, so its result, digest and report are computed as on the Python simulator."""

from __future__ import annotations

import ctypes
import time
from collections import Counter
from dataclasses import replace

from lgkit.sim.native_loop import U64, NativeLoop, NativeLoopError, loss_model
from lgkit.sim.scenario import HOST_PORT, LINK_PORT
from lgkit.sim.stress import StressResult, StressRun, StressSpec, _register
from lgkit.sw.switch.loss import TruncatedGaps
from lgkit.sw.switch.vnet import ETHERNET_FRAMING_BYTES

KINDS = ("data", "plain", "retx", "dummy", "control")  # loop_c's K_*
CHUNK_NS = 100_000  # StressRun.run's steps (the run's end depends on them)
DRAIN_NS = 200_000
NCOUNTS = 42


def run_stress_native(spec: StressSpec) -> StressResult:
    """One stress-test point on the native event loop (the switches on the native engine)."""
    run = StressRun(replace(spec, engine="native"))
    loop = NativeLoop(run.net, ids=run.capacity_ids, window=(run.warmup_end_ns, 1 << 62),
                      harness=True)
    stream = run.stream
    loop.source("s1", HOST_PORT, spec.rate_gbps * 1e9,
                [stream.templates[size] for size in stream.sizes],
                spec.warmup_frames + spec.frames, stream.weights, stream.rng,
                framing_bytes=ETHERNET_FRAMING_BYTES, period_ps=spec.period_ps)
    _harness(loop, run)
    wall = time.perf_counter()
    _drive(loop)
    wall = time.perf_counter() - wall
    _read_back(loop, run)
    return run._result(wall, loop.events, loop.emitted)


def _harness(loop: NativeLoop, run: StressRun) -> None:
    link, queue, net = run.net.link, run.queue, run.net
    paused = _register(net, "s1", "lg_tx_paused").values
    model = run.model
    max_gap = model.max_gap if isinstance(model, TruncatedGaps) else 0
    kind, p1, p2 = loss_model(model.model if isinstance(model, TruncatedGaps) else model)
    status = loop.lib.ns_stress(
        loop.ptr, loop.switch_index["s1"], loop.switch_index["s2"],
        loop.directions.index(link.forward), loop.directions.index(link.backward),
        loop.host_index["h2"], HOST_PORT,
        LINK_PORT, net.layout.prio_normal, net.layout.recirc_port, queue.limit_bytes,
        queue.keep, queue.ingress_ns, ctypes.cast(paused, ctypes.POINTER(U64)),
        run.capacity_ids, run.warmup_end_ns, run.timing.egress_latency_ns,
        link.backward.delay_ns, run.spec.sample_ns, run.warmup_end_ns // 2, kind, p1, p2,
        max_gap, run.spec.warmup_frames, run.spec.frames)
    if status:
        raise NativeLoopError("the stress harness: out of memory")


def _counts(loop: NativeLoop) -> list[int]:
    out = (U64 * NCOUNTS)()
    loop.lib.ns_stress_counts(loop.ptr, out)
    return [int(v) for v in out]


def _drive(loop: NativeLoop) -> None:
    """StressRun.run's steps: to the generator's end, the backlog out, then the drain."""
    while not _counts(loop)[4]:
        if not _counts(loop)[7]:
            raise NativeLoopError("the simulation ran out of events before the end")
        loop.run(loop.now_ns + CHUNK_NS)
    while _counts(loop)[1]:
        loop.run(loop.now_ns + CHUNK_NS)
    loop.run(max(loop.now_ns, _counts(loop)[8 + 2 * 4 + 3]) + DRAIN_NS)


def _list(loop: NativeLoop, which: int) -> list[int]:
    count = U64()
    values = loop.lib.ns_stress_list(loop.ptr, which, ctypes.byref(count))
    return [int(values[i]) for i in range(count.value)]


def _read_back(loop: NativeLoop, run: StressRun) -> None:
    """What the C harness measured, into StressRun's meters, marks and samples."""
    c = _counts(loop)
    drops, marked, in_window = c[0], c[2:5], c[5]
    marks = [tuple(c[8 + 4 * i: 12 + 4 * i]) for i in range(3)]
    sent, lost = c[20:25], c[25:30]
    sent_order, lost_order = c[31:31 + c[30]], c[37:37 + c[36]]
    meter = run.meter
    meter.sent = Counter({KINDS[k]: sent[k] for k in sent_order})
    meter.lost = Counter({KINDS[k]: lost[k] for k in lost_order})
    meter.bursts = Counter({n: v for n, v in enumerate(_list(loop, 0)) if v})
    meter.retx_delays_ns = _list(loop, 1)
    meter.originals[:] = ctypes.string_at(loop.lib.ns_stress_originals(loop.ptr),
                                          len(meter.originals))
    holes = (ctypes.c_int64 * (2 * max(1, c[6])))()
    count = loop.lib.ns_stress_holes(loop.ptr, holes, c[6])
    meter._detected = {holes[2 * i]: (holes[2 * i + 1] if holes[2 * i + 1] >= 0 else None)
                       for i in range(count)}
    sink, counts = run.sink, loop.sink("h2")
    sink.delivered[:] = counts.delivered
    sink.in_window, sink.duplicates, sink.out_of_order = (counts.in_window, counts.duplicates,
                                                          counts.out_of_order)
    for key, done, mark in zip(("half", "end", "gen_end"), marked, marks, strict=True):
        if done:
            run.marks[key] = mark
    if marked[2]:
        run.marks["in_window"] = in_window
    samples = _list(loop, 3)
    run.samples[:] = [(samples[i], samples[i + 1], samples[i + 2])
                      for i in range(0, len(samples), 3)]
    run.queue.drops = drops
    _read_gaps(loop, run)
    run.resumes.flights_ns = _list(loop, 2)
    run.stream.next_id = loop.emitted
    cells = (U64 * 2)()
    for name, switch in run.net.switches.items():
        stats = loop.switch_stats(name)
        switch.recirculations = stats["recirculations"]
        switch.lane_recirculations = stats["lane_recirculations"]
        recirc = run.net.layout.recirc_port
        loop.lib.ns_queue_cells(loop.ptr, loop.switch_index[name], recirc, 0, cells)
        queue = switch.tm.port(recirc).queues[0]
        queue.cells, queue.peak_cells = int(cells[0]), int(cells[1])


def _read_gaps(loop: NativeLoop, run: StressRun) -> None:
    """The cut gaps (TruncatedGaps) and the steady windows standing for them."""
    model, steady = run.model, run.steady
    if not isinstance(model, TruncatedGaps) or steady is None:
        return
    out, cuts, windows = (U64 * 8)(), ctypes.POINTER(U64)(), ctypes.POINTER(U64)()
    loop.lib.ns_stress_gaps(loop.ptr, out, ctypes.byref(cuts), ctypes.byref(windows))
    model.skipped, model.cutting = int(out[0]), bool(out[2])
    model.cuts = [int(cuts[i]) for i in range(out[1])]
    steady.ns, steady.frames = int(out[3]), int(out[4])
    steady.recirc = (int(out[5]), int(out[6]))
    steady.windows = [(int(windows[2 * i]), int(windows[2 * i + 1])) for i in range(out[7])]
