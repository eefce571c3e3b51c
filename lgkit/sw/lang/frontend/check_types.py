"""Checker state, errors, name lookup, and resolving written types (TypeRef) to P4 types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.frontend.diagnostics import Diagnostic
from lgkit.sw.lang.frontend.scope import CheckError, Context, Scope, Silent
from lgkit.sw.lang.frontend.typeops import type_str


class TypeChecker:
    """Resolves type declarations and TypeRefs; the base of the checker."""

    if TYPE_CHECKING:  # defined by ExprChecker, the next class of the checker
        def expr(self, e: ir.Expr, scope: Scope, expected: t.P4Type | None) -> ir.Expr: ...
        def convert(self, e: ir.Expr, to: t.P4Type) -> ir.Expr: ...

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.diagnostics: list[Diagnostic] = []
        self.top = Scope()
        self.error_type = t.EnumT("error", [])
        self.match_kind_type = t.EnumT("match_kind", [])
        self.failed: set[int] = set()
        self.ctx = Context("top")

    def fail(self, loc: ir.Loc, message: str) -> CheckError:
        return CheckError(loc, message)

    def lookup(self, scope: Scope, name: str, loc: ir.Loc) -> Any:
        found = scope.lookup(name)
        if found is None and name == "this":
            raise self.fail(loc, "'this' is only allowed in the implementation of an abstract "
                            "method (in an extern instance's initializer)")
        if found is None:
            raise self.fail(loc, f"unknown name '{name}'")
        if id(found) in self.failed:
            raise Silent()
        return found

    def check_type_decl(self, decl: ir.TypeDecl, scope: Scope) -> None:
        if decl.kind in ("error", "match_kind"):
            enum = self.error_type if decl.kind == "error" else self.match_kind_type
            for member, _ in decl.members:
                if member in enum.members:
                    raise self.fail(decl.loc, f"duplicate {decl.kind} member '{member}'")
                enum.values[member] = len(enum.members)
                enum.members.append(member)
            decl.resolved = enum
            return
        scope.declare(decl.name, decl, decl.loc)
        if decl.kind in ("header", "header_union", "struct"):
            decl.resolved = self.struct_like(decl, scope)
        elif decl.kind == "enum":
            decl.resolved = self.enum_type(decl, scope)
        else:  # typedef / type
            assert decl.target is not None
            decl.resolved = self.resolve_type(decl.target, scope)
            if isinstance(decl.resolved, t.VoidT):
                raise self.fail(decl.loc, f"'{decl.name}' cannot be void")

    def struct_like(self, decl: ir.TypeDecl, scope: Scope) -> t.StructLikeT:
        fields: list[tuple[str, t.P4Type]] = []
        field_annotations: dict[str, dict[str, list[str]]] = {}
        for name, ref, field_annos in decl.fields:
            ftype = self.resolve_type(ref, scope)
            if any(name == f for f, _ in fields):
                raise self.fail(ref.loc, f"duplicate field '{name}' in {decl.kind} {decl.name}")
            self.check_field_type(decl, name, ftype, ref.loc)
            fields.append((name, ftype))
            if field_annos:
                field_annotations[name] = field_annos
        return t.StructLikeT(decl.kind, decl.name, fields, decl.annotations, field_annotations)

    def check_field_type(self, decl: ir.TypeDecl, name: str, ftype: t.P4Type, loc: ir.Loc) -> None:
        if decl.kind == "header":
            ok = isinstance(ftype, t.VarbitT) or _fixed_width_field(ftype)
            if isinstance(ftype, t.VarbitT) and any(
                isinstance(ft, t.VarbitT) for _, ft in self._fields_so_far(decl, name)
            ):
                raise self.fail(loc, f"header {decl.name} has more than one varbit field")
        elif decl.kind == "header_union":
            ok = isinstance(ftype, t.StructLikeT) and ftype.kind == "header"
        else:
            ok = not isinstance(ftype, (t.VoidT, t.StringT, t.ExternT, t.BlockT))
        if not ok:
            raise self.fail(loc, f"field '{name}' of {decl.kind} {decl.name} cannot have type "
                            f"{type_str(ftype)}")

    def _fields_so_far(self, decl: ir.TypeDecl, upto: str) -> Iterator[tuple[str, t.P4Type]]:
        for name, ref, _ in decl.fields:
            if name == upto:
                return
            if ref.resolved is not None:
                yield name, ref.resolved

    def enum_type(self, decl: ir.TypeDecl, scope: Scope) -> t.EnumT:
        underlying = None
        if decl.target is not None:
            base = self.resolve_type(decl.target, scope)
            if not isinstance(base, t.BitsT):
                raise self.fail(decl.target.loc, "a serializable enum needs a bit<W> or int<W> "
                                "type")
            underlying = base
        members: list[str] = []
        values: dict[str, int] = {}
        for name, init in decl.members:
            if name in members:
                raise self.fail(decl.loc, f"duplicate enum member '{name}' in {decl.name}")
            members.append(name)
            if underlying is None:
                values[name] = len(values)
                continue
            if init is None:
                raise self.fail(decl.loc, f"member '{name}' of serializable enum {decl.name} "
                                "needs a value")
            checked = self.convert(self.expr(init, scope, underlying), underlying)
            value = const_value(checked)
            if not isinstance(value, int):
                raise self.fail(init.loc, "enum member value must be a compile-time constant")
            values[name] = value
            decl.members[len(members) - 1] = (name, checked)
        return t.EnumT(decl.name, members, underlying, values)

    def resolve_type(self, ref: ir.TypeRef, scope: Scope) -> t.P4Type:
        resolved = self._resolve_type(ref, scope)
        if ref.stack_size is not None:
            size = self.const_int(ref.stack_size, scope, "header stack size")
            if size <= 0:
                raise self.fail(ref.stack_size.loc, "header stack size must be positive")
            if not (isinstance(resolved, t.StructLikeT) and resolved.kind != "struct"):
                raise self.fail(ref.loc, f"stack elements must be headers or header unions, "
                                f"not {type_str(resolved)}")
            resolved = t.StackT(resolved, size)
        ref.resolved = resolved
        return resolved

    def _resolve_type(self, ref: ir.TypeRef, scope: Scope) -> t.P4Type:
        name = ref.name
        if name in ("bit", "int", "varbit") and ref.width is not None:
            width = self.const_int(ref.width, scope, "type width")
            if width < (1 if name == "int" else 0):
                raise self.fail(ref.width.loc, f"invalid width {width} for {name}")
            if width > t.MAX_WIDTH:
                raise self.fail(ref.width.loc, f"{name}<{width}>: Compiler only supports widths "
                                f"up to {t.MAX_WIDTH}")
            return t.VarbitT(width) if name == "varbit" else t.BitsT(width, name == "int")
        simple = {
            "int": t.InfIntT(), "bool": t.BoolT(), "string": t.StringT(), "void": t.VoidT(),
            "error": self.error_type, "match_kind": self.match_kind_type, "_": t.DontCareT(),
        }
        if name in simple:
            return simple[name]
        if name == "tuple":
            return t.TupleT(tuple(self.resolve_type(a, scope) for a in ref.args))
        if name == "value_set":
            raise self.fail(ref.loc, "value_set is only for parser value set instances")
        decl = self.lookup(scope, name, ref.loc)
        if isinstance(decl, t.TypeVarT):
            return decl
        if isinstance(decl, ir.TypeDecl):
            self._no_type_args(ref)
            if decl.resolved is None:
                raise self.fail(ref.loc, f"type '{name}' is used inside its own declaration")
            return decl.resolved
        if isinstance(decl, ir.ExternDecl) and decl.function is None:
            args = [self.resolve_type(a, scope) for a in ref.args]
            if len(args) > len(decl.type_params):
                raise self.fail(ref.loc, f"extern {name} takes {len(decl.type_params)} type "
                                f"arguments, got {len(args)}")
            return t.ExternT(name, args)
        if isinstance(decl, (ir.ParserDecl, ir.ControlDecl, ir.PackageDecl)):
            for a in ref.args:
                self.resolve_type(a, scope)
            kind = {ir.ParserDecl: "parser", ir.ControlDecl: "control"}.get(type(decl), "package")
            return t.BlockT(kind, name)
        raise self.fail(ref.loc, f"'{name}' is not a type")

    def _no_type_args(self, ref: ir.TypeRef) -> None:
        if ref.args:
            raise self.fail(ref.loc, f"type '{ref.name}' takes no type arguments")

    def const_int(self, expr: ir.Expr, scope: Scope, what: str) -> int:
        checked = self.expr(expr, scope, None)
        value = const_value(checked)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(expr.loc, f"{what} must be a compile-time integer constant")
        return value


def _fixed_width_field(ftype: t.P4Type) -> bool:
    """A header field type of fixed width: bit<W>, int<W>, bool, a serializable enum, or a
    struct of those (P4 1.2.2: structs nested in headers)."""
    if isinstance(ftype, t.StructLikeT) and ftype.kind == "struct":
        return all(_fixed_width_field(ft) for _, ft in ftype.fields)
    return isinstance(ftype, t.BitsT | t.BoolT) or (
        isinstance(ftype, t.EnumT) and ftype.underlying is not None)
