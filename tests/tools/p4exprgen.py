"""Random P4 expression programs with their expected results under the P4_16 spec's rules.

A program reads one input header of random bit<W>/int<W> fields and writes an output header, a
header stack and the (possibly changed) input header. Its statements assign random expressions
(widths, signedness, slices, shifts, concatenation, casts, saturating and wrapping arithmetic,
comparisons, ?:, &&, ||, and calls of functions with an inout side effect) to output fields,
to slices of them and to stack elements at run-time indices. This module computes the deparsed
packet by the spec's rules (left-to-right evaluation, lvalues before right sides, short-circuit),
independently of any P4 implementation, so a target can be checked against the spec and against
another target (see exprdiff.py).

What the generator avoids, because p4c or BMv2 cannot take it: mixed-signedness `++` (p4c's
type checker inserts an illegal cast), slices of int<W> as assignment targets (p4c-bm2-ss
rejects them), int<1> (BMv2 aborts on 1-bit signed fields) and run-time indices read after the
right side changes them (the built-in target rejects those; see docs/design.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ty:
    """bit<W> (signed False), int<W> (signed True) or bool (width 0)."""

    width: int
    signed: bool = False

    @property
    def is_bool(self) -> bool:
        return self.width == 0

    def p4(self) -> str:
        if self.is_bool:
            return "bool"
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    def wrap(self, v: int) -> int:
        """v reduced to this type's value set (two's complement for int<W>)."""
        if self.is_bool:
            return int(bool(v))
        v &= (1 << self.width) - 1
        if self.signed and v >> (self.width - 1):
            v -= 1 << self.width
        return v

    def lo(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    def hi(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1


BOOL = Ty(0)


def bits(v: int, width: int) -> int:
    """The unsigned bit pattern of v in `width` bits."""
    return v & ((1 << width) - 1)


class Expr:
    """A typed expression: P4 text and its value under the spec, given the input fields."""

    ty: Ty

    def p4(self) -> str:
        raise NotImplementedError

    def value(self, env: dict[str, int]) -> int:
        raise NotImplementedError


@dataclass
class Field(Expr):
    name: str
    ty: Ty

    def p4(self) -> str:
        return f"hdr.i.{self.name}"

    def value(self, env: dict[str, int]) -> int:
        return env[self.name]


@dataclass
class Local(Expr):
    name: str
    ty: Ty

    def p4(self) -> str:
        return self.name

    def value(self, env: dict[str, int]) -> int:
        return env[self.name]


@dataclass
class Lit(Expr):
    v: int
    ty: Ty
    typed: bool = True

    def p4(self) -> str:
        if self.ty.is_bool:
            return "true" if self.v else "false"
        if not self.typed:  # an untyped literal takes the type of the other operand
            return str(self.v)
        pattern = bits(self.v, self.ty.width)
        if self.ty.signed:
            return f"((int<{self.ty.width}>){self.ty.width}w{pattern})"
        return f"{self.ty.width}w{pattern}"

    def value(self, env: dict[str, int]) -> int:
        return self.v


def _shl(a: int, n: int, t: Ty) -> int:
    return 0 if n >= t.width else t.wrap(a << n)


def _shr(a: int, n: int, t: Ty) -> int:
    if n >= t.width:
        return -1 if a < 0 else 0
    return a >> n


ARITH: dict[str, Callable[[int, int, Ty], int]] = {
    "+": lambda a, b, t: t.wrap(a + b),
    "-": lambda a, b, t: t.wrap(a - b),
    "*": lambda a, b, t: t.wrap(a * b),
    "&": lambda a, b, t: t.wrap(a & b),
    "|": lambda a, b, t: t.wrap(a | b),
    "^": lambda a, b, t: t.wrap(a ^ b),
    "|+|": lambda a, b, t: min(max(a + b, t.lo()), t.hi()),
    "|-|": lambda a, b, t: min(max(a - b, t.lo()), t.hi()),
}
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass
class Binary(Expr):
    op: str
    a: Expr
    b: Expr
    ty: Ty

    def p4(self) -> str:
        return f"({self.a.p4()} {self.op} {self.b.p4()})"

    def value(self, env: dict[str, int]) -> int:
        if self.op in ("&&", "||"):  # short-circuit: the right side runs only when needed
            a = bool(self.a.value(env))
            if a == (self.op == "||"):
                return int(a)
            return int(bool(self.b.value(env)))
        a, b = self.a.value(env), self.b.value(env)
        if self.op in ARITH:
            return ARITH[self.op](a, b, self.ty)
        if self.op in COMPARE:
            return int(COMPARE[self.op](a, b))
        if self.op == "<<":
            return _shl(a, b, self.ty)
        if self.op == ">>":
            return _shr(a, b, self.ty)
        if self.op == "++":
            wb = self.b.ty.width
            return self.ty.wrap((bits(a, self.a.ty.width) << wb) | bits(b, wb))
        raise ValueError(self.op)


@dataclass
class Unary(Expr):
    op: str
    a: Expr
    ty: Ty

    def p4(self) -> str:
        return f"({self.op}{self.a.p4()})"

    def value(self, env: dict[str, int]) -> int:
        a = self.a.value(env)
        if self.op == "!":
            return int(not a)
        if self.op == "~":
            return self.ty.wrap(~a)
        return self.ty.wrap(-a)


@dataclass
class Slice(Expr):
    a: Expr
    hi: int
    lo: int
    ty: Ty

    def p4(self) -> str:
        return f"{self.a.p4()}[{self.hi}:{self.lo}]"

    def value(self, env: dict[str, int]) -> int:
        return bits(self.a.value(env) >> self.lo, self.hi - self.lo + 1)


@dataclass
class Cast(Expr):
    a: Expr
    ty: Ty

    def p4(self) -> str:
        return f"(({self.ty.p4()})({self.a.p4()}))"

    def value(self, env: dict[str, int]) -> int:
        return self.ty.wrap(self.a.value(env))


@dataclass
class Mux(Expr):
    c: Expr
    a: Expr
    b: Expr
    ty: Ty

    def p4(self) -> str:
        return f"({self.c.p4()} ? {self.a.p4()} : {self.b.p4()})"

    def value(self, env: dict[str, int]) -> int:
        return self.a.value(env) if self.c.value(env) else self.b.value(env)


@dataclass
class Fn:
    """A function with a side effect on its inout argument: `x = x + add; return x ^ xor;`."""

    name: str
    ty: Ty
    add: int
    xor: int

    def p4(self) -> str:
        t = self.ty.p4()
        return (f"{t} {self.name}(inout {t} x) {{\n    x = x + {Lit(self.add, self.ty).p4()};\n"
                f"    return x ^ {Lit(self.xor, self.ty).p4()};\n}}\n")


@dataclass
class Call(Expr):
    """fn(hdr.i.f): copies the field in, runs fn, copies it back out; the value is fn's result."""

    fn: Fn
    arg: Field
    ty: Ty

    def p4(self) -> str:
        return f"{self.fn.name}({self.arg.p4()})"

    def value(self, env: dict[str, int]) -> int:
        x = self.ty.wrap(env[self.arg.name] + self.fn.add)
        env[self.arg.name] = x
        return self.ty.wrap(x ^ self.fn.xor)


