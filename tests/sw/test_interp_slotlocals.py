"""Slots private to a function become Python locals; slots whose values flow stay in S."""

from __future__ import annotations

import textwrap

import pytest

from lgkit.sw.exec.interp.inline import inline_module, inlined_source
from lgkit.sw.exec.interp.slotlocals import Outside

# Slots 0-3 are the glue's (kept). 10: a local of the block. 11: read before any write of the
# block (its value comes from elsewhere). 12: written by the action the table calls by
# reference, read by the block after the call. 13: written and never read. 14: the action's
# own temporary. 15: written by a function that stays a call (in an expression), read after.
MODULE = textwrap.dedent("""
    def act(S, P):
        S[14] = S[0] + 1
        S[12] = S[14] * 2

    def sub(S, P):
        S[15] = S[0] + 3
        return 0

    def block(S, P):
        S[10] = S[0] + 5
        S[1] = S[10] + S[11]
        S[13] = 7
        f = TABLE[0]
        f(S, P)
        S[2] = S[12]
        S[4] = sub(S, P) or 0
        S[3] = S[15] + S[10]
""")
OUTSIDE = Outside(frozenset(range(5)), frozenset({"block", "act"}))


def _run(code: object) -> list:
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the test's own module
    ns["TABLE"] = [ns["act"]]  # a table's action, called by reference
    S = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0]
    ns["block"](S, None)
    return S[:5]


def test_private_slots_become_locals_and_flowing_ones_stay() -> None:
    text = inlined_source(MODULE, OUTSIDE)
    block = text[text.index("def block"):]
    assert "S[10]" not in block  # written, then read: a local
    assert "S[11]" in block  # read first: its value came from outside the block
    assert "S[12]" in block  # written by the action the table calls
    assert "S[15]" in block  # written by a call that was not inlined
    assert "S[13]" not in block and "= 7" not in block  # never read: the store is gone
    act = text[text.index("def act"):text.index("def sub")]
    assert "S[14]" not in act and "S[12]" in act
    result = inline_module(MODULE, OUTSIDE)
    assert result.width == 16  # S[15] is still used
    assert _run(result.code) == _run(MODULE) == [1, 26, 4, 10, 0]


def test_without_the_outside_nothing_is_localised() -> None:
    assert "S[10]" in inlined_source(MODULE)
    assert inline_module(MODULE).width is None


@pytest.mark.parametrize("statement", ["S[S[0]] = 1", "x = (S, 1)", "y = [S[10] for _ in 'a']"])
def test_a_computed_index_or_an_alias_leaves_the_module_alone(statement: str) -> None:
    module = MODULE + f"    {statement}\n"
    assert "S[10]" in inlined_source(module, OUTSIDE)
    assert inline_module(module, OUTSIDE).width is None


def test_only_slots_in_use_need_a_place_in_s() -> None:
    module = textwrap.dedent("""
        def block(S, P):
            S[40] = S[0] + 1
            S[1] = S[40]
    """)
    result = inline_module(module, Outside(frozenset(range(4)), frozenset({"block"})))
    assert result.width == 4  # slot 40 is a local: S keeps the glue's four slots
    ns: dict = {}
    exec(result.code, ns)  # noqa: S102 - the test's own module
    S = [5, 0, 0, 0]
    ns["block"](S, None)
    assert S == [5, 6, 0, 0]


def test_a_read_in_one_branch_after_a_write_in_the_other_stays_in_s() -> None:
    module = textwrap.dedent("""
        def block(S, P):
            if S[0]:
                S[20] = 1
            else:
                S[1] = S[20]
            if S[0]:
                S[21] = 2
            else:
                S[21] = 3
            S[2] = S[21]
    """)
    text = inlined_source(module, Outside(frozenset(range(4)), frozenset({"block"})))
    assert "S[20]" in text  # not written on the path that reads it
    assert "S[21]" not in text  # written on both paths before the read


def test_a_helper_given_s_may_change_any_slot() -> None:
    module = textwrap.dedent("""
        def block(S, P):
            S[20] = 1
            S[21] = 2
            S[2] = S[21]
            push_front(S, 20, 1, 1, 1)
            S[1] = S[20]
    """)
    text = inlined_source(module, Outside(frozenset(range(4)), frozenset({"block"})))
    assert "S[20]" in text  # read after the helper, which may have moved it
    assert "S[21]" not in text  # read before it

