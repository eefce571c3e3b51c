"""The authors' Tofino programs (linkguardian-tofino, MIT: read, never copied) on the built-in
target's TNA model: STF scenarios of their main paths (tests/tofino/authors), set up as their
bfrt scripts do. Skipped, with one line, when their tree is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import StfRunner, parse_stf

AUTHORS_ENV = "LGKIT_AUTHORS_TOFINO"  # as `lgkit tofino resources --authors` reads it
TREE = Path(os.environ.get(AUTHORS_ENV, "/work/shared/reference/linkguardian-tofino"))
PROGRAMS = {"sender": "switch_impl/system_impl/sender/sender.p4",
            "receiver": "switch_impl/system_impl/receiver/receiver.p4"}
# their setup-ae.py's mirror sessions' max_pkt_len (the STF runner's mirroring_add sets none)
MAX_PKT_LEN = {"receiver": {49: 26, 300: 16}}


def run(role: str, scenario: str | None = None) -> tuple[Pipeline, list[str]]:
    """A scenario (default: the role's) on the role's program; the failures (empty: passed)."""
    program = TREE / PROGRAMS[role]
    if not program.is_file():
        pytest.skip(f"the authors' linkguardian-tofino tree is absent ({TREE}; ${AUTHORS_ENV})")
    # their build gives TIMEOUT_VAL_100NS (the receiver's timeout for 100G links)
    compiled = compile_file(str(program), defines={"TIMEOUT_VAL_100NS": "70"})
    pl = Pipeline.load(compiled)
    pl.mirror_max_len.update(MAX_PKT_LEN.get(role, {}))
    stf = TESTS / "tofino" / "authors" / f"{scenario or role}.stf"
    result = StfRunner(pl, build_p4info(compiled.ir), str(stf)).run(
        parse_stf(stf.read_text(), str(stf)))
    failures = result.check_failures + [
        f"port {d.port}: expected {[e.pattern for e in d.expected]}, got "
        f"{[p.hex().upper() for p in d.received]}" for d in result.diffs]
    return pl, failures


def test_their_sender_numbers_buffers_and_retransmits() -> None:
    pl, failures = run("sender")
    assert not failures, failures
    # the notification marked seq 0's hole; the copy's pass took it
    assert pl.registers["SwitchIngress.reg_holes_1"].read(0) == 0


def test_their_receiver_detects_losses_and_notifies() -> None:
    pl, failures = run("receiver")
    assert not failures, failures
    # the port metadata's orig_ig_port 36 keeps the state: the dummy set the expected seq to 4
    assert pl.registers["SwitchIngress.reg_expected_seq_no"].read(36) == 4
    assert pl.registers["SwitchIngress.reg_hole_sizes"].read(1) == 2  # two holes of size 1
    assert pl.registers["SwitchEgress.reg_leading_ack"].read(36) == 0  # the update's ACK


def test_their_receiver_buffers_and_delivers_in_order() -> None:
    pl, failures = run("receiver", "receiver_buffer")
    assert not failures, failures
    # reg_ack (ack, time remaining) of orig_ig_port 36: 0, 1 and 2 moved it to 3
    assert pl.struct_registers["SwitchIngress.reg_ack"].read(36) == [3, 70]
