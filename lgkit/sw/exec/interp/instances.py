"""Extern instances declared in a program, made by their types in the architecture's registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.scope import ExternB, Scope
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.types import ExternT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen

# Cells one register, counter or meter array may hold: each is a Python list allocated when the
# program loads (8 bytes a cell per list), so 2^22 cells cost 32-64 MB; 2^30 would cost GBs.
MAX_ARRAY_CELLS = 1 << 22


def const_arg(gen: CodeGen, e: ir.Expr, scope: Scope | None = None) -> Any:
    """Evaluate a constructor argument (an int, an enum member name, or the binding of an
    extern instance, e.g. the Register of a TNA RegisterAction)."""
    if isinstance(e, ir.TypeMember):
        return e.member
    if isinstance(e, ir.ListExpr):  # a struct's initial value, e.g. of a TNA Register
        return [const_arg(gen, item, scope) for item in e.items]
    if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.InstanceDecl):
        found = (scope or gen.global_scope).get(e.decl)
        if isinstance(found, ExternB):
            return found
    value = const_value(e)  # also a constant expression such as `512 * 8`
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise unsupported(e, "a non-constant constructor argument")


def make_extern(gen: CodeGen, d: ir.InstanceDecl, qname: str, scope: Scope | None = None
                ) -> ExternB:
    """An extern instance: its run-time state, made by its type in the architecture's registry,
    named in the generated module; its abstract methods' implementations compiled in `scope`
    (ExternB.impls)."""
    t = d.type_ref.resolved
    name = t.name if isinstance(t, ExternT) else d.type_ref.name
    kind = gen.extern_registry.type_of(d, name)
    args = [const_arg(gen, a.value, scope) for a in d.args]
    if kind.cells_arg is not None and args[kind.cells_arg] > MAX_ARRAY_CELLS:
        raise unsupported(d, f"{name} '{qname}' of {args[kind.cells_arg]} cells: the built-in "
                          f"target holds at most {MAX_ARRAY_CELLS} cells per register, counter "
                          "or meter")
    obj = kind.make(gen, d, qname, args)
    var = f"X_{len(gen.externs)}"
    gen.ns[var] = obj
    binding = ExternB(var, name, qname, obj, kind)
    outer = scope or gen.global_scope
    inner = Scope(outer, outer.prefix)  # `this` in an implementation: the instance
    inner.bind(d, binding)
    binding.impls.update({f.name: gen.compile_function(f, inner) for f in d.methods})
    return binding
