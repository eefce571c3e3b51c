"""Typing expressions: operators, casts, literals, members, initialisers, implicit Casts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.check_types import TypeChecker
from lgkit.sw.lang.frontend.consteval import const_value, wrap
from lgkit.sw.lang.frontend.scope import Overloads, Scope, Silent
from lgkit.sw.lang.frontend.typeops import same_type, type_str

ARITH_OPS = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}

COMPARE_OPS = {"<", "<=", ">", ">="}

SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def implicit_cast(expr: ir.Expr, to: t.P4Type) -> ir.Cast:
    """A Cast node the checker inserts (e.g. an untyped literal given a width by context)."""
    ref = type_ref_for(to, expr.loc)
    cast = ir.Cast(expr.loc, ref, expr)
    cast.type = to
    return cast


def type_ref_for(to: t.P4Type, loc: ir.Loc) -> ir.TypeRef:
    if isinstance(to, t.BitsT):
        width = ir.IntLit(loc, to.width)
        width.type = t.InfIntT()
        ref = ir.TypeRef(loc, "int" if to.signed else "bit", width=width)
    else:
        ref = ir.TypeRef(loc, type_str(to))
    ref.resolved = to
    return ref


def size_in_bits(typ: t.P4Type | None, maximum: bool) -> int | None:
    """Serialized size of a value of typ (varbits count as empty, or full when maximum)."""
    if isinstance(typ, t.BitsT):
        return typ.width
    if isinstance(typ, t.BoolT):
        return 1
    if isinstance(typ, t.VarbitT):
        return typ.max_width if maximum else 0
    if isinstance(typ, t.EnumT) and typ.underlying is not None:
        return typ.underlying.width
    if isinstance(typ, t.StackT):
        elem = size_in_bits(typ.elem, maximum)
        return None if elem is None else elem * typ.size
    if isinstance(typ, t.StructLikeT):
        sizes = [size_in_bits(ft, maximum) for _, ft in typ.fields]
        if any(size is None for size in sizes):
            return None
        if typ.kind == "header_union":
            return max(sizes, default=0)  # type: ignore[type-var]
        return sum(sizes)  # type: ignore[arg-type]
    return None


class ExprChecker(TypeChecker):
    """Fills .type of expressions, converting where P4 converts implicitly."""

    if TYPE_CHECKING:  # defined by CallChecker, the next class of the checker
        def call(self, call: ir.Call, scope: Scope, expected: t.P4Type | None) -> ir.Call: ...
        def no_args(self, call: ir.Call, what: str) -> None: ...

    def expect_bool(self, e: ir.Expr, what: str) -> ir.Expr:
        if not isinstance(e.type, t.BoolT):
            raise self.fail(e.loc, f"{what} must be bool, not {type_str(e.type)}")
        return e

    def convert(self, e: ir.Expr, to: t.P4Type) -> ir.Expr:
        """e as a value of type `to`, with an implicit Cast where P4 allows one."""
        have = e.type
        assert have is not None
        if same_type(have, to) or isinstance(e, ir.DontCare):
            return e
        if isinstance(have, t.InfIntT) and isinstance(to, t.BitsT):
            return implicit_cast(e, to)
        if isinstance(have, t.EnumT) and have.underlying is not None and same_type(
            have.underlying, to
        ):
            return implicit_cast(e, to)
        if isinstance(to, t.TypeVarT) or isinstance(to, t.DontCareT):
            return e
        if isinstance(have, t.VoidT):
            raise self.fail(e.loc, "a call that returns nothing has no value")
        raise self.fail(e.loc, f"type mismatch: expected {type_str(to)}, got {type_str(have)}")

    def expr(self, e: ir.Expr, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        """Type-check e (filling .type); returns e or the node replacing it."""
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise self.fail(e.loc, f"unsupported: expression {type(e).__name__}")
        result: ir.Expr = method(e, scope, expected)
        assert result.type is not None, type(result).__name__
        return result

    def expr_IntLit(self, e: ir.IntLit, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        if e.width is None:
            e.type = t.InfIntT()
        else:
            if e.width < (1 if e.signed else 0):
                raise self.fail(e.loc, f"invalid width {e.width} in literal")
            e.type = t.BitsT(e.width, e.signed)
            e.value = wrap(e.value, e.type)
        return e

    def expr_BoolLit(self, e: ir.BoolLit, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.type = t.BoolT()
        return e

    def expr_StringLit(self, e: ir.StringLit, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.type = t.StringT()
        return e

    def expr_DontCare(self, e: ir.DontCare, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.type = t.DontCareT()
        return e

    def expr_DefaultKey(self, e: ir.DefaultKey, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        raise self.fail(e.loc, "'default' is only allowed as a keyset")

    def expr_PathExpr(self, e: ir.PathExpr, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        decl = self.lookup(scope, e.name, e.loc)
        e.decl = decl
        if isinstance(decl, (ir.VarDecl, ir.ConstDecl, ir.Param, ir.InstanceDecl)):
            e.type = decl.type_ref.resolved
            if e.type is None:
                raise Silent()
        elif isinstance(decl, ir.TableDecl):
            e.type = t.TableT(decl.name)
        elif isinstance(decl, (ir.ActionDecl, ir.FunctionDecl, ir.ExternDecl, Overloads)):
            raise self.fail(e.loc, f"'{e.name}' must be called")
        else:
            raise self.fail(e.loc, f"'{e.name}' is a type, not a value")
        return e

    def expr_TypeMember(self, e: ir.TypeMember, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        if e.type_name == "error":
            enum: t.P4Type | None = self.error_type
        else:
            decl = self.lookup(scope, e.type_name, e.loc)
            if isinstance(decl, (ir.VarDecl, ir.ConstDecl, ir.Param, ir.InstanceDecl)):
                member = ir.Member(e.loc, ir.PathExpr(e.loc, e.type_name), e.member)
                return self.expr(member, scope, expected)
            enum = decl.resolved if isinstance(decl, ir.TypeDecl) else None
        if not isinstance(enum, t.EnumT):
            raise self.fail(e.loc, f"'{e.type_name}' is not an enum or error type")
        if e.member not in enum.members:
            raise self.fail(e.loc, f"'{e.member}' is not a member of {enum.name}")
        e.type = enum
        return e

    def expr_Member(self, e: ir.Member, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.expr = self.expr(e.expr, scope, None)
        base = e.expr.type
        if isinstance(base, t.StructLikeT):
            ftype = base.field_type(e.name)
            if ftype is None:
                raise self.fail(e.loc, f"{base.kind} {base.name} has no field '{e.name}'")
            e.type = ftype
        elif isinstance(base, t.StackT):
            if e.name in ("next", "last"):
                if e.name == "next" and self.ctx.kind != "parser":
                    raise self.fail(e.loc, "'next' is only allowed in a parser")
                e.type = base.elem
            elif e.name in ("size", "lastIndex"):
                e.type = t.BitsT(32)
            else:
                raise self.fail(e.loc, f"header stack has no member '{e.name}'")
        elif isinstance(base, t.ApplyResultT):
            if e.name in ("hit", "miss"):
                e.type = t.BoolT()
            elif e.name == "action_run":
                e.type = base
            else:
                raise self.fail(e.loc, f"table apply result has no member '{e.name}'")
        else:
            raise self.fail(e.loc, f"cannot access member '{e.name}' of {type_str(base)}")
        return e

    def expr_Index(self, e: ir.Index, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.expr = self.expr(e.expr, scope, None)
        base = e.expr.type
        if isinstance(base, t.TupleT):
            return self.tuple_element(e, base, scope)
        if not isinstance(base, t.StackT):
            raise self.fail(e.loc, f"cannot index a value of type {type_str(base)}")
        e.index = self.expr(e.index, scope, None)
        itype = e.index.type
        if isinstance(itype, t.InfIntT):
            value = const_value(e.index)
            if isinstance(value, int) and not 0 <= value < base.size:
                raise self.fail(e.index.loc, f"index {value} out of range for stack of size "
                                f"{base.size}")
            e.index = implicit_cast(e.index, t.BitsT(32))
        elif not isinstance(itype, t.BitsT):  # bit<W> or int<W> (a negative one is out of range)
            raise self.fail(e.index.loc, f"stack index must be bit<W> or int<W>, not "
                            f"{type_str(itype)}")
        e.type = base.elem
        return e

    def tuple_element(self, e: ir.Index, base: t.TupleT, scope: Scope) -> ir.Expr:
        """tuple[i] with a constant i (folded to an IntLit index)."""
        position = self.const_int(e.index, scope, "tuple index")
        if not 0 <= position < len(base.elems):
            raise self.fail(e.index.loc, f"index {position} out of range for {type_str(base)}")
        e.index = ir.IntLit(e.index.loc, position)
        e.index.type = t.InfIntT()
        e.type = base.elems[position]
        return e

    def expr_Slice(self, e: ir.Slice, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.expr = self.decay_enum(self.expr(e.expr, scope, None))
        base = e.expr.type
        if not isinstance(base, t.BitsT):
            raise self.fail(e.loc, f"cannot slice a value of type {type_str(base)}")
        hi = self.const_int(e.hi, scope, "slice bound") if isinstance(e.hi, ir.Expr) else e.hi
        lo = self.const_int(e.lo, scope, "slice bound") if isinstance(e.lo, ir.Expr) else e.lo
        if not 0 <= lo <= hi < base.width:
            raise self.fail(e.loc, f"slice [{hi}:{lo}] out of range for {type_str(base)}")
        e.hi, e.lo = hi, lo
        e.type = t.BitsT(hi - lo + 1)
        return e

    def expr_Unary(self, e: ir.Unary, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.expr = self.expr(e.expr, scope, expected)
        operand = e.expr.type
        if e.op == "!":
            self.expect_bool(e.expr, "operand of '!'")
        elif e.op == "~":
            if isinstance(operand, t.InfIntT) and isinstance(expected, t.BitsT):
                e.expr = self.convert(e.expr, expected)
                operand = expected
            if not isinstance(operand, t.BitsT):
                raise self.fail(e.loc, f"'~' needs a bit<W> or int<W> operand, not "
                                f"{type_str(operand)}")
        elif not isinstance(operand, (t.BitsT, t.InfIntT)):
            raise self.fail(e.loc, f"'-' needs a numeric operand, not {type_str(operand)}")
        e.type = operand
        return e

    def expr_Binary(self, e: ir.Binary, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        op = e.op
        if op in ("&&&", ".."):
            raise self.fail(e.loc, f"'{op}' is only allowed in keysets")
        if op in ("&&", "||"):
            e.left = self.expect_bool(self.expr(e.left, scope, t.BoolT()), f"operand of '{op}'")
            e.right = self.expect_bool(self.expr(e.right, scope, t.BoolT()), f"operand of '{op}'")
            e.type = t.BoolT()
            return e
        hint = expected if op in ARITH_OPS or op in ("<<", ">>") else None
        e.left = self.expr(e.left, scope, hint)
        e.right = self.expr(e.right, scope, hint if op not in ("<<", ">>") else None)
        if op in ("<<", ">>"):
            return self.shift(e, expected)
        if op == "++":
            return self.concat(e)
        if op in ("==", "!="):
            self.unify_operands(e)
            e.type = t.BoolT()
            return e
        if op in COMPARE_OPS:
            operand = self.unify_operands(e)
            if not isinstance(operand, (t.BitsT, t.InfIntT)):
                raise self.fail(e.loc, f"'{op}' needs numeric operands, not {type_str(operand)}")
            e.type = t.BoolT()
            return e
        operand = self.unify_operands(e)
        if not isinstance(operand, (t.BitsT, t.InfIntT)):
            raise self.fail(e.loc, f"'{op}' needs numeric operands, not {type_str(operand)}")
        if op in ("|+|", "|-|") and isinstance(operand, t.InfIntT):
            raise self.fail(e.loc, f"'{op}' needs operands with a width")
        if op in ("/", "%") and isinstance(operand, t.BitsT) and operand.signed:
            raise self.fail(e.loc, f"'{op}' is not defined on signed int<W>")
        e.type = operand
        return e

    def decay_enum(self, e: ir.Expr) -> ir.Expr:
        """A serializable enum value used as a number: an explicit Cast to its underlying type
        (P4 converts these implicitly)."""
        if isinstance(e.type, t.EnumT) and e.type.underlying is not None:
            return implicit_cast(e, e.type.underlying)
        return e

    def unify_operands(self, e: ir.Binary) -> t.P4Type:
        if not same_type(e.left.type, e.right.type):
            e.left, e.right = self.decay_enum(e.left), self.decay_enum(e.right)
        left, right = e.left.type, e.right.type
        assert left is not None and right is not None
        if isinstance(left, t.InfIntT) and isinstance(right, t.BitsT):
            e.left = self.convert(e.left, right)
            return right
        if isinstance(right, t.InfIntT) and isinstance(left, t.BitsT):
            e.right = self.convert(e.right, left)
            return left
        if not same_type(left, right):
            raise self.fail(e.loc, f"type mismatch in '{e.op}': {type_str(left)} and "
                            f"{type_str(right)}")
        if isinstance(left, (t.VoidT, t.ExternT, t.TableT, t.BlockT)):
            raise self.fail(e.loc, f"'{e.op}' cannot be applied to {type_str(left)}")
        return left

    def shift(self, e: ir.Binary, expected: t.P4Type | None) -> ir.Expr:
        e.left, e.right = self.decay_enum(e.left), self.decay_enum(e.right)
        left, right = e.left.type, e.right.type
        if isinstance(right, t.InfIntT):
            amount = const_value(e.right)
            if isinstance(amount, int) and amount < 0:
                raise self.fail(e.right.loc, "shift amount must not be negative")
        elif not (isinstance(right, t.BitsT) and not right.signed):
            raise self.fail(e.right.loc, f"shift amount must be an unsigned bit<W>, not "
                            f"{type_str(right)}")
        if isinstance(left, t.InfIntT) and const_value(e.right) is None:
            if not isinstance(expected, t.BitsT):
                raise self.fail(e.loc, "the width of an untyped integer shifted by a "
                                "non-constant amount cannot be inferred")
            e.left = self.convert(e.left, expected)
            left = expected
        if not isinstance(left, (t.BitsT, t.InfIntT)):
            raise self.fail(e.loc, f"cannot shift a value of type {type_str(left)}")
        e.type = left
        return e

    def concat(self, e: ir.Binary) -> ir.Expr:
        e.left, e.right = self.decay_enum(e.left), self.decay_enum(e.right)
        left, right = e.left.type, e.right.type
        for side, st in ((e.left, left), (e.right, right)):
            if not isinstance(st, t.BitsT):
                raise self.fail(side.loc, f"'++' needs bit<W> or int<W> operands with a width, "
                                f"not {type_str(st)}")
        assert isinstance(left, t.BitsT) and isinstance(right, t.BitsT)
        e.type = t.BitsT(left.width + right.width, left.signed)
        return e

    def expr_Ternary(self, e: ir.Ternary, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        e.cond = self.expect_bool(self.expr(e.cond, scope, t.BoolT()), "condition of '?:'")
        e.then = self.expr(e.then, scope, expected)
        e.other = self.expr(e.other, scope, expected)
        a, b = e.then.type, e.other.type
        assert a is not None and b is not None
        if isinstance(a, t.InfIntT) and isinstance(b, t.InfIntT):
            if isinstance(expected, t.BitsT):
                e.then, e.other = self.convert(e.then, expected), self.convert(e.other, expected)
                a = expected
            elif const_value(e.cond) is None:
                raise self.fail(e.loc, "the width of '?:' with untyped integer branches cannot "
                                "be inferred")
        elif isinstance(a, t.InfIntT):
            e.then, a = self.convert(e.then, b), b
        elif isinstance(b, t.InfIntT):
            e.other = self.convert(e.other, a)
        elif not same_type(a, b):
            raise self.fail(e.loc, f"type mismatch in '?:': {type_str(a)} and {type_str(b)}")
        e.type = a
        return e

    def expr_Cast(self, e: ir.Cast, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        to = self.resolve_type(e.to, scope)
        e.expr = self.expr(e.expr, scope, to)
        have = e.expr.type
        assert have is not None
        if not self.castable(have, to, e.expr):
            raise self.fail(e.loc, f"cannot cast {type_str(have)} to {type_str(to)}")
        if isinstance(e.expr, (ir.ListExpr, ir.StructExpr)):
            return e.expr
        e.type = to
        return e

    def castable(self, have: t.P4Type, to: t.P4Type, inner: ir.Expr) -> bool:
        if same_type(have, to):
            return True
        numeric = (t.BitsT, t.InfIntT)
        if isinstance(to, t.BitsT) and isinstance(have, numeric):
            return True
        if isinstance(to, t.BoolT) and isinstance(have, t.BitsT):
            return have.width == 1 and not have.signed
        if isinstance(to, t.BoolT) and isinstance(have, t.InfIntT):
            return const_value(inner) in (0, 1)
        if isinstance(to, t.BitsT) and isinstance(have, t.BoolT):
            return to.width == 1 and not to.signed
        if isinstance(to, t.EnumT) and to.underlying is not None:
            return isinstance(have, numeric)
        if isinstance(have, t.EnumT) and have.underlying is not None:
            return isinstance(to, t.BitsT)
        if isinstance(to, t.InfIntT):
            return isinstance(have, t.InfIntT)
        return False

    def expr_ListExpr(self, e: ir.ListExpr, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        if isinstance(expected, t.StructLikeT) and expected.kind != "header_union":
            if len(e.items) != len(expected.fields):
                raise self.fail(e.loc, f"{expected.kind} {expected.name} has "
                                f"{len(expected.fields)} fields, initializer has {len(e.items)}")
            e.items = [
                self.convert(self.expr(item, scope, ftype), ftype)
                for item, (_, ftype) in zip(e.items, expected.fields, strict=True)
            ]
            e.type = expected
            return e
        if isinstance(expected, t.TupleT) and len(expected.elems) == len(e.items):
            e.items = [
                self.convert(self.expr(item, scope, et), et)
                for item, et in zip(e.items, expected.elems, strict=True)
            ]
            e.type = expected
            return e
        e.items = [self.expr(item, scope, None) for item in e.items]
        e.type = t.TupleT(tuple(item.type for item in e.items))  # type: ignore[misc]
        return e

    def expr_StructExpr(
        self, e: ir.StructExpr, scope: Scope, expected: t.P4Type | None
    ) -> ir.Expr:
        if isinstance(expected, t.StructLikeT) and expected.kind != "header_union":
            given = [name for name, _ in e.items]
            wanted = [name for name, _ in expected.fields]
            if sorted(given) != sorted(wanted):
                raise self.fail(e.loc, f"initializer fields {given} do not match the fields of "
                                f"{expected.kind} {expected.name}")
            e.items = [
                (name, self.convert(self.expr(v, scope, expected.field_type(name)),
                                    expected.field_type(name)))  # type: ignore[arg-type]
                for name, v in e.items
            ]
            e.type = expected
            return e
        items = [(name, self.expr(v, scope, None)) for name, v in e.items]
        e.items = items
        e.type = t.StructLikeT("struct", "", [(n, v.type) for n, v in items])  # type: ignore
        return e

    def expr_Call(self, e: ir.Call, scope: Scope, expected: t.P4Type | None) -> ir.Expr:
        target = e.target
        if isinstance(target, ir.Member) and target.name in SIZE_METHODS:
            return self.size_method(e, target, scope)
        return self.call(e, scope, expected)

    def size_method(self, call: ir.Call, target: ir.Member, scope: Scope) -> ir.Expr:
        """x.minSizeInBits() and friends: folded to an untyped constant."""
        self.no_args(call, target.name)
        target.expr = self.expr(target.expr, scope, None)
        bits = size_in_bits(target.expr.type, maximum=target.name.startswith("max"))
        if bits is None:
            raise self.fail(call.loc, f"{type_str(target.expr.type)} has no {target.name}()")
        value = ir.IntLit(call.loc, bits // 8 if target.name.endswith("Bytes") else bits)
        value.type = t.InfIntT()
        return value
