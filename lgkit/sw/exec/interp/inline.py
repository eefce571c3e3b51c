"""Inline the generated module's helper functions (sub-controls, actions, table applies) into
their callers, so that a top-level block runs as one flat Python function.

CPython pays ~0.1 us per call and the LinkGuardian program makes some 40 calls per pass. A call
`f(S, P, a, b)` as a statement (or `x = f(S, P)`, `x = f(S, P).attr`, `if f(S, P).attr:`) to a
function of the module is replaced by f's body with its locals renamed apart and its scalar
parameters assigned from the arguments (evaluated once, in order, before the body, exactly as a
call does). Exceptions (exit, stack bounds, parser errors) propagate to the same handlers as
before. A bare `return` in the middle of an inlined body becomes a `break` out of a one-pass
`while True` around the body (only for bodies without loops of their own); a body that ends in
`return X` and has no other `return` gives X to the assignment. Every function stays defined
(tables call actions by reference, the pipeline calls the blocks).
"""

from __future__ import annotations

import ast
import copy
import functools
import heapq
import itertools
from types import CodeType
from typing import NamedTuple, TypeVar

from lgkit.sw.exec.interp.peephole import optimise
from lgkit.sw.exec.interp.slotlocals import Outside, localise

Node = TypeVar("Node", bound=ast.AST)
MAX_NODES = 60_000  # a caller does not grow beyond this many AST nodes by inlining


class Inlined(NamedTuple):
    """The inlined module's code, and how many slots S needs for it (None: all of them)."""

    code: CodeType
    width: int | None


@functools.lru_cache(maxsize=32)
def inline_module(source: str, outside: Outside | None = None) -> Inlined:
    """The code of the module with its calls inlined (the same functions, flatter bodies);
    cached, so that a program loaded again in this process is not inlined again. With
    `outside` (what code outside the module uses), slots private to functions become locals
    (slotlocals.py)."""
    tree, width = _inlined(source, outside)
    return Inlined(compile(ast.unparse(tree), "<lgkit-generated>", "exec"), width)


def inlined_source(source: str, outside: Outside | None = None) -> str:
    """The text of what inline_module runs (compiled from this text, so that tracebacks'
    line numbers are this text's)."""
    return ast.unparse(_inlined(source, outside)[0])


def _inlined(source: str, outside: Outside | None) -> tuple[ast.Module, int | None]:
    tree = ast.parse(source)
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    owner = {}  # local name -> its function
    for fn in funcs.values():
        owner.update(dict.fromkeys(_rename_locals(fn), fn.name))
    Inliner(funcs).run()
    tree = ast.parse(ast.unparse(tree))  # every inlined copy its own nodes, to rename apart
    functions = [fn for fn in tree.body if isinstance(fn, ast.FunctionDef)]
    loop_free = set()
    for fn in functions:
        _Copies(owner).visit_body(fn.body)
        if _Occurrences().visit_body(fn.body):  # no loop that may run twice
            loop_free.add(fn.name)
            optimise(fn)
    width = None
    if outside is not None:
        width = localise(functions, outside, lambda fn: fn.name in loop_free)
    for fn in functions:
        _share_names(fn)
    return tree, width


def _share_names(fn: ast.FunctionDef) -> None:
    """Give local variables whose lifetimes do not overlap the same name: a frame costs about
    a nanosecond per local at every call, and inlining leaves hundreds of short-lived
    temporaries. Only in loop-free code (a `while` that ends in `break` and has no `continue`
    runs at most once), where execution only moves forward through the text, so a variable
    is live at most from its first to its last occurrence (counted in statements). Names
    used inside nested scopes (comprehensions) and the parameters keep their names."""
    order = _Occurrences()
    if not order.visit_body(fn.body):
        return
    params = {a.arg for a in fn.args.args}
    local = order.stored - params - order.nested
    spans = sorted((order.first[n], order.last[n], n) for n in local)
    if len(spans) < 16:
        return
    free: list[str] = []
    active: list[tuple[int, str]] = []  # (last statement, physical name), a heap
    mapping: dict[str, str] = {}
    taken = set(order.first) | params
    fresh = (f"_v{k}" for k in itertools.count())
    for start, end, name in spans:
        while active and active[0][0] < start:
            free.append(heapq.heappop(active)[1])
        if free:
            phys = free.pop()
        else:
            phys = next(fresh)
            while phys in taken:
                phys = next(fresh)
        mapping[name] = phys
        heapq.heappush(active, (end, phys))
    renamer = _Rename(mapping)
    for stmt in fn.body:
        renamer.visit(stmt)


