"""Peephole rewrites of an inlined block function: fewer bytecodes for the same effect.

Inlining a table apply leaves chains of moves and copies: the hit's arguments unpacked into
locals, each assigned to the wrapper's parameter, then to the action's; the action's
directional parameter copied in from the bound struct, every field stored, copied back out.
Two rewrites remove most of that work, both exact in loop-free code (where execution only
moves forward through the text):

- Copy propagation: a local assigned exactly once in the function, from another local that is
  also assigned at most once (or a constant), is replaced by that value everywhere and its
  assignment dropped; a local assigned once from a constant and never read is dropped.
- Slot stores: a run of `S[k] = v`, `S[k + 1] = w`, ... (locals or constants) becomes one
  `S[k:k + n] = (v, w, ...)`; a slice store that the next statement overwrites whole without
  reading S is dropped; `S[a:b] = (v, ...)` followed by `S[c:d] = S[a:b]` stores the tuple
  itself again.

Statements that only mark an inlined body (string constants) do not separate a run.
"""

from __future__ import annotations

import ast
from collections import Counter

EXPAND_MAX = 16  # slots of a slice copy written as single stores (16 cost about one slice copy)


def optimise(fn: ast.FunctionDef) -> None:
    """Rewrite the body of fn in place; fn must be loop-free (the caller checks: a `while`
    that ends in `break` without `continue` runs once and is allowed)."""
    _propagate_copies(fn)
    _forward_bodies(fn.body)


def _walk(body: list[ast.stmt]):  # noqa: ANN202 - a generator of nodes
    for stmt in body:
        yield from ast.walk(stmt)


_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr)


class _Uses:
    """Per local name: how often it is stored and loaded, and which names are unsafe to touch
    (deleted, exception names, used in a nested scope, parameters)."""

    def __init__(self, fn: ast.FunctionDef):
        self.stores: Counter[str] = Counter()
        self.loads: Counter[str] = Counter()
        self.params = {a.arg for a in fn.args.args}
        self.fixed: set[str] = set(self.params)
        for node in _walk(fn.body):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    self.stores[node.id] += 1
                elif isinstance(node.ctx, ast.Load):
                    self.loads[node.id] += 1
                else:
                    self.fixed.add(node.id)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.fixed.add(node.name)
            elif isinstance(node, _SCOPES):
                self.fixed.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _propagate_copies(fn: ast.FunctionDef) -> None:
    uses = _Uses(fn)
    values: dict[str, ast.Name | ast.Constant] = {}
    for node in _walk(fn.body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name in uses.fixed or uses.stores[name] != 1:
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id != name and (
                value.id in uses.params and uses.stores[value.id] == 0
                or value.id not in uses.fixed and uses.stores[value.id] == 1):
            values[name] = value  # a local or parameter that never changes (not a global)
        elif isinstance(value, ast.Constant) and (uses.loads[name] == 0
                                                  or isinstance(value.value, int | None)):
            values[name] = value
    if not values:
        return

    def resolve(name: str) -> ast.Name | ast.Constant:
        seen = {name}
        value = values[name]
        while isinstance(value, ast.Name) and value.id in values and value.id not in seen:
            seen.add(value.id)
            value = values[value.id]
        return value

    final = {name: resolve(name) for name in values}
    final = {n: v for n, v in final.items() if not (isinstance(v, ast.Name) and v.id == n)}
    _Substitute(final).visit(fn)
    fn.body = drop_assignments(fn.body, set(final)) or [ast.Pass()]


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.Name | ast.Constant]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:  # noqa: N802 - ast's visitor names
        value = self.values.get(node.id)
        if value is None or not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(
            ast.Name(value.id, ast.Load()) if isinstance(value, ast.Name)
            else ast.Constant(value.value), node)


def drop_assignments(body: list[ast.stmt], names: set[str]) -> list[ast.stmt]:
    """body without the assignments `name = value` to the names whose value calls nothing
    (a block left empty gets a `pass`)."""
    out = []
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in names
                and not any(isinstance(n, ast.Call) for n in ast.walk(stmt.value))):
            continue
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                kept = drop_assignments(sub, names)
                setattr(stmt, field, kept or ([ast.Pass()] if field != "orelse" or
                                              isinstance(stmt, ast.Try) else []))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = drop_assignments(handler.body, names) or [ast.Pass()]
        out.append(stmt)
    return out


def _forward_bodies(body: list[ast.stmt]) -> None:
    body[:] = _Slots().run(body)
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                _forward_bodies(sub)
        for handler in getattr(stmt, "handlers", ()):
            _forward_bodies(handler.body)


