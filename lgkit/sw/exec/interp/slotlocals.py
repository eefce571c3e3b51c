"""Slots that never carry a value from one function to another become Python locals.

The generated code keeps every P4 variable in the slot list S, including the locals and
parameter copies of sub-controls, actions and functions, which inlining leaves inside one
block function. A slot qualifies when, in every function of the module, each read of it comes
after a write of it in the same function on every path (so no value flows through it between
functions, passes or the v1model glue), it is not one of the slots the glue uses (`keep`:
headers, metadata, standard_metadata, field lists) and it is never in a slice. Each function
then keeps it in a local `_slotK` (a local costs less than a list subscript), and stores to a
slot that is never read are dropped. Only the functions that can run count: the entry points
(the blocks, the tables' actions, which tables call by reference) and the functions their code
names (inlined callees that nothing names any more are dead). A call that is given S may write
what any live function writes. The analysis covers loop-free functions (a `while` that ends in
`break` runs once); a slot a function with a loop uses stays in S, and the module is left alone
when S is indexed by a non-constant, aliased or used in a nested scope.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from lgkit.sw.exec.interp.peephole import drop_assignments, slice_bounds, slot_of


@dataclass(frozen=True)
class Outside:
    """What the code outside the generated module uses: slots (`kept`) and the functions it
    calls (`entries`: the blocks, the tables' actions)."""

    kept: frozenset[int]
    entries: frozenset[str]


class _GiveUp(Exception):
    pass


def localise(funcs: list[ast.FunctionDef], outside: Outside,
             loop_free: Callable[[ast.FunctionDef], bool]) -> int | None:
    """Rewrite the qualifying slots of the module's live functions as locals (module
    docstring); returns how many slots S then needs (the highest one that the live functions
    or the code outside use, plus one), or None when the module was left alone."""
    live = _live(funcs, outside.entries)
    survey = _Survey(outside.kept.__contains__, live)
    try:
        for fn in live:
            survey.function(fn, loop_free(fn))
    except _GiveUp:
        return None
    chosen = survey.used - survey.excluded
    unread = chosen - survey.read
    for fn in live:
        _Localise(chosen).visit(fn)
        fn.body = drop_assignments(fn.body, {_name(k) for k in unread}) or [ast.Pass()]
    return max((survey.used | survey.excluded) - chosen | outside.kept, default=-1) + 1


def _live(funcs: list[ast.FunctionDef], entries: frozenset[str]) -> list[ast.FunctionDef]:
    """The functions reachable from the entry points through the names their code uses."""
    by_name = {f.name: f for f in funcs}
    seen = set(entries) & set(by_name)
    todo = list(seen)
    while todo:
        for node in ast.walk(by_name[todo.pop()]):
            if isinstance(node, ast.Name) and node.id in by_name and node.id not in seen:
                seen.add(node.id)
                todo.append(node.id)
    return [f for f in funcs if f.name in seen]


def _name(k: int) -> str:
    return f"_slot{k}"


class _Survey:
    """Which constant slots are used, read, and read where no write of the same function
    surely came first (excluded)."""

    def __init__(self, keep: Callable[[int], bool], live: list[ast.FunctionDef]):
        self.keep = keep
        self.used: set[int] = set()
        self.read: set[int] = set()
        self.excluded: set[int] = set()
        self.names = {f.name for f in live}
        self.writes = {f.name: _written(f) for f in live}  # what a call may change
        self.wild = any(self.helper_call(f) for f in live)  # a helper given S: anything
        self.locals: set[str] = set()  # of the function being surveyed
        self.others: set[int] = set()  # the slots the other live functions write
        self.calls_any = self.calls_live = 0  # calls met so far that may write any slot, ...

    def function(self, fn: ast.FunctionDef, loop_free: bool) -> None:
        for node in ast.walk(fn):
            if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                          | ast.GeneratorExp | ast.FunctionDef | ast.ClassDef) \
                    and node is not fn and _mentions_s(node):
                raise _GiveUp
        slots = self.slots_of(fn.body)
        self.used |= slots
        if not loop_free:
            self.excluded |= slots
            return
        self.locals = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                       and isinstance(n.ctx, ast.Store)}
        self.others = set().union(*(w for name, w in self.writes.items() if name != fn.name))
        self.block(fn.body, set())

    def helper_call(self, fn: ast.FunctionDef) -> bool:
        """fn gives S to something that is not a function of the module (or a local)."""
        stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}
        return any(isinstance(n, ast.Call) and any(_is_s(a) for a in n.args)
                   and not (isinstance(n.func, ast.Name)
                            and (n.func.id in self.names or n.func.id in stored))
                   for n in ast.walk(fn))

    def after_calls(self, node: ast.AST, assigned: set[int]) -> set[int]:
        """assigned less what the calls in node (an expression, or a simple statement) that
        are given S may write: a live function (named, or held in a local: a table's action)
        writes its own slots; anything else (a runtime helper) may write any slot."""
        for n in _walk_expr(node):
            if not (isinstance(n, ast.Call) and any(_is_s(a) for a in n.args)):
                continue
            f = n.func
            if self.wild or not (isinstance(f, ast.Name)
                                 and (f.id in self.names or f.id in self.locals)):
                self.calls_any += 1
                return set()
            self.calls_live += 1
            assigned = assigned - self.others
        return assigned

    def slots_of(self, body: list[ast.stmt]) -> set[int]:
        """The constant slots body uses; the slots of constant slices are excluded."""
        found = set()
        for stmt in body:
            for node in ast.walk(stmt):
                if not (isinstance(node, ast.Subscript) and _is_s(node.value)):
                    continue
                k = slot_of(node)
                if k is not None:
                    found.add(k)
                    if self.keep(k):
                        self.excluded.add(k)
                    continue
                bounds = slice_bounds(node)
                if bounds is None:
                    raise _GiveUp  # a computed index: any slot may be read or written
                self.excluded.update(range(*bounds))
        return found

    def block(self, body: list[ast.stmt], assigned: set[int]) -> set[int]:
        for stmt in body:
            if isinstance(stmt, ast.If | ast.While | ast.Try):
                assigned = self.compound(stmt, assigned)
            else:
                assigned = self.simple(stmt, assigned)
        return assigned

    def compound(self, stmt: ast.If | ast.While | ast.Try, assigned: set[int]) -> set[int]:
        calls_any, calls_live = self.calls_any, self.calls_live
        if isinstance(stmt, ast.If | ast.While):
            assigned = self.after_calls(stmt.test, assigned)
            self.expression(stmt.test, assigned)
        if isinstance(stmt, ast.If):
            after = self.block(stmt.body, set(assigned)) & self.block(stmt.orelse, set(assigned))
        else:  # a one-pass loop or a try: what surely ran before it
            after = set(assigned)
            for sub in _bodies(stmt):
                self.block(sub, set(assigned))
        if self.calls_any > calls_any:  # a call inside may have written any slot
            return set()
        return after - self.others if self.calls_live > calls_live else after

    def simple(self, stmt: ast.stmt, assigned: set[int]) -> set[int]:
        if any(getattr(stmt, f, None) for f in ("body", "handlers", "orelse")):
            raise _GiveUp  # a compound statement the analysis does not follow (with, match)
        assigned = self.after_calls(stmt, assigned)  # (reads after a call see its writes)
        self.expression(stmt, assigned)
        for target in _targets(stmt):
            for node in ast.walk(target):
                k = slot_of(node)
                if k is not None and isinstance(node, ast.Subscript) \
                        and isinstance(node.ctx, ast.Store):
                    assigned = assigned | {k}
        return assigned

    def expression(self, node: ast.AST, assigned: set[int]) -> None:
        """Record the slot reads in node (not descending into nested statements)."""
        nodes = list(_walk_expr(node))
        fine = {id(n.value) for n in nodes if isinstance(n, ast.Subscript)}  # S[...]
        fine.update(id(a) for n in nodes if isinstance(n, ast.Call) for a in n.args)  # f(S)
        for n in nodes:
            if isinstance(n, ast.Subscript) and _is_s(n.value):
                k = slot_of(n)
                if k is None:
                    continue  # a constant slice: its slots are excluded (slots_of)
                if not isinstance(n.ctx, ast.Store) or isinstance(node, ast.AugAssign):
                    self.read.add(k)
                    if k not in assigned:
                        self.excluded.add(k)
            elif isinstance(n, ast.Name) and n.id == "S" and id(n) not in fine:
                raise _GiveUp  # S aliased or given away otherwise


def _walk_expr(node: ast.AST):  # noqa: ANN202 - a generator of nodes
    """The nodes of a statement's own expressions, or of an expression."""
    if isinstance(node, ast.expr):
        yield from ast.walk(node)
        return
    for field, value in ast.iter_fields(node):
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ast.expr):
                yield from ast.walk(v)


def _mentions_s(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "S" for n in ast.walk(node))


def _written(fn: ast.FunctionDef) -> set[int]:
    return {k for n in ast.walk(fn) if isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Store) and (k := slot_of(n)) is not None}


def _bodies(stmt: ast.While | ast.Try) -> list[list[ast.stmt]]:
    out = [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Try):
        out += [h.body for h in stmt.handlers] + [stmt.finalbody]
    return out


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        return [stmt.target]
    return []


def _is_s(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "S"


class _Localise(ast.NodeTransformer):
    def __init__(self, slots: set[int]):
        self.slots = slots

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:  # noqa: N802 - ast's names
        k = slot_of(node)
        if k is not None and k in self.slots:
            return ast.copy_location(ast.Name(_name(k), node.ctx), node)
        return self.generic_visit(node)
