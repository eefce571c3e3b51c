"""Parsers and packet methods: extract (fixed and varbit), lookahead, advance, length, emit.

A generated parser keeps `data` (the packet bytes), `end` (its length in bits) and `pos` (the
bit cursor) in Python locals; errors raise _PErr(code) which ends parsing with parser_error set
(BMv2: no drop, unparsed bytes stay payload). `transition reject` and a select without a match
end parsing like accept, as p4c's BMv2 backend does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.exprs import Place, unsupported
from lgkit.sw.exec.interp.fnctx import FnCtx
from lgkit.sw.exec.interp.layout import is_scalar, leaf_types, scalar_width, size_of
from lgkit.sw.exec.interp.parsememo import MEMO_ENTRIES, memo_bytes
from lgkit.sw.exec.interp.scope import PacketB, Scope, Slot
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, StackT, StructLikeT, ValueSetT, VarbitT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen


def packet_method(calls: Calls, fx: FnCtx, call: ir.Call, b: PacketB, name: str) -> str:
    args = [a.value for a in call.args]
    gen = calls.gen
    if b.kind == "out":
        if name != "emit":
            raise unsupported(call, f"packet_out.{name}")
        _emit(fx, args[0])
        return ""
    if fx.kind != "parser":
        raise unsupported(call, f"packet_in.{name} outside the parser")
    if name == "extract":
        _extract(gen, fx, call, args)
        return ""
    if name == "lookahead":
        t = call.type
        if isinstance(t, BitsT | BoolT):
            w = scalar_width(t)
            too_short = gen.error_code("PacketTooShort")
            fx.line(f"if pos + {w} > end:")
            with fx.indent():
                fx.line(f"raise _PErr({too_short})")
            code = f"_read_bits(data, pos, {w})"
            if isinstance(t, BitsT) and t.signed:
                half = 1 << (w - 1)
                code = f"((({code}) + {half}) & {hex((1 << w) - 1)}) - {half}"
            return f"({code} != 0)" if isinstance(t, BoolT) else code
        if isinstance(t, StructLikeT) and t.kind in ("header", "struct") and all(
            isinstance(ft, BitsT | BoolT) for ft in leaf_types(t)
        ):
            tmp = fx.temp()
            values = _read_header(gen, fx, t, tmp, padded=False)
            if t.kind == "struct":
                return "[" + ", ".join(values) + "]"
            return "[1, " + ", ".join(values) + "]"
        raise unsupported(call, "lookahead of this type")
    if name == "advance":
        amount = fx.temp()
        fx.line(f"{amount} = {fx.eg.ex(args[0])}")
        fx.line(f"if {amount} & 7:")  # BMv2 advances whole bytes only
        with fx.indent():
            fx.line(f"raise _PErr({gen.error_code('ParserInvalidArgument')})")
        fx.line(f"if pos + {amount} > end:")
        with fx.indent():
            fx.line(f"raise _PErr({gen.error_code('PacketTooShort')})")
        fx.line(f"pos += {amount}")
        return ""
    if name == "length":
        return "(end >> 3)"
    raise unsupported(call, f"packet_in.{name}")


def _read_header(
    gen: CodeGen, fx: FnCtx, t: StructLikeT, tmp: str, padded: bool = True
) -> list[str]:
    """Emit a bounds check and a read of a fixed header at pos; returns field value codes.
    `padded`: the header occupies whole bytes in the packet (see _padded_bits)."""
    width = _padded_bits(t) if padded else _fixed_bits(t)
    nbytes = (width + 7) // 8
    fx.line(f"if pos + {width} > end:")
    with fx.indent():
        fx.line(f"raise _PErr({gen.error_code('PacketTooShort')})")
    if width % 8 == 0 and fx.aligned:
        fx.line(f"{tmp} = int.from_bytes(data[pos >> 3:(pos >> 3) + {nbytes}], 'big')")
    elif width % 8 == 0:
        fx.line("if pos & 7:")
        with fx.indent():
            fx.line(f"{tmp} = _read_bits(data, pos, {width})")
        fx.line("else:")
        with fx.indent():
            fx.line(f"{tmp} = int.from_bytes(data[pos >> 3:(pos >> 3) + {nbytes}], 'big')")
    else:
        fx.line(f"{tmp} = _read_bits(data, pos, {width})")
    values = []
    shift = width
    for ft in leaf_types(t):
        w = scalar_width(ft)
        shift -= w
        code = f"({tmp} >> {shift})" if shift else tmp
        if shift + w < width:
            code = f"({code} & {hex((1 << w) - 1)})"
        if isinstance(ft, BitsT) and ft.signed:
            half = 1 << (w - 1)
            code = f"(({code} + {half}) & {hex((1 << w) - 1)}) - {half}"
        values.append(code)
    return values


def _fixed_bits(t: StructLikeT) -> int:
    return sum(scalar_width(ft) for ft in leaf_types(t) if not isinstance(ft, VarbitT))


def _padded_bits(t: StructLikeT) -> int:
    """Bits a fixed header occupies in the packet. As in BMv2 (p4c's backend appends a padding
    field to every header type whose width is not a multiple of 8), extract consumes and emit
    writes whole bytes; the padding bits are dropped on extract and emitted as zeros."""
    width = _fixed_bits(t)
    return width + (-width % 8)


def _extract(gen: CodeGen, fx: FnCtx, call: ir.Call, args: list[ir.Expr]) -> None:
    target = args[0]
    t = target.type
    if not (isinstance(t, StructLikeT) and t.kind == "header"):
        raise unsupported(call, "extract into a non-header")
    stack = _stack_next(target)
    if stack is not None:  # a full stack fails before the packet length is checked
        st = stack.type
        assert isinstance(st, StackT)
        fx.line(f"if {fx.eg.place(stack).ref()} >= {st.size}:")
        with fx.indent():
            fx.line(f"raise _PErr({gen.error_code('StackOutOfBounds')})")
    place = fx.eg.place(target)
    varbit = [ft for ft in leaf_types(t) if isinstance(ft, VarbitT)]
    if varbit:
        if len(args) < 2:
            raise unsupported(call, "extract of a varbit header without a length")
        _extract_varbit(gen, fx, t, place, fx.eg.ex(args[1]))
    else:
        tmp = fx.temp()
        values = _read_header(gen, fx, t, tmp)
        fx.line(f"{place.span()} = (1, {', '.join(values)})")
        fx.line(f"pos += {_padded_bits(t)}")
    if stack is not None:
        stack_place = fx.eg.place(stack)
        fx.line(f"{stack_place.ref()} += 1")
    _invalidate_union_siblings(fx, target)


def _stack_next(target: ir.Expr) -> ir.Expr | None:
    """The stack expression when extracting into `stack.next` (or `stack.next.member` for a
    stack of header unions)."""
    while isinstance(target, ir.Member):
        if target.name == "next" and isinstance(target.expr.type, StackT):
            return target.expr
        target = target.expr
    return None


def _invalidate_union_siblings(fx: FnCtx, target: ir.Expr) -> None:
    if isinstance(target, ir.Member):
        ut = target.expr.type
        if isinstance(ut, StructLikeT) and ut.kind == "header_union":
            uplace = fx.eg.place(target.expr)
            off = 0
            for fname, ft in ut.fields:
                if fname != target.name:
                    fx.line(f"{uplace.sub(off, ft).ref()} = 0")
                off += size_of(ft)


def _extract_varbit(gen: CodeGen, fx: FnCtx, t: StructLikeT, place: Place, length: str) -> None:
    lt = fx.temp()
    fx.line(f"{lt} = {length}")
    vmax = next(ft.max_width for ft in leaf_types(t) if isinstance(ft, VarbitT))
    fx.line(f"if {lt} & 7:")  # BMv2's order of checks: multiple of 8, length, maximum
    with fx.indent():
        fx.line(f"raise _PErr({gen.error_code('ParserInvalidArgument')})")
    fixed = _fixed_bits(t)
    fx.line(f"if pos + {fixed} + {lt} > end:")
    with fx.indent():
        fx.line(f"raise _PErr({gen.error_code('PacketTooShort')})")
    fx.line(f"if {lt} > {vmax}:")
    with fx.indent():
        fx.line(f"raise _PErr({gen.error_code('HeaderTooShort')})")
    cursor = fx.temp()
    fx.line(f"{cursor} = pos")
    off = 1
    stores = ["1"]
    for ft in leaf_types(t):
        if isinstance(ft, VarbitT):
            stores.append(f"_read_bits(data, {cursor}, {lt}) if {lt} else 0")
            stores.append(lt)
            fx.line(f"_v{off} = {stores[-2]}")
            stores[-2] = f"_v{off}"
            fx.line(f"{cursor} += {lt}")
            off += 2
        else:
            w = scalar_width(ft)
            fx.line(f"_v{off} = _read_bits(data, {cursor}, {w})")
            stores.append(f"_v{off}")
            fx.line(f"{cursor} += {w}")
            off += 1
    fx.line(f"{place.span()} = ({', '.join(stores)},)")
    fx.line(f"pos = {cursor}")


# ---------------------------------------------------------------------------- emit


def _emit(fx: FnCtx, e: ir.Expr) -> None:
    if not isinstance(e.type, StructLikeT | StackT):
        raise unsupported(e, "emit of a value that is not a header, stack, union or struct")
    _emit_place(fx, fx.eg.place(e))


def _emit_place(fx: FnCtx, place: Place) -> None:
    t = place.type
    if isinstance(t, StackT):
        stride = size_of(t.elem)
        for i in range(t.size):
            _emit_place(fx, place.sub(1 + i * stride, t.elem))
        return
    assert isinstance(t, StructLikeT)
    if t.kind != "header":
        off = 0
        for _, ft in t.fields:
            _emit_place(fx, place.sub(off, ft))
            off += size_of(ft)
        return
    fx.line(f"if {place.ref()}:")
    with fx.indent():
        if any(isinstance(ft, VarbitT) for ft in leaf_types(t)):
            off = 1
            for ft in leaf_types(t):
                if isinstance(ft, VarbitT):
                    fx.line(f"P.out.append(({place.ref(off)}, {place.ref(off + 1)}))")
                    off += 2
                else:
                    fx.line(f"P.out.append(({_field_bits(place, off, ft)}, {scalar_width(ft)}))")
                    off += 1
            return
        width = _padded_bits(t)
        terms = []
        shift = width
        off = 1
        for ft in leaf_types(t):
            shift -= scalar_width(ft)
            v = _field_bits(place, off, ft)
            terms.append(f"({v} << {shift})" if shift else v)
            off += 1
        fx.line(f"P.out.append(({' | '.join(terms)}).to_bytes({width // 8}, 'big'))")


def _field_bits(place: Place, off: int, ft: object) -> str:
    if isinstance(ft, BitsT) and ft.signed:
        return f"({place.ref(off)} & {hex((1 << ft.width) - 1)})"
    if isinstance(ft, BoolT):
        return f"int({place.ref(off)})"
    return place.ref(off)


# ---------------------------------------------------------------------------- parser

DISPATCH_CHAIN = 8  # states per elif chain in a parser's dispatch


def compile_parser(
    gen: CodeGen, decl: ir.ParserDecl, scope: Scope, prefix: str, sub: bool = False
) -> str:
    """One Python function for a parser: a state machine over Python-local cursor state.

    The top-level parser is `f(S, P)` and records errors in parser_error; a sub-parser is
    `f(S, P, data, end, pos) -> pos` and lets errors (carrying its cursor) reach its caller.
    """

    fname = gen.fn_name("p")
    fx = FnCtx(gen, scope, "parser", fname)
    fx.aligned = _always_aligned(decl) and not sub
    # The transition count lives in P (shared with sub-parsers), or in a local when no
    # sub-parser can see it (written back at the end).
    steps = "P.steps" if sub or _applies_subparser(decl) else "steps"
    if not sub:
        fx.line("data = P.data")
        fx.line("end = len(data) << 3")
        fx.line("pos = 0")
    if steps == "steps":
        fx.line("steps = P.steps")
    memo = None if sub else _memo_plan(gen, decl, scope)
    if memo is not None:
        _memo_lookup(fx, memo)
    gen.compile_locals(decl.locals, scope, prefix, fx, decl.states)
    states = {s.name: i for i, s in enumerate(decl.states)}
    if "start" not in states:
        raise unsupported(decl, "a parser without a start state")
    fx.line(f"st = {states['start']}")
    fx.line("try:")
    fx.level += 1
    fx.line("while True:")
    fx.level += 1
    timeout = gen.error_code("ParserTimeout")
    fx.line(f"{steps} += 1")
    fx.line(f"if {steps} > _parser_limit:")
    with fx.indent():
        fx.line(f"raise _PErr({timeout})")
    _dispatch(gen, fx, decl.states, 0, len(decl.states), states)
    fx.level -= 2
    oob = gen.error_code("StackOutOfBounds")
    if sub:
        fx.line("except _PErr as exc:")
        with fx.indent():
            fx.line("if exc.pos is None:")
            with fx.indent():
                fx.line("exc.pos = pos")
            fx.line("raise")
        fx.line("except _SIE:")
        with fx.indent():
            fx.line(f"raise _PErr({oob}, pos) from None")
        fx.line("return pos")
        gen.functions.append(fx.source(f"def {fname}(S, P, data, end, pos):"))
        return fname
    perr = gen.sm_ref("parser_error")
    fx.line("except _PErr as exc:")
    with fx.indent():
        if perr:
            fx.line(f"{perr} = exc.code")
        fx.line("if exc.pos is not None:")
        with fx.indent():
            fx.line("pos = exc.pos")
    fx.line("except _SIE:")
    with fx.indent():
        if perr:
            fx.line(f"{perr} = {oob}")
    fx.line("P.pos = pos")
    if steps == "steps":
        fx.line("P.steps = steps")
    if memo is not None:
        _memo_store(fx, memo)
    gen.functions.append(fx.source(f"def {fname}(S, P):"))
    return fname


def _dispatch(gen: CodeGen, fx: FnCtx, all_states: list[ir.ParserState], lo: int, hi: int,
              states: dict[str, int]) -> None:
    """The code of states lo..hi-1, chosen by `st`: a binary search down to short elif chains,
    so a parser with thousands of states nests only a few levels."""
    if hi - lo > DISPATCH_CHAIN:
        mid = (lo + hi) // 2
        fx.line(f"if st < {mid}:")
        with fx.indent():
            _dispatch(gen, fx, all_states, lo, mid, states)
        fx.line("else:")
        with fx.indent():
            _dispatch(gen, fx, all_states, mid, hi, states)
        return
    for i in range(lo, hi):
        fx.line(f"{'if' if i == lo else 'elif'} st == {i}:")
        with fx.indent():
            for s in all_states[i].stmts:
                gen.stmts.stmt(fx, s)
            _transition(gen, fx, all_states[i], states)
    fx.line("else:")
    with fx.indent():
        fx.line("break")


@dataclass
class _Memo:
    """Where a memoised parser keeps its outcomes (see parsememo.py)."""

    var: str  # the dict in the generated module
    nbytes: int  # the prefix that determines the parse
    headers: str  # the slice of S holding the headers, "lo:hi"
    instance_type: str
    parser_error: str | None


def _memo_plan(gen: CodeGen, decl: ir.ParserDecl, scope: Scope) -> _Memo | None:
    instance_type = gen.sm_ref("instance_type")
    if len(decl.params) < 2 or instance_type is None:
        return None
    hdr = scope.get(decl.params[1])
    nbytes = memo_bytes(decl, decl.params[1], decl.params[0])
    if nbytes is None or not isinstance(hdr, Slot):
        return None
    return _Memo(gen.const_obj({}), nbytes, f"{hdr.base}:{hdr.base + size_of(hdr.type)}",
                 instance_type, gen.sm_ref("parser_error"))


def _memo_lookup(fx: FnCtx, m: _Memo) -> None:
    """A recirculated or resubmitted packet whose prefix was parsed before: the same outcome
    (unless the transition bound is now lower than what that parse took)."""
    fx.line(f"if {m.instance_type}:")
    with fx.indent():
        fx.line(f"_key = data[:{m.nbytes}]")
        fx.line(f"_hit = {m.var}.get(_key)")
        fx.line("if _hit is not None and steps + _hit[3] <= _parser_limit:")
        with fx.indent():
            fx.line(f"S[{m.headers}] = _hit[0]")
            if m.parser_error is not None:
                fx.line(f"{m.parser_error} = _hit[1]")
            fx.line("P.pos = _hit[2]")
            fx.line("P.steps = steps + _hit[3]")
            fx.line("P.parsed = _hit")
            fx.line("return")
    fx.line("else:")
    with fx.indent():
        fx.line("_key = None")
    fx.line("_steps0 = steps")


def _memo_store(fx: FnCtx, m: _Memo) -> None:
    """Remember the outcome (not a parse the transition bound cut short)."""
    fx.line("if _key is not None and steps <= _parser_limit:")
    with fx.indent():
        fx.line(f"if len({m.var}) >= {MEMO_ENTRIES}:")
        with fx.indent():
            fx.line(f"{m.var}.clear()")
        error = m.parser_error or "0"
        # the last item: what a recirculating egress pass learnt (interp/passthrough.py)
        # the slots as a tuple of ints: a memo of thousands of entries stays out of the garbage
        # collector's walks (lgkit/sw/switch/collector.py)
        fx.line(f"P.parsed = {m.var}[_key] = (tuple(S[{m.headers}]), {error}, pos, "
                "steps - _steps0, [None])")


def _calls(decl: ir.ParserDecl) -> Iterator[ir.Call]:
    """Every call in the parser's states."""

    def visit(node: object) -> Iterator[ir.Call]:
        if isinstance(node, ir.Call):
            yield node
        if isinstance(node, ir.Node):
            for value in vars(node).values():
                if isinstance(value, list):
                    for item in value:
                        yield from visit(item)
                elif isinstance(value, ir.Node) and not isinstance(value, ir.Decl):
                    yield from visit(value)

    for state in decl.states:
        for stmt in state.stmts:
            yield from visit(stmt)


