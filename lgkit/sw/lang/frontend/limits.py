"""Nesting limits: programs nested deeper than the code generator can run are rejected here.

The interpreter turns every P4 block into Python source, and Python caps how deeply that source
may nest (100 indentation levels, 200 open parentheses). The code generator keeps eager
expressions flat (it moves deep operands into temporaries), an else-if chain becomes an elif
chain and a parser's states a shallow dispatch tree; what is left nests the generated code: if,
for and switch bodies, and the lazy operands of ?:, && and ||. The frontend measures those
(iteratively, so any depth is safe to measure) and rejects a program nested beyond the limits
below with a located `unsupported:` error. Compiling and generating code recurse once per level,
under `deep_recursion()`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import error_at

MAX_BRANCH_DEPTH = 48  # if, for and switch inside one another (each indents generated code)
MAX_BLOCK_DEPTH = 100  # blocks and statements of any kind inside one another
MAX_LAZY_DEPTH = 32  # ?:, && and || inside one another's operands
MAX_EXPRESSION_DEPTH = 2000  # any operators inside one another
RECURSION_LIMIT = 20000  # enough for the frontend and the code generator at these depths
_BRANCHES = (ir.If, ir.For, ir.ForIn, ir.Switch)
_OPERATORS = (ir.Binary, ir.Unary, ir.Cast, ir.Ternary, ir.Slice, ir.Call, ir.Index,
              ir.ListExpr, ir.StructExpr)
_SKIP = frozenset({"decl", "callee", "type", "resolved", "loc"})


def check_nesting(program: ir.Program) -> None:
    """Raise P4Error at the first statement or expression nested beyond the limits."""
    # (node, branch depth, block depth, expression depth, lazy depth)
    stack: list[tuple[object, int, int, int, int]] = [(program, 0, 0, 0, 0)]
    while stack:
        node, branches, blocks, exprs, lazy = stack.pop()
        if isinstance(node, list | tuple):
            stack.extend((item, branches, blocks, exprs, lazy) for item in node)
            continue
        if not isinstance(node, ir.Node):
            continue
        if isinstance(node, ir.Stmt):
            exprs = lazy = 0
            if isinstance(node, (*_BRANCHES, ir.Block)):
                blocks += 1
                branches += isinstance(node, _BRANCHES)
            if branches > MAX_BRANCH_DEPTH:
                raise error_at(node.loc, "unsupported: if, for and switch statements nested "
                               f"more than {MAX_BRANCH_DEPTH} deep")
            if blocks > MAX_BLOCK_DEPTH:
                raise error_at(node.loc, f"unsupported: blocks nested more than "
                               f"{MAX_BLOCK_DEPTH} deep")
        elif isinstance(node, _OPERATORS):
            exprs += 1
            lazy += isinstance(node, ir.Ternary) or (
                isinstance(node, ir.Binary) and node.op in ("&&", "||"))
            if exprs > MAX_EXPRESSION_DEPTH:
                raise error_at(node.loc, "unsupported: an expression nested more than "
                               f"{MAX_EXPRESSION_DEPTH} operators deep")
            if lazy > MAX_LAZY_DEPTH:
                raise error_at(node.loc, "unsupported: ?:, && and || nested more than "
                               f"{MAX_LAZY_DEPTH} deep")
        for name, value in vars(node).items():
            if name in _SKIP:
                continue
            if isinstance(node, ir.If) and name == "other" and isinstance(value, ir.If):
                # else if: the chained if sits at the depth of this one
                stack.append((value, branches - 1, blocks - 1, exprs, lazy))
            elif isinstance(value, ir.Node | list | tuple):
                stack.append((value, branches, blocks, exprs, lazy))


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Run a recursive pass with Python's recursion limit raised to RECURSION_LIMIT."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
