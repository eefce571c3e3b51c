"""Scenario bindings (lgkit/tofino/scenarios.py): `#!` lines resolved per program, names and
values renamed, what a program lacks dropped with its reason, bad binding files refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.sw.tools.stf import AddStmt, CommandStmt
from lgkit.tofino.scenarios import (
    REFERENCE,
    Binding,
    BindingError,
    RegisterStmt,
    bind_scenario,
    load_binding,
    select_lines,
)

TEXT = """\
expect 2 0102 #! not tofino: PFC instead of an LG pause frame
#! tofino: expect 2 0304
#! skip other: the model lacks the packet generator
register_read lg_x 2 == 1
"""


def test_directives_pick_each_programs_lines_keeping_line_numbers() -> None:
    assert select_lines(TEXT, "v1model") == (
        "expect 2 0102 \n\n\nregister_read lg_x 2 == 1", None)
    assert select_lines(TEXT, "tofino") == ("\nexpect 2 0304\n\nregister_read lg_x 2 == 1",
                                            None)
    assert select_lines(TEXT, "other")[1] == "the model lacks the packet generator"


def test_names_values_and_reasons(tmp_path: Path) -> None:
    stf = tmp_path / "s.stf"
    stf.write_text("add A.t port:2 A.act(x:1)\nadd A.u port:2 A.act(x:1)\n"
                   "register_write lg_seq 2 5\nregister_read lg_gone 2 == 0\n"
                   "counter_read lg_c 2 packets == 1\n")
    binding = Binding(tag="t", tables={"A.t": {"to": "B.t", "keys": {"port": "meta.port"}},
                                       "A.u": {"none": "one lookup"}},
                      actions={"A.act": "B.act"},
                      registers={"lg_seq": {"to": "B.seq", "shift": 15},
                                 "lg_gone": {"none": "kept elsewhere"}},
                      counters={"lg_c": "B.c"})
    scenario = bind_scenario(stf, binding)
    add, write, count = scenario.stmts
    assert isinstance(add, AddStmt) and (add.table, add.action, add.keys) == (
        "B.t", "B.act", [("meta.port", "2")])
    assert isinstance(write, RegisterStmt) and write.bound == {"to": "B.seq", "shift": 15}
    assert isinstance(count, CommandStmt) and count.words[0] == "B.c"
    assert scenario.notes == ["not in this program: table A.u: one lookup",
                              "not in this program: register lg_gone: kept elsewhere"]


def test_a_program_without_a_binding_file_runs_the_scenarios_as_written(
        tmp_path: Path) -> None:
    assert load_binding(tmp_path / "p.p4") is REFERENCE
    (tmp_path / "p.stf.json").write_text('{"tables": {}}')
    with pytest.raises(BindingError, match="not a scenario binding"):
        load_binding(tmp_path / "p.p4")
