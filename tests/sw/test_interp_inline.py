"""The generated module's inliner: inlined code behaves exactly as the calls it replaces."""

from __future__ import annotations

import ast
import textwrap

import pytest

from lgkit.sw.exec.interp.inline import inline_module, inlined_source

MODULE = textwrap.dedent("""
    class Hit:
        def __init__(self, hit, args):
            self.hit = hit
            self.args = args

    def a1(S, P, v_x):
        _t1 = v_x + 1
        S[0] = _t1

    def c1(S, P):
        _t1 = S[1]
        if _t1 > 5:
            S[2] = 1
            return
        a1(S, P, _t1 * 2)
        S[2] = 2

    def t1(S, P):
        h = TABLE[S[3]]
        f = h.args
        S[4] = f
        return h

    def c2(S, P):
        _t1 = S[5]
        c1(S, P)
        S[6] = _t1
        S[7] = t1(S, P).hit
        if not t1(S, P).hit:
            S[8] = 1
        x = t1(S, P)
        S[9] = x.args
        t1(S, P)

    def loop(S, P):
        for i in range(3):
            if S[1] == i:
                return
            S[10] += 1

    def c3(S, P):
        loop(S, P)
        S[11] = [v for v in S[:2]]
        c1(S, P)
        c1(S, P)
""")


def _run(code: object, fn: str, S: list) -> list:
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the test's own module
    ns["TABLE"] = {0: ns["Hit"](False, 10), 1: ns["Hit"](True, 20)}
    ns[fn](S, None)
    return S


@pytest.mark.parametrize("s1", [0, 1, 3, 7])
@pytest.mark.parametrize("s3", [0, 1])
def test_inlined_module_computes_what_the_calls_did(s1: int, s3: int) -> None:
    code = inline_module(MODULE).code
    for fn in ("c1", "c2", "c3", "loop"):
        start = [0, s1, 0, s3, 0, 42, 0, 0, 0, 0, 0, 0]
        assert _run(code, fn, start[:]) == _run(MODULE, fn, start[:]), fn


def test_calls_are_inlined_where_exact_and_kept_elsewhere() -> None:
    tree = ast.parse(inlined_source(MODULE))
    calls = {f.name: sorted({n.func.id for n in ast.walk(f) if isinstance(n, ast.Call)
                             and isinstance(n.func, ast.Name)})
             for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert "a1" not in calls["c1"]  # a body inlined with its argument bound
    assert not {"c1", "t1"} & set(calls["c2"])  # also `x = t(S, P).hit` and `if not t().hit`
    assert "loop" in calls["c3"]  # a `return` inside its own loop: stays a call
    assert "c1" not in calls["c3"]
    c1 = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "c2")
    assert any(isinstance(n, ast.While) for n in ast.walk(c1))  # c1's early return: a break


def test_temporaries_of_inlined_bodies_share_names() -> None:
    # (S[i] = _t * 2, not S[i] = _t: a slot that holds a local would be read as the local)
    body = "\n".join(f"    _t{i} = S[{i}] + 1\n    S[{i}] = _t{i} * 2" for i in range(40))
    module = f"def leaf(S, P):\n{body}\n\ndef top(S, P):\n    leaf(S, P)\n    leaf(S, P)\n"
    code = inline_module(module).code
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the test's own module
    assert ns["top"].__code__.co_nlocals < 10  # 40 short-lived temporaries, few names
    S = list(range(40))
    ns["top"](S, None)
    assert S == [((i + 1) * 2 + 1) * 2 for i in range(40)]


def test_a_loop_that_can_repeat_keeps_its_names() -> None:
    loads = "".join(f"    _a{i} = S[{i}]\n" for i in range(20))
    module = (f"def top(S, P):\n{loads}    while S[0] < 3:\n        _b = S[0] + _a1\n"
              "        S[0] = _b\n    S[2] = _a19\n")
    code = inline_module(module).code
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the test's own module
    assert {f"_a{i}_top" for i in range(20)} <= set(ns["top"].__code__.co_varnames)
    S = [0, 1] + [7] * 18
    ns["top"](S, None)
    assert S[:3] == [3, 1, 7]


CONDITIONS = textwrap.dedent("""
    def lt(S, P, v_a, v_b):
        S[9] = S[9] + 1
        return v_a < v_b

    def c(S, P):
        if lt(S, P, S[0], S[1]):
            S[2] = 1
        if S[3] == 0 or not lt(S, P, S[0], S[1]):
            S[4] = 1
        elif S[5] and lt(S, P, S[1], S[0]) and S[6]:
            S[4] = 2
        else:
            S[4] = 3
""")


@pytest.mark.parametrize("s0", [0, 5])
@pytest.mark.parametrize("s3", [0, 1])
@pytest.mark.parametrize("s5", [0, 1])
@pytest.mark.parametrize("s6", [0, 1])
def test_calls_in_conditions_run_only_where_the_short_circuit_reaches(
        s0: int, s3: int, s5: int, s6: int) -> None:
    code = inline_module(CONDITIONS).code
    tree = ast.parse(inlined_source(CONDITIONS))
    c = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "c")
    assert not any(isinstance(n, ast.Call) for n in ast.walk(c))  # every lt inlined
    results = []
    for module in (code, CONDITIONS):
        ns: dict = {}
        exec(module, ns)  # noqa: S102 - the test's own module
        S = [s0, 3, 0, s3, 0, s5, s6, 0, 0, 0]  # S[9] counts the calls of lt
        ns["c"](S, None)
        results.append(S)
    assert results[0] == results[1]
