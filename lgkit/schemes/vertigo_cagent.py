"""The C host agent (vertigo_agent/agent.c): built with the system C compiler against
libnetfilter_queue into the kit's C build cache on first use, one binary per source text."""

from __future__ import annotations

from pathlib import Path

from lgkit.sw.exec.native.build import compiled
from lgkit.sw.exec.native.layout import Unsupported

SOURCE = Path(__file__).with_name("vertigo_agent") / "agent.c"
FLAGS = ["-O2", "-Wall", "-std=gnu11"]
LIBS = ["-lnetfilter_queue"]


def build() -> tuple[Path | None, str]:
    """The built agent, building it if needed; (None, why) when it cannot be built."""
    try:
        return compiled(SOURCE.read_text(), FLAGS, ".agent", LIBS), ""
    except Unsupported as exc:
        return None, exc.what
