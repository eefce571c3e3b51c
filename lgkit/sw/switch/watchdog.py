"""The pass watchdog: a pipeline pass that runs past its CPU budget is aborted, so that one
packet cannot hold the switch (and the lock every control-plane RPC needs) for long.

P4 parsers can loop and `for` loops can be long; the interpreter bounds parser work per packet
(error.ParserTimeout), and this is the backstop for everything else. A watchdog thread samples
the CPU time of the thread running the pass; past the budget it raises PassTimeout in that
thread (PyThreadState_SetAsyncExc), which Python delivers between two bytecodes of the pass.
The pass is dropped and counted (`pass_timeout`); the switch goes on with the next packet.
A pass of the native engine (a method of an object with `stop_pass`) runs in C, where no
exception lands: the watchdog also asks it to stop, and its loops end the pass at their next
iteration; the exception is then delivered as soon as the pass is back in Python.
The passes of the native port loop (`watch_loop`: its own thread, in C throughout) are guarded
alike: a frame whose passes use the budget is aborted through the loop itself (dropped and
counted by it as `pass_timeout`).

Delivery is made exact by a small handshake (the pass's thread clears a request that arrives
after its pass ended), so the exception never lands outside the pass that ran too long.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

# Two prototypes of PyThreadState_SetAsyncExc(thread id, exception or NULL to clear).
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))


class PassTimeout(BaseException):
    """Raised in a pass that ran past its budget (a BaseException: the pipeline's own error
    handling must not swallow it)."""


class GuardedLoop(Protocol):
    """A native port loop as the watchdog sees it (exec/native/device.py's NativeDevice)."""

    def thread_id(self) -> int: ...
    def busy(self) -> int: ...
    def abort(self, frame: int) -> bool: ...


def thread_cpu_s(thread_id: int) -> float | None:
    """CPU seconds a thread has used (None if it is gone)."""
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread_id))
    except OSError:
        return None


class Watchdog:
    """Guards pipeline passes (`run`) against running more than `budget_s` of CPU time.

    Passes must not overlap (the switch runs them under its lock). CPU time, not wall time: a
    pass that waits for the CPU on a loaded machine is not aborted for it.
    """

    def __init__(self, budget_s: float = 1.0) -> None:
        self.budget_s = budget_s
        self.timeouts = 0
        self._tokens = itertools.count(1)
        self._current = 0  # the token of the pass running now (0: none)
        self._thread = 0   # the thread running it
        self._target = 0   # the token the watchdog is aborting
        self._done = 0     # the token whose abort attempt has finished
        self._stopper: Callable[[bool], None] | None = None  # the native pass's stop_pass
        self._loop: GuardedLoop | None = None  # a native port loop whose passes are guarded
        self._loop_lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # ---- the pass's side ---------------------------------------------------------------------

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args), or None if it ran past the budget and was aborted."""
        token = next(self._tokens)
        try:
            self._thread = threading.get_ident()
            self._stopper = getattr(getattr(fn, "__self__", None), "stop_pass", None)
            self._current = token
            try:
                result = fn(*args)
            finally:
                self._current = 0
            if self._target == token:  # the watchdog raced the end of the pass
                self._settle(token)
            return result
        except PassTimeout:
            self.timeouts += 1
            self._settle(token)
            return None

    def _settle(self, token: int) -> None:
        """Wait until the watchdog's attempt on `token` is over, then drop an exception it
        requested that has not been delivered yet."""
        while True:
            try:
                while self._target == token and self._done != token:
                    time.sleep(0.0005)
                _clear_async_exc(self._thread, None)
                if self._stopper is not None:
                    self._stopper(False)
                self._target = 0
                return
            except PassTimeout:  # delivered while we waited: nothing is pending any more
                continue

    def watch_loop(self, loop: GuardedLoop | None) -> None:
        """Guard the passes of a native port loop too (None: no longer; once this returns, the
        watchdog no longer calls the previous one)."""
        with self._loop_lock:
            self._loop = loop

    # ---- the watchdog's side -----------------------------------------------------------------

    def start(self) -> None:
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, daemon=True,
                                             name="pass-watchdog")
            self._watcher.start()

    def stop(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2)
            self._watcher = None

    def _watch(self) -> None:
        poll_s = min(0.05, self.budget_s / 4)
        seen: tuple[int, float] | None = None  # (token, its thread's CPU time when first seen)
        loop_seen: tuple[int, float] | None = None  # the same for the port loop's frame
        while not self._stop.wait(poll_s):
            loop_seen = self._watch_loop_frame(loop_seen)
            token, thread = self._current, self._thread
            cpu = thread_cpu_s(thread) if token else None
            if token == 0 or cpu is None:
                seen = None
            elif seen is None or seen[0] != token:
                seen = (token, cpu)
            elif cpu - seen[1] >= self.budget_s:
                self._abort(token, thread)
                seen = None

    def _watch_loop_frame(self, seen: tuple[int, float] | None) -> tuple[int, float] | None:
        """Abort the port loop's frame once its passes used the budget; what was seen of it."""
        with self._loop_lock:
            loop = self._loop
            frame = loop.busy() if loop is not None else 0
            cpu = thread_cpu_s(loop.thread_id()) if loop is not None and frame else None
            if cpu is None:
                return None
            if seen is None or seen[0] != frame:
                return (frame, cpu)
            if cpu - seen[1] >= self.budget_s:
                loop.abort(frame)  # type: ignore[union-attr]
                return None
            return seen

    def _abort(self, token: int, thread: int) -> None:
        self._target = token
        try:
            stopper = self._stopper
            if self._current == token:
                _set_async_exc(thread, PassTimeout)
                if stopper is not None:
                    stopper(True)
        finally:
            self._done = token