@dataclass
class Gen:
    """Draws random well-typed expressions over a set of input fields and locals."""

    rng: random.Random
    inputs: list[Field]
    locals_: list[Local] = field(default_factory=list)
    max_width: int = 64
    fns: list[Fn] = field(default_factory=list)

    def width(self) -> int:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16])
        if r < 0.85:
            return self.rng.randint(1, min(32, self.max_width))
        return self.rng.randint(1, self.max_width)

    def ty(self) -> Ty:
        w = self.width()
        return Ty(w, w > 1 and self.rng.random() < 0.35)

    def lit(self, t: Ty) -> Lit:
        v = self.rng.choice([t.lo(), t.hi(), 0, 1, self.rng.randint(t.lo(), t.hi())])
        return Lit(t.wrap(v), t)

    def leaf(self, t: Ty) -> Expr:
        if t.is_bool:
            return self.lit(t)
        calls = [f for f in self.fns if f.ty == t]
        if calls and self.rng.random() < 0.25:
            fn = self.rng.choice(calls)
            args = [f for f in self.inputs if f.ty == t]
            return Call(fn, self.rng.choice(args), t)
        same = [v for v in self.inputs + self.locals_ if v.ty == t]
        if same and self.rng.random() < 0.7:
            return self.rng.choice(same)
        if self.rng.random() < 0.3:
            return self.lit(t)
        return self.convert(self.rng.choice(self.inputs + self.locals_), t)

    def convert(self, e: Expr, t: Ty) -> Expr:
        """e turned into type t with legal casts (bool via comparisons)."""
        if e.ty == t:
            return e
        if t.is_bool:
            return Binary("!=", e, Lit(0, e.ty), BOOL)
        if e.ty.is_bool:
            e = Cast(e, Ty(1))
        if e.ty.signed != t.signed:
            if e.ty.width == 1:  # no int<1>: BMv2 cannot hold a 1-bit signed value
                e = Cast(e, Ty(t.width))
            e = Cast(e, Ty(e.ty.width, t.signed))
        return e if e.ty == t else Cast(e, t)

    def expr(self, t: Ty, depth: int) -> Expr:
        if depth <= 0 or self.rng.random() < 0.15:
            return self.leaf(t)
        if t.is_bool:
            return self.boolean(depth)
        kinds = ["arith", "arith", "bitwise", "shift", "sat", "unary", "cast", "mux", "slice"]
        if t.width >= 2:
            kinds.append("concat")
        kind = self.rng.choice(kinds)
        d = depth - 1
        if kind == "arith":
            op = self.rng.choice(["+", "-", "*"])
            return Binary(op, self.expr(t, d), self.operand(t, d), t)
        if kind == "bitwise":
            op = self.rng.choice(["&", "|", "^"])
            return Binary(op, self.expr(t, d), self.operand(t, d), t)
        if kind == "sat":
            op = self.rng.choice(["|+|", "|-|"])
            return Binary(op, self.expr(t, d), self.operand(t, d), t)
        if kind == "shift":
            return self.shift(t, d)
        if kind == "unary":
            return Unary(self.rng.choice(["-", "~"]), self.expr(t, d), t)
        if kind == "cast":
            return self.convert(self.expr(self.ty(), d), t)
        if kind == "mux":
            return Mux(self.boolean(d), self.expr(t, d), self.expr(t, d), t)
        if kind == "slice":
            return self.slice(t, d)
        return self.concat(t, d)

    def operand(self, t: Ty, d: int) -> Expr:
        """A right operand: sometimes an untyped literal that takes t's type."""
        if self.rng.random() < 0.2 and t.width >= 2:
            v = self.rng.randint(0, (1 << (t.width - 1)) - 1)
            return Lit(v, t, typed=False)
        return self.expr(t, d)

    def shift(self, t: Ty, d: int) -> Expr:
        op = self.rng.choice(["<<", ">>"])
        amount: Expr
        if self.rng.random() < 0.5:
            n = self.rng.randint(1, t.width + 2)
            amount = Lit(n, Ty(8), typed=self.rng.random() < 0.5)
        else:
            amount = self.expr(Ty(self.rng.choice([2, 3, 4, 5, 8])), d)
        return Binary(op, self.expr(t, d), amount, t)

    def slice(self, t: Ty, d: int) -> Expr:
        extra = self.rng.randint(0, 12)
        src_t = Ty(t.width + extra, self.rng.random() < 0.3 and t.width + extra > 1)
        src = self.expr(src_t, d)
        lo = self.rng.randint(0, extra)
        s = Slice(src, lo + t.width - 1, lo, Ty(t.width))
        return self.convert(s, t)

    def concat(self, t: Ty, d: int) -> Expr:
        wa = self.rng.randint(1, t.width - 1)
        ta = Ty(wa, t.signed and wa > 1 and self.rng.random() < 0.5)
        ta = Ty(wa, ta.signed and t.width - wa > 1)
        tb = Ty(t.width - wa, ta.signed)  # p4c rejects mixed-signedness ++
        e = Binary("++", self.expr(ta, d), self.expr(tb, d), Ty(t.width, ta.signed))
        return self.convert(e, t)

    def boolean(self, depth: int) -> Expr:
        d = depth - 1
        r = self.rng.random()
        if r < 0.6 or d <= 0:
            t = self.ty()
            op = self.rng.choice(list(COMPARE))
            return Binary(op, self.expr(t, d), self.expr(t, d), BOOL)
        if r < 0.8:
            op = self.rng.choice(["&&", "||"])
            return Binary(op, self.boolean(d), self.boolean(d), BOOL)
        return Unary("!", self.boolean(d), BOOL)


