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


def run(role: str) -> tuple[Pipeline, list[str]]:
    """The role's scenario on its program; the failures (empty: passed)."""
    program = TREE / PROGRAMS[role]
    if not program.is_file():
        pytest.skip(f"the authors' linkguardian-tofino tree is absent ({TREE}; ${AUTHORS_ENV})")
    # their build gives TIMEOUT_VAL_100NS (the receiver's timeout for 100G links)
    compiled = compile_file(str(program), defines={"TIMEOUT_VAL_100NS": "70"})
    pl = Pipeline.load(compiled)
    stf = TESTS / "tofino" / "authors" / f"{role}.stf"
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


def test_their_receiver_decapsulates_and_delivers_in_order() -> None:
    pl, failures = run("receiver")
    assert not failures, failures
    # reg_ack (ack, timeout) of orig_ig_port 0: the two blocking frames moved it to 2
    assert pl.struct_registers["SwitchIngress.reg_ack"].read(0)[0] == 2
