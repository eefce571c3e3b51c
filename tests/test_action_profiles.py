"""Action profiles and selectors on the built-in target: members, groups, the choice by hash
(checked against BMv2 simple_switch where it is installed) and the control-plane rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.cli import main
from lgkit.sw.exec import v1model
from lgkit.sw.exec.interp.tables import Exact, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.tools.bmv2_stf import missing_tools

STF = Path(__file__).parent / "stf"
PROGRAM = STF / "action_selectors.p4"
MISSING = missing_tools()


@pytest.fixture
def pipeline() -> Pipeline:
    return Pipeline.load(compile_file(str(PROGRAM)))


def send(pipeline: Pipeline, tag: int, flow: int = 0, port: int = 0) -> bytes:
    data = bytes([tag, flow >> 4, (flow & 15) << 4, port, 0, 0])
    (out,) = v1model.run_untimed(pipeline, 0, data)
    return out[1][4:]  # result, second


def test_members_run_their_action_and_follow_modification(pipeline: Pipeline) -> None:
    marks = pipeline.action_profiles["SelIngress.marks"]
    marks.add_member(10, "SelIngress.mark", [0x11])
    pipeline.tables["SelIngress.by_tag"].insert(TableEntry([None], "", member=10, priority=1))
    assert send(pipeline, 0x40) == bytes([0, 0x11])
    marks.modify_member(10, "SelIngress.mark", [0x22])
    assert send(pipeline, 0x40) == bytes([0, 0x22])


def test_groups_spread_flows_and_change_with_their_members(pipeline: Pipeline) -> None:
    balancer = pipeline.action_profiles["SelIngress.balancer"]
    for member in range(4):
        balancer.add_member(member, "SelIngress.set_result", [0xa0 + member])
    balancer.set_group(7, {0: 1, 1: 1, 2: 1, 3: 1}, insert=True)
    pipeline.tables["SelIngress.spread"].insert(TableEntry([Exact(0x10)], "", group=7))
    chosen = {send(pipeline, 0x10, flow, 3)[0] for flow in range(64)}
    assert chosen == {0xa0, 0xa1, 0xa2, 0xa3}
    same_flow = {send(pipeline, 0x10, 99, 3) for _ in range(5)}
    assert len(same_flow) == 1  # a flow sticks to its member
    balancer.set_group(7, {2: 1})
    assert {send(pipeline, 0x10, flow, 3)[0] for flow in range(16)} == {0xa2}
    balancer.set_group(7, {})  # an empty group runs no action (BMv2: "yielded empty group")
    assert send(pipeline, 0x10, 5, 3) == bytes([0, 0])


def test_control_plane_rules(pipeline: Pipeline) -> None:
    balancer = pipeline.action_profiles["SelIngress.balancer"]
    marks = pipeline.action_profiles["SelIngress.marks"]
    spread = pipeline.tables["SelIngress.spread"]
    balancer.add_member(1, "SelIngress.set_both", [1, 2])
    with pytest.raises(KeyError, match="member 1 exists"):
        balancer.add_member(1, "SelIngress.set_result", [1])
    with pytest.raises(ValueError, match="not an action of its tables"):
        balancer.add_member(2, "SelIngress.mark", [1])
    with pytest.raises(ValueError, match="takes 2 parameters"):
        balancer.add_member(2, "SelIngress.set_both", [1])
    with pytest.raises(ValueError, match="no groups"):
        marks.set_group(1, {}, insert=True)
    with pytest.raises(KeyError, match="no member 9"):
        balancer.set_group(1, {9: 1}, insert=True)
    balancer.set_group(1, {1: 1}, max_size=1, insert=True)
    balancer.add_member(2, "SelIngress.set_result", [2])
    with pytest.raises(ValueError, match="at most 1 members"):
        balancer.set_group(1, {1: 1, 2: 1})
    with pytest.raises(ValueError, match="is in a group"):
        balancer.delete_member(1)
    with pytest.raises(ValueError, match="no group 2"):
        spread.insert(TableEntry([Exact(1)], "", group=2))
    with pytest.raises(ValueError, match="one member or one group"):
        spread.insert(TableEntry([Exact(1)], "", member=1, group=1))
    spread.insert(TableEntry([Exact(1)], "", group=1))
    with pytest.raises(ValueError, match="used by a table entry"):
        balancer.delete_group(1)
    spread.delete(TableEntry([Exact(1)], ""))
    balancer.delete_group(1)
    balancer.delete_member(1)
    balancer.delete_member(2)
    assert not balancer.members and not balancer.groups


def test_member_handles_are_bmv2s_lowest_free(pipeline: Pipeline) -> None:
    balancer = pipeline.action_profiles["SelIngress.balancer"]
    for member in (30, 10, 20):
        balancer.add_member(member, "SelIngress.set_result", [member])
    balancer.delete_member(30)  # frees handle 0
    balancer.add_member(40, "SelIngress.set_result", [40])
    assert {m: balancer.members[m].handle for m in balancer.members} == {10: 1, 20: 2, 40: 0}
    balancer.set_group(1, {10: 1, 20: 1, 40: 1}, insert=True)
    assert [m.member_id for m in balancer.groups[1].chosen] == [40, 10, 20]


@pytest.mark.skipif(bool(MISSING), reason=f"BMv2: {', '.join(MISSING)} not on PATH")
def test_selection_equals_simple_switch(capsys: pytest.CaptureFixture[str]) -> None:
    stf = str(STF / "action_selectors.stf")
    assert main(["stf", "--target", "both", str(PROGRAM), stf]) == 0
    assert "SAME" in capsys.readouterr().out