class Stmt:
    """One statement of the generated control; `run` applies it to the evaluator's state."""

    def p4(self) -> str:
        raise NotImplementedError

    def run(self, env: dict[str, int], out: dict[str, int], stack: list[int]) -> None:
        raise NotImplementedError


@dataclass
class DeclLocal(Stmt):
    var: Local
    init: Expr

    def p4(self) -> str:
        return f"{self.var.ty.p4()} {self.var.name} = {self.init.p4()};"

    def run(self, env: dict[str, int], out: dict[str, int], stack: list[int]) -> None:
        env[self.var.name] = self.init.value(env)


@dataclass
class AssignOut(Stmt):
    """hdr.o.NAME = e; or a slice of it: hdr.o.NAME[hi:lo] = e."""

    name: str
    ty: Ty
    rhs: Expr
    hi: int | None = None
    lo: int = 0

    def p4(self) -> str:
        if self.ty.is_bool:
            return f"hdr.o.{self.name} = (bit<1>)({self.rhs.p4()});"
        sl = "" if self.hi is None else f"[{self.hi}:{self.lo}]"
        return f"hdr.o.{self.name}{sl} = {self.rhs.p4()};"

    def run(self, env: dict[str, int], out: dict[str, int], stack: list[int]) -> None:
        v = self.rhs.value(env)
        if self.hi is None:
            out[self.name] = v
            return
        w = max(self.ty.width, 1)
        old = bits(out[self.name], w)
        m = ((1 << (self.hi - self.lo + 1)) - 1) << self.lo
        out[self.name] = self.ty.wrap((old & ~m) | ((v << self.lo) & m))