def _applies_subparser(decl: ir.ParserDecl) -> bool:
    """True if a state applies a sub-parser (which counts transitions in P.steps too)."""
    return any(call.kind == ir.CallKind.BLOCK_APPLY for call in _calls(decl))


def _always_aligned(decl: ir.ParserDecl) -> bool:
    """True if the cursor provably stays byte-aligned: every extract is a fixed header of
    whole bytes and every advance a constant multiple of 8."""
    for node in _calls(decl):
        if not isinstance(node.target, ir.Member):
            continue
        name = node.target.name
        if node.kind == ir.CallKind.BLOCK_APPLY:
            return False  # sub-parsers are compiled without the alignment assumption
        if name == "extract" and node.args:
            t = node.args[0].value.type
            if not isinstance(t, StructLikeT) or len(node.args) > 1:
                return False
            if any(isinstance(ft, VarbitT) for ft in leaf_types(t)):
                return False
        elif name == "advance" and node.args:
            amount = node.args[0].value
            while isinstance(amount, ir.Cast):
                amount = amount.expr
            if not (isinstance(amount, ir.IntLit) and amount.value % 8 == 0):
                return False
    return True


def _transition(gen: CodeGen, fx: FnCtx, state: ir.ParserState, states: dict[str, int]) -> None:
    tr = state.transition

    def goto(name: str) -> str:
        if name in ("accept", "reject"):
            return "break"
        if name not in states:
            raise unsupported(state, f"transition to unknown state '{name}'")
        return f"st = {states[name]}"

    if tr is None or isinstance(tr, str):
        fx.line(goto(tr or "reject"))
        return
    keys = []
    for k in tr.keys:
        tmp = fx.temp()
        fx.line(f"{tmp} = {fx.eg.ex(k)}")
        keys.append(tmp)
    first = True
    for case in tr.cases:
        cond = _keyset_cond(fx, case.keyset, keys, case)
        if cond == "True":
            if first:
                fx.line(goto(case.state))
            else:
                fx.line("else:")
                with fx.indent():
                    fx.line(goto(case.state))
            return
        fx.line(f"{'if' if first else 'elif'} {cond}:")
        with fx.indent():
            fx.line(goto(case.state))
        first = False
    if first:
        fx.line("break")
    else:
        fx.line("else:")
        with fx.indent():
            fx.line("break")


