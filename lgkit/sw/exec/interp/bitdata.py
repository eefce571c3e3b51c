"""Field lists as bit strings (hash, checksum data): fields MSB-first, invalid headers skipped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.exprs import Place, unsupported
from lgkit.sw.exec.interp.layout import is_scalar, scalar_width, size_of
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, P4Type, StackT, StructLikeT, VarbitT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx

# one piece: (value code, width or None for varbit, varbit length code, validity code or None)
Piece = tuple[str, int | None, str | None, str | None]


class BitData:
    """Collects the pieces of a data argument and emits code building its bytes."""

    def __init__(self, calls: Calls, fx: FnCtx):
        self.fx = fx
        self.pieces: list[Piece] = []

    def bytes_of(self, data: ir.Expr) -> str:
        self._collect(data)
        return self._emit()

    def _collect(self, e: ir.Expr) -> None:
        fx = self.fx
        if isinstance(e, ir.ListExpr):
            for item in e.items:
                self._collect(item)
            return
        t = ir.checked(e.type)
        if is_scalar(t):
            self.pieces.append((self._scalar(fx.eg.ex(e), t), scalar_width(t), None,
                                self._container_valid(e)))
            return
        if isinstance(t, StructLikeT | StackT | VarbitT) and fx.eg.is_place(e):
            self._place(fx.eg.place(e), None)
            return
        raise unsupported(e, "this value in a field list")

    @staticmethod
    def _scalar(code: str, t: P4Type) -> str:
        if isinstance(t, BitsT) and t.signed:
            return f"({code} & {hex((1 << t.width) - 1)})"
        if isinstance(t, BoolT):
            return f"int({code})"
        return code

    def _container_valid(self, e: ir.Expr) -> str | None:
        """Validity slot of the header that holds field e, if e is a header field."""
        if isinstance(e, ir.Member):
            ht = e.expr.type
            if isinstance(ht, StructLikeT) and ht.kind == "header" and self.fx.eg.is_place(e.expr):
                return self.fx.eg.place(e.expr).ref()
        return None

    def _place(self, p: Place, valid: str | None) -> None:
        t = p.type
        if isinstance(t, VarbitT):
            self.pieces.append((p.ref(0), None, p.ref(1), valid))
            return
        if is_scalar(t):
            self.pieces.append((self._scalar(p.ref(), t), scalar_width(t), None, valid))
            return
        if isinstance(t, StackT):
            stride = size_of(t.elem)
            for i in range(t.size):
                self._place(p.sub(1 + i * stride, t.elem), valid)
            return
        assert isinstance(t, StructLikeT)
        off = 0
        if t.kind == "header":
            valid = p.ref(0)
            off = 1
        for _, ft in t.fields:
            self._place(p.sub(off, ft), valid)
            off += size_of(ft)

    def _emit(self) -> str:
        fx = self.fx
        acc, nbits = fx.temp(), fx.temp()
        fx.line(f"{acc} = 0")
        const_bits = 0
        dynamic = False
        i = 0
        pieces = self.pieces
        while i < len(pieces):
            valid = pieces[i][3]
            j = i
            group: list[tuple[str, int]] = []  # (value, width) of fixed-width pieces
            while j < len(pieces) and pieces[j][3] == valid and (w := pieces[j][1]) is not None:
                group.append((pieces[j][0], w))
                j += 1
            if not group:  # a varbit piece
                value, _, length, valid = pieces[i]
                self._guarded(valid, [f"{acc} = ({acc} << {length}) | {value}",
                                      f"{nbits} += {length}"])
                dynamic = True
                i += 1
                continue
            width = sum(w for _, w in group)
            terms = []
            shift = width
            for value, w in group:
                shift -= w
                terms.append(f"({value} << {shift})" if shift else value)
            combined = " | ".join(terms)
            if valid is None:
                fx.line(f"{acc} = ({acc} << {width}) | {combined}")
                const_bits += width
            else:
                self._guarded(valid, [f"{acc} = ({acc} << {width}) | {combined}",
                                      f"{nbits} += {width}"])
                dynamic = True
            i = j
        if not dynamic:
            return f"_pack({acc}, {const_bits})"
        # prepend the initialisation of the dynamic bit count before the first use
        fx.lines.insert(len(fx.lines) - self._lines_since(acc), "    " * fx.level
                        + f"{nbits} = {const_bits}")
        return f"_pack({acc}, {nbits})"

    def _lines_since(self, acc: str) -> int:
        lines = self.fx.lines
        for back in range(1, len(lines) + 1):
            if lines[-back].strip() == f"{acc} = 0":
                return back - 1
        return 0

    def _guarded(self, valid: str | None, stmts: list[str]) -> None:
        fx = self.fx
        if valid is None:
            for s in stmts:
                fx.line(s)
            return
        fx.line(f"if {valid}:")
        with fx.indent():
            for s in stmts:
                fx.line(s)
