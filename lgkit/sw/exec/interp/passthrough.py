"""Pass-through of unchanged recirculated frames: a recirculating egress pass whose packet's
headers are what the parse memo gave its ingress pass sends the frame it came with.

LinkGuardian's Tx-buffer copies loop through the loop port unchanged: each loop deparses (and
checksums) the same headers into the same bytes. When the compute-checksum control and the
deparser depend on the header slots alone (`header_writes` below), their output is a function
of the header slots, so a parse-memo entry (interp/packetgen.py) can remember whether
deparsing its header slots gives back the frame's own header bytes (checked once, on the
first egress pass that had them, by comparing the output with the input frame), and the
header slots the compute control wrote. A later recirculating egress pass whose header slots
still equal the entry's then recirculates its input frame as it is and restores those slots.

They qualify when their generated code (and the module functions it calls) reads S only at
constant header slots, writes S only at constant header slots (a checksum field), uses the
packet context only to emit (`P.out.append`), and calls nothing but the checksum helpers of
hashes.py, `int.to_bytes` and other qualifying functions of the module; no loop, no other
global.
"""

from __future__ import annotations

import ast
from typing import Any

from lgkit.sw.exec.interp import hashes


class _NotPure(Exception):
    pass


def header_writes(source: str, roots: list[str], hdr: tuple[int, int], ns: dict[str, Any]
                  ) -> tuple[int, ...] | None:
    """The header slots that the functions `roots` of the generated module `source` write
    (sorted), or None if they do not depend on the header slots alone (module docstring)."""
    funcs = {f.name: f for f in ast.parse(source).body if isinstance(f, ast.FunctionDef)}
    check = _Check(funcs, hdr, ns)
    try:
        for name in roots:
            check.function(name)
    except _NotPure:
        return None
    return tuple(sorted(check.written))


class _Check:
    def __init__(self, funcs: dict[str, ast.FunctionDef], hdr: tuple[int, int],
                 ns: dict[str, Any]):
        self.funcs = funcs
        self.lo, self.hi = hdr
        self.ns = ns
        self.written: set[int] = set()
        self.done: set[str] = set()

    def function(self, name: str) -> None:
        if name in self.done:
            return
        fn = self.funcs.get(name)
        if fn is None:
            raise _NotPure
        self.done.add(name)
        params = [a.arg for a in fn.args.args]
        if params[:2] != ["S", "P"]:
            raise _NotPure
        stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}
        local = set(params[2:]) | stored
        if local & {"S", "P"}:
            raise _NotPure
        for stmt in fn.body:
            self.statement(stmt, local)

    def statement(self, stmt: ast.stmt, local: set[str]) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.If):
            self.expr(stmt.test, local)
            for sub in (*stmt.body, *stmt.orelse):
                self.statement(sub, local)
            return
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self.target(target)
            self.expr(stmt.value, local)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            self.expr(stmt.value, local)
            return
        if isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self.expr(stmt.value, local)
            return
        if isinstance(stmt, ast.Expr):
            self.call(stmt.value, local, statement=True)
            return
        raise _NotPure

    def target(self, node: ast.expr) -> None:
        if isinstance(node, ast.Name):
            return
        if isinstance(node, ast.Tuple):
            for e in node.elts:
                self.target(e)
            return
        self.written.add(self.slot(node))

    def slot(self, node: ast.expr) -> int:
        """k of `S[k]`, a constant header slot."""
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id == "S" and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int and self.lo <= node.slice.value < self.hi):
            return node.slice.value
        raise _NotPure

    def expr(self, node: ast.expr, local: set[str]) -> None:
        if isinstance(node, ast.Constant):
            return
        if isinstance(node, ast.Name):
            if node.id not in local:
                raise _NotPure  # S or P themselves, or a global
            return
        if isinstance(node, ast.Subscript):
            self.slot(node)
            return
        if isinstance(node, ast.Call):
            self.call(node, local, statement=False)
            return
        if not isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp | ast.Compare | ast.IfExp
                          | ast.Tuple):
            raise _NotPure
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, local)

    def call(self, node: ast.expr, local: set[str], statement: bool) -> None:
        if not isinstance(node, ast.Call) or node.keywords:
            raise _NotPure
        func, args = node.func, node.args
        if isinstance(func, ast.Attribute) and func.attr == "to_bytes":
            self.expr(func.value, local)
        elif (statement and isinstance(func, ast.Attribute) and func.attr == "append"
              and isinstance(func.value, ast.Attribute) and func.value.attr == "out"
              and isinstance(func.value.value, ast.Name) and func.value.value.id == "P"):
            pass  # P.out.append(header): the emit
        elif isinstance(func, ast.Name) and func.id in self.funcs and len(args) >= 2 \
                and all(isinstance(a, ast.Name) and a.id == n
                        for a, n in zip(args[:2], "SP", strict=True)):
            self.function(func.id)
            args = args[2:]
        elif isinstance(func, ast.Name) and func.id not in local \
                and getattr(self.ns.get(func.id), "__module__", None) == hashes.__name__:
            pass  # a checksum helper: a function of its arguments
        else:
            raise _NotPure
        for a in args:
            self.expr(a, local)
