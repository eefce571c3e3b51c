"""200 P4Runtime clients (each a StreamChannel and Reads in a loop) held against one
`lgkit switch`: all are served, and a probe's Capabilities and Read are answered within 1 s
(the old server had 32 threads: 32 streams starved every other RPC)."""

from __future__ import annotations

import pytest
from testpaths import REPO

from lgkit.sw.tools.p4rt_load import GOAL_S, probe_under_load, start_switch

PROGRAM = REPO / "p4" / "basic.p4"
CLIENTS = 200


@pytest.mark.slow
def test_two_hundred_clients_leave_unary_rpcs_answered_within_a_second(tmp_path):
    switch, address = start_switch(PROGRAM, tmp_path)
    try:
        result = probe_under_load(address, CLIENTS, seconds=6.0)
    finally:
        switch.terminate()
        assert switch.wait(10) == 0
    assert result["clients"]["streams"] == CLIENTS
    assert result["clients"]["reads"] > CLIENTS  # every client read, and more than once
    probes = result["capabilities"] + result["read"]
    print(f"probe latencies (s): max {max(p or 99 for p in probes):.3f}")
    assert len(probes) >= 10 and all(p is not None and p < GOAL_S for p in probes), probes
