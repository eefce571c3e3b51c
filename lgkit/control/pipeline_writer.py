"""An in-process LGWriter: applies LG's configuration straight to a loaded pipeline."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import astuple
from typing import TYPE_CHECKING, Any

from lgkit.control.linkguardian import GlobalConfig, PortConfig
from lgkit.sw.exec.interp.tables import Exact, Table, TableEntry

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

GLOBAL_TABLE = "lg_global"
PORT_TABLE = "lg_port"
SET_GLOBAL = "lg_set_global"
SET_PORT = "lg_set_port"


def instances(pipeline: Pipeline, table: str) -> list[Table]:
    """Every instance of a configuration table (one per control that looks it up)."""
    found = [t for name, t in pipeline.tables.items() if name.rsplit(".", 1)[-1] == table]
    if not found:
        raise KeyError(f"the program has no {table!r} table (not the LinkGuardian program?)")
    return found


class PipelineWriter:
    """Writes the configuration tables, clone sessions and multicast groups of a
    `lgkit.sw` Pipeline; reads and writes registers (state) for tests."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.lock = threading.Lock()

    def write_global(self, config: GlobalConfig) -> None:
        for table in instances(self.pipeline, GLOBAL_TABLE):
            table.set_default(SET_GLOBAL, list(astuple(config)))

    def read_port(self, port: int) -> PortConfig | None:
        entry = instances(self.pipeline, PORT_TABLE)[0].find([Exact(port)])
        return None if entry is None else PortConfig(*entry.params)

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        for table in instances(self.pipeline, PORT_TABLE):
            entry = TableEntry([Exact(port)], SET_PORT, list(astuple(config)))
            (table.insert if insert else table.modify)(entry)

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
