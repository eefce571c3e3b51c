"""An in-process LGWriter: applies LG's configuration straight to a loaded pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class PipelineWriter:
    """Writes registers, clone sessions and multicast groups of a `lgkit.sw` Pipeline."""

    def __init__(self, pipeline: Any) -> None:
        self.pipeline = pipeline

    def _register(self, name: str) -> Any:
        registers = self.pipeline.registers
        if name in registers:
            return registers[name]
        matches = [r for qname, r in registers.items() if qname.endswith("." + name)]
        if len(matches) != 1:
            raise KeyError(f"no single register named {name!r} in the program")
        return matches[0]

    def write_register(self, name: str, index: int, value: int) -> None:
        self._register(name).write(index, value)

    def read_register(self, name: str, index: int) -> int:
        return int(self._register(name).read(index))

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None:
        self.pipeline.clone_sessions[session] = [(port, rid) for port, rid in replicas]

    def set_multicast_group(self, group: int, replicas: Sequence[tuple[int, int]]) -> None:
        self.pipeline.mc_groups[group] = [(rid, port) for port, rid in replicas]
