"""A synchronous P4Runtime session (finsy underneath) used for BMv2 and the built-in target."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import finsy
from finsy.proto import p4r

import lgkit.sw.lang.tna_p4info  # noqa: F401 (bf-p4c's barefoot messages: finsy parses TNA P4Info)

FINSY_LOG = logging.getLogger("finsy")
FINSY_LOG.setLevel(logging.ERROR)
FINSY_LOG.propagate = False
FINSY_LOG.addHandler(logging.NullHandler())


class SessionError(RuntimeError):
    """The switch refused the connection, the arbitration or the pipeline."""


class _LastError(logging.Handler):
    """Keeps finsy's last error (its tasks log failures instead of raising them to us)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        self.message = str(exc) if exc is not None else record.getMessage()


class P4RuntimeSession:
    """One primary P4Runtime connection to a switch; pushes the pipeline when opened.

    finsy is asynchronous; this class runs its event loop in a private thread so that the
    harness, corruptd and tests call plain methods.
    """

    def __init__(self, name: str, address: str, device_id: int,
                 p4info: Path | None = None, config: Path | None = None) -> None:
        self.name, self.address, self.device_id = name, address, device_id
        self._options = finsy.SwitchOptions(p4info=p4info, p4blob=config, device_id=device_id,
                                            p4force=p4info is not None)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"p4rt-{name}")
        self._switch: finsy.Switch | None = None
        self._lock = threading.Lock()
        self.update_lock = threading.RLock()
        "Held by LG writers across a read-modify-write of a configuration entry."

    def _call(self, coro: Any, timeout: float = 30.0) -> Any:
        try:
            return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
        except (ValueError, finsy.P4ClientError) as exc:
            raise SessionError(f"{self.name} ({self.address}): {exc}") from exc

    def open(self, timeout: float = 60.0) -> P4RuntimeSession:
        """Connect, become primary and push the pipeline (if a P4Info was given)."""
        self._thread.start()
        self._switch = finsy.Switch(self.name, self.address, self._options)
        errors = _LastError()
        FINSY_LOG.addHandler(errors)
        try:
            self._call(self._switch.__aenter__(), timeout)
        except BaseException as exc:
            self._switch = None
            self.close()
            if not isinstance(exc, Exception):  # Ctrl-C, SIGTERM: the run is interrupted
                raise
            reason = errors.message or f"{type(exc).__name__}: {exc}"
            raise SessionError(f"{self.name} ({self.address}): {reason}") from exc
        finally:
            FINSY_LOG.removeHandler(errors)
        return self

    @property
    def switch(self) -> finsy.Switch:
        """The finsy switch (for entity construction against its schema)."""
        assert self._switch is not None, "session not open"
        return self._switch

    def insert(self, entities: Iterable[Any]) -> None:
        """Insert entities (table entries, clone sessions, multicast groups)."""
        with self._lock:
            self._call(self.switch.insert(list(entities)))

    def modify(self, entities: Iterable[Any]) -> None:
        """Modify entities (registers, counters, default actions, existing entries)."""
        with self._lock:
            self._call(self.switch.modify(list(entities)))

    def write(self, updates: Iterable[p4r.Update]) -> None:
        """Write P4Runtime updates as they are (entities finsy's schema does not know: a TNA
        program's value sets and registers are P4Info extern entries)."""
        with self._lock:
            self._call(self.switch.write(list(updates)))

    def delete(self, entities: Iterable[Any]) -> None:
        """Delete entities."""
        with self._lock:
            self._call(self.switch.delete(list(entities)))

    def read(self, entity: Any) -> list[Any]:
        """Read entities matching a (wildcard) entity."""

        async def collect() -> list[Any]:
            # finsy declares read `async def -> AsyncGenerator`: an async generator at run time
            return [item async for item in self.switch.read(entity)]  # type: ignore[attr-defined]

        with self._lock:
            return self._call(collect())

    def close(self) -> None:
        """Close the connection and stop the event loop thread."""
        if self._switch is not None:
            try:
                self._call(self._switch.__aexit__(None, None, None), 10.0)
            finally:
                self._switch = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)

    def __enter__(self) -> P4RuntimeSession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
