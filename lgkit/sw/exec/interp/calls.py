"""Call code generation: actions, functions, tables, sub-controls, header/stack methods, packet_in
/ packet_out, and extern methods and functions (through the architecture's registry)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.exprs import Place, unsupported
from lgkit.sw.exec.interp.fnctx import FnCtx
from lgkit.sw.exec.interp.layout import (
    is_scalar,
    leaf_types,
    scalar_width,
    size_of,
    template,
)
from lgkit.sw.exec.interp.packetgen import packet_method
from lgkit.sw.exec.interp.scope import ActionB, ExternB, FuncB, InstanceB, PacketB, RefSlot, TableB
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, StackT, StructLikeT, TypeVarT, VarbitT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen


def call_name(call: ir.Call) -> str:
    t = call.target
    if isinstance(t, ir.Member):
        return t.name
    if isinstance(t, ir.PathExpr):
        return t.name
    raise unsupported(call, "call target")


def method_object(call: ir.Call) -> ir.Expr:
    """`obj` of a method call `obj.m(...)`."""
    t = call.target
    if isinstance(t, ir.Member):
        return t.expr
    raise unsupported(call, "method call target")


def ordered_args(call: ir.Call, params: list[ir.Param] | None) -> list[ir.Expr | None]:
    """Arguments in parameter order (named arguments placed), missing ones None/default."""
    if not any(a.name for a in call.args) or not params:
        out: list[ir.Expr | None] = [a.value for a in call.args]
        if params:
            for p in params[len(out) :]:
                out.append(p.default)
        return out
    by_name = {a.name: a.value for a in call.args if a.name}
    positional = [a.value for a in call.args if not a.name]
    out = []
    for i, p in enumerate(params):
        if i < len(positional):
            out.append(positional[i])
        else:
            out.append(by_name.get(p.name, p.default))
    return out


def may_exit(node: object) -> bool:
    """Whether a statement tree contains `exit` (shallow: not through calls)."""
    if isinstance(node, ir.Exit):
        return True
    if isinstance(node, ir.Block):
        return any(may_exit(s) for s in node.stmts)
    if isinstance(node, ir.If):
        return may_exit(node.then) or (node.other is not None and may_exit(node.other))
    if isinstance(node, ir.For | ir.ForIn):
        return may_exit(node.body)
    if isinstance(node, ir.Switch):
        return any(c.body is not None and may_exit(c.body) for c in node.cases)
    return False


class Calls:
    """Generates code for every kind of call."""

    def __init__(self, gen: CodeGen):
        self.gen = gen

    # ------------------------------------------------------------------ entry points

    def call_stmt(self, fx: FnCtx, call: ir.Call) -> None:
        code = self._dispatch(fx, call)
        if code and not (code.startswith("_t") and code.isidentifier()):
            fx.line(code)

    def call_expr(self, fx: FnCtx, call: ir.Call) -> str:
        code = self._dispatch(fx, call)
        if not code:
            raise unsupported(call, "this call as a value")
        return code

    def _dispatch(self, fx: FnCtx, call: ir.Call) -> str | None:
        kind = call.kind
        if kind == ir.CallKind.TABLE_APPLY:
            b = fx.scope.get(ir.decl_of(method_object(call)))
            if not isinstance(b, TableB):
                raise unsupported(call, "apply of this table")
            return f"{b.fn}(S, P)"
        if kind in (ir.CallKind.ACTION, ir.CallKind.FUNCTION):
            return self._user_call(fx, call)
        if kind == ir.CallKind.BLOCK_APPLY:
            return self._block_apply(fx, call)
        if kind == ir.CallKind.HEADER_METHOD:
            return self._header_method(fx, call)
        if kind == ir.CallKind.STACK_METHOD:
            return self._stack_method(fx, call)
        if kind == ir.CallKind.EXTERN_METHOD:
            return self._extern_method(fx, call)
        if kind == ir.CallKind.EXTERN_FUNCTION:
            return self._extern_function(fx, call)
        raise unsupported(call, f"call of kind {kind}")

    # ------------------------------------------------------------------ user calls

    def _user_call(self, fx: FnCtx, call: ir.Call) -> str:
        decl = call.callee if call.callee is not None else getattr(call.target, "decl", None)
        b = fx.scope.get(decl) or self.gen.lookup_global(decl)
        if decl is None or not isinstance(b, ActionB | FuncB):
            raise unsupported(call, f"call of '{call_name(call)}'")
        params = decl.params
        args = ordered_args(call, params)
        pyargs: list[str] = []
        post: list[tuple[ir.Expr, Place]] = []
        for p, a in zip(params, args, strict=False):
            slot = b.param_slots.get(p.name)
            if slot is None:
                if a is None:
                    raise unsupported(call, f"missing argument for '{p.name}'")
                pyargs.append(fx.eg.ex(a))
                continue
            place = Place(str(slot.base), slot.base, slot.type)
            if p.direction in ("in", "inout", "") and a is not None:
                fx.stmts.assign_code(fx, place, a)
            elif p.direction == "out":
                self._reset(fx, place)
            if p.direction in ("out", "inout") and a is not None:
                post.append((a, place))
        code = f"{b.fn}(S, P{''.join(', ' + x for x in pyargs)})"
        if not post:
            return code
        return self._with_copy_out(fx, code, post, may_exit(decl.body))

    def _with_copy_out(
        self, fx: FnCtx, code: str, post: list[tuple[ir.Expr, Place]], exits: bool
    ) -> str:
        tmp = fx.temp()
        if exits:
            fx.line("try:")
            with fx.indent():
                fx.line(f"{tmp} = {code}")
            fx.line("finally:")
            with fx.indent():
                self._copy_out(fx, post)
        else:
            fx.line(f"{tmp} = {code}")
            self._copy_out(fx, post)
        return tmp

    def _copy_out(self, fx: FnCtx, post: list[tuple[ir.Expr, Place]]) -> None:
        for arg, place in post:
            value = place.ref() if is_scalar(place.type) else place.span()
            fx.stmts.store_code(fx, arg, value)

    def _reset(self, fx: FnCtx, place: Place) -> None:
        if is_scalar(place.type):
            fx.line(f"{place.ref()} = 0")
        else:
            fx.line(f"{place.span()} = {self.gen.const_obj(template(place.type))}")

    def _block_apply(self, fx: FnCtx, call: ir.Call) -> str:
        b = fx.scope.get(ir.decl_of(method_object(call)))
        if not isinstance(b, InstanceB):
            raise unsupported(call, "apply of this block")
        args = ordered_args(call, b.decl.params)
        post = []
        for p, a, slot in zip(b.decl.params, args, b.params, strict=False):
            if slot is None:  # the packet
                continue
            place = Place(str(slot.base), slot.base, slot.type)
            if isinstance(slot, RefSlot):  # bound by reference: nothing to copy
                if p.direction == "out":
                    self._reset(fx, place)
                continue
            if p.direction in ("in", "inout", "") and a is not None:
                fx.stmts.assign_code(fx, place, a)
            elif p.direction == "out":
                self._reset(fx, place)
            if p.direction in ("out", "inout") and a is not None:
                post.append((a, place))
        if isinstance(b.decl, ir.ParserDecl):
            if fx.kind != "parser":
                raise unsupported(call, "applying a parser outside a parser")
            code = f"pos = {b.fn}(S, P, data, end, pos)"
        else:
            code = f"{b.fn}(S, P)"
        if not post:
            return code
        fx.line("try:")
        with fx.indent():
            fx.line(code)
        fx.line("finally:")
        with fx.indent():
            self._copy_out(fx, post)
        return ""

    # ------------------------------------------------------------------ headers, stacks

    def _header_method(self, fx: FnCtx, call: ir.Call) -> str:
        name = call_name(call)
        obj = method_object(call)
        t = obj.type
        place = fx.eg.place(obj)
        if isinstance(t, StructLikeT) and t.kind == "header_union":
            members = self._union_members(place, t)
            if name == "isValid":
                return "(" + " or ".join(f"{m.ref()} == 1" for m, _ in members) + ")"
            if name == "setInvalid":
                for m, ht in members:
                    self._set_invalid(fx, m, ht)
                return ""
            raise unsupported(call, f"{name} on a header union")
        if name == "isValid":
            return f"({place.ref()} == 1)"
        if not isinstance(t, StructLikeT):
            raise unsupported(call, f"{name} on a non-header")
        if name == "setValid":
            self._set_valid(fx, place, t, obj)
            return ""
        if name == "setInvalid":
            self._set_invalid(fx, place, t)
            return ""
        raise unsupported(call, f"header method {name}")

    def _union_members(self, place: Place, t: StructLikeT) -> list[tuple[Place, StructLikeT]]:
        out = []
        off = 0
        for _, ft in t.fields:
            assert isinstance(ft, StructLikeT)  # a header union's members are headers
            out.append((place.sub(off, ft), ft))
            off += size_of(ft)
        return out

    def _set_valid(self, fx: FnCtx, place: Place, t: StructLikeT, obj: ir.Expr) -> None:
        nbytes = _header_bytes(t)
        fresh = [1] + [0] * (size_of(t) - 1)
        fx.line(f"if not {place.ref()}:")
        with fx.indent():
            fx.line(f"{place.span()} = {self.gen.const_obj(fresh)}")
            fx.line(f"P.plen += {nbytes}")
            self._invalidate_siblings(fx, obj)

    def _invalidate_siblings(self, fx: FnCtx, obj: ir.Expr) -> None:
        """Making a union member valid invalidates the other members."""
        if not isinstance(obj, ir.Member):
            return
        ut = obj.expr.type
        if not (isinstance(ut, StructLikeT) and ut.kind == "header_union"):
            return
        uplace = fx.eg.place(obj.expr)
        for (m, ht), (fname, _) in zip(self._union_members(uplace, ut), ut.fields, strict=True):
            if fname != obj.name:
                self._set_invalid(fx, m, ht)

    def _set_invalid(self, fx: FnCtx, place: Place, t: StructLikeT) -> None:
        fx.line(f"if {place.ref()}:")
        with fx.indent():
            fx.line(f"{place.ref()} = 0")
            fx.line(f"P.plen -= {_header_bytes(t)}")

    def _stack_method(self, fx: FnCtx, call: ir.Call) -> str:
        name = call_name(call)
        obj = method_object(call)
        st = obj.type
        if not isinstance(st, StackT):
            raise unsupported(call, f"{name} on a non-stack")
        place = fx.eg.place(obj)
        count = fx.eg.ex(call.args[0].value)
        helper = "_push_front" if name == "push_front" else "_pop_front"
        if name not in ("push_front", "pop_front"):
            raise unsupported(call, f"stack method {name}")
        return f"{helper}(S, {place.at(0)}, {st.size}, {size_of(st.elem)}, {count})"

    # ------------------------------------------------------------------ extern methods

    def _extern_method(self, fx: FnCtx, call: ir.Call) -> str:
        name = call_name(call)
        obj = method_object(call)
        b = fx.scope.get(ir.decl_of(obj))
        if isinstance(b, PacketB):

            return packet_method(self, fx, call, b, name)
        if not isinstance(b, ExternB) or b.type is None:
            raise unsupported(call, f"method '{name}' of this object")
        return b.type.method(self, fx, call, b, name, [a.value for a in call.args])

    # ------------------------------------------------------------------ extern functions

    def _extern_function(self, fx: FnCtx, call: ir.Call) -> str:
        name = call_name(call)
        params = getattr(getattr(call.callee, "function", None), "params", None)
        if params is None:
            params = getattr(call.callee, "params", None)
        args = ordered_args(call, params)
        return self.gen.extern_registry.function(call, name).emit(self, fx, call, args)


def _header_bytes(t: StructLikeT) -> int:
    bits = 0
    for ft in leaf_types(t):
        if isinstance(ft, BitsT):
            bits += ft.width
        elif isinstance(ft, BoolT):
            bits += 1
        elif not isinstance(ft, VarbitT | TypeVarT):
            bits += scalar_width(ft)
    return (bits + 7) // 8  # padded to whole bytes, like the header on the wire

