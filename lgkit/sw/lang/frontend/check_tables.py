"""Checking tables (keys, actions, entries, properties) and keysets of selects and entries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.check_calls import CallChecker
from lgkit.sw.lang.frontend.scope import Scope
from lgkit.sw.lang.frontend.typeops import type_str

UNSUPPORTED_TABLE_PROPERTIES: dict[str, str] = {}
IMPLEMENTATIONS = ("action_profile", "action_selector")


class TableChecker(CallChecker):
    """Tables and keysets."""

    if TYPE_CHECKING:  # defined by Checker, the last class of the checker
        def check_state_name(self, name: str, loc: ir.Loc) -> None: ...

    def check_select(self, select: ir.Select, scope: Scope) -> None:
        select.keys = [self.expr(k, scope, None) for k in select.keys]
        key_types = [self.key_type(k) for k in select.keys]
        for case in select.cases:
            case.keyset = self.keyset_for(case.keyset, key_types, scope, "select")
            self.check_state_name(case.state, case.loc)

    def key_type(self, key: ir.Expr) -> t.P4Type:
        assert key.type is not None
        if isinstance(key.type, (t.BitsT, t.BoolT, t.EnumT, t.InfIntT)):
            return key.type
        raise self.fail(key.loc, f"cannot match on a value of type {type_str(key.type)}")

    def keyset_for(
        self, keyset: ir.Expr, key_types: list[t.P4Type], scope: Scope, what: str
    ) -> ir.Expr:
        if what == "select":
            value_set = self.value_set_keyset(keyset, key_types, scope)
            if value_set is not None:
                return value_set
        if isinstance(keyset, (ir.DefaultKey, ir.DontCare)):
            keyset.type = key_types[0] if len(key_types) == 1 else t.TupleT(tuple(key_types))
            return keyset
        if len(key_types) == 1:
            if isinstance(keyset, ir.ListExpr) and len(keyset.items) != 1:
                raise self.fail(keyset.loc, f"{what} keyset has {len(keyset.items)} values, "
                                "expected 1")
            return self.keyset_element(keyset, key_types[0], scope)
        if not isinstance(keyset, ir.ListExpr) or len(keyset.items) != len(key_types):
            count = len(keyset.items) if isinstance(keyset, ir.ListExpr) else 1
            raise self.fail(keyset.loc, f"{what} keyset has {count} values, expected "
                            f"{len(key_types)}")
        keyset.items = [
            self.keyset_element(e, kt, scope) for e, kt in zip(keyset.items, key_types, strict=True)
        ]
        keyset.type = t.TupleT(tuple(key_types))
        return keyset

    def keyset_element(self, e: ir.Expr, key_type: t.P4Type, scope: Scope) -> ir.Expr:
        if isinstance(e, (ir.DefaultKey, ir.DontCare)):
            e.type = key_type
            return e
        if isinstance(e, ir.Binary) and e.op in ("&&&", ".."):
            if not isinstance(key_type, (t.BitsT, t.InfIntT)):
                raise self.fail(e.loc, f"'{e.op}' needs a bit<W> or int<W> key, not "
                                f"{type_str(key_type)}")
            e.left = self.convert(self.expr(e.left, scope, key_type), key_type)
            e.right = self.convert(self.expr(e.right, scope, key_type), key_type)
            e.type = key_type
            return e
        return self.convert(self.expr(e, scope, key_type), key_type)

    def value_set_keyset(self, keyset: ir.Expr, key_types: list[t.P4Type],
                         scope: Scope) -> ir.Expr | None:
        """A select case naming a value set: its element type must be the key's type (one
        key) or a struct with one field per key, of the keys' types."""
        if not isinstance(keyset, ir.PathExpr):
            return None
        decl = scope.lookup(keyset.name)
        if not (isinstance(decl, ir.InstanceDecl) and decl.type_ref.name == "value_set"):
            return None
        vs = decl.type_ref.resolved
        assert isinstance(vs, t.ValueSetT)
        elem = vs.elem
        if isinstance(elem, t.StructLikeT):
            field_types = [ft for _, ft in elem.fields]
        else:
            field_types = [elem]
        if len(field_types) != len(key_types) or any(
                not _same_type(a, b) for a, b in zip(field_types, key_types, strict=True)):
            raise self.fail(keyset.loc, f"value_set {decl.name} holds {type_str(elem)}, which "
                            "does not match the select keys")
        keyset.decl = decl
        keyset.type = vs
        return keyset

    def check_table(self, table: ir.TableDecl, scope: Scope) -> None:
        key_types: list[t.P4Type] = []
        for key in table.keys:
            key.expr = self.expr(key.expr, scope, None)
            key_types.append(self.key_type(key.expr))
            if key.match_kind not in self.match_kind_type.members:
                raise self.fail(key.loc, f"unknown match kind '{key.match_kind}'")
        listed: list[ir.ActionDecl] = []
        for ref in table.actions:
            self.action_ref(ref, scope, bind_all=False)
            if ref.decl in listed:
                raise self.fail(ref.loc, f"action '{ref.name}' listed twice in table {table.name}")
            assert ref.decl is not None
            listed.append(ref.decl)
        if table.default_action is not None:
            self.action_ref(table.default_action, scope, bind_all=True)
            self.require_listed(table, table.default_action, listed)
        for entry in table.entries:
            self.check_entry(table, entry, key_types, listed, scope)
        if table.size is not None:
            size = self.const_int(table.size, scope, "table size")
            table.size = ir.IntLit(table.size.loc, size)
            table.size.type = t.InfIntT()
        for name, value in table.properties.items():
            table.properties[name] = self.table_property(name, value, scope)

    def require_listed(
        self, table: ir.TableDecl, ref: ir.ActionRef, listed: list[ir.ActionDecl]
    ) -> None:
        if ref.decl not in listed:
            raise self.fail(ref.loc, f"action '{ref.name}' is not in the actions of table "
                            f"{table.name}")

    def check_entry(
        self,
        table: ir.TableDecl,
        entry: ir.Entry,
        key_types: list[t.P4Type],
        listed: list[ir.ActionDecl],
        scope: Scope,
    ) -> None:
        if not key_types:
            raise self.fail(entry.loc, f"table {table.name} has entries but no key")
        if len(entry.keys) == 1 and isinstance(entry.keys[0], (ir.DefaultKey, ir.DontCare)):
            entry.keys = [type(entry.keys[0])(entry.keys[0].loc) for _ in key_types]
        if len(entry.keys) != len(key_types):
            raise self.fail(entry.loc, f"entry has {len(entry.keys)} keys, table {table.name} "
                            f"has {len(key_types)}")
        entry.keys = [
            self.keyset_element(k, kt, scope) for k, kt in zip(entry.keys, key_types, strict=True)
        ]
        self.action_ref(entry.action, scope, bind_all=True)
        self.require_listed(table, entry.action, listed)
        if entry.priority is not None:
            value = self.const_int(entry.priority, scope, "entry priority")
            entry.priority = ir.IntLit(entry.priority.loc, value)
            entry.priority.type = t.InfIntT()

    def action_ref(self, ref: ir.ActionRef, scope: Scope, bind_all: bool) -> None:
        """An action in a table: actions lists bind only directional parameters (a prefix);
        default actions and entries bind every parameter."""
        decl = self.lookup(scope, ref.name, ref.loc)
        if not isinstance(decl, ir.ActionDecl):
            raise self.fail(ref.loc, f"'{ref.name}' is not an action")
        ref.decl = decl
        if bind_all:
            ref.args = self.bind_args(ref.args, decl.params, {}, ref.loc, ref.name, scope=scope)
            return
        directional = [p for p in decl.params if p.direction != ""]
        if len(ref.args) > len(directional):
            raise self.fail(ref.loc, f"too many arguments for action '{ref.name}' in an "
                            "actions list")
        ref.args = self.bind_args(ref.args, decl.params[: len(ref.args)], {}, ref.loc, ref.name,
                                  scope=scope)

    def table_property(self, name: str, value: ir.Expr, scope: Scope) -> ir.Expr:
        if name in UNSUPPORTED_TABLE_PROPERTIES:
            raise self.fail(value.loc, f"unsupported: {UNSUPPORTED_TABLE_PROPERTIES[name]}")
        checked = self.expr(value, scope, None)
        if name in ("counters", "meters"):
            want = "direct_counter" if name == "counters" else "direct_meter"
            tna = "DirectCounter" if name == "counters" else "DirectMeter"  # tna.p4's
            decl = checked.decl if isinstance(checked, ir.PathExpr) else None
            if not isinstance(decl, ir.InstanceDecl) or decl.type_ref.name not in (want, tna):
                raise self.fail(value.loc, f"table property '{name}' must name a {want} instance")
        if name == "implementation":
            decl = checked.decl if isinstance(checked, ir.PathExpr) else None
            if not isinstance(decl, ir.InstanceDecl) or decl.type_ref.name not in IMPLEMENTATIONS:
                raise self.fail(value.loc, "unsupported: a table implementation that is not the "
                                "name of an action_profile or action_selector instance")
        return checked


def _same_type(a: t.P4Type, b: t.P4Type) -> bool:
    return a is b or a == b
