"""Comparing, printing, substituting and unifying P4 types."""

from __future__ import annotations

from lgkit.sw.lang import types as t


def same_type(a: t.P4Type | None, b: t.P4Type | None) -> bool:
    """True if a and b are the same P4 type (named types compare by identity)."""
    if a is b:
        return True
    if isinstance(a, t.ExternT) and isinstance(b, t.ExternT):
        return a.name == b.name and len(a.type_args) == len(b.type_args) and all(
            same_type(x, y) or isinstance(x, t.DontCareT) or isinstance(y, t.DontCareT)
            for x, y in zip(a.type_args, b.type_args, strict=True)  # `Register<_, _>`: any
        )
    if isinstance(a, t.TupleT) and isinstance(b, t.TupleT):
        return len(a.elems) == len(b.elems) and all(
            same_type(x, y) for x, y in zip(a.elems, b.elems, strict=True)
        )
    if isinstance(a, t.StackT) and isinstance(b, t.StackT):
        return a.size == b.size and same_type(a.elem, b.elem)
    if isinstance(a, (t.EnumT, t.StructLikeT, t.TableT, t.BlockT)):
        return False
    return a == b


def type_str(typ: t.P4Type | None) -> str:
    """The type as P4 source writes it (for messages)."""
    if typ is None:
        return "unknown"
    if isinstance(typ, t.BitsT):
        return f"{'int' if typ.signed else 'bit'}<{typ.width}>"
    if isinstance(typ, t.VarbitT):
        return f"varbit<{typ.max_width}>"
    simple = {t.InfIntT: "int", t.BoolT: "bool", t.StringT: "string", t.VoidT: "void",
              t.DontCareT: "_"}
    if type(typ) in simple:
        return simple[type(typ)]
    if isinstance(typ, (t.EnumT, t.TypeVarT)):
        return typ.name
    if isinstance(typ, t.StructLikeT):
        return f"{typ.kind} {typ.name}" if typ.name else "struct {...}"
    if isinstance(typ, t.StackT):
        return f"{type_str(typ.elem)}[{typ.size}]"
    if isinstance(typ, t.TupleT):
        return f"tuple<{', '.join(type_str(e) for e in typ.elems)}>"
    if isinstance(typ, t.ExternT):
        args = f"<{', '.join(type_str(a) for a in typ.type_args)}>" if typ.type_args else ""
        return f"{typ.name}{args}"
    if isinstance(typ, t.TableT):
        return f"table {typ.name}"
    if isinstance(typ, t.ApplyResultT):
        return f"{typ.table}.apply() result"
    if isinstance(typ, t.BlockT):
        return f"{typ.kind} {typ.name}"
    return type(typ).__name__


def contains_typevar(typ: t.P4Type | None) -> bool:
    if isinstance(typ, t.TypeVarT):
        return True
    if isinstance(typ, t.TupleT):
        return any(contains_typevar(e) for e in typ.elems)
    if isinstance(typ, t.StackT):
        return contains_typevar(typ.elem)
    if isinstance(typ, t.ExternT):
        return any(contains_typevar(a) for a in typ.type_args)
    return False


def substitute(typ: t.P4Type, bindings: dict[str, t.P4Type]) -> t.P4Type:
    """typ with its bound type variables replaced."""
    if not bindings or not contains_typevar(typ):
        return typ
    if isinstance(typ, t.TypeVarT):
        return bindings.get(typ.name, typ)
    if isinstance(typ, t.TupleT):
        return t.TupleT(tuple(substitute(e, bindings) for e in typ.elems))
    if isinstance(typ, t.StackT):
        return t.StackT(substitute(typ.elem, bindings), typ.size)
    if isinstance(typ, t.ExternT):
        return t.ExternT(typ.name, [substitute(a, bindings) for a in typ.type_args])
    return typ


def unify(pattern: t.P4Type, actual: t.P4Type, bindings: dict[str, t.P4Type]) -> bool:
    """Bind the free type variables of pattern so it equals actual; False on a mismatch."""
    if isinstance(pattern, t.TypeVarT):
        bound = bindings.get(pattern.name)
        if bound is None or isinstance(bound, t.TypeVarT):
            bindings[pattern.name] = actual
            return True
        return same_type(bound, actual)
    if isinstance(pattern, t.TupleT) and isinstance(actual, t.TupleT):
        return len(pattern.elems) == len(actual.elems) and all(
            unify(p, a, bindings) for p, a in zip(pattern.elems, actual.elems, strict=True)
        )
    if isinstance(pattern, t.StackT) and isinstance(actual, t.StackT):
        return pattern.size == actual.size and unify(pattern.elem, actual.elem, bindings)
    if isinstance(pattern, t.ExternT) and isinstance(actual, t.ExternT):
        return pattern.name == actual.name and all(
            unify(p, a, bindings) for p, a in zip(pattern.type_args, actual.type_args, strict=False)
        )
    return same_type(pattern, actual)
