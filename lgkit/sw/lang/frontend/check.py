"""Name resolution and type checking: fills the ir's types, decls and call kinds (see ir.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.check_tables import TableChecker
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.frontend.diagnostics import MAX_ERRORS, Diagnostic, P4Error
from lgkit.sw.lang.frontend.scope import CheckError, Context, Scope, Silent, typevar_scope
from lgkit.sw.lang.frontend.typeops import same_type, substitute, type_str, unify


class Checker(TableChecker):
    """Checks one ir.Program in place: declarations, blocks and statements."""

    def run(self) -> None:
        for decl in self.program.decls:
            if len(self.diagnostics) >= MAX_ERRORS:
                break
            self._guard(decl, functools.partial(self.check_top, decl))
        if not self.diagnostics:
            self._guard(self.program, self.find_main)
        if self.diagnostics:
            raise P4Error(self.diagnostics[:MAX_ERRORS])

    def _guard(self, node: Any, action: Callable[[], None]) -> None:
        try:
            action()
        except CheckError as exc:
            self.diagnostics.append(Diagnostic(exc.loc, "error", exc.message))
            self.failed.add(id(node))
        except Silent:
            self.failed.add(id(node))
        except (P4Error, RecursionError):
            raise
        except Exception as exc:  # a checker bug must still give a located message
            loc = getattr(node, "loc", self.program.loc)
            message = f"internal error while checking this declaration: {type(exc).__name__}: {exc}"
            self.diagnostics.append(Diagnostic(loc, "error", message))
            self.failed.add(id(node))

    def check_top(self, decl: ir.Decl) -> None:
        if isinstance(decl, ir.TypeDecl):
            self.check_type_decl(decl, self.top)
        elif isinstance(decl, ir.ConstDecl):
            self.check_const(decl, self.top)
        elif isinstance(decl, ir.ExternDecl):
            self.check_extern(decl)
        elif isinstance(decl, ir.ActionDecl):
            with self.declared_after(decl, self.top):
                self.check_action(decl, self.top)
        elif isinstance(decl, ir.FunctionDecl):
            with self.declared_after(decl, self.top):
                self.check_function(decl)
        elif isinstance(decl, ir.ParserDecl):
            self.top.declare(decl.name, decl, decl.loc)
            self.check_parser(decl)
        elif isinstance(decl, ir.ControlDecl):
            self.top.declare(decl.name, decl, decl.loc)
            self.check_control(decl)
        elif isinstance(decl, ir.PackageDecl):
            self.top.declare(decl.name, decl, decl.loc)
            scope = typevar_scope(self.top, decl.type_params)
            self.check_params(decl.params, scope, declare_in=None)
        elif isinstance(decl, ir.InstanceDecl):
            self.check_instance(decl, self.top)
        else:
            raise self.fail(decl.loc, f"unsupported: declaration {type(decl).__name__}")

    def check_const(self, decl: ir.ConstDecl, scope: Scope) -> None:
        scope.declare(decl.name, decl, decl.loc)
        ctype = self.resolve_type(decl.type_ref, scope)
        if isinstance(ctype, (t.StructLikeT, t.TupleT, t.StackT)):
            raise self.fail(decl.loc, f"unsupported: constants of type {type_str(ctype)}")
        decl.init = self.convert(self.expr(decl.init, scope, ctype), ctype)
        value = const_value(decl.init)
        if value is None:
            raise self.fail(decl.init.loc, f"initializer of constant '{decl.name}' is not a "
                            "compile-time constant")
        decl.value = value

    def check_extern(self, decl: ir.ExternDecl) -> None:
        self.top.declare(decl.name, decl, decl.loc)
        if decl.function is not None:
            self.check_method(decl.function, typevar_scope(self.top, decl.type_params))
            return
        scope = typevar_scope(self.top, decl.type_params)
        for method in decl.methods:
            if method.ret is None and method.name != decl.name:
                raise self.fail(method.loc, f"constructor name '{method.name}' differs from "
                                f"extern '{decl.name}'")
            self.check_method(method, scope)

    def check_method(self, method: ir.ExternMethod, scope: Scope) -> None:
        inner = typevar_scope(scope, method.type_params)
        if method.ret is not None:
            self.resolve_type(method.ret, inner)
        self.check_params(method.params, inner, declare_in=None)

    def check_params(self, params: list[ir.Param], scope: Scope, declare_in: Scope | None) -> None:
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                raise self.fail(param.loc, f"duplicate parameter '{param.name}'")
            seen.add(param.name)
            ptype = self.resolve_type(param.type_ref, scope)
            if isinstance(ptype, t.VoidT):
                raise self.fail(param.loc, f"parameter '{param.name}' cannot be void")
            if param.default is not None:
                param.default = self.convert(self.expr(param.default, scope, ptype), ptype)
            if declare_in is not None:
                declare_in.declare(param.name, param, param.loc)

    def check_action(self, decl: ir.ActionDecl, scope: Scope) -> None:
        inner = Scope(scope)
        self.check_params(decl.params, inner, declare_in=inner)
        seen_directionless = False
        for param in decl.params:
            if param.direction == "":
                seen_directionless = True
            elif seen_directionless:
                raise self.fail(param.loc, "action parameters with a direction must come before "
                                "directionless ones")
        with self.context(Context("action")):
            self.block(decl.body, inner)

    def check_function(self, decl: ir.FunctionDecl) -> None:
        if decl.type_params:
            raise self.fail(decl.loc, "unsupported: generic functions")
        ret = self.resolve_type(decl.ret, self.top)
        inner = Scope(self.top)
        self.check_params(decl.params, inner, declare_in=inner)
        with self.context(Context("function", ret)):
            self.block(decl.body, inner)

    @contextmanager
    def declared_after(self, decl: ir.ActionDecl | ir.FunctionDecl, scope: Scope) -> Iterator[None]:
        """Declare an action or function after its body, as p4c does: a body cannot name its
        own callable, so recursion (which P4 forbids) is an undeclared name."""
        try:
            yield
        finally:
            scope.declare(decl.name, decl, decl.loc)

    @contextmanager
    def context(self, ctx: Context) -> Iterator[None]:
        saved, self.ctx = self.ctx, ctx
        try:
            yield
        finally:
            self.ctx = saved

    def check_block_params(self, decl: ir.ParserDecl | ir.ControlDecl) -> Scope:
        scope = typevar_scope(self.top, decl.type_params)
        self.check_params(decl.params, scope, declare_in=None if decl.is_type else scope)
        self.check_params(decl.ctor_params, scope, declare_in=None if decl.is_type else scope)
        return scope

    def check_parser(self, decl: ir.ParserDecl) -> None:
        scope = self.check_block_params(decl)
        if decl.is_type:
            return
        with self.context(Context("parser")):
            for local in decl.locals:
                self.local_decl(local, scope)
            names: set[str] = set()
            for state in decl.states:
                if state.name in names or state.name in ("accept", "reject"):
                    raise self.fail(state.loc, f"duplicate parser state '{state.name}'")
                names.add(state.name)
            if "start" not in names:
                raise self.fail(decl.loc, f"parser {decl.name} has no 'start' state")
            self.ctx.states = names | {"accept", "reject"}
            for state in decl.states:
                self.check_state(state, Scope(scope))

    def check_state(self, state: ir.ParserState, scope: Scope) -> None:
        for i, stmt in enumerate(state.stmts):
            state.stmts[i] = self.stmt(stmt, scope)
        transition = state.transition
        if isinstance(transition, str):
            self.check_state_name(transition, state.transition_loc or state.loc)
        elif isinstance(transition, ir.Select):
            self.check_select(transition, scope)

    def check_state_name(self, name: str, loc: ir.Loc) -> None:
        if name not in self.ctx.states:
            raise self.fail(loc, f"unknown parser state '{name}'")

    def check_control(self, decl: ir.ControlDecl) -> None:
        scope = self.check_block_params(decl)
        if decl.is_type:
            return
        with self.context(Context("control")):
            for local in decl.locals:
                self.local_decl(local, scope)
            assert decl.apply is not None
            self.block(decl.apply, scope)

    def local_decl(self, local: ir.Decl, scope: Scope) -> None:
        if isinstance(local, ir.VarDecl):
            self.var_decl(local, scope)
        elif isinstance(local, ir.ConstDecl):
            self.check_const(local, scope)
        elif isinstance(local, ir.InstanceDecl):
            self.check_instance(local, scope)
        elif isinstance(local, ir.ActionDecl):
            with self.declared_after(local, scope):
                self.check_action(local, scope)
        elif isinstance(local, ir.TableDecl):
            scope.declare(local.name, local, local.loc)
            self.check_table(local, scope)
        else:
            raise self.fail(local.loc, f"unsupported: local declaration {type(local).__name__}")

    def check_instance(self, decl: ir.InstanceDecl, scope: Scope) -> None:
        if decl.type_ref.name == "value_set":
            self.check_value_set(decl, scope)
            scope.declare(decl.name, decl, decl.loc)
            return
        itype = self.resolve_type(decl.type_ref, scope)
        target = self.lookup(scope, decl.type_ref.name, decl.type_ref.loc)
        if isinstance(itype, t.ExternT):
            ctors = [m for m in target.methods if m.ret is None]
            method = self.pick_overload(ctors, decl.args, decl.loc, f"constructor of {itype.name}")
            bindings = dict(zip(target.type_params, itype.type_args, strict=False))
            decl.args = self.bind_args(decl.args, method.params, bindings, decl.loc, itype.name,
                                       scope)
            self.check_implementations(decl, target, bindings, scope)
        elif isinstance(itype, t.BlockT) and isinstance(target, (ir.ParserDecl, ir.ControlDecl)):
            if target.is_type:
                raise self.fail(decl.loc, f"cannot instantiate {itype.kind} type {itype.name}")
            decl.args = self.bind_args(decl.args, target.ctor_params, {}, decl.loc, itype.name)
        elif isinstance(itype, t.BlockT) and isinstance(target, ir.PackageDecl):
            decl.args = self.package_args(decl, target, scope)
        else:
            raise self.fail(decl.loc, f"cannot instantiate {type_str(itype)}")
        if decl.methods and not isinstance(itype, t.ExternT):
            raise self.fail(decl.methods[0].loc, f"{decl.name}: only extern instances "
                            "implement abstract methods")
        scope.declare(decl.name, decl, decl.loc)

    def check_implementations(self, decl: ir.InstanceDecl, extern: ir.ExternDecl,
                              bindings: dict[str, t.P4Type], scope: Scope) -> None:
        """An extern instance implements each abstract method of its type, with the method's
        signature (trailing @optional parameters may be left out), and nothing else."""
        wanted = {m.name: m for m in extern.methods if m.abstract}
        given = {f.name for f in decl.methods}
        for name in wanted:
            if name not in given:
                raise self.fail(decl.loc, f"{decl.name} must implement the abstract method "
                                f"'{name}' of {extern.name}")
        for fn in decl.methods:
            method = wanted.pop(fn.name, None)
            if method is None:
                raise self.fail(fn.loc, f"'{fn.name}' is not an abstract method of {extern.name}")
            self.check_implementation(decl, fn, method, bindings, scope)

    def check_implementation(self, decl: ir.InstanceDecl, fn: ir.FunctionDecl,
                             method: ir.ExternMethod, bindings: dict[str, t.P4Type],
                             scope: Scope) -> None:
        """One abstract method's implementation; in its body `this` names the instance."""
        if fn.type_params:
            raise self.fail(fn.loc, "unsupported: generic abstract method implementations")
        ret = self.resolve_type(fn.ret, scope)
        assert method.ret is not None
        want_ret = substitute(self.resolve_type(method.ret, scope), bindings)
        if not same_type(ret, want_ret):
            raise self.fail(fn.loc, f"'{fn.name}' must return {type_str(want_ret)}")
        required = sum(1 for p in method.params if "optional" not in p.annotations)
        if not required <= len(fn.params) <= len(method.params):
            raise self.fail(fn.loc, f"'{fn.name}' takes {required} to {len(method.params)} "
                            f"parameters, not {len(fn.params)}")
        inner = Scope(scope)
        inner.declare("this", decl, fn.loc)
        self.check_params(fn.params, inner, declare_in=inner)
        for mine, theirs in zip(fn.params, method.params, strict=False):
            assert theirs.type_ref.resolved is not None
            want = substitute(theirs.type_ref.resolved, bindings)
            if mine.direction != theirs.direction or not same_type(mine.type_ref.resolved, want):
                raise self.fail(mine.loc, f"parameter '{mine.name}' of '{fn.name}' must be "
                                f"{theirs.direction} {type_str(want)}")
        with self.context(Context("function", ret)):
            self.block(fn.body, inner)

    def check_value_set(self, decl: ir.InstanceDecl, scope: Scope) -> None:
        """`value_set<T>(size) name;` in a parser: T is bit<W>, int<W>, a serializable enum or
        a struct of those (one field per select key)."""
        if self.ctx.kind != "parser":
            raise self.fail(decl.loc, "a value_set must be declared in a parser")
        if len(decl.type_ref.args) != 1 or len(decl.args) != 1:
            raise self.fail(decl.loc, "value_set takes one type argument and one size")
        elem = self.resolve_type(decl.type_ref.args[0], scope)
        fields = elem.fields if isinstance(elem, t.StructLikeT) and elem.kind == "struct" \
            else [("", elem)]
        for _, ft in fields:
            if not (isinstance(ft, t.BitsT) or (isinstance(ft, t.EnumT) and ft.underlying)):
                raise self.fail(decl.loc, f"value_set elements cannot have type "
                                f"{type_str(ft)}")
        size = self.const_int(decl.args[0].value, scope, "value_set size")
        if size < 1:
            raise self.fail(decl.args[0].loc, f"value_set size must be positive, not {size}")
        decl.type_ref.resolved = t.ValueSetT(elem, size)

    def package_args(
        self, decl: ir.InstanceDecl, package: ir.PackageDecl, scope: Scope
    ) -> list[ir.Argument]:
        bindings: dict[str, t.P4Type] = {}
        for tp, ref in zip(package.type_params, decl.type_ref.args, strict=False):
            assert ref.resolved is not None
            bindings[tp] = ref.resolved
        args = self.bind_args(decl.args, package.params, bindings, decl.loc, package.name,
                              check_value=self.package_arg)
        return args

    def package_arg(
        self, param: ir.Param, arg: ir.Expr, package_bindings: dict[str, t.P4Type], scope: Scope
    ) -> ir.Expr:
        """A package argument: a block whose parameters match the block type the package wants."""
        checked = self.expr(arg, scope, None)
        expected = self.lookup(self.top, param.type_ref.name, param.loc)
        if isinstance(expected, ir.PackageDecl):  # a package of packages (TNA's Switch)
            inst = checked.decl if isinstance(checked, ir.PathExpr) else None
            if not isinstance(inst, ir.InstanceDecl) or inst.type_ref.name != expected.name:
                raise self.fail(arg.loc, f"argument '{param.name}' must be a {expected.name} "
                                "instance")
            return checked
        block = self.block_of(checked)
        if block is None or not isinstance(block, type(expected)):
            kind = "parser" if isinstance(expected, ir.ParserDecl) else "control"
            raise self.fail(arg.loc, f"argument '{param.name}' must be a {kind}")
        required = sum(1 for p in expected.params if "optional" not in p.annotations)
        if not required <= len(block.params) <= len(expected.params):  # @optional: left out
            raise self.fail(arg.loc, f"{block.name} has {len(block.params)} parameters, but "
                            f"{expected.name} has {len(expected.params)}")
        # the block type's own type parameters, seeded from what the package already knows
        outer_names = [ref.name for ref in param.type_ref.args]
        local: dict[str, t.P4Type] = {}
        for inner, outer in zip(expected.type_params, outer_names, strict=False):
            if outer in package_bindings:
                local[inner] = package_bindings[outer]
        for mine, theirs in zip(block.params, expected.params, strict=False):
            if mine.direction != theirs.direction:
                raise self.fail(mine.loc, f"parameter '{mine.name}' of {block.name} must be "
                                f"{theirs.direction or 'directionless'} to match {expected.name}")
            assert mine.type_ref.resolved is not None and theirs.type_ref.resolved is not None
            if not unify(theirs.type_ref.resolved, mine.type_ref.resolved, local):
                want = substitute(theirs.type_ref.resolved, local)
                raise self.fail(mine.loc, f"parameter '{mine.name}' of {block.name} has type "
                                f"{type_str(mine.type_ref.resolved)}, expected {type_str(want)}")
        for inner, outer in zip(expected.type_params, outer_names, strict=False):
            if inner in local:
                package_bindings.setdefault(outer, local[inner])
        return checked

    def block_of(self, e: ir.Expr) -> ir.ParserDecl | ir.ControlDecl | None:
        if isinstance(e, ir.Call) and e.kind == ir.CallKind.CONSTRUCTOR:
            callee = e.callee
        elif isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.InstanceDecl):
            callee = self.top.lookup(e.decl.type_ref.name)
        else:
            return None
        return callee if isinstance(callee, (ir.ParserDecl, ir.ControlDecl)) else None

    def find_main(self) -> None:
        main = self.top.names.get("main")
        if not isinstance(main, ir.InstanceDecl):
            raise self.fail(self.program.loc, "program has no 'main' package instance")
        package = self.top.lookup(main.type_ref.name)
        if not isinstance(package, ir.PackageDecl):
            raise self.fail(main.loc, "'main' must be an instance of a package")
        self.program.main = main
        for param, arg in zip(package.params, main.args, strict=True):
            block = self.block_of(arg.value)
            if block is not None:
                self.program.blocks[param.name] = block

    def block(self, block: ir.Block, scope: Scope) -> None:
        inner = Scope(scope)
        for i, stmt in enumerate(block.stmts):
            block.stmts[i] = self.stmt(stmt, inner)

    def stmt(self, s: ir.Stmt, scope: Scope) -> ir.Stmt:
        if isinstance(s, ir.Assign):
            s.lhs = self.expr(s.lhs, scope, None)
            self.require_lvalue(s.lhs, "the left side of an assignment")
            assert s.lhs.type is not None
            rhs = s.rhs if s.op is None else ir.Binary(s.loc, s.op, s.lhs, s.rhs)
            s.rhs = self.convert(self.expr(rhs, scope, s.lhs.type), s.lhs.type)
        elif isinstance(s, ir.CallStmt):
            s.call = self.call(s.call, scope, None)
        elif isinstance(s, ir.If):
            s.cond = self.expect_bool(self.expr(s.cond, scope, t.BoolT()), "if condition")
            s.then = self.stmt(s.then, Scope(scope))
            if s.other is not None:
                s.other = self.stmt(s.other, Scope(scope))
        elif isinstance(s, ir.Block):
            self.block(s, scope)
        elif isinstance(s, ir.VarDecl):
            self.var_decl(s, scope)
        elif isinstance(s, ir.ConstDecl):
            self.check_const(s, scope)
        elif isinstance(s, ir.Switch):
            self.switch(s, scope)
        elif isinstance(s, ir.Return):
            self.return_stmt(s, scope)
        elif isinstance(s, ir.Exit):
            if self.ctx.kind == "parser":
                raise self.fail(s.loc, "exit is not allowed in a parser")
        elif isinstance(s, ir.For | ir.ForIn):
            self.for_stmt(s, scope)
        elif isinstance(s, ir.Break | ir.Continue):
            if not getattr(self, "loop_depth", 0):
                word = "break" if isinstance(s, ir.Break) else "continue"
                raise self.fail(s.loc, f"'{word}' outside a for loop")
        elif isinstance(s, ir.InstanceDecl):
            raise self.fail(s.loc, "unsupported: instantiation inside a block")
        elif not isinstance(s, ir.Empty):
            raise self.fail(s.loc, f"unsupported: statement {type(s).__name__}")
        return s

    def for_stmt(self, s: ir.For | ir.ForIn, scope: Scope) -> None:
        inner = Scope(scope)
        if isinstance(s, ir.For):
            s.init = [self.stmt(st, inner) for st in s.init]
            if s.cond is not None:
                s.cond = self.expect_bool(self.expr(s.cond, inner, t.BoolT()), "for condition")
            s.update = [self.stmt(st, inner) for st in s.update]
        elif s.hi is None:
            self.for_in_elements(s, scope)
            inner.declare(s.var.name, s.var, s.var.loc)
        else:
            vtype = self.resolve_type(s.var.type_ref, scope)
            if not isinstance(vtype, t.BitsT):
                raise self.fail(s.var.loc, "unsupported: for-in over a range of non-bit type")
            s.lo = self.convert(self.expr(s.lo, scope, vtype), vtype)
            s.hi = self.convert(self.expr(s.hi, scope, vtype), vtype)
            inner.declare(s.var.name, s.var, s.var.loc)
        self.loop_depth = getattr(self, "loop_depth", 0) + 1
        try:
            s.body = self.stmt(s.body, Scope(inner))
        finally:
            self.loop_depth -= 1

    def for_in_elements(self, s: ir.ForIn, scope: Scope) -> None:
        """`for (T x in e)`: e a header stack of T (p4c does not iterate over lists either)."""
        vtype = self.resolve_type(s.var.type_ref, scope)
        if isinstance(s.lo, ir.ListExpr):
            raise self.fail(s.lo.loc, "unsupported: for-in over a list")
        s.lo = self.expr(s.lo, scope, None)
        ctype = s.lo.type
        if not isinstance(ctype, t.StackT):
            raise self.fail(s.lo.loc, f"cannot iterate over a value of type {type_str(ctype)}")
        if ctype.elem is not vtype and ctype.elem != vtype:
            raise self.fail(s.var.loc, f"the loop variable has type {type_str(vtype)}, the "
                            f"stack's elements {type_str(ctype.elem)}")

    def var_decl(self, decl: ir.VarDecl, scope: Scope) -> None:
        vtype = self.resolve_type(decl.type_ref, scope)
        if isinstance(vtype, (t.VoidT, t.ExternT, t.BlockT, t.InfIntT, t.StringT)):
            raise self.fail(decl.loc, f"variable '{decl.name}' cannot have type {type_str(vtype)}")
        if decl.init is not None:
            decl.init = self.convert(self.expr(decl.init, scope, vtype), vtype)
        scope.declare(decl.name, decl, decl.loc)

    def return_stmt(self, s: ir.Return, scope: Scope) -> None:
        if self.ctx.kind == "parser":
            raise self.fail(s.loc, "return is not allowed in a parser")
        ret = self.ctx.ret
        if ret is None or isinstance(ret, t.VoidT):
            if s.value is not None:
                raise self.fail(s.loc, "return with a value outside a function returning one")
            return
        if s.value is None:
            raise self.fail(s.loc, f"return needs a value of type {type_str(ret)}")
        s.value = self.convert(self.expr(s.value, scope, ret), ret)

    def switch(self, s: ir.Switch, scope: Scope) -> None:
        s.expr = self.expr(s.expr, scope, None)
        stype = s.expr.type
        seen: set[Any] = set()
        table: ir.TableDecl | None = None
        if isinstance(stype, t.ApplyResultT):
            table = self.lookup(scope, stype.table, s.loc)
        if table is None and not isinstance(stype, (t.BitsT, t.EnumT)):
            raise self.fail(s.expr.loc, f"cannot switch on a value of type {type_str(stype)}")
        for i, case in enumerate(s.cases):
            label = case.labels[0]
            if isinstance(label, ir.DefaultKey):
                if i != len(s.cases) - 1:
                    raise self.fail(label.loc, "'default' must be the last switch label")
                label.type = stype
                key: Any = "default"
            elif table is not None:
                key = self.switch_action_label(label, table, scope)
            else:
                assert stype is not None
                case.labels[0] = label = self.convert(self.expr(label, scope, stype), stype)
                key = const_value(label)
                if key is None:
                    raise self.fail(label.loc, "switch label must be a compile-time constant")
            if key in seen:
                raise self.fail(label.loc, "duplicate switch label")
            seen.add(key)
            if case.body is not None:
                self.block(case.body, scope)

    def switch_action_label(self, label: ir.Expr, table: ir.TableDecl, scope: Scope) -> Any:
        if not isinstance(label, ir.PathExpr):
            raise self.fail(label.loc, "switch on action_run needs action names as labels")
        names = {ref.name: ref.decl for ref in table.actions}
        if label.name not in names:
            raise self.fail(label.loc, f"'{label.name}' is not an action of table {table.name}")
        label.decl = names[label.name]
        label.type = t.ApplyResultT(table.name)
        return label.name


def check_program(program: ir.Program) -> None:
    """Resolve and type-check the program in place; raises P4Error with the diagnostics."""
    Checker(program).run()
