"""On BMv2, ingress and egress run in different threads and only the register operations of
one action are atomic: the counters that both update are read and written in one action of the
compiled program. A split read-modify-write loses updates: in LinkGuardian a lost count of
pending notifications let ACKs pass a hole before its notification, and the packet was lost; in
Vertigo the queue-length estimates lost egress's -1s, only grew, and ports looked full forever."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from testpaths import REPO

P4C = shutil.which("p4c-bm2-ss")
SHARED = {
    "linkguardian": ("lg_rx_notify_pending", "lg_ack_budget", "lg_tx_buf_bytes",
                     "lg_tx_buf_pkts", "lg_rx_buf_bytes", "lg_rx_buf_pkts"),
    "vertigo": ("vertigo_qlen", "vertigo_qlen_band", "vertigo_qlen_max"),
}
"Per program, registers one thread counts up (or resets) while the other counts down."
STORES = {"lg_ack_budget": "ack_repeat"}
"Plain stores that need no read: the receiver resets the ACK budget to ackRepeat."


@pytest.mark.bmv2("p4c-bm2-ss")
@pytest.mark.parametrize("name", sorted(SHARED))
def test_shared_counters_are_updated_in_one_action(tmp_path: Path, name: str) -> None:
    out = tmp_path / f"{name}.json"
    subprocess.run([P4C, "-o", str(out), str(REPO / "p4" / f"{name}.p4")], check=True,
                   capture_output=True, timeout=300)
    program = json.loads(out.read_text())
    for action in program["actions"]:
        reads, writes = set(), {}
        for prim in action["primitives"]:
            if prim["op"] not in ("register_read", "register_write"):
                continue
            register = next(p["value"] for p in prim["parameters"]
                            if p["type"] == "register_array")
            if prim["op"] == "register_read":
                reads.add(register)
            else:
                writes[register] = prim["parameters"][-1]
        for register, value in writes.items():
            if register not in SHARED[name] or register in reads:
                continue
            # A write without a read in the same action must not depend on an earlier read:
            # a constant (a reset) or a known store.
            store = STORES.get(register)
            assert value["type"] == "hexstr" or (store and store in str(value["value"])), (
                f"{register} written in {action['name']} from {value} without being read "
                "in the same action")
