"""C source of a v1model program for the native engine, generated from the kit's IR.

The program's state is one array of uint64 slots (layout.py); each parser, control, action and
table becomes a C function over it. Anything outside the covered subset raises Unsupported
naming the construct (the caller then runs the Python engine).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lgkit.sw.exec.interp.exprs import enum_value
from lgkit.sw.exec.interp.plans import qualified
from lgkit.sw.exec.native import runtime_c
from lgkit.sw.exec.native.layout import (
    Dyn,
    Layout,
    Node,
    Slot,
    Stack,
    Unsupported,
    fixed,
    header_bytes,
    is_signed,
    mask,
    width_of,
)
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.types import BitsT, BoolT, EnumT, ExternT, StackT, StructLikeT, VoidT

# v1model's blocks and what each parameter is: pkt, H(eaders), M(eta), SM (standard metadata)
BLOCK_PARAMS = {"p": ("pkt", "H", "M", "SM"), "vr": ("H", "M"), "ig": ("H", "M", "SM"),
                "eg": ("H", "M", "SM"), "ck": ("H", "M"), "dep": ("pkt", "H")}
EXTERN_FUNCTIONS = ("mark_to_drop", "verify_checksum", "update_checksum", "hash", "random")
# end-of-pass requests: name -> (its C, formatted with the arguments' C values); runtime_c's RQ_*
REQUESTS = {
    "clone": "c->F[RQ_CLONE] = 1; c->F[RQ_CLONE_SESSION] = {1}; c->F[RQ_CLONE_FL] = NO_FL;",
    "clone_preserving_field_list": "c->F[RQ_CLONE] = 1; c->F[RQ_CLONE_SESSION] = {1}; "
                                   "c->F[RQ_CLONE_FL] = {2};",
    "recirculate_preserving_field_list": "c->F[RQ_RECIRC] = 1; c->F[RQ_RECIRC_FL] = {0};",
    "truncate": "c->F[RQ_TRUNC] = 1; c->F[RQ_TRUNC_LEN] = {0};",
    "resubmit_preserving_field_list": "c->F[RQ_RESUB] = 1; c->F[RQ_RESUB_FL] = {0};",
}
# HashAlgorithm -> the C function of runtime_c.py (BMv2's crc16_custom / crc32_custom defaults
# are CRC-16/ARC and CRC-32/IEEE, as interp/hashes.py)
HASHES = {"crc16": "crc16", "crc16_custom": "crc16", "crc32": "crc32", "crc32_custom": "crc32",
          "csum16": "csum16", "xor16": "xor16", "identity": "identity"}
DRAW_RANDINT, DRAW_BITS64 = 0, 1  # what the engine's draw callback returns (engine.py)


@dataclass
class TableSpec:
    """What the engine needs to mirror a Python table: its index, key count, the C ids of the
    actions by P4Info name and the largest parameter count."""

    index: int
    name: str
    nkeys: int
    actions: dict[str, int]
    nparams: int


@dataclass
class ArraySpec:
    """A register or counter array: its index among its kind, P4Info name, size and width."""

    index: int
    name: str
    size: int
    width: int


@dataclass
class Program:
    """The generated C source and the names the engine binds."""

    source: str
    tables: list[TableSpec] = field(default_factory=list)
    registers: list[ArraySpec] = field(default_factory=list)
    counters: list[ArraySpec] = field(default_factory=list)
    max_header_bytes: int = 0
    widths: list[int] = field(default_factory=list)  # of every slot
    sm: dict[str, int] = field(default_factory=dict)  # standard_metadata's scalar slots
    field_lists: dict[int, list[int]] = field(default_factory=dict)  # @field_list id -> slots
    header_slots: list[int] = field(default_factory=list)  # every slot of the headers
    requests: bool = False  # it clones, resubmits, recirculates, truncates or multicasts
    loops: list[str] = field(default_factory=list)  # where each loop is (C id -> source loc)
    live: int = 0  # slots [0, live) outlive a pass (the blocks' parameters); the rest are locals


def generate(program: ir.Program) -> Program:
    """The C program of a v1model IR program (Unsupported when outside the subset)."""
    try:
        return _Gen(program).run()
    except RecursionError:  # the generator recurses once or twice per level of an expression
        raise Unsupported("an expression nested too deeply") from None


class Ref(str):
    """The C text of an assignable scalar that is not a slot (a function's value parameter)."""


class _Fn:
    """One C function being written: its lines and what it is (a block ends at `done:`, an
    action returns nothing, a function returns its value)."""

    def __init__(self, kind: str = "block") -> None:
        self.lines: list[str] = []
        self.kind = kind
        self.level = 1
        self.jump_at = 0  # where a block catches a stack index error (after its declarations)
        self.loops: list[int] = []  # the loops being generated, innermost last (their C ids)
        self.result: Node | None = None  # a function's header or struct result

    def line(self, text: str) -> None:
        self.lines.append("    " * self.level + text)

    def leave(self) -> str:
        """How this function stops early (after `exit` in something it called)."""
        return "goto done;" if self.kind == "block" else "return 0;" if (
            self.kind == "function") else "return;"


class _Gen:
    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.layout = Layout()
        self.functions: list[str] = []
        self.actions: dict[int, int] = {}  # id(ActionDecl) -> C id (of the instance generated)
        self.action_count = 0
        self.action_names: dict[int, str] = {}
        # id(decl) -> spec, for the control instance being generated; every spec in *_list
        self.tables: dict[int, TableSpec] = {}
        self.registers: dict[int, ArraySpec] = {}
        self.counters: dict[int, ArraySpec] = {}
        self.table_list: list[TableSpec] = []
        self.register_list: list[ArraySpec] = []
        self.counter_list: list[ArraySpec] = []
        # id(InstanceDecl) -> the C id, the decl and the places of its parameters
        self.controls: dict[int, tuple[int, ir.ControlDecl, list[Any]]] = {}
        self.control_count = 0
        self.requests = False
        self.roots: dict[str, Node] = {}
        self.env: dict[int, Any] = {}  # id(decl) -> slot, Node, C text or ("table", spec)
        self.temps = 0
        self.emit_bytes = 0  # the most header bytes the deparser can write
        self.functions_of: dict[int, int] = {}  # id(FunctionDecl) -> C id
        self.returned: dict[int, Node] = {}  # id(FunctionDecl) -> its header or struct result
        self.dynamic = False  # a stack is indexed at run time: blocks catch an index error
        self.effects = 0  # calls with side effects generated inside expressions so far
        self.presets: dict[int, str] = {}  # id(expr) -> its C text (an assignment's place)
        self.loops: list[str] = []  # every loop's source location, by C id
        self.live = 0  # the roots' slots, allocated first

    # ------------------------------------------------------------------ program

    def run(self) -> Program:
        blocks = self.program.blocks
        if set(blocks) != set(BLOCK_PARAMS):
            raise Unsupported("an architecture other than v1model's V1Switch")
        self._roots(blocks)
        self.live = len(self.layout.widths)
        for d in self.program.decls:
            if isinstance(d, ir.InstanceDecl) and d is not self.program.main:
                self._instance(d, "")
        fns = {}
        for key in BLOCK_PARAMS:
            decl = blocks[key]
            assert isinstance(decl, ir.ParserDecl | ir.ControlDecl), "V1Switch's blocks"
            if decl.ctor_params or getattr(decl, "type_params", None):
                raise Unsupported(f"block {decl.name} with constructor or type parameters")
            fns[key] = self._block(key, decl)
        bodies = {key: "\n".join(self._catching(key, fn)) for key, fn in fns.items()}
        if not self.roots["SM"].fields:
            raise Unsupported("standard_metadata")
        return Program(self._source(bodies), self.table_list, self.register_list,
                       self.counter_list,
                       self.emit_bytes, self.layout.widths,
                       {n: k for n, k in self.roots["SM"].fields.items() if isinstance(k, int)},
                       self._field_lists(), fixed(self.roots["H"].slots()), self.requests,
                       self.loops, self.live)

    def _field_lists(self) -> dict[int, list[int]]:
        """@field_list(ids...) annotated user metadata fields (nested structs included); an id
        is an integer literal or the name of a top-level integer constant."""
        consts = {d.name: d.value for d in self.program.decls
                  if isinstance(d, ir.ConstDecl) and isinstance(d.value, int)}
        out: dict[int, list[int]] = {}

        def walk(node: Node) -> None:
            t = node.type
            for name, place in node.fields.items():
                tokens = t.field_annotations.get(name, {}).get("field_list")
                slots = [place] if isinstance(place, int) else fixed(
                    [] if isinstance(place, Dyn) else place.slots())
                for tok in " ".join(tokens or ()).replace(",", " ").split():
                    ident = consts.get(tok)
                    if ident is None and not tok.lstrip("-").isdigit():
                        raise Unsupported(f"@field_list({tok})")
                    out.setdefault(int(tok, 0) if ident is None else ident, []).extend(slots)
                if isinstance(place, Node):
                    walk(place)

        walk(self.roots["M"])
        return out

    def _roots(self, blocks: dict[str, ir.Decl]) -> None:
        ingress = blocks["ig"]
        assert isinstance(ingress, ir.ControlDecl), "V1Switch's ingress is a control"
        for param, role in zip(ingress.params, BLOCK_PARAMS["ig"], strict=True):
            node = self.layout.value(param.type_ref.resolved)
            if not isinstance(node, Node):
                raise Unsupported(f"a scalar {role} parameter")
            self.roots[role] = node

    def _catching(self, key: str, fn: _Fn) -> list[str]:
        """A block's lines, catching a stack index error when the program indexes at run time:
        the parser fails with StackOutOfBounds where it was, a control block ends with the
        Python engine's log line (RANGE_ERRORS[STACK_ERROR], STACK_WHERE)."""
        if not self.dynamic:
            return fn.lines
        if key == "p":
            oob = self._error_code("StackOutOfBounds")
            catch = f"if (setjmp(c->jb)) {{ err = {oob}; goto fail; }}"
            fn.lines[fn.jump_at - 1] = "    volatile uint32_t pos = 0;"  # kept at the jump
        else:
            code = _error_code(STACK_ERROR, STACK_BLOCKS.get(key, 0))
            catch = f"if (setjmp(c->jb)) {{ range_error(c, {code}, 0); return; }}"
        return [*fn.lines[:fn.jump_at], "    " + catch, *fn.lines[fn.jump_at:]]

    def _block(self, key: str, decl: Any) -> _Fn:
        env: dict[int, Any] = {}
        for param, role in zip(decl.params, BLOCK_PARAMS[key], strict=True):
            env[id(param)] = role if role == "pkt" else self.roots[role]
        self.env.update(env)
        prefix = qualified("", decl) + "."
        fn = _Fn("parser" if isinstance(decl, ir.ParserDecl) else "block")
        fn.line("c->exited = 0;")
        for d in decl.locals:
            self._local(fn, d, prefix)
        if isinstance(decl, ir.ParserDecl):
            self._parser(fn, decl)
        else:
            self._stmt(fn, decl.apply)
            fn.line("done: ;")
        return fn

    def _local(self, fn: _Fn, d: ir.Decl, prefix: str) -> None:
        if isinstance(d, ir.VarDecl):
            self._var(fn, d)
        elif isinstance(d, ir.ConstDecl):
            pass  # uses read ConstDecl.value
        elif isinstance(d, ir.ActionDecl):
            self._action(d, prefix)
        elif isinstance(d, ir.TableDecl):
            self._table(d, prefix)
        elif isinstance(d, ir.InstanceDecl):
            self._instance(d, prefix)
        else:
            raise Unsupported(f"local declaration {type(d).__name__}")

    def _var(self, fn: _Fn, d: ir.VarDecl) -> None:
        """A variable: its initialiser, else zero (an invalid header), as the Python engine
        (a loop body or an action runs it again)."""
        place = self.env[id(d)] = self.layout.value(d.type_ref.resolved)
        if d.init is not None:
            self._assign(fn, ir.PathExpr(d.loc, d.name), d.init, target=place)
        else:
            slots = [place] if isinstance(place, int) else place.slots()
            fn.line(" ".join(f"c->F[{k}] = 0;" for k in slots) or ";")

    def _instance(self, d: ir.InstanceDecl, prefix: str) -> None:
        control = next((c for c in self.program.decls if isinstance(c, ir.ControlDecl)
                        and c.name == d.type_ref.name and not c.is_type), None)
        if control is not None:
            self._control(d, control, qualified(prefix, d) + ".")
            return
        t = d.type_ref.resolved
        kind = t.name if isinstance(t, ExternT) else d.type_ref.name
        qname = qualified(prefix, d)
        if kind == "register":
            size = _const_int(d.args[0].value)
            width = width_of(t.type_args[0] if isinstance(t, ExternT) and t.type_args else None)
            spec = ArraySpec(len(self.register_list), qname, size, width)
            self.registers[id(d)] = spec
            self.register_list.append(spec)
        elif kind == "counter":
            size = _const_int(d.args[0].value)
            spec = ArraySpec(len(self.counter_list), qname, size, 64)
            self.counters[id(d)] = spec
            self.counter_list.append(spec)
        else:
            raise Unsupported(f"extern {kind}")

    def _control(self, d: ir.InstanceDecl, decl: ir.ControlDecl, prefix: str) -> None:
        """A control instance as a C function over slots of its own parameters (copy-in and
        copy-out at its apply, as for functions); its locals are named under `prefix`."""
        if d.args or decl.ctor_params or decl.type_params:
            raise Unsupported(f"control {decl.name} with constructor or type parameters")
        places = [self.layout.value(p.type_ref.resolved) for p in decl.params]
        for p, place in zip(decl.params, places, strict=True):
            self.env[id(p)] = place
        for local in decl.locals:
            if isinstance(local, ir.ActionDecl):
                self.actions.pop(id(local), None)  # this instance's own
        fn = _Fn()
        for local in decl.locals:
            self._local(fn, local, prefix)
        self._stmt(fn, decl.apply)
        fn.line("done: ;")
        # a control's local instance is one decl in every instance of that control: its C
        # function and its parameters' places are made once per enclosing instance, whose body
        # (generated right after its locals) applies the latest; the places are kept here as
        # env[id(param)] moves on to the next instance
        index = self.control_count
        self.control_count += 1
        self.controls[id(d)] = (index, decl, places)
        self.functions.append(f"static void ctl_{index}(ctx *c) {{\n" + "\n".join(fn.lines)
                              + "\n}")

    # ------------------------------------------------------------------ actions and tables

    def _action(self, d: ir.ActionDecl, prefix: str) -> int:
        if id(d) in self.actions:
            return self.actions[id(d)]
        index = self.action_count
        self.action_count += 1
        self.actions[id(d)] = index
        self.action_names[id(d)] = qualified(prefix, d)
        fn = _Fn("action")
        data = [p for p in d.params if not p.direction]
        for i, p in enumerate(data):
            width_of(p.type_ref.resolved)
            self.env[id(p)] = f"a[{i}]"
        for p in d.params:
            if p.direction:
                self.env[id(p)] = self.layout.value(p.type_ref.resolved)
        self._stmt(fn, d.body)
        self.functions.append(f"static void act_{index}(ctx *c, const u64 *a) {{\n"
                              "    (void)c; (void)a;\n" + "\n".join(fn.lines) + "\n}")
        return index

    def _action_of(self, decl: Any) -> int:
        if id(decl) not in self.actions:  # a top-level action (NoAction)
            self._action(decl, "")
        return self.actions[id(decl)]

    def _table(self, d: ir.TableDecl, prefix: str) -> None:
        for prop in d.properties:
            if prop not in ("size",):
                raise Unsupported(f"table property {prop}")
        actions = {}
        cases = []
        for ref in d.actions:
            index = self._action_of(ref.decl)
            actions[self.action_names[id(ref.decl)]] = index
            cases.append(f"        case {index}: {{ {self._bound_call(ref, index)} break; }}\n")
        nparams = max((len([p for p in _action_decl(ref).params if not p.direction])
                       for ref in d.actions), default=0)
        spec = TableSpec(len(self.table_list), qualified(prefix, d), len(d.keys), actions,
                         nparams)
        self.tables[id(d)] = spec
        self.table_list.append(spec)
        fn = _Fn()
        keys = []
        for k in d.keys:
            if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise Unsupported(f"match kind {k.match_kind}")
            width_of(k.expr.type)
            keys.append(self._ex(fn, k.expr))
        body = "\n".join(fn.lines)
        self.functions.append(
            f"static int tbl_{spec.index}(ctx *c) {{\n{body}\n"
            f"    u64 key[{max(1, len(keys))}] = {{{', '.join(keys) or '0'}}};\n"
            f"    int hit = 0; int act; const u64 *p;\n"
            f"    lookup(&c->T[{spec.index}], key, {len(keys)}, &act, &p, &hit);\n"
            f"    switch (act) {{\n{''.join(cases)}        default: break;\n    }}\n"
            "    return (act & 0xFFFF) | (hit << 16);\n}")

    def _bound_call(self, ref: ir.ActionRef, index: int) -> str:
        """A table's call of an action: its directional parameters bound in the actions list
        (copy-in, copy-out), its data from the entry (`p`)."""
        fn = _Fn("action")
        fn.level = 0
        bound = list(zip([p for p in _action_decl(ref).params if p.direction],
                         [a.value for a in ref.args], strict=False))
        for p, arg in bound:
            place = self.env[id(p)]
            if p.direction == "out":
                slots = [place] if isinstance(place, int) else place.slots()
                fn.line(" ".join(f"c->F[{k}] = 0;" for k in slots))
            else:
                self._assign(fn, arg, arg, target=place)
        fn.line(f"act_{index}(c, p);")
        for p, arg in bound:
            if p.direction in ("out", "inout") and not isinstance(arg, ir.DontCare):
                self._store_back(fn, self.env[id(p)], arg)
        return " ".join(line.strip() for line in fn.lines)

    # ------------------------------------------------------------------ parser

    def _parser(self, fn: _Fn, decl: ir.ParserDecl) -> None:
        names = {s.name for s in decl.states}
        if "start" not in names:
            raise Unsupported("a parser without a start state")
        err = self._sm("parser_error")
        fn.line("uint32_t end = c->len << 3, steps = 0; u64 err = 0; (void)err;")
        fn.line("uint32_t pos = 0;")
        fn.jump_at = len(fn.lines)
        fn.line("goto st_start;")
        timeout = self._error_code("ParserTimeout")
        for state in decl.states:
            fn.line(f"st_{state.name}:")
            fn.line(f"if (++steps > c->parser_limit) {{ err = {timeout}; goto fail; }}")
            for s in state.stmts:
                self._stmt(fn, s)
            self._transition(fn, state, names)
        fn.line("fail:")
        if err is not None:
            fn.line(f"c->F[{err}] = err;")
        fn.line("accept:")
        fn.line("c->pos = pos;")

    def _transition(self, fn: _Fn, state: ir.ParserState, names: set[str]) -> None:
        def goto(name: str) -> str:
            if name in ("accept", "reject"):
                return "goto accept;"
            if name not in names:
                raise Unsupported(f"transition to unknown state {name}")
            return f"goto st_{name};"

        tr = state.transition
        if tr is None or isinstance(tr, str):
            fn.line(goto(tr or "reject"))
            return
        keys = []
        for k in tr.keys:
            width_of(k.type)
            tmp = self._temp()
            fn.line(f"u64 {tmp} = {self._ex(fn, k)};")
            keys.append(tmp)
        for case in tr.cases:
            items = case.keyset.items if isinstance(case.keyset, ir.ListExpr) else [case.keyset]
            if len(keys) > 1 and len(items) == 1:
                items = items * len(keys) if isinstance(items[0], ir.DefaultKey | ir.DontCare) \
                    else items
            if len(items) != len(keys):
                raise Unsupported("select case with the wrong number of keys")
            conds = [self._keyset(fn, item, key) for item, key in zip(items, keys, strict=True)]
            fn.line(f"if ({' && '.join(conds) or '1'}) {goto(case.state)}")
        fn.line("goto accept;")

    def _keyset(self, fn: _Fn, item: ir.Expr, key: str) -> str:
        if isinstance(item, ir.DefaultKey | ir.DontCare):
            return "1"
        if isinstance(item, ir.Binary) and item.op == "&&&":
            v, m = self._ex(fn, item.left), self._ex(fn, item.right)
            return f"(({key} & {m}) == ({v} & {m}))"
        if isinstance(item, ir.Binary) and item.op == "..":
            return f"({self._ex(fn, item.left)} <= {key} && {key} <= {self._ex(fn, item.right)})"
        if isinstance(item, ir.PathExpr) and not isinstance(item.decl, ir.ConstDecl):
            raise Unsupported("parser value sets")
        return f"({key} == {self._ex(fn, item)})"

    def _extract(self, fn: _Fn, call: ir.Call) -> None:
        if len(call.args) != 1:
            raise Unsupported("extract with a length (varbit)")
        target = call.args[0].value
        if isinstance(target, ir.Member) and isinstance(target.expr.type, StackT):
            self._extract_next(fn, target)
            return
        node = self._node(target, fn)
        if node.valid is None:
            raise Unsupported("extract into a non-header")
        bits = header_bytes(node) * 8
        fn.line(f"if (end - pos < {bits}) {{ err = {self._error_code('PacketTooShort')}; "
                "goto fail; }")
        for slot, off, w in node.header_fields():
            fn.line(f"c->F[{slot}] = {_read('c->data', 'pos', off, w)};")
        fn.line(f"c->F[{node.valid}] = 1; pos += {bits};")

    def _extract_next(self, fn: _Fn, target: ir.Member) -> None:
        """extract(stack.next): StackOutOfBounds when full, else into element nextIndex."""
        stack = self._agg(target.expr)
        if target.name != "next" or not isinstance(stack, Stack):
            raise Unsupported(f"extract into stack member .{target.name}")
        first, stride, nxt = stack.elems[0], stack.stride, stack.next_index
        if not stack.evenly_laid_out():
            raise Unsupported("a header stack whose elements are not evenly laid out")
        bits = header_bytes(first) * 8
        fn.line(f"if (c->F[{nxt}] >= {len(stack.elems)}) {{ err = "
                f"{self._error_code('StackOutOfBounds')}; goto fail; }}")
        fn.line(f"if (end - pos < {bits}) {{ err = {self._error_code('PacketTooShort')}; "
                "goto fail; }")
        base = self._temp()
        fn.line(f"u64 {base} = {stride} * c->F[{nxt}];")
        for slot, off, w in first.header_fields():
            fn.line(f"c->F[{base} + {slot}] = {_read('c->data', 'pos', off, w)};")
        fn.line(f"c->F[{base} + {first.valid}] = 1; pos += {bits}; c->F[{nxt}] += 1;")

    def _packet_in(self, fn: _Fn, call: ir.Call) -> str:
        """packet.lookahead<bit<W> or bool>() (PacketTooShort past the end), packet.length()."""
        t = _method(call).expr.type
        if not (isinstance(t, ExternT) and t.name == "packet_in") or fn.kind != "parser":
            raise Unsupported(f"{_method(call).name} outside the parser")
        if _method(call).name == "length":
            return "(u64)c->len"
        if isinstance(call.type, StructLikeT):
            raise Unsupported("lookahead of a header or struct")
        w = width_of(call.type)
        fn.line(f"if (end - pos < {w}) {{ err = {self._error_code('PacketTooShort')}; "
                "goto fail; }")
        value = f"rd(c->data, pos, {w})"
        return f"({value} != 0)" if isinstance(call.type, BoolT) else value

    def _emit(self, fn: _Fn, node: Node | Stack) -> None:
        if isinstance(node, Stack):
            for elem in node.elems:
                self._emit(fn, elem)
            return
        if node.valid is None:
            for sub in node.fields.values():
                if isinstance(sub, int | Dyn):
                    raise Unsupported("emit of a struct with a non-header field")
                self._emit(fn, sub)
            return
        bits = header_bytes(node) * 8
        self.emit_bytes += bits // 8
        fn.line(f"if (c->F[{node.valid}]) {{")
        for slot, off, w in node.header_fields():
            fn.line(f"    {_write('c->out', 'c->opos', off, w, f'c->F[{slot}]')};")
        fn.line(f"    c->opos += {bits};")
        fn.line("}")

    # ------------------------------------------------------------------ statements

    def _stmt(self, fn: _Fn, s: ir.Stmt | None) -> None:
        if s is None or isinstance(s, ir.Empty | ir.ConstDecl):
            return
        if isinstance(s, ir.Block):
            for sub in s.stmts:
                self._stmt(fn, sub)
        elif isinstance(s, ir.Assign):
            self._assign(fn, s.lhs, s.rhs)
        elif isinstance(s, ir.VarDecl):
            self._var(fn, s)
        elif isinstance(s, ir.If):
            cond = self._ex(fn, s.cond)
            check = f"    if (c->exited) {fn.leave()}" if "tbl_" in cond else ""
            fn.line(f"if ({cond}) {{")
            if check:
                fn.line(check)
            self._nested(fn, s.then)
            fn.line("} else {")
            if check:
                fn.line(check)
            if s.other is not None:
                self._nested(fn, s.other)
            fn.line("}")
        elif isinstance(s, ir.CallStmt):
            self._call_stmt(fn, s.call)
        elif isinstance(s, ir.For | ir.ForIn):
            self._loop(fn, s)
        elif isinstance(s, ir.Break | ir.Continue):
            fn.line(f"goto {'brk' if isinstance(s, ir.Break) else 'cnt'}_{fn.loops[-1]};")
        elif isinstance(s, ir.Switch):
            self._switch(fn, s)
        elif isinstance(s, ir.Return) and fn.kind == "function" and fn.result is not None:
            self._assign(fn, None, s.value, target=fn.result)
            fn.line("return 0;")
        elif isinstance(s, ir.Return) and fn.kind == "function":
            fn.line(f"return {self._ex(fn, s.value) if s.value is not None else '0'};")
        elif isinstance(s, ir.Exit | ir.Return):
            if isinstance(s, ir.Exit) and fn.kind == "function":
                raise Unsupported("exit inside a function")
            if isinstance(s, ir.Exit):
                fn.line("c->exited = 1;")
            fn.line("goto done;" if fn.kind == "block" else "return;")
        else:
            raise Unsupported(f"statement {type(s).__name__}")

    def _loop(self, fn: _Fn, s: ir.For | ir.ForIn) -> None:
        """A loop as a C `for`: each iteration counts towards the pass's max_loop_iterations
        (past it the pass ends, its packet dropped: runtime_c's loop_limit); break and
        continue are gotos (a C `break` would leave a switch)."""
        n = len(self.loops)
        self.loops.append(str(s.loc))
        fn.line("{")
        fn.level += 1
        count = f"if (++c->loops > c->loop_limit || c->stop) loop_limit(c, {n});"
        if isinstance(s, ir.For):
            for init in s.init:
                self._stmt(fn, init)
            fn.line(f"for (int first_{n} = 1;; first_{n} = 0) {{")
            fn.line(f"    if (!first_{n}) {{")
            fn.level += 2
            for update in s.update:
                self._stmt(fn, update)
            fn.level -= 2
            fn.line("    }")
            if s.cond is not None:
                fn.line(f"    if (!({self._ex(fn, s.cond)})) break;")
            fn.line(f"    {count}")
        else:
            self._for_in(fn, s, n, count)
        fn.loops.append(n)
        self._nested(fn, s.body)
        fn.loops.pop()
        fn.line(f"    cnt_{n}: ;")
        fn.line("}")
        fn.level -= 1
        fn.line(f"brk_{n}: ; }}")

    def _for_in(self, fn: _Fn, s: ir.ForIn, n: int, count: str) -> None:
        """`for (v in lo .. hi)`, or over a stack's elements 0 .. size-1 (each copied into v at
        the start of its iteration, valid or not)."""
        var = self.env[id(s.var)] = self.layout.value(s.var.type_ref.resolved)
        if s.hi is not None:
            if is_signed(s.var.type_ref.resolved) or not isinstance(var, int):
                raise Unsupported("a for-in over a range of signed values")
            fn.line(f"u64 lo_{n} = {self._ex(fn, s.lo)}, hi_{n} = {self._ex(fn, s.hi)};")
            fn.line(f"for (u64 i_{n} = lo_{n}; i_{n} <= hi_{n}; i_{n}++) {{")
            fn.line(f"    {count} c->F[{var}] = i_{n};")
            return
        stack = self._agg(s.lo, fn)
        if not isinstance(stack, Stack) or not isinstance(var, Node) or (
                not stack.evenly_laid_out()):
            raise Unsupported("a for-in over a value that is not a header stack")
        element = stack.elems[0].shifted(f"{stack.stride} * i_{n}")
        fn.line(f"for (u64 i_{n} = 0; i_{n} < {len(stack.elems)}; i_{n}++) {{")
        fn.line(f"    {count}")
        pairs = zip(var.slots(), element.slots(), strict=True)
        fn.line("    " + " ".join(f"c->F[{d}] = c->F[{k}];" for d, k in pairs))

    def _nested(self, fn: _Fn, s: ir.Stmt) -> None:
        fn.level += 1
        self._stmt(fn, s)
        fn.level -= 1

    def _switch(self, fn: _Fn, s: ir.Switch) -> None:
        e = s.expr
        if isinstance(e, ir.Member) and e.name == "action_run":
            tmp = self._temp()
            fn.line(f"int {tmp} = {self._apply(e.expr)};")
            fn.line(f"if (c->exited) {fn.leave()}")
            fn.line(f"switch ({tmp} & 0xFFFF) {{")
        else:
            width_of(e.type)
            fn.line(f"switch ({self._ex(fn, e)}) {{")
        for case in s.cases:
            for label in case.labels:
                if isinstance(label, ir.DefaultKey):
                    fn.line("default:")
                elif isinstance(label, ir.PathExpr) and isinstance(label.decl, ir.ActionDecl):
                    fn.line(f"case {self._action_of(label.decl)}:")
                else:
                    fn.line(f"case {self._ex(fn, label)}:")
            if case.body is not None:
                fn.line("{")
                self._nested(fn, case.body)
                fn.line("break; }")
        fn.line("}")

    def _assign(self, fn: _Fn, lhs: ir.Expr | None, rhs: ir.Expr | None, target: Any = None,
                value: str = "") -> None:
        """lhs = rhs (`target`: the place instead of lhs; `value`: C text instead of rhs)."""
        if isinstance(lhs, ir.Slice):
            dst = self._settled(fn, self._slot(lhs.expr, fn))
            m = (1 << (lhs.hi - lhs.lo + 1)) - 1
            self.presets[id(lhs)] = f"((c->F[{dst}] >> {lhs.lo}) & 0x{m:X}ULL)"
            new = self._value(fn, rhs, value)
            del self.presets[id(lhs)]
            fn.line(f"c->F[{dst}] = (c->F[{dst}] & ~(0x{m:X}ULL << {lhs.lo})) | "
                    f"(({new} & 0x{m:X}ULL) << {lhs.lo});")
            return
        reads = target is None  # `lhs op= rhs` reads the place lhs names
        if target is None:
            assert lhs is not None, "an assignment without its place has a left-hand side"
            target = self._agg(lhs, fn) if isinstance(lhs.type, StructLikeT | StackT) \
                else self._settled(fn, self._place(lhs, fn))
        dst = target
        if isinstance(dst, Node | Stack):
            if isinstance(rhs, ir.ListExpr | ir.StructExpr) and isinstance(dst, Node):
                self._initialise(fn, dst, rhs)
                return
            assert rhs is not None, "a struct-like assignment always has its right-hand side"
            self._writes(dst.slots())
            src = self._agg(rhs, fn)
            pairs = zip(dst.slots(), src.slots(), strict=True)
            fn.line(" ".join(f"c->F[{d}] = c->F[{s}];" for d, s in pairs) or ";")
            return
        rhs_text = value
        if isinstance(rhs, ir.Call) and rhs.kind is ir.CallKind.FUNCTION and self._outs(rhs):
            rhs_text = self._temp()
            fn.line(f"u64 {rhs_text} = {self._user_call(fn, rhs)};")
            self._copy_out(fn, rhs)
        if isinstance(dst, Ref):
            fn.line(f"{dst} = {self._value(fn, rhs, rhs_text)};")
            return
        if isinstance(dst, str) and not isinstance(dst, Dyn):
            raise Unsupported("assignment to an action parameter")
        self._writes([dst])
        if reads:
            self.presets[id(lhs)] = f"c->F[{dst}]"
        new = self._value(fn, rhs, rhs_text)
        self.presets.pop(id(lhs), None)
        fn.line(f"c->F[{dst}] = {new};")

    def _settled(self, fn: _Fn, place: Any) -> Any:
        """A left-hand side's slot computed before its right-hand side is (the order of
        evaluation: its index first)."""
        if not isinstance(place, Dyn):
            return place
        tmp = self._temp()
        fn.line(f"u64 {tmp} = {place};")
        return Dyn(tmp, place.slot)

    def _value(self, fn: _Fn, rhs: ir.Expr | None, value: str) -> str:
        """An assignment's value: its C text when given, else the right-hand side's."""
        if value:
            return value
        assert rhs is not None, "an assignment without C text has a right-hand side"
        return self._ex(fn, rhs)

    def _initialise(self, fn: _Fn, dst: Node, rhs: ir.ListExpr | ir.StructExpr) -> None:
        """A struct or header from `{a, b}` or `{x = a, y = b}` (a header becomes valid); the
        values are taken before any is stored."""
        if isinstance(rhs, ir.ListExpr):
            items = list(zip(dst.fields, rhs.items, strict=True))
        else:
            items = rhs.items
        temps = []
        for name, item in items:
            place = dst.fields[name]
            if isinstance(place, Node):
                raise Unsupported("nested struct initialisers")
            tmp = self._temp()
            fn.line(f"u64 {tmp} = {self._ex(fn, item)};")
            temps.append((place, tmp))
        fn.line(" ".join(f"c->F[{k}] = {t};" for k, t in temps) or ";")
        if dst.valid is not None:
            fn.line(f"c->F[{dst.valid}] = 1;")

    def _call_stmt(self, fn: _Fn, call: ir.Call) -> None:
        kind = call.kind
        if kind is ir.CallKind.TABLE_APPLY:
            fn.line(f"{self._apply(call)};")
            fn.line(f"if (c->exited) {fn.leave()}")
        elif kind in (ir.CallKind.ACTION, ir.CallKind.FUNCTION):
            fn.line(f"{self._user_call(fn, call)};")
            self._copy_out(fn, call)
            if kind is ir.CallKind.ACTION:
                fn.line(f"if (c->exited) {fn.leave()}")
        elif kind is ir.CallKind.BLOCK_APPLY:
            self._block_apply(fn, call)
        elif kind is ir.CallKind.HEADER_METHOD:
            self._header_method(fn, call)
        elif kind is ir.CallKind.STACK_METHOD:
            self._stack_method(fn, call)
        elif kind is ir.CallKind.EXTERN_FUNCTION:
            self._extern_function(fn, call)
        elif kind is ir.CallKind.EXTERN_METHOD:
            self._extern_method(fn, call)
        else:
            raise Unsupported(f"call of kind {kind.value if kind else '?'}")

    def _user_call(self, fn: _Fn, call: ir.Call) -> str:
        """Copy-in (slots of directional parameters; `out` ones reset) and the C call."""
        decl = call.callee
        if isinstance(decl, ir.FunctionDecl):
            self._function(decl)
        values = []
        for p, a in zip(decl.params, call.args, strict=True):
            place = self.env.get(id(p))
            if isinstance(place, int | Node | Stack) and p.direction in ("in", "inout"):
                self._assign(fn, a.value, a.value, target=place)
            elif isinstance(place, int | Node | Stack) and p.direction == "out":
                slots = [place] if isinstance(place, int) else place.slots()
                fn.line(" ".join(f"c->F[{k}] = 0;" for k in slots))
            else:
                effects = self.effects
                values.append(self._ex(fn, a.value))
                if self.effects != effects and len(call.args) > 1:
                    raise Unsupported("an argument with side effects beside others")
        if isinstance(decl, ir.ActionDecl):
            arr = f"(const u64[]){{{', '.join(values)}}}" if values else "0"
            return f"act_{self._action_of(decl)}(c, {arr})"
        return f"fn_{self.functions_of[id(decl)]}(c{''.join(', ' + v for v in values)})"

    def _block_apply(self, fn: _Fn, call: ir.Call) -> None:
        found = self.controls.get(id(getattr(_method(call).expr, "decl", None)))
        if found is None:
            raise Unsupported("apply of a parser or of a block passed as a parameter")
        index, decl, places = found
        for p, place, a in zip(decl.params, places, call.args, strict=True):
            if p.direction in ("in", "inout", ""):
                self._assign(fn, a.value, a.value, target=place)
            else:
                slots = [place] if isinstance(place, int) else place.slots()
                fn.line(" ".join(f"c->F[{k}] = 0;" for k in slots))
        fn.line(f"ctl_{index}(c);")
        for p, place, a in zip(decl.params, places, call.args, strict=True):
            if p.direction in ("out", "inout") and not isinstance(a.value, ir.DontCare):
                self._store_back(fn, place, a.value)
        fn.line(f"if (c->exited) {fn.leave()}")

    def _outs(self, call: ir.Call) -> list[tuple[ir.Param, ir.Expr]]:
        return [(p, a.value) for p, a in zip(call.callee.params, call.args, strict=True)
                if p.direction in ("out", "inout") and not isinstance(a.value, ir.DontCare)]

    def _copy_out(self, fn: _Fn, call: ir.Call) -> None:
        for p, arg in self._outs(call):
            self._store_back(fn, self.env[id(p)], arg)

    def _store_back(self, fn: _Fn, place: Any, arg: ir.Expr) -> None:
        """Copy-out: an out/inout parameter's slots into the argument."""
        if isinstance(place, Node | Stack):
            dst = self._agg(arg, fn)
            self._writes(dst.slots())
            pairs = zip(dst.slots(), place.slots(), strict=True)
            fn.line(" ".join(f"c->F[{d}] = c->F[{k}];" for d, k in pairs))
        else:
            self._assign(fn, arg, None, value=f"c->F[{place}]" if isinstance(
                place, int) else str(place))

    def _function(self, d: ir.FunctionDecl) -> None:
        """A user function as a C function: scalar in-parameters by value, out/inout ones and
        struct-like in-parameters in slots (copied in by the caller)."""
        if id(d) in self.functions_of:
            return
        if d.type_params:
            raise Unsupported("generic functions")
        index = self.functions_of[id(d)] = len(self.functions_of)
        params: list[str] = []
        for p in d.params:
            resolved = p.type_ref.resolved
            if p.direction in ("out", "inout") or isinstance(resolved, StructLikeT | StackT):
                self.env[id(p)] = self.layout.value(resolved)
            else:
                width_of(p.type_ref.resolved)
                self.env[id(p)] = Ref(f"v{len(params)}")
                params.append(f"u64 v{len(params)}")
        ret = d.ret.resolved
        fn = _Fn("function")
        if isinstance(ret, StructLikeT):
            result = self.layout.value(ret)
            assert isinstance(result, Node), "a struct-like type's value is a Node"
            fn.result = self.returned[id(d)] = result
        elif not isinstance(ret, VoidT):
            width_of(ret)
        self._stmt(fn, d.body)
        self.functions.append(f"static u64 fn_{index}(ctx *c{''.join(', ' + p for p in params)})"
                              " {\n    (void)c;\n" + "\n".join(fn.lines) + "\n    return 0;\n}")

    def _stack_method(self, fn: _Fn, call: ir.Call) -> None:
        """push_front(n) / pop_front(n): elements move up / down, the freed ones zero
        (invalid), nextIndex grows / shrinks within the size."""
        stack = self._agg(_method(call).expr)
        if not isinstance(stack, Stack):
            raise Unsupported("a stack method on a non-stack")
        count = min(_const_int(call.args[0].value), len(stack.elems))
        size, nxt = len(stack.elems), stack.next_index
        if count <= 0:
            return
        if call.callee == "push_front":
            order = [(i, i - count) for i in range(size - 1, -1, -1)]
            fn.line(f"c->F[{nxt}] = c->F[{nxt}] + {count} > {size} ? {size} : "
                    f"c->F[{nxt}] + {count};")
        else:
            order = [(i, i + count) for i in range(size)]
            fn.line(f"c->F[{nxt}] = c->F[{nxt}] > {count} ? c->F[{nxt}] - {count} : 0;")
        for dst, src in order:
            pairs = zip(stack.elems[dst].slots(), stack.elems[src].slots(), strict=True) \
                if 0 <= src < size else ((k, None) for k in stack.elems[dst].slots())
            fn.line(" ".join(f"c->F[{d}] = {'0' if k is None else f'c->F[{k}]'};"
                             for d, k in pairs))

    def _header_method(self, fn: _Fn, call: ir.Call) -> None:
        name = call.callee
        node = self._node(_method(call).expr, fn)
        if node.valid is None:
            raise Unsupported(f"{name} on a header union")
        if name == "setValid":
            fresh = " ".join(f"c->F[{k}] = 0;" for k in node.slots()[1:])
            fn.line(f"if (!c->F[{node.valid}]) {{ {fresh} c->F[{node.valid}] = 1; "
                    f"c->plen += {header_bytes(node)}; }}")
        elif name == "setInvalid":
            fn.line(f"if (c->F[{node.valid}]) {{ c->F[{node.valid}] = 0; "
                    f"c->plen -= {header_bytes(node)}; }}")
        elif name != "isValid":
            raise Unsupported(f"header method {name}")

    def _extern_function(self, fn: _Fn, call: ir.Call) -> None:
        name = call.callee.name
        if name not in EXTERN_FUNCTIONS and name not in REQUESTS:
            raise Unsupported(f"extern {name}")
        args = [a.value for a in call.args]
        if name in REQUESTS:
            self.requests = True
            template = REQUESTS[name]
            fn.line(template.format(*[self._ex(fn, a) if f"{{{i}}}" in template else ""
                                      for i, a in enumerate(args)]))
            return
        if name == "mark_to_drop":
            sm = self._node(args[0]) if args else self.roots["SM"]
            fn.line(f"c->F[{sm.fields['egress_spec']}] = c->drop_port; "
                    f"c->F[{sm.fields['mcast_grp']}] = 0;")
            return
        if name == "hash":
            self._hash(fn, *args)
            return
        if name == "random":
            self._random(fn, *args)
            return
        cond, data, target, algo = args
        if not (isinstance(algo, ir.TypeMember) and algo.member == "csum16"):
            raise Unsupported(f"{name} with an algorithm other than csum16")
        fn.line(f"if ({self._ex(fn, cond)}) {{")
        data_bytes = self._bit_data(fn, data)
        fn.line(f"    u64 sum = csum16({data_bytes}) & {mask(width_of(target.type))};")
        if name == "update_checksum":
            fn.line(f"    c->F[{self._slot(target, fn)}] = sum;")
        else:
            err = self._sm("checksum_error")
            if err is None:
                raise Unsupported("verify_checksum without standard_metadata.checksum_error")
            fn.line(f"    if (sum != {self._ex(fn, target)}) c->F[{err}] = 1;")
        fn.line("}")

    def _bit_data(self, fn: _Fn, data: ir.Expr) -> str:
        """The bits of a field list packed MSB first into a zeroed byte buffer (a header's
        fields only while it is valid, as the Python engine's BitData); C text `buf, nbytes`."""
        pieces = self._pieces(fn, data)
        buf, bits = self._temp(), self._temp()
        nbytes = (sum(w for _, w, _ in pieces) + 7) // 8
        fn.line(f"uint8_t {buf}[{max(nbytes, 1)}] = {{0}}; uint32_t {bits} = 0;")
        for value, w, valid in pieces:
            put = f"wr({buf}, {bits}, {w}, {value}); {bits} += {w};"
            fn.line(put if valid is None else f"if (c->F[{valid}]) {{ {put} }}")
        return f"{buf}, ({bits} + 7) >> 3"

    def _pieces(self, fn: _Fn, e: ir.Expr) -> list[tuple[str, int, Slot | None]]:
        """A field list's scalars as (C value, width, the valid slot of their header)."""
        if isinstance(e, ir.ListExpr):
            return [p for item in e.items for p in self._pieces(fn, item)]
        if isinstance(e.type, StructLikeT | StackT):
            return self._agg_pieces(self._agg(e, fn), None)
        valid = None
        if (isinstance(e, ir.Member) and isinstance(e.expr.type, StructLikeT)
                and e.expr.type.kind == "header"):
            valid = self._node(e.expr, fn).valid
        return [(self._ex(fn, e), width_of(e.type), valid)]

    def _agg_pieces(self, agg: Node | Stack, valid: Slot | None
                    ) -> list[tuple[str, int, Slot | None]]:
        if isinstance(agg, Stack):
            return [p for elem in agg.elems for p in self._agg_pieces(elem, valid)]
        if agg.valid is not None:
            valid = agg.valid
        out: list[tuple[str, int, Slot | None]] = []
        for f in agg.fields.values():
            if isinstance(f, int | Dyn):
                width = self.layout.widths[f if isinstance(f, int) else f.slot]
                out.append((f"c->F[{f}]", width, valid))
            else:
                out.extend(self._agg_pieces(f, valid))
        return out

    def _hash(self, fn: _Fn, out: ir.Expr, algo: ir.Expr, base: ir.Expr, data: ir.Expr,
              maxv: ir.Expr) -> None:
        """out = base + H(data) % max (max 0: base); HashAlgorithm.random draws H from the
        pipeline's generator (64 bits), as the Python engine."""
        for arg in (out, base, maxv):
            if not isinstance(arg.type, BitsT) or arg.type.signed:
                raise Unsupported("hash of a value that is not bit<W>")
        if not isinstance(algo, ir.TypeMember) or algo.member not in (*HASHES, "random"):
            raise Unsupported("a hash algorithm that is not a constant v1model one")
        fn.line("{")
        data_bytes = self._bit_data(fn, data)
        h, m = self._temp(), self._temp()
        value = (f"c->draw({DRAW_BITS64}, 0, 0)" if algo.member == "random"
                 else f"{HASHES[algo.member]}({data_bytes})")
        fn.line(f"u64 {h} = {value};")
        fn.line(f"u64 {m} = {self._ex(fn, maxv)};")
        self._assign(fn, out, None, value=f"((({m}) ? {self._ex(fn, base)} + {h} % {m} : "
                     f"{self._ex(fn, base)}) & {mask(width_of(out.type))})")
        fn.line("}")

    def _random(self, fn: _Fn, out: ir.Expr, lo: ir.Expr, hi: ir.Expr) -> None:
        """out = a value in [lo, hi] from the pipeline's generator (nothing when lo > hi)."""
        for arg in (out, lo, hi):
            if not isinstance(arg.type, BitsT) or arg.type.signed:
                raise Unsupported("random of a value that is not bit<W>")
        tlo, thi = self._temp(), self._temp()
        fn.line(f"{{ u64 {tlo} = {self._ex(fn, lo)}; u64 {thi} = {self._ex(fn, hi)};")
        fn.line(f"if ({tlo} <= {thi}) {{")
        self._assign(fn, out, None, value=f"c->draw({DRAW_RANDINT}, {tlo}, {thi})")
        fn.line("} }")

    def _extern_method(self, fn: _Fn, call: ir.Call) -> None:
        obj = _method(call).expr
        method = _method(call).name
        args = [a.value for a in call.args]
        t = obj.type
        kind = t.name if isinstance(t, ExternT) else ""
        if kind == "packet_in" and method == "extract":
            self._extract(fn, call)
        elif kind == "packet_in" and method == "advance":
            amount = self._temp()
            fn.line(f"u64 {amount} = {self._ex(fn, args[0])};")
            fn.line(f"if ({amount} & 7) {{ err = {self._error_code('ParserInvalidArgument')}; "
                    "goto fail; }")
            fn.line(f"if ({amount} > end - pos) {{ err = {self._error_code('PacketTooShort')}; "
                    "goto fail; }")
            fn.line(f"pos += {amount};")
        elif kind == "packet_out" and method == "emit":
            self._emit(fn, self._agg(args[0], fn))
        elif kind == "register" and method in ("read", "write"):
            spec = self.registers.get(id(getattr(obj, "decl", None)))
            if spec is None:
                raise Unsupported("a register passed as a parameter")
            if method == "read":
                fn.line(f"{{ u64 i = {self._ex(fn, args[1])}; if (i < {spec.size}) "
                        f"c->F[{self._slot(args[0], fn)}] = c->R[{spec.index}][i]; "
                        f"else range_error(c, {_error_code(0, spec.index)}, i); }}")
            else:
                fn.line(f"{{ u64 i = {self._ex(fn, args[0])}; if (i < {spec.size}) "
                        f"c->R[{spec.index}][i] = {self._ex(fn, args[1])} & {mask(spec.width)}; "
                        f"else range_error(c, {_error_code(1, spec.index)}, i); }}")
        elif kind == "counter" and method == "count":
            spec = self.counters.get(id(getattr(obj, "decl", None)))
            if spec is None:
                raise Unsupported("a counter passed as a parameter")
            fn.line(f"{{ u64 i = {self._ex(fn, args[0])}; if (i < {spec.size}) "
                    f"{{ c->CP[{spec.index}][i]++; c->CB[{spec.index}][i] += c->count_len; }} "
                    f"else range_error(c, {_error_code(2, spec.index)}, i); }}")
        else:
            raise Unsupported(f"extern method {kind}.{method}")

    # ------------------------------------------------------------------ places and values

    def _place(self, e: ir.Expr, fn: _Fn | None = None) -> Any:
        """What an l-value names: a slot number (Dyn when computed at run time), a Node, or an
        action parameter's C text; `fn` lets a stack be indexed at run time (each use of the
        element evaluates its index, so && and ?: skip it as the Python engine does)."""
        if isinstance(e, ir.PathExpr):
            found = self.env.get(id(e.decl))
            if found is None:
                raise Unsupported(f"name {e.name} ({type(e.decl).__name__})")
            return found
        if isinstance(e, ir.Member):
            inner = self._place(e.expr, fn)
            if isinstance(inner, Node) and e.name in inner.fields:
                return inner.fields[e.name]
            if isinstance(inner, Stack) and e.name in ("next", "last") and fn is not None:
                back = " - 1" if e.name == "last" else ""
                return self._element(inner, f"c->F[{inner.next_index}]{back}")
            raise Unsupported(f"member .{e.name}")
        if isinstance(e, ir.Index):
            stack = self._place(e.expr, fn)
            if not isinstance(stack, Stack):
                raise Unsupported("an index into a value that is not a header stack")
            try:
                index = _const_int(e.index)
            except Unsupported:
                if fn is None:
                    raise Unsupported("a header stack index that is not a constant here") \
                        from None
                return self._element(stack, self._ex(fn, e.index))
            if not 0 <= index < len(stack.elems):
                raise Unsupported("an index outside its header stack")
            return stack.elems[index]
        raise Unsupported(f"l-value {type(e).__name__}")

    def _element(self, stack: Stack, index: str) -> Node:
        """Element `index` (C text) of a stack: out of bounds, the block ends (runtime_c's si,
        the Python engine's StackIndexError)."""
        if not stack.evenly_laid_out():
            raise Unsupported("a header stack whose elements are not evenly laid out")
        self.dynamic = True
        return stack.elems[0].shifted(f"{stack.stride} * si(c, {index}, {len(stack.elems)})")

    def _agg(self, e: ir.Expr, fn: _Fn | None = None) -> Node | Stack:
        """A struct, header or stack; an element at a run-time index has its index computed
        once, here (the statement then uses all its slots), a function's result is called
        for here."""
        if isinstance(e, ir.Call) and e.kind is ir.CallKind.FUNCTION and fn is not None:
            fn.line(f"{self._user_call(fn, e)};")
            self._copy_out(fn, e)
            return self.returned[id(e.callee)]
        found = self._place(e, fn)
        if isinstance(found, int | str):
            raise Unsupported("a scalar where a struct, header or stack was expected")
        if isinstance(found, Node) and found.origin is not None and fn is not None:
            base = self._temp()
            fn.line(f"u64 {base} = {found.base};")
            return found.origin.shifted(base)
        return found

    def _node(self, e: ir.Expr, fn: _Fn | None = None) -> Node:
        found = self._agg(e, fn)
        if not isinstance(found, Node):
            raise Unsupported("a scalar where a struct or header was expected")
        return found

    def _slot(self, e: ir.Expr, fn: _Fn | None = None) -> Slot:
        found = self._place(e, fn)
        if not isinstance(found, int | Dyn):
            raise Unsupported("a struct, header or parameter where a field was expected")
        return found

    def _writes(self, slots: list[Slot]) -> None:
        """Note a write of standard_metadata.mcast_grp: the program multicasts."""
        if self._sm("mcast_grp") in slots:
            self.requests = True

    def _sm(self, name: str) -> int | None:
        slot = self.roots["SM"].fields.get(name)
        return slot if isinstance(slot, int) else None

    def _error_code(self, member: str) -> int:
        for d in self.program.decls:
            if isinstance(d, ir.TypeDecl) and d.kind == "error" and isinstance(d.resolved, EnumT):
                if member in d.resolved.members:
                    return enum_value(d.resolved, member)
        return 0

    def _apply(self, call: ir.Expr) -> str:
        if not (isinstance(call, ir.Call) and call.kind is ir.CallKind.TABLE_APPLY):
            raise Unsupported("an apply result that is not a table's")
        spec = self.tables.get(id(call.callee))
        if spec is None:
            raise Unsupported(f"table {call.callee.name} applied outside its control")
        return f"tbl_{spec.index}(c)"

    def _temp(self) -> str:
        self.temps += 1
        return f"t{self.temps}"

    def _ex(self, fn: _Fn, e: ir.Expr) -> str:
        """The C expression of a scalar P4 expression (uint64, within its width)."""
        if id(e) in self.presets:
            return self.presets[id(e)]
        method = getattr(self, "_ex_" + type(e).__name__, None)
        if method is None:
            raise Unsupported(f"expression {type(e).__name__}")
        return method(fn, e)

    def _ex_IntLit(self, fn: _Fn, e: ir.IntLit) -> str:  # noqa: N802 - by node class
        if isinstance(e.type, BitsT):
            return f"{e.value & ((1 << width_of(e.type)) - 1)}ULL"
        if e.value < 0 or e.value >> 64:
            raise Unsupported("an integer outside 0..2^64-1")
        return f"{e.value}ULL"

    def _ex_BoolLit(self, fn: _Fn, e: ir.BoolLit) -> str:  # noqa: N802
        return "1" if e.value else "0"

    def _ex_TypeMember(self, fn: _Fn, e: ir.TypeMember) -> str:  # noqa: N802
        if not isinstance(e.type, EnumT):
            raise Unsupported(f"type member {e.type_name}.{e.member}")
        return f"{enum_value(e.type, e.member)}ULL"

    def _ex_PathExpr(self, fn: _Fn, e: ir.PathExpr) -> str:  # noqa: N802
        if isinstance(e.decl, ir.ConstDecl):
            value = e.decl.value
            if isinstance(value, str) and isinstance(e.type, EnumT):
                value = enum_value(e.type, value)
            if not isinstance(value, int | bool):
                raise Unsupported(f"constant {e.name}")
            w = width_of(e.type) if isinstance(e.type, BitsT) else 64
            return f"{int(value) & ((1 << w) - 1)}ULL"
        found = self._place(e)
        if isinstance(found, str):
            return found
        if isinstance(found, Node | Stack):
            raise Unsupported("a struct or header as a value")
        return f"c->F[{found}]"

    def _ex_Member(self, fn: _Fn, e: ir.Member) -> str:  # noqa: N802
        if isinstance(e.expr.type, StackT):
            stack = self._agg(e.expr)
            if not isinstance(stack, Stack) or e.name not in ("size", "lastIndex"):
                raise Unsupported(f"stack member .{e.name} as a value")
            if e.name == "size":
                return f"{len(stack.elems)}ULL"
            return f"((c->F[{stack.next_index}] - 1) & 0xFFFFFFFFULL)"
        if e.name in ("hit", "miss") and isinstance(e.expr, ir.Call):
            hit = f"((({self._apply(e.expr)}) >> 16) & 1)"
            return hit if e.name == "hit" else f"(!{hit})"
        found = self._place(e, fn)
        if not isinstance(found, int | Dyn):
            raise Unsupported("a struct or header as a value")
        return f"c->F[{found}]"

    def _ex_Call(self, fn: _Fn, e: ir.Call) -> str:  # noqa: N802
        if e.kind is ir.CallKind.EXTERN_METHOD and _method(e).name in ("lookahead", "length"):
            return self._packet_in(fn, e)
        if e.kind is ir.CallKind.FUNCTION:
            return self._effect(fn, e) if self._outs(e) else self._user_call(fn, e)
        if e.kind is ir.CallKind.HEADER_METHOD and e.callee == "isValid":
            node = self._place(_method(e).expr, fn)  # no temporary: && may skip it
            if not isinstance(node, Node) or node.valid is None:
                raise Unsupported("isValid on a header union")
            return f"c->F[{node.valid}]"
        raise Unsupported(f"call of kind {e.kind.value if e.kind else '?'} in an expression")

    def _effect(self, fn: _Fn, call: ir.Call) -> str:
        """A function with out/inout parameters called inside an expression: a GNU C statement
        expression (copy-in, the call, copy-out), so it runs where C evaluates it (&&, || and
        ?: may skip it; _ex_Binary orders the operands around it)."""
        saved, level = fn.lines, fn.level
        fn.lines, fn.level = [], 0
        result = self._temp()
        fn.line(f"u64 {result} = {self._user_call(fn, call)};")
        self._copy_out(fn, call)
        body = " ".join(line.strip() for line in fn.lines)
        fn.lines, fn.level = saved, level
        self.effects += 1
        return f"({{ {body} {result}; }})"

    def _ex_Slice(self, fn: _Fn, e: ir.Slice) -> str:  # noqa: N802
        return f"(({self._ex(fn, e.expr)} >> {e.lo}) & {mask(e.hi - e.lo + 1)})"

    def _ex_Unary(self, fn: _Fn, e: ir.Unary) -> str:  # noqa: N802
        x = self._ex(fn, e.expr)
        if e.op == "!":
            return f"(!{x})"
        m = mask(width_of(e.type))
        return f"((0ULL - {x}) & {m})" if e.op == "-" else f"(~{x} & {m})"

    def _ex_Ternary(self, fn: _Fn, e: ir.Ternary) -> str:  # noqa: N802
        return f"({self._ex(fn, e.cond)} ? {self._ex(fn, e.then)} : {self._ex(fn, e.other)})"

    def _ex_Cast(self, fn: _Fn, e: ir.Cast) -> str:  # noqa: N802
        if isinstance(e.expr, ir.IntLit) and isinstance(e.type, BitsT) and (
                not isinstance(e.expr.type, BitsT)):  # an integer (say -1) into bit<W> / int<W>
            return f"{e.expr.value & ((1 << width_of(e.type)) - 1)}ULL"
        x = self._ex(fn, e.expr)
        if isinstance(e.type, BoolT):
            return f"({x} != 0)"
        if is_signed(e.expr.type):  # sign-extended into a wider type
            x = f"(u64)sx({x}, {width_of(e.expr.type)})"
        return f"({x} & {mask(width_of(e.type))})"

    def _ex_Binary(self, fn: _Fn, e: ir.Binary) -> str:  # noqa: N802
        effects = self.effects
        a = self._ex(fn, e.left)
        b = self._ex(fn, e.right)
        if self.effects == effects or e.op in ("&&", "||"):
            return self._binary(e, a, b)
        left, right = self._temp(), self._temp()  # side effects: the left operand goes first
        return f"({{ u64 {left} = {a}; u64 {right} = {b}; {self._binary(e, left, right)}; }})"

    def _binary(self, e: ir.Binary, a: str, b: str) -> str:
        op = e.op
        if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            if op in ("<", "<=", ">", ">=") and is_signed(e.left.type):
                w = width_of(e.left.type)
                return f"(sx({a}, {w}) {op} sx({b}, {w}))"
            if op in ("<", "<=", ">", ">="):
                width_of(e.left.type)
            return f"({a} {op} {b})"
        w = width_of(e.type)
        m = mask(w)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return f"(({a} {op} {b}) & {m})"
        if is_signed(e.type) and op in (">>", "|+|", "|-|", "/", "%"):
            return self._signed(op, a, b, w)
        calls = {"/": "dv", "%": "md", "|+|": "sadd", "|-|": "ssub"}
        if op in calls:
            return f"{calls[op]}({a}, {b}, {m})"
        if op == "<<":
            return f"shl({a}, {b}, {w})"
        if op == ">>":
            return f"shr({a}, {b})"
        if op == "++":
            return f"(({a} << {width_of(e.right.type)}) | {b})"
        raise Unsupported(f"operator {op}")

    def _signed(self, op: str, a: str, b: str, w: int) -> str:
        if op == ">>":
            return f"sshr({a}, {b}, {w})"
        if op in ("|+|", "|-|"):
            return f"{'sadds' if op == '|+|' else 'ssubs'}({a}, {b}, {w})"
        raise Unsupported(f"operator {op} on int<{w}>")

    # ------------------------------------------------------------------ the whole file

    def _source(self, bodies: dict[str, str]) -> str:
        sm = self.roots["SM"].fields
        needed = ("ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
                  "mcast_grp", "ingress_global_timestamp", "egress_global_timestamp")
        for name in needed:
            if not isinstance(sm.get(name), int):
                raise Unsupported(f"standard_metadata without {name}")
        slots = {name: slot for name, slot in sm.items() if isinstance(slot, int)}
        return runtime_c.program_source(
            nslots=len(self.layout.widths), ntables=len(self.table_list),
            nregisters=len(self.register_list), ncounters=len(self.counter_list),
            functions=self.functions, bodies=bodies, sm=slots, max_header_bytes=self.emit_bytes,
            live=self.live)


RANGE_ERRORS = ("register {name}: read index {index} out of range",
                "register {name}: write index {index} out of range",
                "counter {name}: index {index} out of range",
                "header stack index out of bounds{name}; the block ended",
                "the loop at {name} ran past {index} iterations in one pass (max_loop_iterations)"
                "; the pass ended and its packet was dropped")  # as the Python engine logs
# them; a stack index error's "array" is where it happened (STACK_WHERE), a loop's its C id
STACK_ERROR = 3  # runtime_c's loop_limit records kind 4
STACK_BLOCKS = {"ig": 1, "eg": 2}
STACK_WHERE = ["", " in ingress", " in egress"]


def _method(call: ir.Call) -> ir.Member:
    """A method call's target (`obj.method`), a Member by the checker."""
    assert isinstance(call.target, ir.Member), "a method call's target is a member"
    return call.target


def _action_decl(ref: ir.ActionRef) -> ir.ActionDecl:
    """The action a table's actions list names (resolved by the checker)."""
    assert ref.decl is not None, "the checker resolves a table's actions"
    return ref.decl


def _error_code(kind: int, array: int) -> str:
    """What an out-of-range access records: its kind (RANGE_ERRORS) and array."""
    return f"{(kind << 32) | array}ULL"


def _read(data: str, pos: str, off: int, w: int) -> str:
    """A header field's value (the cursor is always at a byte: headers are whole bytes)."""
    if off % 8 == 0 and w % 8 == 0:
        return f"rdb({data} + ({pos} >> 3) + {off // 8}, {w // 8})"
    return f"rd({data}, {pos} + {off}, {w})"


def _write(out: str, pos: str, off: int, w: int, value: str) -> str:
    if off % 8 == 0 and w % 8 == 0:
        return f"wrb({out} + ({pos} >> 3) + {off // 8}, {w // 8}, {value})"
    return f"wr({out}, {pos} + {off}, {w}, {value})"


def _const_int(e: ir.Expr) -> int:
    value = const_value(e)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unsupported("an extern size that is not a constant")
    return value
