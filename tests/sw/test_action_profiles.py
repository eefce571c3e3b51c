"""Action profiles and selectors on the built-in target: members, groups, the choice by hash
(checked against BMv2 simple_switch where it is installed) and the control-plane rules."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4r
from test_p4rt_support import (
    RunningSwitch,
    StreamClient,
    batch_errors,
    compile_program,
    forwarding_config,
    set_pipeline,
)
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.exec.arch.v1model import passes as v1model
from lgkit.sw.exec.interp.tables import Exact, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info

STF = TESTS / "stf"
PROGRAM = STF / "action_selectors.p4"
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
CODE = {code.value[0]: code for code in grpc.StatusCode}


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
    with pytest.raises(ValueError, match="no default action"):
        spread.set_default("NoAction", [])
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


@pytest.mark.bmv2
def test_selection_equals_simple_switch(capsys: pytest.CaptureFixture[str]) -> None:
    stf = str(STF / "action_selectors.stf")
    assert main(["stf", "--target", "both", str(PROGRAM), stf]) == 0
    assert "SAME" in capsys.readouterr().out


# --------------------------------------------------------------------------- P4Runtime


@pytest.fixture
def p4rt(tmp_path):
    running = RunningSwitch()
    client = StreamClient(running.port)
    client.become_primary(10)
    p4info_path, config_path = compile_program(PROGRAM, tmp_path)
    set_pipeline(client, forwarding_config(p4info_path, config_path))
    info = build_p4info(compile_file(str(PROGRAM)).ir)
    ids = {o.preamble.name.split(".")[-1]: o.preamble.id
           for kind in ("tables", "actions", "action_profiles") for o in getattr(info, kind)}
    yield running, client, ids
    client.close()
    running.stop()


def u(kind: int, **entity) -> p4r.Update:
    return p4r.Update(type=kind, entity=p4r.Entity(**entity))


def member(ids: dict[str, int], member_id: int, action: str, *values: int) -> p4r.Update:
    call = p4r.Action(action_id=ids[action], params=[
        p4r.Action.Param(param_id=i + 1, value=bytes([v])) for i, v in enumerate(values)])
    return u(INSERT, action_profile_member=p4r.ActionProfileMember(
        action_profile_id=ids["balancer"], member_id=member_id, action=call))


def group(ids: dict[str, int], group_id: int, members: list[int], kind: int = INSERT,
          weight: int = 1) -> p4r.Update:
    return u(kind, action_profile_group=p4r.ActionProfileGroup(
        action_profile_id=ids["balancer"], group_id=group_id, max_size=8,
        members=[p4r.ActionProfileGroup.Member(member_id=m, weight=weight) for m in members]))


def spread_entry(ids: dict[str, int], tag: int, **target: int) -> p4r.TableEntry:
    entry = p4r.TableEntry(table_id=ids["spread"], match=[p4r.FieldMatch(
        field_id=1, exact=p4r.FieldMatch.Exact(value=bytes([tag])))])
    for name, value in target.items():
        setattr(entry.action, name, value)
    return entry


def stf_packets(tag: int) -> list[tuple[bytes, bytes]]:
    """The (packet, expected) pairs of tests/stf/action_selectors.stf (simple_switch's output)
    for one tag."""
    lines = (STF / "action_selectors.stf").read_text().splitlines()
    pairs = [(bytes.fromhex(a.split()[2]), bytes.fromhex(b.split()[2]))
             for a, b in zip(lines, lines[1:], strict=False)
             if a.startswith("packet") and b.startswith("expect")]
    return [(p, e[:4] + bytes([e[4], 0])) for p, e in pairs if p[0] == tag]


def test_members_groups_and_entries_over_p4runtime(p4rt) -> None:
    running, client, ids = p4rt
    # the STF test's setup: members 0..6 (handles 0..6), group 0 = {4, 0, 6, 2, 3}
    client.write(*[member(ids, m, "set_result", 0xa0 + m) for m in range(6)],
                 member(ids, 6, "set_both", 0xee, 0x01))
    client.write(group(ids, 0, [4, 0, 6, 2, 3]), group(ids, 1, [5]))
    client.write(u(INSERT, table_entry=spread_entry(ids, 0x10, action_profile_group_id=0)),
                 u(INSERT, table_entry=spread_entry(ids, 0x30, action_profile_member_id=1)))
    cases = stf_packets(0x10)
    assert len(cases) == 24
    for packet, _ in cases:
        running.inject(1, packet)
    got = [running.ports[1].frames.get(timeout=5) for _ in cases]
    # set_both's second byte is the member's; the by_tag table is empty here (second = 0)
    assert [g[:5] for g in got] == [e[:5] for _, e in cases]
    members = client.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember()))
    assert [e.action_profile_member.member_id for e in members] == list(range(7))
    groups = client.read(p4r.Entity(action_profile_group=p4r.ActionProfileGroup(
        action_profile_id=ids["balancer"], group_id=0)))  # id 0: every group
    assert {e.action_profile_group.group_id: sorted(m.member_id for m in
                                                    e.action_profile_group.members)
            for e in groups} == {0: [0, 2, 3, 4, 6], 1: [5]}
    entries = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ids["spread"])))
    targets = sorted((e.table_entry.action.WhichOneof("type"),
                      e.table_entry.match[0].exact.value) for e in entries)
    assert targets == [("action_profile_group_id", b"\x10"), ("action_profile_member_id", b"\x30")]
    client.write(group(ids, 0, [5], kind=MODIFY))  # the group now runs member 5 only
    running.inject(1, cases[0][0])
    assert running.ports[1].frames.get(timeout=5)[4] == 0xa5


@pytest.mark.parametrize(("case", "code"), [
    ("member in use", grpc.StatusCode.FAILED_PRECONDITION),
    ("group in use", grpc.StatusCode.FAILED_PRECONDITION),
    ("unknown member in an entry", grpc.StatusCode.NOT_FOUND),
    ("unknown member in a group", grpc.StatusCode.NOT_FOUND),
    ("an action in an indirect table", grpc.StatusCode.INVALID_ARGUMENT),
    ("default of an indirect table", grpc.StatusCode.INVALID_ARGUMENT),
    ("a group in a profile without selector", grpc.StatusCode.INVALID_ARGUMENT),
    ("a member action of another table", grpc.StatusCode.INVALID_ARGUMENT),
    ("a weight", grpc.StatusCode.UNIMPLEMENTED),
    ("member exists", grpc.StatusCode.ALREADY_EXISTS),
])
def test_bad_action_profile_writes(p4rt, case: str, code: grpc.StatusCode) -> None:
    _, client, ids = p4rt
    client.write(member(ids, 1, "set_result", 1), group(ids, 1, [1]))
    client.write(u(INSERT, table_entry=spread_entry(ids, 1, action_profile_group_id=1)))
    direct = spread_entry(ids, 2)
    direct.action.action.action_id = ids["set_result"]
    default = p4r.TableEntry(table_id=ids["spread"], is_default_action=True)
    default.action.action.action_id = ids["NoAction"]
    marks_group = group(ids, 1, [])
    marks_group.entity.action_profile_group.action_profile_id = ids["marks"]
    bad = {
        "member in use": u(DELETE, action_profile_member=p4r.ActionProfileMember(
            action_profile_id=ids["balancer"], member_id=1)),
        "group in use": group(ids, 1, [], kind=DELETE),
        "unknown member in an entry": u(INSERT, table_entry=spread_entry(
            ids, 3, action_profile_member_id=9)),
        "unknown member in a group": group(ids, 2, [9]),
        "an action in an indirect table": u(INSERT, table_entry=direct),
        "default of an indirect table": u(MODIFY, table_entry=default),
        "a group in a profile without selector": marks_group,
        "a member action of another table": member(ids, 2, "mark", 1),
        "a weight": group(ids, 3, [1], weight=2),
        "member exists": member(ids, 1, "set_result", 2),
    }[case]
    with pytest.raises(grpc.RpcError) as info:
        client.write(bad)
    assert [CODE[e.canonical_code] for e in batch_errors(info.value)] == [code]
