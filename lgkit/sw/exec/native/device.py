"""The native device of a loaded program through ctypes (device_c.py's C API): its own context,
frames in and out, the port loop on a thread of its own, the counters."""

from __future__ import annotations

import ctypes
import threading
import time
from contextlib import nullcontext
from typing import TYPE_CHECKING

from lgkit.sw.exec.native.device_c import MAX_PORT, PORT_SLOTS, PORT_STATS, STAT_PORTS, STATS

if TYPE_CHECKING:
    from lgkit.sw.exec.native.engine import NativeEngine

PTR, INT, U32, U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64


class Frame(ctypes.Structure):
    """lg_frame: one frame the device sends."""

    _fields_ = [("port", U32), ("len", U32), ("data", ctypes.c_void_p)]


SIGNATURES = {
    "lg_dev_new": ([PTR, U64], PTR),
    "lg_dev_free": ([PTR], None),
    "lg_dev_port": ([PTR, U32, INT], INT),
    "lg_dev_frame": ([PTR, U32, ctypes.c_char_p, U32, U64, ctypes.POINTER(Frame), INT], INT),
    "lg_dev_run": ([PTR], INT),
    "lg_dev_stop": ([PTR], None),
    "lg_dev_busy": ([PTR], U64),
    "lg_dev_abort": ([PTR, U64], INT),
    "lg_dev_lock": ([PTR], None),
    "lg_dev_unlock": ([PTR], None),
    "lg_dev_stats": ([PTR], ctypes.POINTER(U64)),
    "lg_dev_queues": ([PTR, U32], None),
    "lg_dev_seed": ([PTR, U64], None),
    "lg_dev_handed": ([PTR, INT, ctypes.POINTER(U32), ctypes.POINTER(U32)],
                      ctypes.POINTER(ctypes.c_char)),
}
NSTATS = STAT_PORTS + PORT_SLOTS * MAX_PORT


class NativeDevice:
    """A device on a context of its own of `engine`'s program; `start_ns` is the monotonic
    clock's reading at the switch clock's zero. The engine's table copies take the device's
    lock from now on, so the loop never sees a table half-swapped."""

    def __init__(self, engine: NativeEngine, start_ns: int) -> None:
        lib = engine.lib
        for name, (args, result) in SIGNATURES.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = result
        self.lib = lib
        self.engine = engine
        self._ctx = ctx = engine.add_context()
        dev = lib.lg_dev_new(ctx, start_ns)
        if not dev:
            engine.remove_context(ctx)
            raise MemoryError("the native device")
        self.dev = ctypes.c_void_p(dev)
        self._stats = (U64 * NSTATS).from_address(ctypes.addressof(lib.lg_dev_stats(self.dev)
                                                                   .contents))
        self._outs = (Frame * 1)()
        self._thread: threading.Thread | None = None
        self.status: int | None = None  # lg_dev_run's result once the loop ended
        engine.lock = self.locked()

    def locked(self) -> _Reentered:
        """The device's lock as a reusable context manager."""
        return _Reentered(self)

    def set_priority_queues(self, count: int) -> None:
        """The traffic manager's priority queues: a packet of a higher priority is dropped."""
        self.lib.lg_dev_queues(self.dev, count)

    def add_port(self, port: int, fd: int) -> None:
        if self.lib.lg_dev_port(self.dev, port, fd) != 0:
            raise ValueError(f"port {port}: the native device takes ports 0..511, 64 at most")

    def frame(self, port: int, data: bytes, now_ns: int) -> list[tuple[int, bytes]] | None:
        """One frame through the device: the frames it sends, or None when it needs the
        Python driver. Not while the loop runs (the loop's context is the device's)."""
        n = self.lib.lg_dev_frame(self.dev, port, data, len(data), now_ns, self._outs, 1)
        if n < 0:
            return None
        return [(o.port, ctypes.string_at(o.data, o.len)) for o in self._outs[:n]]

    def start(self) -> None:
        """Run the port loop on a thread of its own (without the GIL); its random() draws come
        from a C generator seeded from the pipeline's (Pipeline.rng)."""
        self.lib.lg_dev_seed(self.dev, self.engine.pl.rng.getrandbits(64))
        self._thread = threading.Thread(target=self._run, name="native-port-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.status = self.lib.lg_dev_run(self.dev)

    def handed(self) -> list[tuple[int, bytes]]:
        """The frames the loop handed back when it stopped at a MAC frame (PFC), in order:
        (port, bytes) for the Python switch. Only once the loop stopped."""
        frames: list[tuple[int, bytes]] = []
        port, length = U32(), U32()
        while (data := self.lib.lg_dev_handed(self.dev, len(frames), ctypes.byref(port),
                                              ctypes.byref(length))):
            frames.append((port.value, ctypes.string_at(data, length.value)))
        return frames

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
        """Free the device (the loop stopped); the engine's copies need no lock any more."""
        if self.running():
            raise RuntimeError("the native port loop is still running")
        self.engine.lock = nullcontext()
        self.engine.remove_context(self._ctx)
        self.lib.lg_dev_free(self.dev)
        self.dev = ctypes.c_void_p(0)

    def counters(self) -> dict[str, int]:
        """The device's counters by name (device_c.STATS)."""
        return {name: self._stats[i] for i, name in enumerate(STATS)}

    def port_counters(self, port: int) -> dict[str, int]:
        """rx/tx packets and bytes of one port, and the errno that took it out of the loop."""
        base = STAT_PORTS + PORT_SLOTS * port
        return {name: self._stats[base + i] for i, name in enumerate(PORT_STATS)}


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
