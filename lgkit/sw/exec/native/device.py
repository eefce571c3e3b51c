"""The native device of a loaded program through ctypes (device_c.py's C API): frames in and out
untimed, the port loop on a thread of its own with its traffic manager's settings, the
counters."""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from array import array
from contextlib import nullcontext
from typing import TYPE_CHECKING

from lgkit.sw.exec.native.device_c import (
    MAX_PORT,
    PORT_SLOTS,
    PORT_STATS,
    PRIORITIES,
    STAT_PORTS,
    STATS,
)

if TYPE_CHECKING:
    from lgkit.sw.exec.native.engine import NativeEngine

PTR, INT, U32, U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64
U64P, U32P = ctypes.POINTER(U64), ctypes.POINTER(U32)

SIGNATURES = {
    "lg_dev_new": ([PTR, U64, U64P, U32, U32, U32P, U32], PTR),
    "lg_dev_free": ([PTR], None),
    "lg_dev_port": ([PTR, U32, INT], INT),
    "lg_dev_ring": ([PTR, U32], INT),
    "lg_dev_ring_drops": ([PTR], U64),
    "lg_dev_give_back": ([PTR], INT),
    "lg_dev_ring_frames": ([PTR, U32], INT),
    "lg_dev_handed": ([PTR, INT, U32P, U32P], ctypes.POINTER(ctypes.c_char)),
    "lg_dev_frame": ([PTR, U32, ctypes.c_char_p, U32, U64, U64, U64, U64P,
                      ctypes.POINTER(INT)], INT),
    "lg_dev_out": ([PTR, INT, U32P, U32P], ctypes.POINTER(ctypes.c_char)),
    "lg_dev_take": ([PTR], INT),
    "lg_dev_inject": ([PTR, U32, ctypes.c_char_p, U32], INT),
    "lg_dev_run": ([PTR], INT),
    "lg_dev_stop": ([PTR], None),
    "lg_dev_kick": ([PTR], None),
    "lg_dev_busy": ([PTR], U64),
    "lg_dev_abort": ([PTR, U64], INT),
    "lg_dev_lock": ([PTR], None),
    "lg_dev_unlock": ([PTR], None),
    "lg_dev_stats": ([PTR], U64P),
    "lg_dev_queue_drops": ([PTR], U64P),
    "lg_dev_seed": ([PTR, U64], None),
    "lg_dev_tm": ([PTR, U32, U64, U64], None),
    "lg_dev_defaults": ([PTR, U32, U32, U64], None),
    "lg_dev_rate": ([PTR, U32, INT, U64, U64, U64, U64], INT),
    "lg_dev_queue": ([PTR, U32, INT, U32, U32, U64, U64], INT),
    "lg_dev_sessions": ([PTR, U64P, U32], INT),
    "lg_dev_mcast": ([PTR, U64P, U32], INT),
    "lg_dev_cpu_port": ([PTR, U32], None),
}
NSTATS = STAT_PORTS + PORT_SLOTS * MAX_PORT
DEPTH_MAX = 0xFFFFFFFF


def _u64s(values: list[int]) -> ctypes.Array:
    return (U64 * max(1, len(values)))(*values)


