"""TNA's DirectRegister / DirectRegisterAction on the built-in target: a cell per table entry
(tests/p4/tna/direct), what the control plane sees of it, and what is refused."""

from __future__ import annotations

import pytest
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.exec.interp.tables import Exact, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source

FOLDER = TESTS / "p4" / "tna" / "direct"
PROGRAM = FOLDER / "direct.p4"
FRAME = bytes.fromhex("000000000002 000000000001 0800 01".replace(" ", ""))


def test_stf(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stf", str(PROGRAM), str(FOLDER / "hits.stf")]) == 0
    assert "PASS" in capsys.readouterr().out


def test_each_entry_keeps_its_own_cell() -> None:
    pl = Pipeline.load(compile_file(str(PROGRAM)))
    t = pl.tables["I.t"]
    t.insert(TableEntry([Exact(1)], "I.fwd", [2]))
    t.insert(TableEntry([Exact(4)], "I.fwd", [2]))
    pl.tables["I.u"].insert(TableEntry([Exact(0x0800)], "I.acc", []))
    for port in (1, 1, 1, 4):
        pl.run_untimed(port, FRAME)
    by_port = {e.keys[0].value: e.register for e in t.entries()}  # type: ignore[union-attr]
    assert by_port == {1: 103, 4: 101}
    assert [e.register for e in pl.tables["I.u"].entries()] == [[4, 4 * 0x0800]]
    # the cell is the entry's: a new entry for port 1 starts again from the initial value
    t.delete(t.entries()[0])
    t.insert(TableEntry([Exact(1)], "I.fwd", [2]))
    out = pl.run_untimed(1, FRAME)
    assert out[0][1][10:12] == (101).to_bytes(2, "big")


HEAD = PROGRAM.read_text().split("control I(")[0]
TAIL = "control ID(" + PROGRAM.read_text().split("control ID(")[1]
CONTROL = """control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t i,
          in ingress_intrinsic_metadata_from_parser_t pr,
          inout ingress_intrinsic_metadata_for_deparser_t d,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    %s
    apply { %s }
}
"""


@pytest.mark.parametrize(("body", "apply", "message"), [
    ("DirectRegister<bit<16>>() r; action a() { h.eth.etype = r.read(); }"
     "table t { key = { i.ingress_port : exact; } actions = { a; } registers = r; }",
     "t.apply();", "unsupported: DirectRegister.read"),
    ("Register<bit<16>, bit<1>>(2) r; DirectRegisterAction<bit<16>, bit<16>>(r) x = "
     "{ void apply(inout bit<16> v) { v = 1; } };", "",
     "type mismatch: expected DirectRegister<bit<16>>, got Register<bit<16>, bit<1>>"),
    ("DirectRegister<bit<16>>() r; DirectRegisterAction<bit<16>, bit<16>>(r) x = "
     "{ void apply(inout bit<16> v) { v = 1; } }; action a() { x.predicate(); }"
     "table t { key = { i.ingress_port : exact; } actions = { a; } registers = r; }",
     "t.apply();", "unsupported: DirectRegisterAction.predicate"),
])
def test_unmodelled_uses_are_refused(body: str, apply: str, message: str) -> None:
    with pytest.raises(P4Error, match=message):
        Pipeline.load(compile_source(HEAD + CONTROL % (body, apply) + TAIL))


def test_this_in_a_register_action_is_checked_and_its_own_execute_refused() -> None:
    body = ("Register<bit<16>, bit<1>>(2) r; RegisterAction<bit<16>, bit<1>, bit<16>>(r) x = "
            "{ void apply(inout bit<16> v, out bit<16> rv) { rv = this.execute(0); } };"
            "action a() { h.eth.etype = x.execute(0); }"
            "table t { key = { i.ingress_port : exact; } actions = { a; } }")
    program = compile_source(HEAD + CONTROL % (body, "t.apply();") + TAIL)  # the frontend's
    with pytest.raises(P4Error, match="unsupported: RegisterAction.execute of the instance "
                       "inside its own apply"):
        Pipeline.load(program)

