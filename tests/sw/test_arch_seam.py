"""The architecture seam and the extern registry of the built-in target: a program is run by the
architecture of its `main` package (others refused, naming what runs); every extern v1model.p4
declares is in v1model's registry (or refused); an extern is one class and one registry line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from testpaths import REPO

from lgkit.cli import main
from lgkit.sw.exec.arch import registry
from lgkit.sw.exec.arch.v1model import V1MODEL, V1Model
from lgkit.sw.exec.externs.base import ExternFunction, Registry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_source

V1MODEL_P4 = REPO / "lgkit/sw/lang/p4include/v1model.p4"

PROGRAM = """#include <core.p4>
#include <v1model.p4>
%s
header h_t { bit<8> a; bit<8> b; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in pk, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { %s sm.egress_spec = 2; }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out pk, in hs hdr) { apply { pk.emit(hdr.h); } }
%s
"""
V1_MAIN = "V1Switch(P(), VC(), I(), E(), CC(), D()) main;"


def test_a_v1model_program_runs_on_the_v1model_architecture() -> None:
    pipeline = Pipeline.load(compile_source(PROGRAM % ("", "", V1_MAIN), "p.p4"), engine="python")
    assert pipeline.arch is V1MODEL  # on the native engine, what NativeUntimed wraps
    assert pipeline.run_untimed(1, b"\x01\x02") == [(2, b"\x01\x02")]


def test_another_package_is_refused_naming_the_architectures(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    other = "package Other(Parser<hs, m_t> p);\nOther(P()) main;"
    program = tmp_path / "other.p4"
    program.write_text(PROGRAM % ("", "", other))
    with pytest.raises(P4Error, match=r"unsupported: package Other: the built-in target runs "
                                      r"V1Switch \(v1model\)"):
        Pipeline.load(compile_source(program.read_text(), "other.p4"))
    assert main(["compile", str(program), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error: unsupported: package Other" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_every_v1model_extern_is_registered() -> None:
    text = V1MODEL_P4.read_text()
    declared = set(re.findall(r"^extern (?:void )?(\w+)", text, re.M))
    registered = set(V1MODEL.externs.types) | set(V1MODEL.externs.functions)
    assert declared - registered == {"Checksum16"}  # refused: `unsupported: extern Checksum16`
    assert registered - declared == {"verify"}  # core.p4's


class Twice(ExternFunction):
    """A toy extern function: out = 2 * value."""

    name = "twice"

    def emit(self, calls: Any, fx: Any, call: ir.Call, args: list[Any]) -> str:
        fx.stmts.store_code(fx, args[0], f"({fx.eg.ex(args[1])} * 2) & 0xFF")
        return ""


class Toy(V1Model):
    """v1model plus one extern: a second architecture is a module like this and a line in
    registry.ARCHITECTURES."""

    name = "toy"
    package = "ToySwitch"
    externs = Registry.of(*V1MODEL.externs.types.values(), *V1MODEL.externs.functions.values(),
                          Twice())


def test_an_extern_is_a_class_and_a_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    decl = "extern void twice(out bit<8> o, in bit<8> i);"
    toy_main = ("package ToySwitch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, "
                "Ingress<H, M> ig, Egress<H, M> eg, ComputeChecksum<H, M> ck, Deparser<H> dep);"
                "\nToySwitch(P(), VC(), I(), E(), CC(), D()) main;")
    source = PROGRAM % (decl, "twice(hdr.h.b, hdr.h.a);", toy_main)
    with pytest.raises(P4Error, match="unsupported: package ToySwitch"):
        Pipeline.load(compile_source(source, "toy.p4"))
    monkeypatch.setattr(registry, "ARCHITECTURES", (*registry.ARCHITECTURES, Toy()))
    pipeline = Pipeline.load(compile_source(source, "toy.p4"))
    assert pipeline.arch.name == "toy"
    assert pipeline.run_untimed(1, b"\x81\x00") == [(2, b"\x81\x02")]
    v1 = compile_source(PROGRAM % (decl, "twice(hdr.h.b, hdr.h.a);", V1_MAIN), "v1.p4")
    with pytest.raises(P4Error, match="unsupported: extern function 'twice'"):
        Pipeline.load(v1)