@dataclass
class AssignStack(Stmt):
    """hdr.s[index].v = e; the index (and its side effects) is evaluated before e."""

    index: Expr
    rhs: Expr
    elem: Ty

    def p4(self) -> str:
        return f"hdr.s[{self.index.p4()}].v = {self.rhs.p4()};"

    def run(self, env: dict[str, int], out: dict[str, int], stack: list[int]) -> None:
        i = self.index.value(env)
        stack[i] = self.elem.wrap(self.rhs.value(env))


@dataclass
class Program:
    """One random program: input fields, output fields, an output stack and statements."""

    inputs: list[Field]
    outputs: list[tuple[str, Ty]]
    fns: list[Fn]
    stack_elem: Ty
    stack_size: int
    stmts: list[Stmt]

    def source(self) -> str:
        def header(name: str, fields: list[tuple[str, Ty]]) -> str:
            lines = [f"    {t.p4() if not t.is_bool else 'bit<1>'} {n};" for n, t in fields]
            pad = _pad(sum(max(t.width, 1) for _, t in fields))
            if pad:
                lines.append(f"    bit<{pad}> pad;")
            return f"header {name} {{\n" + "\n".join(lines) + "\n}\n"

        headers = (header("in_t", [(f.name, f.ty) for f in self.inputs])
                   + header("out_t", self.outputs) + header("elem_t", [("v", self.stack_elem)]))
        body = ["hdr.o.setValid();"]
        body += [f"hdr.s[{i}].setValid();" for i in range(self.stack_size)]
        body += [s.p4() for s in self.stmts]
        return TEMPLATE.format(headers=headers, functions="".join(f.p4() for f in self.fns),
                               stack_size=self.stack_size,
                               body="\n".join("        " + line for line in body))

    def in_bytes(self, values: dict[str, int]) -> bytes:
        return pack([(values[f.name], f.ty.width) for f in self.inputs])

    def out_bytes(self, values: dict[str, int]) -> bytes:
        """The deparsed packet by the spec: hdr.o, then the stack, then hdr.i."""
        env = dict(values)
        out = {n: 0 for n, _ in self.outputs}
        stack = [0] * self.stack_size
        for s in self.stmts:
            s.run(env, out, stack)
        data = pack([(out[n], max(t.width, 1)) for n, t in self.outputs])
        data += b"".join(pack([(v, self.stack_elem.width)]) for v in stack)
        return data + pack([(env[f.name], f.ty.width) for f in self.inputs])


