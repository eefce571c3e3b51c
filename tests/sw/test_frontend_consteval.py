"""Constant folding of `const` declarations follows P4 arithmetic (widths, signs, saturation)."""

from __future__ import annotations

import pytest

from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.check import Checker
from lgkit.sw.lang.frontend.parser import parse_program


def const_value_of(type_text: str, expr_text: str) -> object:
    text = (
        "enum bit<8> E { A = 3, B = 0xF0 }\n"
        f"const {type_text} X = {expr_text};\n"
    )
    program = parse_program(text, "c.p4")
    checker = Checker(program)
    for decl in program.decls:
        checker.check_top(decl)
    const = program.decls[-1]
    assert isinstance(const, ir.ConstDecl)
    return const.value


@pytest.mark.parametrize(
    ("type_text", "expr_text", "expected"),
    [
        ("bit<8>", "8w200 + 8w100", 44),
        ("bit<8>", "8w200 |+| 8w100", 255),
        ("bit<8>", "8w10 |-| 8w20", 0),
        ("int<8>", "8s100 |+| 8s100", 127),
        ("int<8>", "-8s100 |-| 8s100", -128),
        ("int<8>", "(int<8>)8w255", -1),
        ("bit<4>", "(bit<4>)16w0xABCD", 0xD),
        ("bit<16>", "8w0xAB ++ 8w0xCD", 0xABCD),
        ("bit<8>", "8w1 << 7", 128),
        ("bit<8>", "8w1 << 8", 0),
        ("int<8>", "-8s128 >> 1", -64),
        ("bit<8>", "~8w0x0F", 0xF0),
        ("bit<8>", "-8w1", 255),
        ("bit<8>", "255 + 1", 0),
        ("int", "7 / 2 + 7 % 2", 4),
        ("bit<8>", "(1 << 10) >> 4", 64),
        ("bool", "8w3 < 8w4 && !(1 == 2)", True),
        ("bit<8>", "true ? 8w1 : 8w2", 1),
        ("bit<8>", "(bit<8>)E.B", 0xF0),
        ("E", "E.A", "A"),
        ("bit<8>", "E.A + 1", 4),
        ("bool", "(bool)1w1", True),
        ("bit<3>", "16w0b101_0000[6:4]", 5),
    ],
)
def test_folded_values(type_text: str, expr_text: str, expected: object) -> None:
    assert const_value_of(type_text, expr_text) == expected
