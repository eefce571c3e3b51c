"""The switch as the P4Runtime server sees it: the members it uses, as a structural type."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline


class DeviceClock(Protocol):
    """The switch's time source."""

    def now_ns(self) -> int: ...


class Device(Protocol):
    """A switch the server serves (lgkit.sw.switch's Switch is one); the layer rule keeps the
    server from naming it, so it names what it needs."""

    device_id: int
    cpu_port: int | None
    pipeline: Pipeline | None
    packet_in_handlers: list[Callable[[bytes], None]]
    on_pipeline_change: list[Callable[[Pipeline | None], None]]
    on_entries_added: list[Callable[[int], None]]

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    @property
    def clock(self) -> DeviceClock: ...

    def set_pipeline(self, pipeline: Pipeline | None) -> None: ...

    def packet_out(self, data: bytes) -> None: ...
