"""Parser value sets: P4Info as p4c writes it, matching in the parser through the pipeline
API, and ValueSetEntry writes and reads over P4Runtime on a running switch."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4i, p4r
from test_p4rt_support import (
    RunningSwitch,
    StreamClient,
    batch_errors,
    compile_program,
    forwarding_config,
    set_pipeline,
)
from testpaths import TESTS

from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.exec.pipeline import Exact, Pipeline, Ternary
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info

PROGRAM = TESTS / "p4" / "p4rt" / "value_sets.p4"
PORTS_ID, PAIRS_ID = 55707568, 58830465  # as p4c-bm2-ss 1.2.5.16 assigns them
MODIFY, INSERT = p4r.Update.MODIFY, p4r.Update.INSERT
CODE = {code.value[0]: code for code in grpc.StatusCode}
EXACT = p4i.MatchField.EXACT


def probe(port: int, code: int) -> bytes:
    return port.to_bytes(2, "big") + bytes([code, 0])


def path_of(out: list[tuple[int, bytes]]) -> int:
    assert len(out) == 1
    return out[0][1][3]


def test_p4info_lists_the_value_sets_as_p4c() -> None:
    info = build_p4info(compile_file(str(PROGRAM)).ir)
    ports, pairs = info.value_sets
    assert (ports.preamble.name, ports.preamble.id, ports.size) == ("VsParser.ports",
                                                                    PORTS_ID, 4)
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in ports.match] == [
        (1, "", 16, EXACT)]
    assert (pairs.preamble.name, pairs.preamble.id, pairs.size) == ("VsParser.pairs",
                                                                    PAIRS_ID, 2)
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in pairs.match] == [
        (1, "port", 16, EXACT), (2, "code", 8, p4i.MatchField.TERNARY)]


def test_selects_match_the_members() -> None:
    pipeline = Pipeline.load(compile_file(str(PROGRAM)))
    assert path_of(run_untimed(pipeline, 0, probe(80, 7))) == 0  # empty sets match nothing
    pipeline.value_sets["VsParser.ports"].set_members([[Exact(80)], [Exact(443)]])
    pipeline.value_sets["VsParser.pairs"].set_members([[Exact(22), Ternary(0x10, 0xF0)]])
    assert path_of(run_untimed(pipeline, 0, probe(443, 0))) == 1
    assert path_of(run_untimed(pipeline, 0, probe(22, 0x1A))) == 2
    assert path_of(run_untimed(pipeline, 0, probe(22, 0x2A))) == 0
    with pytest.raises(ValueError, match="at most 2"):
        pipeline.value_sets["VsParser.pairs"].set_members([[Exact(1), None]] * 3)
    assert path_of(run_untimed(pipeline, 0, probe(22, 0x1A))) == 2  # unchanged


@pytest.fixture
def switch(tmp_path):
    running = RunningSwitch()
    client = StreamClient(running.port)
    client.become_primary(10)
    set_pipeline(client, forwarding_config(*compile_program(PROGRAM, tmp_path)))
    yield running, client
    client.close()
    running.stop()


def member(*fields: p4r.FieldMatch) -> p4r.ValueSetMember:
    return p4r.ValueSetMember(match=list(fields))


def exact(field_id: int, value: int, width: int = 2) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=field_id,
                          exact=p4r.FieldMatch.Exact(value=value.to_bytes(width, "big")))


def write(client: StreamClient, kind: int, value_set_id: int, *members) -> None:
    entry = p4r.ValueSetEntry(value_set_id=value_set_id, members=list(members))
    client.write(p4r.Update(type=kind, entity=p4r.Entity(value_set_entry=entry)))


def test_value_set_entries_over_p4runtime(switch) -> None:
    running, client = switch
    write(client, MODIFY, PORTS_ID, member(exact(1, 80)), member(exact(1, 443)))
    ternary = p4r.FieldMatch(field_id=2, ternary=p4r.FieldMatch.Ternary(value=b"\x10",
                                                                         mask=b"\xf0"))
    write(client, MODIFY, PAIRS_ID, member(exact(1, 22), ternary))
    found = client.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry()))
    by_id = {e.value_set_entry.value_set_id: e.value_set_entry for e in found}
    assert [m.match[0].exact.value for m in by_id[PORTS_ID].members] == [b"\x50", b"\x01\xbb"]
    assert by_id[PAIRS_ID].members[0].match[1].ternary.mask == b"\xf0"
    running.inject(1, probe(443, 0))
    running.inject(1, probe(22, 0x15))
    running.inject(1, probe(53, 0))  # a marker (path 0): no extra frame may come before it
    frames = [running.ports[1].frames.get(timeout=5) for _ in range(3)]
    assert [f[3] for f in frames] == [1, 2, 0]


@pytest.mark.parametrize(("kind", "value_set_id", "members", "code"), [
    (INSERT, PORTS_ID, 1, grpc.StatusCode.INVALID_ARGUMENT),  # value sets are only modified
    (MODIFY, 0x03000001, 1, grpc.StatusCode.NOT_FOUND),
    (MODIFY, PORTS_ID, 5, grpc.StatusCode.RESOURCE_EXHAUSTED),  # size 4
])
def test_bad_value_set_writes(switch, kind: int, value_set_id: int, members: int,
                              code: grpc.StatusCode) -> None:
    _, client = switch
    with pytest.raises(grpc.RpcError) as info:
        write(client, kind, value_set_id, *[member(exact(1, 80 + i)) for i in range(members)])
    assert [CODE[e.canonical_code] for e in batch_errors(info.value)] == [code]
