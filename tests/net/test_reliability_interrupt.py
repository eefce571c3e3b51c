"""Interrupted experiments leave nothing behind (the small variant of `lgkit interrupt-test`):
three Ctrl-C 0.3 s apart during a run on the built-in target, SIGTERM, and SIGKILL of both the
runner and its watchdog (then one `lgkit clean` removes everything and marks the run
incomplete)."""

from __future__ import annotations

import random

import pytest
from test_net_support import assert_machine_clean, network_lock

from lgkit.net.lifecycle.interrupt import interrupt_run

pytestmark = pytest.mark.root


@pytest.mark.parametrize(("target", "flow_s", "action", "after", "needs_clean"), [
    ("builtin", 3.0, "sigint x3", "results:", False),  # during set-up (switches, P4Runtime)
    ("builtin", 3.0, "sigterm", "results:", False),  # SIGTERM ~2 s into a demo: the build
    ("lxbr", 20.0, "sigterm", "phase lg_off:", False),  # mid-flow
    ("lxbr", 20.0, "kill both", "phase lg_off:", True),
])
def test_an_interrupted_run_leaves_nothing(tmp_path, target, flow_s, action, after,
                                           needs_clean):
    with network_lock():
        assert_machine_clean()
    outcome = interrupt_run(0, action, 0.5, tmp_path, target, flow_s, random.Random(1), after)
    assert outcome.delivered, "the run ended before its signal"
    assert outcome.status == "incomplete", (tmp_path / "run0.log").read_text()
    assert outcome.needed_clean == needs_clean
    assert not any(outcome.left.values()), outcome.left
    with network_lock():
        assert_machine_clean()
