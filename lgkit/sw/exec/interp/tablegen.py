"""Tables: the per-table apply function and the plan from which the runtime Table is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp.action_profiles import ActionProfile
from lgkit.sw.exec.interp.exprs import ExprGen, unsupported, wrap
from lgkit.sw.exec.interp.fnctx import FnCtx
from lgkit.sw.exec.interp.layout import scalar_width
from lgkit.sw.exec.interp.plans import ActionPlan, ConstEntryCode, TablePlan, qualified
from lgkit.sw.exec.interp.scope import ActionB, ExternB, PyVar, Scope, TableB
from lgkit.sw.exec.interp.tables import (
    ActionInfo,
    Exact,
    KeySpec,
    Lpm,
    Optional_,
    Range,
    Table,
    TableEntry,
    Ternary,
)
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen

NO_ACTION = "NoAction"


def expr_text(e: ir.Expr) -> str:
    """The P4Info name of a key expression (as p4c prints it)."""
    if isinstance(e, ir.PathExpr):
        return e.name
    if isinstance(e, ir.Member):
        return f"{expr_text(e.expr)}.{e.name}"
    if isinstance(e, ir.Index):
        return f"{expr_text(e.expr)}[{expr_text(e.index)}]"
    if isinstance(e, ir.IntLit):
        return str(e.value)
    if isinstance(e, ir.Slice):
        return f"{expr_text(e.expr)}[{e.hi}:{e.lo}]"
    if isinstance(e, ir.Call) and isinstance(e.target, ir.Member):
        return f"{expr_text(e.target.expr)}.{e.target.name}()"
    if isinstance(e, ir.Cast):
        return expr_text(e.expr)
    return "key"


def _ann_text(ann: dict[str, list[str]], name: str) -> str | None:
    tokens = ann.get(name) if ann else None
    if not tokens:
        return None
    return "".join(tokens).strip().strip('"')


def table_plan(gen: CodeGen, d: ir.TableDecl, scope: Scope, prefix: str) -> TablePlan:

    qname = qualified(prefix, d)
    fname = gen.fn_name("t")
    var = f"T_{fname}"
    binding = TableB(fname, qname, d)
    scope.bind(d, binding)
    fx = FnCtx(gen, scope, "control", fname)
    keys = []
    key_codes = []
    selector_codes, selector_widths = [], []
    for k in d.keys:
        t = ir.checked(k.expr.type)
        width = scalar_width(t)
        code = fx.eg.ex(k.expr)
        if isinstance(t, BitsT) and t.signed:
            code = f"({code} & {hex((1 << width) - 1)})"
        if k.match_kind == "selector":  # hashed to choose a group's member, never matched
            selector_codes.append(code)
            selector_widths.append(width)
            continue
        key_codes.append(code)
        name = _ann_text(k.annotations, "name") or expr_text(k.expr)
        keys.append(KeySpec(name, k.match_kind, width))
    actions = []
    for ref in d.actions:
        b = _action(gen, scope, ref)
        params = b.decl.params[len(ref.args) :]
        if any(p.direction for p in params):
            raise unsupported(ref, "an action with unbound directional parameters in a table")
        fn = _bound_wrapper(gen, scope, ref, b, params) if ref.args else b.fn
        widths = [scalar_width(p.type_ref.resolved) for p in params]
        signed = [isinstance(p.type_ref.resolved, BitsT) and p.type_ref.resolved.signed
                  for p in params]
        ann = ref.annotations or {}
        actions.append(ActionPlan(b.qname, fn, b.action_id, widths, signed,
                                  "tableonly" in ann, "defaultonly" in ann))
        binding.action_ids[ref.name] = b.action_id
        binding.action_ids[b.decl.name] = b.action_id
    default = _default_action(gen, fx, d, actions)
    size = 1024
    if d.size is not None:
        size = _const_size(d.size)
    plan = TablePlan(qname, var, d, keys, actions, default, d.default_is_const, size)
    plan.entries_const = bool(d.entries) and d.entries_are_const
    for prop, attr in (("counters", "direct_counter"), ("meters", "direct_meter"),
                       ("registers", "direct_register")):
        pe = d.properties.get(prop)
        if pe is not None:
            eb = scope.get(getattr(pe, "decl", None))
            if not isinstance(eb, ExternB):
                raise unsupported(pe, f"table property {prop}")
            setattr(plan, attr, eb.qname)
            if prop != "registers":
                setattr(plan, attr + "_kind", eb.obj)
    impl = d.properties.get("implementation")
    if impl is not None:
        eb = scope.get(getattr(impl, "decl", None))
        if not isinstance(eb, ExternB) or not isinstance(eb.obj, ActionProfile):
            raise unsupported(impl, "table property implementation")
        plan.profile = eb.obj
        if d.entries:
            raise unsupported(d.entries[0], "entries in a table with an action profile")
    for prop in d.properties:
        if prop not in ("counters", "meters", "registers", "largest_priority_wins",
                        "support_timeout", "implementation"):
            raise unsupported(d.properties[prop], f"table property '{prop}'")
    lpw = d.properties.get("largest_priority_wins")
    plan.largest_priority_wins = not (isinstance(lpw, ir.BoolLit) and not lpw.value)
    timeout = d.properties.get("support_timeout")
    plan.support_timeout = isinstance(timeout, ir.BoolLit) and timeout.value
    plan.bmv2_priorities = any("priority" in e.annotations for e in d.entries) and all(
        e.priority is None for e in d.entries
    )
    for i, entry in enumerate(d.entries):
        codes = _entry_codes(gen, fx, scope, entry, keys)
        if plan.bmv2_priorities:
            codes = (*codes[:3], _bmv2_priority(entry, i))
        plan.entries.append(codes)
    if keys or selector_codes:
        key = "(" + "".join(c + ", " for c in key_codes) + ")"
        fx.line(f"h = {var}._lookup({key})")
    else:  # a keyless table always runs its default action (Table._build)
        fx.line(f"h = {var}._default_hit")
    if plan.profile is not None and plan.profile.selector:
        sel = "(" + "".join(c + ", " for c in selector_codes) + ")"
        fx.line("if h.group is not None:")
        with fx.indent():
            fx.line(f"h = {var}.profile.choose(h.group, h.entry, {sel}, {tuple(selector_widths)})")
    if plan.support_timeout:
        fx.line("if h.hit:")
        with fx.indent():
            fx.line("h.entry.last_hit_us = P.now")
    if plan.direct_counter:
        fx.line("if h.hit:")
        with fx.indent():
            fx.line("e = h.entry")
            fx.line("e.packets += 1")
            fx.line("e.bytes += P.count_len")
    if plan.direct_meter:
        packets = plan.direct_meter_kind == "packets"
        fx.line(f"P.dm = _dmeter(h.entry, {packets}, P.count_len, P.now) if h.hit else 0")
    if plan.direct_register:  # DirectRegisterAction.execute in the action (tna_state.py)
        fx.line(f"P.dreg = ({plan.direct_register!r}, h.entry if h.hit else None)")
    _dispatch(fx, actions)
    fx.line("return h")
    gen.functions.append(fx.source(f"def {fname}(S, P):"))
    return plan


MAX_DISPATCH = 8  # actions a table apply calls directly (then inlined); beyond, by reference


def _dispatch(fx: FnCtx, actions: list[ActionPlan]) -> None:
    """Run the hit's action: a direct call per action of the table (which the module's
    inliner then inlines, its arguments unpacked from the hit), else the call by reference
    (the implicit NoAction, an action profile's no-op, a table with many actions)."""
    if len(actions) > MAX_DISPATCH:
        fx.line("h.fn(S, P, *h.args)")
        return
    fx.line("f = h.fn")
    for i, a in enumerate(actions):
        fx.line(f"{'if' if i == 0 else 'elif'} f is {a.fn}:")
        with fx.indent():
            names = [f"x{j}" for j in range(len(a.widths))]
            if names:
                fx.line(f"{', '.join(names)}, = h.args")
            fx.line(f"{a.fn}(S, P{''.join(', ' + n for n in names)})")
    if actions:
        fx.line("else:")
        with fx.indent():
            fx.line("f(S, P, *h.args)")
    else:
        fx.line("f(S, P, *h.args)")


def _const_size(e: ir.Expr) -> int:

    value = ExprGen.const_int(e)
    if value is None:
        raise unsupported(e, "a non-constant table size")
    return value


def _bound_wrapper(
    gen: CodeGen, scope: Scope, ref: ir.ActionRef, b: ActionB, params: list[ir.Param]
) -> str:
    """A function that calls an action with the arguments bound in the table's actions list
    (`count(meta.n)`) plus the control-plane parameters, with copy-in/copy-out."""

    fname = gen.fn_name("w")
    fx = FnCtx(gen, Scope(scope, scope.prefix), "control", fname)
    args = list(ref.args)
    names = []
    for i, p in enumerate(params):
        name = f"c{i}"
        dummy = ir.Param(p.loc, name, "", p.type_ref)
        fx.scope.bind(dummy, PyVar(name, ir.checked(p.type_ref.resolved)))
        path = ir.PathExpr(p.loc, name)
        path.decl = dummy
        path.type = p.type_ref.resolved
        args.append(ir.Argument(p.loc, path))
        names.append(name)
    call = ir.Call(ref.loc, ir.PathExpr(ref.loc, ref.name), args)
    call.kind = ir.CallKind.ACTION
    call.callee = b.decl
    gen.calls.call_stmt(fx, call)
    gen.functions.append(fx.source(f"def {fname}(S, P{''.join(', ' + n for n in names)}):"))
    return fname


def _action(gen: CodeGen, scope: Scope, ref: ir.ActionRef) -> ActionB:
    decl = ref.decl
    b = scope.get(decl) if decl is not None else None
    if b is None and decl is not None:
        b = gen.lookup_global(decl)
    if not isinstance(b, ActionB):
        raise unsupported(ref, f"action '{ref.name}'")
    return b


def _default_action(gen: CodeGen, fx: Any, d: ir.TableDecl, actions: list) -> tuple:
    ref = d.default_action
    if ref is None:
        return (NO_ACTION, [])
    b = _action(gen, fx.scope, ref)
    args = [fx.eg.ex(a) for a in _data_args(b, ref)]
    return (b.qname, args)


def _data_args(b: ActionB, ref: ir.ActionRef) -> list[ir.Expr]:
    """The action-data arguments of a default action or entry: a call that gives every
    argument also binds the directional parameters, which are not action data."""
    params = b.decl.params
    if len(ref.args) != len(params) or any(a.name for a in ref.args):
        by_name = {a.name: a.value for a in ref.args if a.name}
        if by_name:
            return [by_name[p.name] for p in params if not p.direction and p.name in by_name]
        return [a.value for a in ref.args]
    return [a.value for p, a in zip(params, ref.args, strict=True) if not p.direction]


def _entry_codes(gen: CodeGen, fx: Any, scope: Scope, entry: ir.Entry, keys: list[KeySpec]
                 ) -> ConstEntryCode:
    b = _action(gen, scope, entry.action)
    matches = []
    for spec, k in zip(keys, entry.keys, strict=False):
        matches.append(_key_code(fx, spec, k))
    args = [fx.eg.ex(a) for a in _data_args(b, entry.action)]
    prio = fx.eg.ex(entry.priority) if entry.priority is not None else None
    return (matches, b.qname, args, prio)


def _bmv2_priority(entry: ir.Entry, index: int) -> str:
    """The BMv2 priority of a const entry in a table using @priority annotations (as p4c's
    BMv2 backend assigns them): the annotation's value, else the entry's 1-based position; the
    smallest value wins."""
    tokens = entry.annotations.get("priority")
    if not tokens:
        return str(index + 1)
    text = "".join(tokens).strip()
    try:
        return str(int(text, 0))
    except ValueError:
        raise unsupported(entry, f"@priority({text})") from None


def _key_code(fx: Any, spec: KeySpec, k: ir.Expr) -> tuple[str, ...]:
    if isinstance(k, ir.DontCare | ir.DefaultKey):
        return ("any",)
    if isinstance(k, ir.Binary) and k.op == "&&&":
        return ("mask", fx.eg.ex(k.left), fx.eg.ex(k.right))
    if isinstance(k, ir.Binary) and k.op == "..":
        return ("range", fx.eg.ex(k.left), fx.eg.ex(k.right))
    return ("value", fx.eg.ex(k))


def _key_match(spec: KeySpec, code: tuple, ns: dict) -> Any:
    full = (1 << spec.width) - 1
    kind = code[0]
    vals = [eval(c, ns) & full for c in code[1:]]  # noqa: S307 - our own generated constants
    mk = spec.match_kind
    if kind == "any":
        return Lpm(0, 0) if mk == "lpm" else None
    if kind == "range":
        return Range(vals[0], vals[1])
    if kind == "mask":
        if mk == "lpm":
            plen = bin(vals[1]).count("1")
            return Lpm(vals[0] & vals[1], plen)
        return Ternary(vals[0], vals[1])
    v = vals[0]
    return {
        "exact": Exact(v),
        "ternary": Ternary(v, full),
        "lpm": Lpm(v, spec.width),
        "range": Range(v, v),
        "optional": Optional_(v),
    }.get(mk) or Exact(v)


def build_table(plan: TablePlan, ns: dict) -> Table:
    """Create the runtime Table of a plan once the generated module exists."""
    infos = [
        ActionInfo(a.qname, a.action_id, ns[a.fn], a.widths, a.signed, a.table_only,
                   a.default_only)
        for a in plan.actions
    ]
    if not any(a.name == plan.default[0] for a in infos) and plan.default[0] == NO_ACTION:
        infos.append(ActionInfo(NO_ACTION, 0, _no_action, [], [], default_only=True, hidden=True))
    default_name, default_codes = plan.default
    default_params = [_unsigned(eval(c, ns), w) for c, w in  # noqa: S307
                      zip(default_codes, _widths(infos, default_name), strict=False)]
    table = Table(plan.qname, plan.keys, infos, plan.size, (default_name, default_params),
                  plan.default_is_const, plan.direct_counter, plan.direct_meter, plan.profile)
    if plan.profile is not None:
        plan.profile.attach(table)
    n = len(plan.entries)
    bmv2_top = 1 + max((int(e[3]) for e in plan.entries
                        if plan.bmv2_priorities and e[3] is not None), default=0)
    for i, (codes, action, arg_codes, prio_code) in enumerate(plan.entries):
        keys = [_key_match(s, c, ns) for s, c in zip(plan.keys, codes, strict=False)]
        params = [_unsigned(eval(c, ns), w) for c, w in  # noqa: S307
                  zip(arg_codes, _widths(infos, action), strict=False)]
        if prio_code is None:
            prio = n - i  # earlier const entries win
        elif plan.bmv2_priorities:
            prio = bmv2_top - int(prio_code)  # positive, the largest wins
        else:
            prio = eval(prio_code, ns)  # noqa: S307
            if not plan.largest_priority_wins:
                prio = -prio
        table.add_const_entry(TableEntry(keys, action, params, prio))
    table.const_entries = plan.entries_const
    return table


def _widths(infos: list[ActionInfo], name: str) -> list[int]:
    for info in infos:
        if info.name == name:
            return info.param_widths
    return []


def _unsigned(value: Any, width: int) -> int:
    if isinstance(value, bool):
        return int(value)
    return wrap(int(value), BitsT(width)) if width else int(value)


def _no_action(S: list, P: Any) -> None:
    return None

