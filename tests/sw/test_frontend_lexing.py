"""Lexing and parsing details: literals, annotations, `>>` vs generics, operators, type names."""

from __future__ import annotations

import pytest

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend import P4Error, compile_source
from lgkit.sw.lang.frontend.lexer import parse_annotation, parse_int_literal, scan_type_names

PRELUDE = "#include <core.p4>\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8w0xFF", (255, 8, False)),
        ("16s-3", (-3, 16, True)),
        ("0b1010_1010", (0xAA, None, False)),
        ("0o17", (15, None, False)),
        ("0d99", (99, None, False)),
        ("1_000_000", (1000000, None, False)),
        ("32w0x0A_00_00_01", (0x0A000001, 32, False)),
        ("4s0b111", (7, 4, True)),
        ("0", (0, None, False)),
    ],
)
def test_int_literals(text: str, expected: tuple[int, int | None, bool]) -> None:
    assert parse_int_literal(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@hidden", ("hidden", [])),
        ('@name("ingress.t")', ("name", ['"ingress.t"'])),
        ("@field_list(1, 2)", ("field_list", ["1", "2"])),
        ('@pragma("a, b", f(x, y))', ("pragma", ['"a, b"', "f(x, y)"])),
        ("@id(0x01000001)", ("id", ["0x01000001"])),
    ],
)
def test_annotations(text: str, expected: tuple[str, list[str]]) -> None:
    assert parse_annotation(text) == expected


def _apply_body(body: str, params: str = "inout bit<8> a, inout bit<8> b") -> ir.Block:
    text = PRELUDE + f"control c({params}) {{ apply {{ {body} }} }}\n"
    from lgkit.sw.lang.frontend.check import Checker
    from lgkit.sw.lang.frontend.parser import parse_program

    program = parse_program(text, "x.p4")
    checker = Checker(program)
    for decl in program.decls:
        checker.check_top(decl)
    control = program.decls[-1]
    assert isinstance(control, ir.ControlDecl) and control.apply is not None
    return control.apply


def test_shift_right_versus_nested_type_arguments() -> None:
    block = _apply_body("tuple<bit<8>, bit<16>> p; a = a >> 2; b = b>>1; a = a > b ? a : b;")
    pair, shr1, shr2, tern = block.stmts
    assert isinstance(pair, ir.VarDecl)
    assert pair.type_ref.resolved == t.TupleT((t.BitsT(8), t.BitsT(16)))
    assert shr1.rhs.op == ">>" and shr2.rhs.op == ">>"
    assert tern.rhs.cond.op == ">"


def test_generic_call_with_nested_type_arguments() -> None:
    text = PRELUDE + (
        "parser p(packet_in pkt, out bit<16> v) { state start {\n"
        "  v = pkt.lookahead<bit<16>>(); transition accept; } }\n"
    )
    from lgkit.sw.lang.frontend.parser import parse_program

    program = parse_program(text, "x.p4")
    state = program.decls[-1].states[0]
    call = state.stmts[0].rhs
    assert isinstance(call, ir.Call) and call.type_args[0].name == "bit"


@pytest.mark.parametrize("op", ["|+|", "|-|", "++", "&", "|", "^", "<<", ">>", "%", "/", "*"])
def test_binary_operators_lex_as_one_token(op: str) -> None:
    body = f"bit<16> x = (bit<16>)(a {op} b);" if op != "++" else f"bit<16> x = a {op} b;"
    block = _apply_body(body)
    expr = block.stmts[0].init
    while isinstance(expr, ir.Cast):
        expr = expr.expr
    assert isinstance(expr, ir.Binary) and expr.op == op


def test_logical_and_is_not_a_mask_token() -> None:
    block = _apply_body(
        "switch (a) { 1: { b = 1; } default: { } }\n"
        "if (a == 8w1 && b == 8w2) { b = 3; }"
    )
    cond = block.stmts[1].cond
    assert cond.op == "&&" and cond.left.op == "=="


def test_keywords_usable_as_names() -> None:
    block = _apply_body("b = key + type + state + priority + entries + actions;",
                        "inout bit<8> key, in bit<8> type, in bit<8> state, in bit<8> priority,"
                        " in bit<8> entries, in bit<8> actions, inout bit<8> b")
    assert isinstance(block.stmts[0], ir.Assign)


def test_type_names_come_from_declarations_not_comments() -> None:
    names = scan_type_names('// header fields\n header h_t {}\n @name("struct s") struct s_t {}')
    assert {"h_t", "s_t"} <= names and "fields" not in names and "s" not in names


def test_unknown_type_message() -> None:
    with pytest.raises(P4Error) as info:
        compile_source("struct s { nope_t f; }", "x.p4")
    assert str(info.value) == "x.p4:1:12: error: unknown type 'nope_t'"


def test_type_names_redeclared_as_parameters_and_variables() -> None:
    text = PRELUDE + (
        "header hdr { bit<8> f; }\n"
        "struct hs { hdr h; }\n"
        "extern counter { counter(); }\n"
        "control c(inout hs hdr, inout bit<8> x) {\n"
        "    apply {\n"
        "        hdr.h.f = 1;\n"
        "        bit<8> counter = hdr.h.f;\n"
        "        if (x < counter) { x = counter; }\n"
        "    }\n"
        "}\n"
        "control d(inout hdr h) { apply { hdr copy = h; h.f = copy.f; } }\n"
    )
    from lgkit.sw.lang.frontend.check import Checker
    from lgkit.sw.lang.frontend.parser import parse_program

    program = parse_program(text, "x.p4")
    checker = Checker(program)
    for decl in program.decls:
        checker.check_top(decl)
    c, d = program.decls[-2], program.decls[-1]
    first = c.apply.stmts[0]
    assert isinstance(first.lhs, ir.Member) and first.lhs.expr.expr.decl is c.params[0]
    compare = c.apply.stmts[2].cond
    assert compare.op == "<" and compare.right.decl is c.apply.stmts[1]
    assert d.apply.stmts[0].type_ref.resolved.name == "hdr"


def test_constant_named_like_a_core_type_parameter() -> None:
    text = PRELUDE + "const bit<8> T = 3;\ncontrol c(inout bit<8> x) { apply { x = x + T; } }\n"
    from lgkit.sw.lang.frontend.parser import parse_program

    program = parse_program(text, "x.p4")
    assert program.decls[-2].name == "T"
    assign = program.decls[-1].apply.stmts[0]
    assert isinstance(assign.rhs.right, ir.PathExpr) and assign.rhs.right.name == "T"


def test_tuple_elements_by_constant_index() -> None:
    block = _apply_body("tuple<bit<8>, bool> p = { a, true }; b = p[0]; if (p[1]) { b = 1; }")
    read = block.stmts[1].rhs
    assert isinstance(read, ir.Index) and read.type == t.BitsT(8) and read.index.value == 0
    assert block.stmts[2].cond.type == t.BoolT()
    from lgkit.sw.lang.frontend.scope import CheckError

    with pytest.raises(CheckError, match="index 2 out of range"):
        _apply_body("tuple<bit<8>, bool> p = { a, true }; b = p[2];")