class _Slots:
    """Store forwarding over a run of simple statements (assignments of expressions without
    calls or attributes to locals and to constant slots S[k]): what each slot is known to
    hold (a local or constant), and its last store not read since (dead if stored again).
    Any other statement ends the run (nested bodies are runs of their own)."""

    def __init__(self) -> None:
        self.out: list[ast.stmt] = []
        self.known: dict[int, ast.expr] = {}
        self.unread: dict[int, ast.Assign] = {}
        self.dead: set[int] = set()  # id() of dropped statements

    def run(self, body: list[ast.stmt]) -> list[ast.stmt]:
        for stmt in body:
            for one in _expand(stmt):
                self.statement(one)
        return [s for s in self.out if id(s) not in self.dead]

    def statement(self, stmt: ast.stmt) -> None:
        self.out.append(stmt)
        if _is_marker(stmt):
            return
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _simple(stmt.value)):
            self.known.clear()
            self.unread.clear()
            return
        stmt.value = self.forward(stmt.value)
        for node in ast.walk(stmt.value):
            if isinstance(node, ast.Subscript):
                k = slot_of(node)
                if k is None:
                    self.unread.clear()  # reads S at an index not known here
                else:
                    self.unread.pop(k, None)
        target = stmt.targets[0]
        k = slot_of(target) if isinstance(target, ast.Subscript) else None
        if isinstance(target, ast.Name):
            self.known = {j: v for j, v in self.known.items()
                          if not (isinstance(v, ast.Name) and v.id == target.id)}
        elif k is None:  # a store that is not to one constant slot: forget everything
            self.known.clear()
            self.unread.clear()
        else:
            earlier = self.unread.get(k)
            if earlier is not None and _pure(earlier.value):
                self.dead.add(id(earlier))
            self.unread[k] = stmt
            value = stmt.value
            if isinstance(value, ast.Name) and value.id != "S" or isinstance(value, ast.Constant):
                self.known[k] = value
            else:
                self.known.pop(k, None)

    def forward(self, node: ast.expr) -> ast.expr:
        """node with its loads of known slots replaced by what they hold."""
        k = slot_of(node)
        if k is not None and k in self.known:
            return _copy_leaf(self.known[k])
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(node, field, self.forward(value))
            elif isinstance(value, list):
                setattr(node, field, [self.forward(v) if isinstance(v, ast.expr) else v
                                      for v in value])
        return node


def _expand(stmt: ast.stmt) -> list[ast.stmt]:
    """`S[a:b] = S[c:d]` (constant, same length, not overlapping) as one store per slot: a
    slice store costs as much as a dozen single ones (it builds two slice objects and a
    list), and single stores can then be forwarded."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return [stmt]
    dst, src = slice_bounds(stmt.targets[0]), slice_bounds(stmt.value)
    if dst is None or src is None or dst[1] - dst[0] != src[1] - src[0] \
            or dst[1] - dst[0] > EXPAND_MAX or not (dst[1] <= src[0] or src[1] <= dst[0]):
        return [stmt]
    return [ast.copy_location(ast.Assign([_slot_ref(dst[0] + i, ast.Store())],
                                         _slot_ref(src[0] + i, ast.Load())), stmt)
            for i in range(dst[1] - dst[0])]


def _simple(node: ast.expr) -> bool:
    """An expression without calls, attributes, comprehensions or other side effects."""
    return all(isinstance(n, _SIMPLE) for n in ast.walk(node))


_SIMPLE = (ast.Name, ast.Constant, ast.Subscript, ast.Slice, ast.BinOp, ast.UnaryOp,
           ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.expr_context, ast.operator,
           ast.unaryop, ast.boolop, ast.cmpop)


def _pure(node: ast.expr) -> bool:
    """Evaluating node cannot fail or have an effect: a local, a constant, a slot."""
    return isinstance(node, ast.Name | ast.Constant) or slot_of(node) is not None


def slot_of(node: ast.AST) -> int | None:
    """k for `S[k]` with a constant k."""
    if isinstance(node, ast.Subscript) and _is_s(node.value) \
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
        return node.slice.value
    return None


def slice_bounds(node: ast.AST) -> tuple[int, int] | None:
    """(lo, hi) for `S[lo:hi]` with constant bounds."""
    if not (isinstance(node, ast.Subscript) and _is_s(node.value)
            and isinstance(node.slice, ast.Slice) and node.slice.step is None):
        return None
    lo, hi = node.slice.lower, node.slice.upper
    if isinstance(lo, ast.Constant) and isinstance(hi, ast.Constant) \
            and type(lo.value) is int and type(hi.value) is int:
        return lo.value, hi.value
    return None


def _is_s(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "S"


def _is_marker(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _slot_ref(k: int, ctx: ast.expr_context) -> ast.Subscript:
    return ast.Subscript(ast.Name("S", ast.Load()), ast.Constant(k), ctx)


def _copy_leaf(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Name):
        return ast.Name(node.id, ast.Load())
    assert isinstance(node, ast.Constant)
    return ast.Constant(node.value)
