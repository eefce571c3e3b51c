"""Call code generation: actions, functions, tables, sub-controls, header/stack methods and the
v1model / core externs (packet_in, packet_out, register, counter, meter, hash, checksum, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.bitdata import BitData
from lgkit.sw.exec.interp.exprs import Place, fit, unsupported
from lgkit.sw.exec.interp.fnctx import FnCtx
from lgkit.sw.exec.interp.layout import (
    field_offset,
    is_scalar,
    leaf_types,
    scalar_width,
    size_of,
    template,
)
from lgkit.sw.exec.interp.packetgen import packet_method
from lgkit.sw.exec.interp.scope import ActionB, ExternB, FuncB, InstanceB, PacketB, RefSlot, TableB
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, InfIntT, StackT, StructLikeT, TypeVarT, VarbitT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen


def call_name(call: ir.Call) -> str:
    t = call.target
    if isinstance(t, ir.Member):
        return t.name
    if isinstance(t, ir.PathExpr):
        return t.name
    raise unsupported(call, "call target")


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
            b = fx.scope.get(call.target.expr.decl)
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
        if not isinstance(b, ActionB | FuncB):
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
        b = fx.scope.get(call.target.expr.decl)
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
        obj = call.target.expr
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
        obj = call.target.expr
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
        obj = call.target.expr
        b = fx.scope.get(getattr(obj, "decl", None))
        if isinstance(b, PacketB):

            return packet_method(self, fx, call, b, name)
        if not isinstance(b, ExternB):
            raise unsupported(call, f"method '{name}' of this object")
        args = [a.value for a in call.args]
        kind = b.kind
        if kind == "register" and name == "read":
            idx = fx.eg.ex(args[1])
            target = fx.eg.place(args[0]) if not isinstance(args[0], ir.DontCare) else None
            if target is None:
                return ""
            return self._register_read(fx, b, idx, target.ref())
        if kind == "register" and name == "write":
            return self._register_write(fx, b, fx.eg.ex(args[0]), args[1])
        if kind == "counter" and name == "count":
            return self._counter_count(fx, b, fx.eg.ex(args[0]))
        if kind == "direct_counter" and name == "count":
            return ""
        if kind == "meter" and name == "execute_meter":
            idx = fx.eg.ex(args[0])
            color = fx.temp()  # executed even when the result is discarded (`_`)
            fx.line(f"{color} = {b.var}.execute({idx}, P.count_len, P.now)")
            fx.stmts.store_code(fx, args[1], fit(color, args[1].type))
            return ""
        if kind == "direct_meter" and name == "read":
            fx.stmts.store_code(fx, args[0], fit("P.dm", args[0].type))
            return ""
        raise unsupported(call, f"{kind}.{name}")

    # In range, registers and counters are list operations inline (no method call); out of
    # range, the extern's method logs the error exactly as before.

    def _register_read(self, fx: FnCtx, b: ExternB, idx: str, target: str) -> str:
        if b.obj.signed:
            return f"{target} = {b.var}.p4_read({idx}, {target})"
        i = fx.temp()
        fx.line(f"{i} = {idx}")
        fx.line(f"if {i} < {b.obj.size}:")
        with fx.indent():
            fx.line(f"{target} = {self.gen.const_obj(b.obj.values)}[{i}]")
        fx.line("else:")
        with fx.indent():
            fx.line(f"{target} = {b.var}.p4_read({i}, {target})")
        return ""

    def _register_write(self, fx: FnCtx, b: ExternB, idx: str, value: ir.Expr) -> str:
        i = fx.temp()
        fx.line(f"{i} = {idx}")
        fx.line(f"if {i} < {b.obj.size}:")
        with fx.indent():
            values = self.gen.const_obj(b.obj.values)
            fx.line(f"{values}[{i}] = ({fx.eg.ex(value)}) & {hex((1 << b.obj.width) - 1)}")
        fx.line("else:")
        with fx.indent():
            fx.line(f"{b.var}.p4_write({i}, {fx.eg.ex(value)})")
        return ""

    def _counter_count(self, fx: FnCtx, b: ExternB, idx: str) -> str:
        i = fx.temp()
        fx.line(f"{i} = {idx}")
        fx.line(f"if {i} < {b.obj.size}:")
        with fx.indent():
            fx.line(f"{self.gen.const_obj(b.obj.packets)}[{i}] += 1")
            fx.line(f"{self.gen.const_obj(b.obj.bytes)}[{i}] += P.count_len")
        fx.line("else:")
        with fx.indent():
            fx.line(f"{b.var}.count({i}, P.count_len)")
        return ""

    # ------------------------------------------------------------------ extern functions

    def _extern_function(self, fx: FnCtx, call: ir.Call) -> str:
        name = call_name(call)
        params = getattr(getattr(call.callee, "function", None), "params", None)
        if params is None:
            params = getattr(call.callee, "params", None)
        args = ordered_args(call, params)
        handler = getattr(self, "_fn_" + name, None)
        if handler is None:
            raise unsupported(call, f"extern function '{name}'")
        return handler(fx, call, args)

    def _fn_mark_to_drop(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        """egress_spec = the pipeline's drop port (global _drop_port), mcast_grp = 0. The
        deprecated argument-less form acts on the pass's standard_metadata."""
        if args:
            place = fx.eg.place(args[0])
            t = place.type
            spec = f"S[{place.at(field_offset(t, 'egress_spec'))}]"
            mcast = f"S[{place.at(field_offset(t, 'mcast_grp'))}]"
        else:
            spec, mcast = self.gen.sm_ref("egress_spec"), self.gen.sm_ref("mcast_grp")
            if spec is None or mcast is None:
                raise unsupported(call, "mark_to_drop() without standard_metadata")
        fx.line(f"{spec} = _drop_port")
        fx.line(f"{mcast} = 0")
        return ""

    def _fn_verify(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        if fx.kind != "parser":
            raise unsupported(call, "verify outside a parser")
        cond = fx.eg.ex(args[0])
        code = fx.eg.ex(args[1])
        fx.line(f"if not {cond}:")
        with fx.indent():
            fx.line(f"raise _PErr({code})")
        return ""

    def _fn_random(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        for arg in args:
            if not isinstance(arg.type, BitsT | InfIntT):
                raise unsupported(arg, "random() of a value that is not bit<W> or int<W>")
        lo, hi = fx.eg.ex(args[1]), fx.eg.ex(args[2])
        tlo, thi = fx.temp(), fx.temp()
        fx.line(f"{tlo} = {lo}")
        fx.line(f"{thi} = {hi}")
        fx.line(f"if {tlo} <= {thi}:")
        with fx.indent():
            fx.stmts.store_code(fx, args[0], f"_rng.randint({tlo}, {thi})")
        return ""

    def _algo(self, call: ir.Call, e: ir.Expr) -> str:
        if not isinstance(e, ir.TypeMember):
            raise unsupported(call, "a hash algorithm that is not a constant")
        if e.member not in hashes.ALGORITHMS:
            raise unsupported(call, f"HashAlgorithm.{e.member}")
        return self.gen.const_obj(hashes.ALGORITHMS[e.member])

    def _fn_hash(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        """out = base + H(data) % max (max 0: base). HashAlgorithm.random draws H uniformly
        below max from the pipeline's generator (seeded by Pipeline.load / seed())."""
        out, algo, base, data, maxv = args
        for arg, what in ((out, "result"), (base, "base"), (maxv, "max")):
            if not isinstance(arg.type, BitsT | InfIntT):
                raise unsupported(arg, f"a hash {what} that is not bit<W> or int<W>")
        h = fx.temp()
        if isinstance(algo, ir.TypeMember) and algo.member == "random":
            BitData(self, fx).bytes_of(data)  # the data is evaluated, then ignored
            fx.line(f"{h} = _rng.getrandbits(64)")
        else:
            fn = self._algo(call, algo)
            fx.line(f"{h} = {fn}({BitData(self, fx).bytes_of(data)})")
        b, m = fx.eg.ex(base), fx.eg.ex(maxv)
        mconst = fx.eg.const_int(maxv)
        if mconst == 0:
            value = b
        elif mconst is not None:
            value = f"{b} + {h} % {mconst}"
        else:
            mt = fx.temp()
            fx.line(f"{mt} = {m}")
            value = f"({b} + {h} % {mt} if {mt} else {b})"
        fx.stmts.store_code(fx, out, fit(value, out.type))
        return ""

    def _checksum(self, fx: FnCtx, call: ir.Call, args: list, update: bool, payload: bool) -> str:
        cond, data, target, algo = args
        fn = self._algo(call, algo)
        blob = BitData(self, fx).bytes_of(data)
        if payload:
            blob = f"{blob} + P.payload"
        checksum = f"{fn}({blob})"
        if algo.member == "csum16" and not payload and blob.startswith("_pack("):
            checksum = f"_csum16_bits{blob[len('_pack'):]}"  # the same sum, on the integer
        ct = target.type
        fx.line(f"if {fx.eg.ex(cond)}:")
        with fx.indent():
            value = fit(checksum, ct)
            if update:
                fx.stmts.store_code(fx, target, value)
            else:
                err = self.gen.sm_ref("checksum_error")
                if err is None:
                    raise unsupported(call, "verify_checksum without standard_metadata")
                fx.line(f"if {value} != {fx.eg.ex(target)}:")
                with fx.indent():
                    fx.line(f"{err} = 1")
        return ""

    def _fn_verify_checksum(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._checksum(fx, call, args, update=False, payload=False)

    def _fn_update_checksum(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._checksum(fx, call, args, update=True, payload=False)

    def _fn_verify_checksum_with_payload(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._checksum(fx, call, args, update=False, payload=True)

    def _fn_update_checksum_with_payload(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._checksum(fx, call, args, update=True, payload=True)

    def _fn_clone(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.clone = ({fx.eg.ex(args[1])}, None)"

    def _fn_clone_preserving_field_list(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.clone = ({fx.eg.ex(args[1])}, {fx.eg.ex(args[2])})"

    def _fn_resubmit_preserving_field_list(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.resubmit = {fx.eg.ex(args[0])}"

    def _fn_recirculate_preserving_field_list(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.recirc = {fx.eg.ex(args[0])}"

    def _fn_resubmit(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.resubmit = {self._anon_field_list(fx, args[0])}"

    def _fn_recirculate(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.recirc = {self._anon_field_list(fx, args[0])}"

    def _fn_clone3(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.clone = ({fx.eg.ex(args[1])}, {self._anon_field_list(fx, args[2])})"

    def _anon_field_list(self, fx: FnCtx, data: ir.Expr) -> int:
        """The older resubmit(data)/recirculate(data)/clone3(..., data): the slots of the
        listed fields form a field list with a negative id."""
        items = data.items if isinstance(data, ir.ListExpr) else [data]
        slots: list[int] = []
        for item in items:
            if not fx.eg.is_place(item):
                raise unsupported(item, "a field list entry that is not a variable")
            place = fx.eg.place(item)
            if place.static is None:
                raise unsupported(item, "a field list entry with a run-time index")
            slots.extend(range(place.static, place.static + size_of(place.type)))
        ident = -(len(self.gen.anon_field_lists) + 1)
        self.gen.anon_field_lists[ident] = slots
        return ident

    def _fn_truncate(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return f"P.truncate = {fx.eg.ex(args[0])}"

    def _fn_digest(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        data = args[1]
        t = data.type
        name = t.name if isinstance(t, StructLikeT) else "digest"
        values = fx.eg.ex(data) if not is_scalar(t) else f"[{fx.eg.ex(data)}]"
        if isinstance(data, ir.ListExpr | ir.StructExpr):
            values = fx.eg.aggregate(data, t)
        return f"P.digest = ({name!r}, tuple({values}))"

    def _fn_log_msg(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        msg = args[0]
        if not isinstance(msg, ir.StringLit):
            raise unsupported(call, "log_msg with a non-literal message")
        values = "[]"
        if len(args) > 1 and args[1] is not None and not isinstance(args[1], ir.DontCare):
            data = args[1]
            if isinstance(data, ir.ListExpr):
                values = "[" + ", ".join(fx.eg.ex(i) for i in data.items) + "]"
            elif is_scalar(data.type):
                values = f"[{fx.eg.ex(data)}]"
            else:
                values = f"list({fx.eg.ex(data)})"
        return f"_logs.append(_fmt({msg.value!r}, {values}))"

    def _report(self, fx: FnCtx, call: ir.Call, args: list, what: str) -> str:
        where = f"{what} failed at {call.loc}"
        fx.line(f"if not {fx.eg.ex(args[0])}:")
        with fx.indent():
            fx.line(f"_logs.append({where!r})")
        return ""

    def _fn_assert(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._report(fx, call, args, "assert")

    def _fn_assume(self, fx: FnCtx, call: ir.Call, args: list) -> str:
        return self._report(fx, call, args, "assume")


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

