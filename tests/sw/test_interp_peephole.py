"""Peephole rewrites of inlined blocks: the same effects with fewer statements."""

from __future__ import annotations

import ast
import textwrap

import pytest

from lgkit.sw.exec.interp.inline import inlined_source
from lgkit.sw.exec.interp.peephole import optimise

# The shape a table apply leaves after inlining: args unpacked, moved twice, an inout struct
# copied in, every field stored, copied out; then unrelated code that must keep its order.
TABLE_APPLY = textwrap.dedent("""
    def f(S, P):
        a, b, c = H.args
        'inline w'
        p0 = a
        p1 = b
        p2 = c
        S[10:13] = S[0:3]
        q0 = p0
        q1 = p1
        q2 = p2
        S[10] = q0
        S[11] = q1
        S[12] = q2
        r = None
        S[0:3] = S[10:13]
        'end w'
        S[5] = S[0] + S[1]
        S[6] = G
        t = G
        S[7] = t
""")


def _run(source: str, S: list, **ns: object) -> list:
    env = dict(ns)
    exec(compile(source, "<test>", "exec"), env)  # noqa: S102 - the test's own code
    env["f"](S, None)
    return S


def _optimised(source: str) -> str:
    tree = ast.parse(source)
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            optimise(fn)
    return ast.unparse(ast.fix_missing_locations(tree))


class _H:
    args = (7, 8, 9)


def test_table_apply_moves_and_copies_collapse() -> None:
    out = _optimised(TABLE_APPLY)
    assert "p0" not in out and "q0" not in out and "r = None" not in out
    assert "S[0:3]" not in out and "S[10:13]" not in out  # slice copies as single stores
    assert "S[10] = S[0]" not in out  # the copy-in is overwritten before any read: dropped
    assert "S[0] = a" in out and "S[2] = c" in out  # forwarded, not read back from S
    assert "S[7] = t" in out  # a copy of a global is not propagated (it could change)
    S0 = list(range(20))
    assert _run(out, S0[:], H=_H, G=3) == _run(TABLE_APPLY, S0[:], H=_H, G=3)


@pytest.mark.parametrize("flag", [0, 1])
def test_branches_calls_and_reassigned_names_keep_their_meaning(flag: int) -> None:
    source = textwrap.dedent("""
        def f(S, P):
            x = S[0]
            y = x
            if S[1]:
                x = 5
            S[2] = y
            z = S[3]
            w = z
            S[3] = 9
            S[4] = w
            S[5] = x
            S[6] = S[5]
            x = 7
            S[7] = S[5]
            S[8] = 1
            g(S)
            S[9] = S[8]
            S[8] = 2
            S[8] = S[3] + 1
    """)
    out = _optimised(source)
    assert "y = x" in out  # x is assigned twice: y keeps its own copy
    assert "S[4] = z" in out and "w = z" not in out
    assert "S[6] = x" in out and "S[7] = S[5]" in out  # x changed in between
    assert "S[9] = S[8]" in out  # not forwarded across a call (which may change S[8])
    assert "S[8] = 2" not in out  # stored again before any read
    S0 = [10, flag, 0, 4, 0, 0, 0, 0, 0, 0]

    def g(S: list) -> None:
        S[8] += 100

    assert _run(out, S0[:], g=g) == _run(source, S0[:], g=g)


def test_a_function_with_a_loop_is_left_alone() -> None:
    source = textwrap.dedent("""
        def f(S, P):
            for i in range(2):
                a = i
                S[0] = a
                S[1] = a
                S[2] = a
    """)
    assert "S[0] = a" in inlined_source(source)


def test_overlapping_or_unknown_slices_and_indices_are_kept() -> None:
    source = textwrap.dedent("""
        def f(S, P):
            S[0:3] = S[1:4]
            i = S[9] - 4
            S[5] = 1
            S[6] = S[i]
            S[5] = 2
            S[7] = 1
            S[i + 2] = 3
            S[8] = S[7]
    """)
    out = _optimised(source)
    assert "S[0:3] = S[1:4]" in out
    assert "S[5] = 1" in out  # S[P] may have read it
    assert "S[8] = S[7]" in out  # S[P] may have changed it
    S0 = list(range(10))
    assert _run(out, S0[:]) == _run(source, S0[:])