class NativeDevice:
    """A device of `engine`'s program: on a context of its own (`own`, for the port loop) or on
    the engine's (untimed runs: the same registers, generator and logs as its passes).
    `start_ns` is the monotonic clock's reading at the switch clock's zero. With a context of
    its own, the engine's table copies take the device's lock from now on, so the loop never
    sees a table half-swapped."""

    def __init__(self, engine: NativeEngine, start_ns: int, own: bool = True) -> None:
        lib = engine.lib
        for name, (args, result) in SIGNATURES.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = result
        self.lib = lib
        self.engine = engine
        self._own = own
        self._ctx = ctx = engine.add_context() if own else engine.ctx
        program = engine.program
        fls = [v for fl, slots in sorted(program.field_lists.items())
               for v in (fl, len(slots), *slots)]
        rq = len(program.widths) + 3
        hdr = [*program.header_slots, rq - 3, rq - 2, rq - 1]
        dev = lib.lg_dev_new(ctx, start_ns, _u64s(fls), len(program.field_lists), len(fls),
                             (U32 * len(hdr))(*hdr), len(hdr))
        if not dev:
            if own:
                engine.remove_context(ctx)
            raise MemoryError("the native device")
        self.dev = ctypes.c_void_p(dev)
        self._stats = (U64 * NSTATS).from_address(ctypes.addressof(lib.lg_dev_stats(self.dev)
                                                                   .contents))
        self._qdrops = ctypes.cast(lib.lg_dev_queue_drops(self.dev), PTR).value or 0
        self._thread: threading.Thread | None = None
        self.status: int | None = None  # lg_dev_run's result once the loop ended
        if own:
            engine.lock = self.locked()
        else:  # freed with this object (the engine's context outlives it: the engine holds it)
            weakref.finalize(self, lib.lg_dev_free, ctypes.c_void_p(dev))

    def locked(self) -> _Reentered:
        """The device's lock as a reusable context manager."""
        return _Reentered(self)

    def add_port(self, port: int, fd: int) -> None:
        if self.lib.lg_dev_port(self.dev, port, fd) != 0:
            raise ValueError(f"port {port}: the native device takes ports 0..511, 64 at most")

    def add_ring(self, port: int) -> int:
        """Read `port` (added) through a PACKET_MMAP ring from now on: 0, or the errno why not
        (then the loop reads its socket)."""
        return -self.lib.lg_dev_ring(self.dev, port)

    def ring_drops(self) -> int:
        """Frames the kernel dropped on full rings since the last call."""
        return self.lib.lg_dev_ring_drops(self.dev)

    def ring_frames(self, port: int) -> int:
        """Frames waiting on the port's ring (0 without one)."""
        return self.lib.lg_dev_ring_frames(self.dev, port)

    # ---- untimed ------------------------------------------------------------------------

    def frame(self, port: int, data: bytes, now_ns: int, pass_ns: int = 1000,
              limit_ns: int = 1 << 62) -> tuple[list[tuple[int, bytes]], int, bool]:
        """One frame and everything it causes, driven as the untimed driver drives them from
        `now_ns`, each pass `pass_ns` later, for `limit_ns` at most: the frames sent, the
        clock's end, and whether it ran out of time. Not while the loop runs."""
        end, over = U64(), INT()
        n = self.lib.lg_dev_frame(self.dev, port, data, len(data), now_ns, pass_ns, limit_ns,
                                  ctypes.byref(end), ctypes.byref(over))
        if n < 0:
            raise MemoryError("the native device")
        return self._outs(n), end.value, bool(over.value)

    def _outs(self, n: int) -> list[tuple[int, bytes]]:
        port, length = U32(), U32()
        out = []
        for i in range(n):
            data = self.lib.lg_dev_out(self.dev, i, ctypes.byref(port), ctypes.byref(length))
            out.append((port.value, ctypes.string_at(data, length.value)))
        return out

    # ---- the port loop ----------------------------------------------------------------------

    def start(self) -> None:
        """Run the port loop on a thread of its own (without the GIL); its random() draws come
        from a C generator seeded from the pipeline's (Pipeline.rng)."""
        self.lib.lg_dev_seed(self.dev, self.engine.pl.rng.getrandbits(64))
        self._thread = threading.Thread(target=self._run, name="native-port-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.status = self.lib.lg_dev_run(self.dev)

    def handed(self) -> list[tuple[int, bytes]]:
        """The ports' frames back to their sockets, and the frames left on the rings, in order
        per port: (port, bytes) for the Python switch. Only once the loop stopped."""
        self.lib.lg_dev_give_back(self.dev)
        frames: list[tuple[int, bytes]] = []
        port, length = U32(), U32()
        while (data := self.lib.lg_dev_handed(self.dev, len(frames), ctypes.byref(port),
                                              ctypes.byref(length))):
            frames.append((port.value, ctypes.string_at(data, length.value)))
        return frames

    def take(self) -> list[tuple[int, bytes]]:
        """The frames the loop sent to the CPU port since the last call (under the lock)."""
        with self.locked():
            return self._outs(self.lib.lg_dev_take(self.dev))

    def inject(self, port: int, data: bytes) -> bool:
        """A frame into the running loop as if received on `port`; False when its queue is
        full (the frame is dropped)."""
        with self.locked():
            return self.lib.lg_dev_inject(self.dev, port, data, len(data)) == 0

    def thread_id(self) -> int:
        """The loop thread's id (threading.get_ident's), 0 before start."""
        return 0 if self._thread is None else self._thread.ident or 0

    def busy(self) -> int:
        """The number of the frame the loop's passes are on, 0 between frames."""
        return self.lib.lg_dev_busy(self.dev)

    def abort(self, frame: int) -> bool:
        """Stop frame `frame`'s passes (dropped, counted as pass_timeout); False when they
        were already over."""
        return bool(self.lib.lg_dev_abort(self.dev, frame))

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout_s: float = 5.0) -> bool:
        """Stop the loop and wait for it; False when it did not end in time."""
        if self._thread is None:
            return True
        self.lib.lg_dev_stop(self.dev)
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def close(self) -> None:
        """Free the device of a context of its own (the loop stopped); the engine's copies
        need no lock any more. (One on the engine's context is freed with this object.)"""
        if self.running():
            raise RuntimeError("the native port loop is still running")
        if not self._own:
            return
        self.engine.lock = nullcontext()
        self.engine.remove_context(self._ctx)
        self.lib.lg_dev_free(self.dev)
        self.dev = ctypes.c_void_p(0)

    # ---- the traffic manager's settings (call under the lock; kick afterwards) ---------------

    def set_tm(self, priority_queues: int, cell_bytes: int, late_ns: int) -> None:
        self.lib.lg_dev_tm(self.dev, priority_queues, cell_bytes, late_ns)

    def set_defaults(self, prio: int, depth: int, period_ns: int) -> None:
        """The depth and packet period of queue `prio` of ports made from now on."""
        self.lib.lg_dev_defaults(self.dev, prio, min(depth, DEPTH_MAX), period_ns)

    def set_rate(self, port: int, lane: bool, rate_bps: int, burst_bytes: int,
                 framing_bytes: int, min_frame_bytes: int) -> None:
        if self.lib.lg_dev_rate(self.dev, port, int(lane), rate_bps, burst_bytes, framing_bytes,
                                min_frame_bytes):
            raise MemoryError("the native traffic manager")

    def set_queue(self, port: int, lane: bool, prio: int, depth: int, depth_bytes: int,
                  period_ns: int) -> None:
        if self.lib.lg_dev_queue(self.dev, port, int(lane), prio, min(depth, DEPTH_MAX),
                                 depth_bytes, period_ns):
            raise MemoryError("the native traffic manager")

    def set_sessions(self, triples: list[int]) -> None:
        """The clone sessions as (session, port, rid) triples, flat."""
        if self.lib.lg_dev_sessions(self.dev, _u64s(triples), len(triples) // 3):
            raise MemoryError("the native device's clone sessions")

    def set_groups(self, triples: list[int]) -> None:
        """The multicast groups as (group, rid, port) triples, flat."""
        if self.lib.lg_dev_mcast(self.dev, _u64s(triples), len(triples) // 3):
            raise MemoryError("the native device's multicast groups")

    def set_cpu_port(self, port: int) -> None:
        """Frames sent to `port` are kept for `take`."""
        self.lib.lg_dev_cpu_port(self.dev, port)

    def kick(self) -> None:
        """Wake the loop (a setting changed)."""
        self.lib.lg_dev_kick(self.dev)

    # ---- counters ------------------------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        """The device's counters by name (device_c.STATS)."""
        return {name: self._stats[i] for i, name in enumerate(STATS)}

    def port_counters(self, port: int) -> dict[str, int]:
        """rx/tx packets and bytes of one port, and the errno that took it out of the loop."""
        base = STAT_PORTS + PORT_SLOTS * port
        return {name: self._stats[base + i] for i, name in enumerate(PORT_STATS)}

    def queue_drops(self) -> array[int]:
        """queue_full drops by port * PRIORITIES + priority."""
        return array("Q", ctypes.string_at(self._qdrops, 8 * MAX_PORT * PRIORITIES))


class _Reentered:
    """The device lock as a context manager that can be entered again and again."""

    def __init__(self, device: NativeDevice) -> None:
        self.device = device

    def __enter__(self) -> None:
        self.device.lib.lg_dev_lock(self.device.dev)

    def __exit__(self, *exc: object) -> None:
        self.device.lib.lg_dev_unlock(self.device.dev)


def monotonic_start(now_ns: int) -> int:
    """CLOCK_MONOTONIC at the zero of a clock that reads `now_ns` now."""
    return time.monotonic_ns() - now_ns
