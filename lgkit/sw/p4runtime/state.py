"""The forwarding pipeline config a P4Runtime server has committed, with its lookup tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from finsy.proto import p4i, p4r

from .schema import P4InfoIndex

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline


@dataclass
class DeviceState:
    """A committed config: P4Info index, the pipeline it drives and server-side extern state."""

    config: p4r.ForwardingPipelineConfig
    index: P4InfoIndex
    pipeline: Pipeline
    program_source: str
    action_by_name: dict[str, p4i.Action] = field(default_factory=dict)
    initial_defaults: dict[str, tuple[str, list[int]]] = field(default_factory=dict)
    digest_configs: dict[int, p4r.DigestEntry.Config] = field(default_factory=dict)
    now_us: Callable[[], int] = lambda: 0  # the switch clock (idle timeout)

    @classmethod
    def create(cls, config: p4r.ForwardingPipelineConfig, index: P4InfoIndex, pipeline: Pipeline,
               program_source: str) -> DeviceState:
        state = cls(config, index, pipeline, program_source)
        state.action_by_name = {a.preamble.name: a for a in index.actions.values()}
        state.initial_defaults = {
            name: (table.default_action[0], list(table.default_action[1]))
            for name, table in pipeline.tables.items()
        }
        return state