def _keyset_cond(fx: FnCtx, keyset: ir.Expr, keys: list[str], at: ir.Node) -> str:
    if isinstance(keyset, ir.DefaultKey | ir.DontCare):
        return "True"
    if isinstance(keyset.type, ValueSetT):
        binding = fx.scope.get(ir.decl_of(keyset))
        patterns = [f"{k} & {hex((1 << f.width) - 1)}" for k, f in zip(keys, binding.obj.fields,
                                                                       strict=True)]
        return f"{binding.var}.contains(({', '.join(patterns)},))"
    if len(keys) == 1 and not isinstance(keyset, ir.ListExpr):
        return _one(fx, keyset, keys[0])
    items = keyset.items if isinstance(keyset, ir.ListExpr) else [keyset]
    if len(items) != len(keys):
        raise unsupported(at, "select case with the wrong number of keys")
    conds = [c for c in (_one(fx, item, k) for item, k in zip(items, keys, strict=True))
             if c != "True"]
    return " and ".join(conds) if conds else "True"


def _one(fx: FnCtx, item: ir.Expr, key: str) -> str:
    if isinstance(item, ir.DefaultKey | ir.DontCare):
        return "True"
    if isinstance(item, ir.Binary) and item.op == "&&&":
        v, m = fx.eg.ex(item.left), fx.eg.ex(item.right)
        return f"({key} & {m}) == ({v} & {m})"
    if isinstance(item, ir.Binary) and item.op == "..":
        lo, hi = fx.eg.ex(item.left), fx.eg.ex(item.right)
        return f"{lo} <= {key} <= {hi}"
    if isinstance(item.type, StructLikeT) or not is_scalar(item.type or BitsT(1)):
        raise unsupported(item, "select on a non-scalar keyset")
    return f"{key} == {fx.eg.ex(item)}"