class _Occurrences:
    """Statement positions of every name in a function body, in textual order."""

    SUBLISTS = ("body", "handlers", "orelse", "finalbody")

    def __init__(self) -> None:
        self.index = 0
        self.first: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self.stored: set[str] = set()
        self.nested: set[str] = set()

    def visit_body(self, body: list) -> bool:
        """Record the statements; False if the body has a loop that may run twice."""
        for stmt in body:
            if isinstance(stmt, ast.For | ast.AsyncFor):
                return False
            if isinstance(stmt, ast.While) and not _runs_once(stmt):
                return False
            self.index += 1
            for field, value in ast.iter_fields(stmt):
                if field in self.SUBLISTS:
                    continue
                for node in value if isinstance(value, list) else [value]:
                    if isinstance(node, ast.AST):
                        self.expression(node)
            if isinstance(stmt, ast.ExceptHandler) and stmt.name:
                self.note(stmt.name, store=True)
            for field in self.SUBLISTS:
                sub = getattr(stmt, field, None)
                if sub and not self.visit_body(sub):
                    return False
        return True

    def expression(self, node: ast.AST) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                self.note(n.id, isinstance(n.ctx, ast.Store | ast.Del))
            elif isinstance(n, _SCOPES):
                self.nested.update(m.id for m in ast.walk(n) if isinstance(m, ast.Name))

    def note(self, name: str, store: bool) -> None:
        self.first.setdefault(name, self.index)
        self.last[name] = self.index
        if store:
            self.stored.add(name)


_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _runs_once(loop: ast.While) -> bool:
    """A `while` whose body ends in `break` and has no `continue` of its own."""
    if loop.orelse or not loop.body or not isinstance(loop.body[-1], ast.Break):
        return False
    return not any(isinstance(n, ast.Continue) for n in _own_statements(loop.body))


