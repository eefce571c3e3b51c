"""The short variant of `lgkit soak-switch`: `lgkit switch` forwarding UDP at its rate between
two namespaced hosts keeps its resident memory flat after warm-up (growth under 5%)."""

from __future__ import annotations

import pytest
from testpaths import REPO

from lgkit.sw.tools.soak_switch import GOAL_GROWTH, soak

PROGRAM = str(REPO / "p4" / "basic.p4")


@pytest.mark.root
def test_switch_memory_stays_flat_while_forwarding():
    result = soak(PROGRAM, seconds=20, chunk_s=5, log=print)
    assert min(result["pps"]) > 1000  # it forwarded all along
    assert result["growth"] < GOAL_GROWTH, result["rss_mb"]