def pack(fields: list[tuple[int, int]]) -> bytes:
    """Fields (value, width) packed MSB first, zero-padded to whole bytes as p4c pads headers."""
    acc, width = 0, 0
    for v, w in fields:
        acc = (acc << w) | bits(v, w)
        width += w
    pad = _pad(width)
    return (acc << pad).to_bytes((width + pad) // 8, "big")


TEMPLATE = """#include <core.p4>
#include <v1model.p4>

{headers}
struct headers_t {{ out_t o; elem_t[{stack_size}] s; in_t i; }}
struct meta_t {{ }}

{functions}
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.i); transition accept; }}
}}
control VC(inout headers_t hdr, inout meta_t m) {{ apply {{ }} }}
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{
{body}
        sm.egress_spec = 0;
    }}
}}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t hdr, inout meta_t m) {{ apply {{ }} }}
control Dep(packet_out pkt, in headers_t hdr) {{
    apply {{ pkt.emit(hdr.o); pkt.emit(hdr.s); pkt.emit(hdr.i); }}
}}
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
"""


def _pad(width: int) -> int:
    return (-width) % 8


def random_program(seed: int, n_inputs: int = 5, n_locals: int = 2, n_outputs: int = 6,
                   depth: int = 4, max_width: int = 64, n_fns: int = 2) -> Program:
    rng = random.Random(seed)
    g = Gen(rng, [], max_width=max_width)
    g.inputs = [Field(f"f{i}", g.ty()) for i in range(n_inputs)]
    for i in range(n_fns):
        t = rng.choice(g.inputs).ty
        g.fns.append(Fn(f"fn{i}", t, g.lit(t).v, g.lit(t).v))
    stmts: list[Stmt] = []
    for i in range(n_locals):
        t = g.ty()
        loc = Local(f"v{i}", t)
        stmts.append(DeclLocal(loc, g.expr(t, depth)))
        g.locals_.append(loc)
    outputs = [(f"r{i}", BOOL if rng.random() < 0.1 else g.ty()) for i in range(n_outputs)]
    stmts += [AssignOut(n, t, g.expr(t, depth)) for n, t in outputs]
    for n, t in outputs:
        if t.width >= 2 and not t.signed and rng.random() < 0.3:  # no int<W> slice targets
            lo = rng.randint(0, t.width - 1)
            hi = rng.randint(lo, t.width - 1)
            stmts.append(AssignOut(n, t, g.expr(Ty(hi - lo + 1), depth), hi, lo))
    size = rng.choice([2, 3, 4, 5, 8])
    elem = g.ty()
    idx_t = Ty(max(1, size.bit_length() - 1))  # every value of the index type is in range
    for _ in range(rng.randint(0, 3)):
        index, rhs = g.expr(idx_t, 2), g.expr(elem, depth)
        if has_call(rhs) and not has_call(index):
            index = g.lit(idx_t)  # see the module docstring
        stmts.append(AssignStack(index, rhs, elem))
    return Program(g.inputs, outputs, g.fns, elem, size, stmts)


def has_call(e: Expr) -> bool:
    if isinstance(e, Call):
        return True
    return any(has_call(v) for v in vars(e).values() if isinstance(v, Expr))


def random_inputs(prog: Program, rng: random.Random) -> dict[str, int]:
    out = {}
    for f in prog.inputs:
        t = f.ty
        out[f.name] = rng.choice([t.lo(), t.hi(), 0, rng.randint(t.lo(), t.hi()),
                                  rng.randint(t.lo(), t.hi())])
    return out


def render_stf(prog: Program, packets: list[dict[str, int]], port: int = 0) -> str:
    """An STF test: each packet in on `port` and, by the spec, out on the same port."""
    lines = []
    for values in packets:
        lines.append(f"packet {port} {prog.in_bytes(values).hex()}")
        lines.append(f"expect {port} {prog.out_bytes(values).hex()}$")
    return "\n".join(lines) + "\n"
