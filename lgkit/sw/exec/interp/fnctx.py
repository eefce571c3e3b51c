"""One generated function being written: its lines, scope, temporaries and expression writer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.exprs import ExprGen
from lgkit.sw.exec.interp.scope import Scope
from lgkit.sw.lang.types import P4Type

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen


class FnCtx:
    """One generated function being written: its lines, scope and temporaries."""

    def __init__(self, gen: CodeGen, scope: Scope, kind: str, name: str):
        self.gen = gen
        self.scope = scope
        self.kind = kind
        self.name = name
        self.lines: list[str] = []
        self.level = 1
        self._ntemp = 0
        self.eg = ExprGen(self)
        self.stmts = gen.stmts
        self.ret_type: P4Type | None = None
        self.aligned = False  # parsers: the bit cursor is provably byte-aligned

    def line(self, text: str) -> None:
        self.lines.append("    " * self.level + text)

    def temp(self) -> str:
        self._ntemp += 1
        return f"_t{self._ntemp}"

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.level += 1
        start = len(self.lines)
        yield
        if len(self.lines) == start:
            self.line("pass")
        self.level -= 1

    def source(self, header: str) -> str:
        body = self.lines or ["    pass"]
        return header + "\n" + "\n".join(body) + "\n"