def _own_statements(body: list):  # noqa: ANN202 - a generator of statements
    """Statements of a loop body, not descending into nested loops."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.For | ast.While | ast.AsyncFor):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, field, None) or [])
        for h in getattr(stmt, "handlers", None) or []:
            yield from _own_statements(h.body)


def _rename_locals(fn: ast.FunctionDef) -> set[str]:
    """Suffix every local name (parameters, assigned and exception names; not S and P) with
    the function's name, so that bodies inlined into one caller never share a name with it
    or with another callee. Copies of one callee inlined twice share names harmlessly: each
    copy assigns a local before it reads it."""
    names = {p.arg for p in fn.args.args}
    for n in _walk(fn.body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    names -= {"S", "P"}
    mapping = {n: f"{n}_{fn.name}" for n in names}
    for p in fn.args.args:
        p.arg = mapping.get(p.arg, p.arg)
    renamer = _Rename(mapping)
    for stmt in fn.body:
        renamer.visit(stmt)
    return set(mapping.values())


BEGIN, END = "inline ", "end "  # markers around an inlined body (constants: no code)


class _Copies:
    """Gives the locals of each inlined copy of a function their own names (suffix _k), so
    that copies of one callee inlined twice into a function do not look alive in between."""

    def __init__(self, owner: dict[str, str]):
        self.owner = owner
        self.stack: list[tuple[str, int]] = []
        self.count = itertools.count(1)

    def visit_body(self, body: list) -> None:
        for stmt in body:
            marker = _marker(stmt)
            if marker is not None and marker.startswith(BEGIN):
                self.stack.append((marker[len(BEGIN):], next(self.count)))
                continue
            if marker is not None and marker.startswith(END):
                self.stack.pop()
                continue
            for field, value in ast.iter_fields(stmt):
                if field in _Occurrences.SUBLISTS:
                    continue
                for node in value if isinstance(value, list) else [value]:
                    if isinstance(node, ast.AST):
                        for n in ast.walk(node):
                            if isinstance(n, ast.Name):
                                n.id = self.renamed(n.id)
            if isinstance(stmt, ast.ExceptHandler) and stmt.name:
                stmt.name = self.renamed(stmt.name)
            for field in _Occurrences.SUBLISTS:
                sub = getattr(stmt, field, None)
                if sub:
                    self.visit_body(sub)

    def renamed(self, name: str) -> str:
        fn = self.owner.get(name)
        if fn is None:
            return name
        for callee, k in reversed(self.stack):
            if callee == fn:
                return f"{name}_{k}"
        return name


def _marker(stmt: ast.AST) -> str | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        value = stmt.value.value
        if isinstance(value, str) and value.startswith((BEGIN, END)):
            return value
    return None


class _Callee:
    """What inlining needs to know about one function (its body before inlining)."""

    def __init__(self, fn: ast.FunctionDef):
        a = fn.args
        names = [p.arg for p in a.args]
        self.params = names[2:]
        body = fn.body
        self.size = 0
        returns: list[ast.Return] = []
        loops = forbidden = False
        for n in _walk(body):
            self.size += 1
            if isinstance(n, ast.Return):
                returns.append(n)
            elif isinstance(n, ast.For | ast.While):
                loops = True
            elif isinstance(n, _FORBIDDEN):
                forbidden = True
        tail = body[-1] if body and isinstance(body[-1], ast.Return) else None
        inner = [r for r in returns if r is not tail]
        self.tail_value = tail is not None and tail.value is not None
        self.ok = (
            names[:2] == ["S", "P"]
            and not (a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults)
            and not fn.decorator_list
            and not forbidden
            and not any(r.value is not None for r in inner)
            and not (inner and loops)  # `return` cannot become `break` inside its own loops
            and not (inner and self.tail_value)
        )
        self.wrap = bool(inner)  # bare returns before the end: a one-pass while loop


_FORBIDDEN = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.FunctionDef,
              ast.Lambda, ast.ClassDef, ast.AsyncFunctionDef)


def _walk(body: list[ast.stmt]):  # noqa: ANN202 - a generator of nodes
    for stmt in body:
        yield from ast.walk(stmt)


class _Rename(ast.NodeVisitor):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802 - ast's visitor names
        node.id = self.names.get(node.id, node.id)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:  # noqa: N802
        if node.name:
            node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)


def _returns_to_breaks(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The statements with every `return` (bare; never inside an expression) turned into
    `break`; statements without one are shared, the ones around a `return` are copied."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            out.append(ast.copy_location(ast.Break(), stmt))
            continue
        new = stmt
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                changed = _returns_to_breaks(sub)
                if any(a is not b for a, b in zip(changed, sub, strict=True)):
                    if new is stmt:
                        new = copy.copy(stmt)
                    setattr(new, field, changed)
        handlers = getattr(stmt, "handlers", None)
        if handlers:
            fixed = []
            for h in handlers:
                changed = _returns_to_breaks(h.body)
                if any(a is not b for a, b in zip(changed, h.body, strict=True)):
                    h = copy.copy(h)
                    h.body = changed
                fixed.append(h)
            if any(a is not b for a, b in zip(fixed, handlers, strict=True)):
                if new is stmt:
                    new = copy.copy(stmt)
                setattr(new, "handlers", fixed)  # noqa: B010 - as the fields above
        out.append(new)
    return out


class Inliner:
    """Inlines, bottom-up, every eligible call in every function of the module. Inlined
    statements are shared with the callee's own body (never changed afterwards) unless they
    need rewriting (a `return` into `break`), which works on a copy."""

    def __init__(self, funcs: dict[str, ast.FunctionDef]):
        self.funcs = funcs
        self.info = {name: _Callee(fn) for name, fn in funcs.items()}
        self.sizes = {name: info.size for name, info in self.info.items()}
        self.done: set[str] = set()
        self.active: set[str] = set()
        self.counter = itertools.count(1)

    def run(self) -> None:
        for name in self.funcs:
            self.expand(name)

    def expand(self, name: str) -> None:
        """Inline the calls in `name`'s body (its callees first)."""
        if name in self.done or name in self.active:
            return
        self.active.add(name)
        fn = self.funcs[name]
        size = [self.sizes[name]]
        fn.body = self.block(fn.body, size)
        self.sizes[name] = size[0]
        self.active.discard(name)
        self.done.add(name)

    def block(self, stmts: list[ast.stmt], size: list[int]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    setattr(stmt, field, self.block(sub, size))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = self.block(handler.body, size)
            out.extend(self.statement(stmt, size))
        return out

    def statement(self, stmt: ast.stmt, size: list[int]) -> list[ast.stmt]:
        """The statements that replace `stmt` (itself when nothing is inlined)."""
        if isinstance(stmt, ast.Expr):
            got = self.inline(stmt.value, None, size, want_value=False)
            return got if got is not None else [stmt]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            value = stmt.value
            attr = None
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Call):
                attr, value = value.attr, value.value
            got = self.inline(value, (stmt.targets[0], attr), size, want_value=attr is not None)
            return got if got is not None else [stmt]
        if isinstance(stmt, ast.If):
            tested = self.condition(stmt.test, size)
            if tested is not None:
                stmts, stmt.test = tested
                return [*stmts, stmt]
        return [stmt]

    def condition(self, test: ast.expr, size: list[int]
                  ) -> tuple[list[ast.stmt], ast.expr] | None:
        """The statements and the new test of an `if` whose test calls a function to inline:
        `[not] f(S, P, ...)`, `[not] f(S, P).attr`, or such an operand of `and` / `or` after
        the first, whose call runs only when the operands before it did not decide:
        `_c = a; if not _c: <f inlined>; _c = r or ...` then `if _c:` (for `or`)."""
        if isinstance(test, ast.BoolOp):
            return self.short_circuit(test, size)
        inner, negate = test, False
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            inner, negate = inner.operand, True
        attr = None
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Call):
            attr, inner = inner.attr, inner.value
        if not isinstance(inner, ast.Call):
            return None
        tmp = f"_inl{next(self.counter)}"
        got = self.inline(inner, (ast.Name(tmp, ast.Store()), attr), size, want_value=True)
        if got is None:
            return None
        cond: ast.expr = _at(ast.Name(tmp, ast.Load()), test)
        if negate:
            cond = _at(ast.UnaryOp(ast.Not(), cond), test)
        return got, cond

    def short_circuit(self, test: ast.BoolOp, size: list[int]
                      ) -> tuple[list[ast.stmt], ast.expr] | None:
        for i, operand in enumerate(test.values[1:], start=1):
            got = self.condition(operand, size) if not isinstance(operand, ast.BoolOp) else None
            if got is None:
                continue
            stmts, value = got
            flag = f"_inl{next(self.counter)}"
            head = test.values[:i]
            first = head[0] if len(head) == 1 else _at(ast.BoolOp(test.op, head), test)
            rest = [value, *test.values[i + 1:]]
            then = rest[0] if len(rest) == 1 else _at(ast.BoolOp(test.op, rest), test)
            undecided: ast.expr = _at(ast.Name(flag, ast.Load()), test)
            if isinstance(test.op, ast.Or):
                undecided = _at(ast.UnaryOp(ast.Not(), undecided), test)
            out = [_at(ast.Assign([_at(ast.Name(flag, ast.Store()), test)], first), test),
                   _at(ast.If(undecided, [*stmts, _at(ast.Assign(
                       [_at(ast.Name(flag, ast.Store()), test)], then), test)], []), test)]
            return out, _at(ast.Name(flag, ast.Load()), test)
        return None

    def inline(self, call: ast.expr, target: tuple[ast.expr, str | None] | None,
               size: list[int], want_value: bool) -> list[ast.stmt] | None:
        """The inlined body of `call` (assigning its result, or its `.attr`, to target), or
        None when the call is not one to inline."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id in self.funcs and not call.keywords):
            return None
        name = call.func.id
        args = call.args
        if (len(args) < 2 or any(isinstance(a, ast.Starred) for a in args)
                or not (isinstance(args[0], ast.Name) and args[0].id == "S")
                or not (isinstance(args[1], ast.Name) and args[1].id == "P")):
            return None
        self.expand(name)
        info = self.info[name]
        if (name in self.active or not info.ok or len(args) != 2 + len(info.params)
                or (want_value and not info.tail_value)):
            return None
        grow = self.sizes[name]
        if size[0] + grow > MAX_NODES:
            return None
        size[0] += grow
        body = list(self.funcs[name].body)
        result: ast.expr | None = None
        if body and isinstance(body[-1], ast.Return):
            last = body.pop()
            assert isinstance(last, ast.Return)
            result = last.value
        if info.wrap:
            body = _returns_to_breaks(body)
            loop = ast.While(_at(ast.Constant(True), call), [*body, _at(ast.Break(), call)], [])
            body = [_at(loop, call)]
        out: list[ast.stmt] = [
            _at(ast.Assign([_at(ast.Name(p, ast.Store()), call)], arg), call)
            for p, arg in zip(info.params, args[2:], strict=True)
        ]
        out.insert(0, _at(ast.Expr(_at(ast.Constant(BEGIN + name), call)), call))
        out.extend(body)
        if target is not None:
            dest, attr = target
            value = result if result is not None else _at(ast.Constant(None), call)
            if attr is not None:
                value = _at(ast.Attribute(value, attr, ast.Load()), call)
            out.append(_at(ast.Assign([_at(dest, call)], value), call))
        elif result is not None and not isinstance(result, ast.Name | ast.Constant):
            out.append(_at(ast.Expr(result), call))  # a discarded result, for its effects
        out.append(_at(ast.Expr(_at(ast.Constant(END + name), call)), call))
        return out


def _at(node: Node, where: ast.AST) -> Node:
    """A new node placed at the call it comes from (for tracebacks)."""
    return ast.copy_location(node, where)
