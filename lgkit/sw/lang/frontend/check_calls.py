"""Resolving calls: call kinds, overloads, generic inference, arguments and their directions."""

from __future__ import annotations

from collections.abc import Callable

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.check_exprs import ExprChecker
from lgkit.sw.lang.frontend.scope import Overloads, Scope, Silent, is_extern_function
from lgkit.sw.lang.frontend.typeops import contains_typevar, same_type, substitute, type_str, unify

HEADER_METHODS = {"isValid": t.BoolT(), "setValid": t.VoidT(), "setInvalid": t.VoidT()}

STACK_METHODS = ("push_front", "pop_front")


class CallChecker(ExprChecker):
    """Sets Call.kind/callee/type and binds arguments to parameters."""

    def call(self, call: ir.Call, scope: Scope, expected: t.P4Type | None) -> ir.Call:
        target = call.target
        if isinstance(target, ir.PathExpr):
            self.call_path(call, target, scope)
        elif isinstance(target, ir.Member):
            self.call_member(call, target, scope)
        else:
            raise self.fail(call.loc, "this expression cannot be called")
        assert call.type is not None
        target.type = call.type
        return call

    def call_path(self, call: ir.Call, target: ir.PathExpr, scope: Scope) -> None:
        decl = self.lookup(scope, target.name, target.loc)
        target.decl = decl
        if isinstance(decl, ir.ActionDecl):
            if self.ctx.kind == "parser":
                raise self.fail(call.loc, "actions cannot be called from a parser")
            call.kind, call.callee = ir.CallKind.ACTION, decl
            call.args = self.bind_args(call.args, decl.params, {}, call.loc, decl.name, scope=scope)
            call.type = t.VoidT()
        elif isinstance(decl, ir.FunctionDecl):
            call.kind, call.callee = ir.CallKind.FUNCTION, decl
            call.args = self.bind_args(call.args, decl.params, {}, call.loc, decl.name, scope=scope)
            call.type = decl.ret.resolved
        elif isinstance(decl, (ir.ExternDecl, Overloads)) and is_extern_function(decl):
            candidates = list(decl) if isinstance(decl, Overloads) else [decl]
            candidates = [c for c in candidates if id(c) not in self.failed]
            if not candidates:
                raise Silent()
            functions = [c.function for c in candidates if c.function is not None]
            fn = self.pick_overload(functions, call.args, call.loc,
                                    target.name)
            call.kind = ir.CallKind.EXTERN_FUNCTION
            call.callee = next(c for c in candidates if c.function is fn)
            self.generic_call(call, fn, {}, scope)
        elif isinstance(decl, (ir.ParserDecl, ir.ControlDecl)) and not decl.is_type:
            call.kind, call.callee = ir.CallKind.CONSTRUCTOR, decl
            call.args = self.bind_args(call.args, decl.ctor_params, {}, call.loc, decl.name,
                                       scope=scope)
            kind = "parser" if isinstance(decl, ir.ParserDecl) else "control"
            call.type = t.BlockT(kind, decl.name)
        elif isinstance(decl, ir.ExternDecl):
            ref = ir.TypeRef(target.loc, decl.name, args=call.type_args)
            etype = self.resolve_type(ref, scope)
            ctors = [m for m in decl.methods if m.ret is None]
            ctor = self.pick_overload(ctors, call.args, call.loc, f"constructor of {decl.name}")
            bindings = dict(zip(decl.type_params, etype.type_args, strict=False))  # type: ignore
            call.args = self.bind_args(call.args, ctor.params, bindings, call.loc, decl.name,
                                       scope=scope)
            call.kind, call.callee, call.type = ir.CallKind.CONSTRUCTOR, decl, etype
        else:
            raise self.fail(call.loc, f"'{target.name}' cannot be called")

    def call_member(self, call: ir.Call, target: ir.Member, scope: Scope) -> None:
        target.expr = self.expr(target.expr, scope, None)
        base = target.expr.type
        name = target.name
        if isinstance(base, t.ExternT):
            decl = self.lookup(self.top, base.name, target.loc)
            methods = [m for m in decl.methods if m.name == name and m.ret is not None]
            if not methods:
                raise self.fail(target.loc, f"extern {base.name} has no method '{name}'")
            method = self.pick_overload(methods, call.args, call.loc, f"{base.name}.{name}")
            bindings = dict(zip(decl.type_params, base.type_args, strict=False))
            call.kind, call.callee = ir.CallKind.EXTERN_METHOD, method
            self.generic_call(call, method, bindings, scope)
        elif isinstance(base, t.TableT) and name == "apply":
            self.no_args(call, f"{base.name}.apply")
            call.kind = ir.CallKind.TABLE_APPLY
            call.callee = self.lookup(scope, base.name, target.loc)
            call.type = t.ApplyResultT(base.name)
        elif isinstance(base, t.BlockT) and name == "apply":
            decl = self.lookup(self.top, base.name, target.loc)
            call.kind, call.callee = ir.CallKind.BLOCK_APPLY, decl
            call.args = self.bind_args(call.args, decl.params, {}, call.loc, base.name, scope=scope)
            call.type = t.VoidT()
        elif isinstance(base, t.StructLikeT) and base.kind != "struct" and name in HEADER_METHODS:
            if base.kind == "header_union" and name != "isValid":
                raise self.fail(target.loc, f"header unions have no method '{name}'")
            self.no_args(call, name)
            if name != "isValid":
                self.require_lvalue(target.expr, f"the target of {name}()")
            call.kind, call.callee = ir.CallKind.HEADER_METHOD, name
            call.type = HEADER_METHODS[name]
        elif isinstance(base, t.StackT) and name in STACK_METHODS:
            self.require_lvalue(target.expr, f"the target of {name}()")
            call.kind, call.callee, call.type = ir.CallKind.STACK_METHOD, name, t.VoidT()
            if len(call.args) != 1:
                raise self.fail(call.loc, f"{name} takes 1 argument, got {len(call.args)}")
            arg = call.args[0]
            count = self.const_int(arg.value, scope, f"argument of {name}")
            arg.value = ir.IntLit(arg.value.loc, count)
            arg.value.type = t.InfIntT()
        else:
            raise self.fail(target.loc, f"{type_str(base)} has no method '{name}'")

    def no_args(self, call: ir.Call, what: str) -> None:
        if call.args:
            raise self.fail(call.loc, f"{what} takes no arguments, got {len(call.args)}")

    def pick_overload(
        self, candidates: list[ir.ExternMethod], args: list[ir.Argument], loc: ir.Loc, what: str
    ) -> ir.ExternMethod:
        fitting = [m for m in candidates if self.arity_fits(m.params, args)]
        if not fitting:
            counts = sorted({len(m.params) for m in candidates})
            expected = " or ".join(str(c) for c in counts)
            raise self.fail(loc, f"wrong number of arguments to {what}: expected {expected}, "
                            f"got {len(args)}")
        return fitting[0]

    @staticmethod
    def arity_fits(params: list[ir.Param], args: list[ir.Argument]) -> bool:
        if args and args[0].name is not None:
            names = {p.name for p in params}
            required = {p.name for p in params if not is_optional(p)}
            given = {a.name for a in args}
            return given <= names and required <= given
        n_required = sum(1 for p in params if not is_optional(p))
        return n_required <= len(args) <= len(params)

    def generic_call(
        self, call: ir.Call, method: ir.ExternMethod, bindings: dict[str, t.P4Type], scope: Scope
    ) -> None:
        bindings = dict(bindings)
        if call.type_args:
            if len(call.type_args) != len(method.type_params):
                raise self.fail(call.loc, f"{method.name} takes {len(method.type_params)} type "
                                f"arguments, got {len(call.type_args)}")
            for name, ref in zip(method.type_params, call.type_args, strict=True):
                bindings[name] = self.resolve_type(ref, scope)
        call.args = self.bind_args(call.args, method.params, bindings, call.loc, method.name,
                                   scope=scope)
        assert method.ret is not None and method.ret.resolved is not None
        ret = substitute(method.ret.resolved, bindings)
        if contains_typevar(ret):
            raise self.fail(call.loc, f"cannot infer the type returned by {method.name}; give "
                            "it explicitly (e.g. f<bit<8>>())")
        call.type = ret

    def bind_args(
        self,
        args: list[ir.Argument],
        params: list[ir.Param],
        bindings: dict[str, t.P4Type],
        loc: ir.Loc,
        what: str,
        scope: Scope | None = None,
        check_value: Callable[..., ir.Expr] | None = None,
    ) -> list[ir.Argument]:
        """Match args to params (positional or named; defaults filled); check types/directions.

        Returns the arguments in parameter order, one per parameter; a missing @optional
        argument becomes a DontCare.
        """
        scope = scope or self.top
        by_param = self.match_args(args, params, loc, what)
        checked: dict[int, ir.Expr] = {}
        for i, param in enumerate(params):
            arg = by_param.get(i)
            if arg is None:
                continue
            ptype = param.type_ref.resolved
            assert ptype is not None
            if check_value is not None:
                checked[i] = check_value(param, arg.value, bindings, scope)
                continue
            want = substitute(ptype, bindings)
            value = self.expr(arg.value, scope, None if contains_typevar(want) else want)
            assert value.type is not None
            if contains_typevar(want) and not isinstance(value.type, (t.InfIntT, t.DontCareT)):
                unify(want, value.type, bindings)
            checked[i] = value
        result: list[ir.Argument] = []
        for i, param in enumerate(params):
            arg = by_param.get(i)
            if arg is None:
                result.append(self.missing_arg(param, loc, bindings))
                continue
            value = checked[i]
            if check_value is None:
                value = self.arg_value(param, value, bindings, what)
            result.append(ir.Argument(arg.loc, value, arg.name))
        return result

    def missing_arg(
        self, param: ir.Param, loc: ir.Loc, bindings: dict[str, t.P4Type]
    ) -> ir.Argument:
        if param.default is not None:
            return ir.Argument(loc, param.default, param.name)
        dont_care = ir.DontCare(loc)
        dont_care.type = t.DontCareT()
        return ir.Argument(loc, dont_care, param.name)

    def arg_value(
        self, param: ir.Param, value: ir.Expr, bindings: dict[str, t.P4Type], what: str
    ) -> ir.Expr:
        assert param.type_ref.resolved is not None and value.type is not None
        want = substitute(param.type_ref.resolved, bindings)
        if contains_typevar(want):
            if isinstance(value.type, t.InfIntT) and isinstance(want, t.TypeVarT):
                bindings[want.name] = t.InfIntT()
                want = value.type
            else:
                unify(want, value.type, bindings)
                want = substitute(want, bindings)
        if contains_typevar(param.type_ref.resolved):
            self.require_known_widths(value)
        if param.direction in ("out", "inout"):
            if isinstance(value, ir.DontCare) and param.direction == "out":
                return value
            self.require_lvalue(value, f"argument '{param.name}' of {what} ({param.direction})")
            if not same_type(value.type, want) and not contains_typevar(want):
                raise self.fail(value.loc, f"type mismatch for {param.direction} argument "
                                f"'{param.name}' of {what}: expected {type_str(want)}, got "
                                f"{type_str(value.type)}")
            return value
        if isinstance(value.type, t.DontCareT):
            raise self.fail(value.loc, f"'_' cannot be passed to the {param.direction or 'in'} "
                            f"parameter '{param.name}' of {what}")
        return self.convert(value, want)

    def require_known_widths(self, value: ir.Expr) -> None:
        """A list passed to a generic parameter (hash data, digest, log_msg) needs widths."""
        if isinstance(value, ir.ListExpr):
            for item in value.items:
                if isinstance(item.type, t.InfIntT):
                    raise self.fail(item.loc, "the width of an untyped integer in a list cannot "
                                    "be inferred; give it a width (e.g. 8w0)")
                self.require_known_widths(item)

    def match_args(
        self, args: list[ir.Argument], params: list[ir.Param], loc: ir.Loc, what: str
    ) -> dict[int, ir.Argument]:
        named = [a for a in args if a.name is not None]
        if named and len(named) != len(args):
            raise self.fail(loc, f"call of {what} mixes named and positional arguments")
        by_param: dict[int, ir.Argument] = {}
        if named:
            index = {p.name: i for i, p in enumerate(params)}
            for arg in args:
                if arg.name not in index:
                    raise self.fail(arg.loc, f"{what} has no parameter '{arg.name}'")
                if index[arg.name] in by_param:
                    raise self.fail(arg.loc, f"argument '{arg.name}' given twice")
                by_param[index[arg.name]] = arg
        else:
            if len(args) > len(params):
                raise self.fail(loc, f"wrong number of arguments to {what}: expected "
                                f"{len(params)}, got {len(args)}")
            by_param = dict(enumerate(args))
        missing = [p.name for i, p in enumerate(params) if i not in by_param and not is_optional(p)]
        if missing:
            required = sum(1 for p in params if not is_optional(p))
            raise self.fail(loc, f"wrong number of arguments to {what}: expected {required}, "
                            f"got {len(args)} (missing '{missing[0]}')")
        return by_param

    def require_lvalue(self, e: ir.Expr, what: str) -> None:
        if not self.is_lvalue(e):
            raise self.fail(e.loc, f"{what} must be an l-value (a writable variable, field or "
                            "parameter)")

    def is_lvalue(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.PathExpr):
            decl = e.decl
            if isinstance(decl, ir.VarDecl):
                return True
            return isinstance(decl, ir.Param) and decl.direction in ("out", "inout")
        if isinstance(e, ir.Member):
            if isinstance(e.expr.type, t.StackT) and e.name in ("size", "lastIndex"):
                return False
            return isinstance(e.expr.type, (t.StructLikeT, t.StackT)) and self.is_lvalue(e.expr)
        if isinstance(e, (ir.Index, ir.Slice)):
            return self.is_lvalue(e.expr)
        return False


def is_optional(param: ir.Param) -> bool:
    return param.default is not None or "optional" in param.annotations
