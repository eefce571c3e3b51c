"""P4Info of the newer language constructs (tests/stf programs, tests/p4/lang) as p4c writes
it: ids checked against p4c 1.2.5.16 (p4c-bm2-ss --p4runtime-files), and the whole P4Info
compared with the installed p4c when there is one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info

STF = TESTS / "stf"
LANG = TESTS / "p4" / "lang"
PROGRAMS = ["assign_order", "compound_assign", "direct_apply", "enum_keys", "header_structs",
            "action_profiles"]


def source(name: str) -> Path:
    return STF / f"{name}.p4" if (STF / f"{name}.p4").is_file() else LANG / f"{name}.p4"


def p4info(name: str) -> p4i.P4Info:
    return build_p4info(compile_file(str(source(name))).ir)


def ids(info: p4i.P4Info) -> dict[str, int]:
    entities = list(info.tables) + list(info.actions)
    return {e.preamble.name: e.preamble.id for e in entities}


def test_direct_application_is_named_after_the_type() -> None:
    assert ids(p4info("direct_apply")) == {
        "MyIngress.Rewrite.by_port": 47976916,
        "MyIngress.Rewrite.set_value": 29203687,
        "NoAction": 21257015,
    }


def test_enum_keys_list_the_enum_in_type_info() -> None:
    info = p4info("enum_keys")
    assert ids(info) == {
        "MyIngress.exact_t": 50094795,
        "MyIngress.ternary_t": 39645146,
        "MyIngress.lpm_t": 37005093,
        "MyIngress.mark_exact": 31553165,
        "MyIngress.mark_ternary": 19667019,
        "MyIngress.mark_lpm": 29359626,
        "NoAction": 21257015,
    }
    kinds = [f.match_type for t in info.tables for f in t.match_fields]
    assert kinds == [p4i.MatchField.EXACT, p4i.MatchField.TERNARY, p4i.MatchField.LPM]
    proto = info.type_info.serializable_enums["Proto"]
    assert proto.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in proto.members] == [
        ("TCP", b"\x06"), ("UDP", b"\x11"), ("ICMP", b"\x01")]


def test_action_profiles_and_selectors_as_p4c() -> None:
    info = p4info("action_profiles")
    assert ids(info) == {
        "ApIngress.by_member": 42139117,
        "ApIngress.by_group": 39962907,
        "ApIngress.set_out": 30590944,
        "NoAction": 21257015,
    }
    by_member, by_group = info.tables
    assert (by_member.implementation_id, by_group.implementation_id) == (295519055, 295906009)
    assert [f.name for f in by_group.match_fields] == ["hdr.h.key"]  # the selector key is not
    profiles = [(p.preamble.name, p.preamble.id, list(p.table_ids), p.with_selector, p.size)
                for p in info.action_profiles]
    assert profiles == [("ApIngress.members", 295519055, [42139117], False, 128),
                        ("ApIngress.balancer", 295906009, [39962907], True, 64)]
    members, balancer = info.action_profiles
    assert not members.HasField("sum_of_members") and members.max_group_size == 0
    assert (balancer.max_group_size, balancer.sum_of_members.max_member_weight) == (8, 4)
    assert list(balancer.preamble.annotations) == []  # the three became fields


def test_action_profiles_load_with_their_tables() -> None:
    pipeline = Pipeline.load(compile_file(str(source("action_profiles"))))
    members, balancer = (pipeline.action_profiles[n]
                         for n in ("ApIngress.members", "ApIngress.balancer"))
    assert (members.size, members.selector, balancer.size, balancer.selector) == (
        128, False, 64, True)
    assert [t.name for t in balancer.tables] == ["ApIngress.by_group"]
    assert balancer.action_names() == ["ApIngress.set_out", "NoAction"]


@pytest.mark.bmv2("p4c-bm2-ss")
@pytest.mark.parametrize("name", PROGRAMS)
def test_p4info_equals_the_installed_p4c(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.p4info.txtpb"
    subprocess.run(["p4c-bm2-ss", "-o", str(tmp_path / f"{name}.json"), "--p4runtime-files",
                    str(out), str(source(name))], check=True, capture_output=True)
    theirs = text_format.Parse(out.read_text(), p4i.P4Info())
    assert text_format.MessageToString(p4info(name)) == text_format.MessageToString(theirs)
