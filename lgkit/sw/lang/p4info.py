"""P4Info generation from the checked IR: names, aliases and ids exactly as p4c assigns them."""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from finsy.proto import p4i, p4t
from google.protobuf import text_format

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.tna_p4info import (
    TNA_DIGEST,
    TNA_DIRECT_COUNTER,
    TNA_DIRECT_REGISTER,
    TNA_EXTERNS,
    TNA_METER,
    TNA_PORT_METADATA,
    TNA_REGISTER,
    TNA_VALUE_SET,
    add_extern,
    counter_info,
    digest_info,
    direct_counter_info,
    direct_register_info,
    meter_info,
    pipeline_name,
    port_metadata_info,
    register_info,
    value_set_info,
)

# P4Ids prefixes (p4info.proto).
ACTION, TABLE, VALUE_SET, CONTROLLER_HEADER = 0x01, 0x02, 0x03, 0x04
ACTION_PROFILE = 0x11
COUNTER, DIRECT_COUNTER, METER, DIRECT_METER, REGISTER, DIGEST = 0x12, 0x13, 0x14, 0x15, 0x16, 0x17
DIRECT_PROPERTIES = ("counters", "meters", "registers")  # direct resources (TNA: registers)
DEFAULT_TABLE_SIZE = 1024
TNA_DEFAULT_TABLE_SIZE = 512  # what bf-p4c's P4Info gives a TNA table without `size`
MATCH_TYPES = {
    "exact": p4i.MatchField.EXACT,
    "lpm": p4i.MatchField.LPM,
    "ternary": p4i.MatchField.TERNARY,
    "range": p4i.MatchField.RANGE,
    "optional": p4i.MatchField.OPTIONAL,
}
V1SWITCH_ORDER = ["p", "vr", "ig", "eg", "ck", "dep"]
HIDDEN_FROM_P4INFO = {"name", "id", "brief", "description"}
PKGINFO_PAIR = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


NOACTION_DECL = re.compile(r"([^;}]*)\baction\s+NoAction\b")


@functools.cache
def noaction_is_corelib() -> bool:
    """Whether P4Info annotates NoAction with @corelib. p4c 1.2.5.16 does not, current p4c does
    (and our core.p4 follows it). The installed p4c decides, through its core.p4
    (<prefix>/share/p4c/p4include/core.p4 of the p4c-bm2-ss or p4c on PATH); without p4c, ours."""
    for program in ("p4c-bm2-ss", "p4c"):
        found = shutil.which(program)
        if found is None:
            continue
        core = Path(found).resolve().parents[1] / "share" / "p4c" / "p4include" / "core.p4"
        match = NOACTION_DECL.search(core.read_text()) if core.is_file() else None
        if match is not None:
            return "@corelib" in match.group(1)
    return True


def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash over the UTF-8 bytes of `name` (32 bits)."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


class SymbolTable:
    """Control-plane names per resource kind, their ids (hash + probing) and aliases."""

    def __init__(self) -> None:
        self.symbols: dict[int, dict[str, int | None]] = {}
        self.assigned: set[int] = set()
        self.suffix_counts: dict[tuple[str, ...], int] = {}
        self.names: set[str] = set()

    def add(self, kind: int, name: str, user_id: int | None = None) -> None:
        table = self.symbols.setdefault(kind, {})
        if name in table:
            return
        if user_id is not None:
            top = user_id & 0xFF000000
            if top and top != kind << 24:
                raise P4InfoError(f"@id {user_id:#x} of '{name}' has the wrong 8-bit prefix")
            user_id |= kind << 24
            if user_id in self.assigned:
                raise P4InfoError(f"@id {user_id} is assigned to multiple declarations")
            self.assigned.add(user_id)
        table[name] = user_id
        self._add_suffixes(name)

    def _add_suffixes(self, name: str) -> None:
        if name in self.names:
            return
        self.names.add(name)
        parts = tuple(name.split("."))
        for n in range(1, len(parts) + 1):
            key = parts[-n:]
            self.suffix_counts[key] = self.suffix_counts.get(key, 0) + 1

    def compute_ids(self) -> None:
        for kind in sorted(self.symbols):
            table = self.symbols[kind]
            for name in sorted((n for n, i in table.items() if i is None), key=str.encode):
                h = jenkins_hash(name)
                while (kind << 24) | (h & 0xFFFFFF) in self.assigned:
                    h += 1
                ident = (kind << 24) | (h & 0xFFFFFF)
                table[name] = ident
                self.assigned.add(ident)

    def id(self, kind: int, name: str) -> int:
        value = self.symbols[kind][name]
        assert value is not None
        return value

    def alias(self, name: str) -> str:
        parts = tuple(name.split("."))
        for n in range(1, len(parts) + 1):
            if self.suffix_counts.get(parts[-n:], 0) < 2:
                return ".".join(parts[-n:])
        return name


class P4InfoError(Exception):
    """The program cannot be described in P4Info (p4c rejects it too)."""


# --------------------------------------------------------------------------- annotations


SELECTOR_ANNOTATIONS = {"max_group_size", "selector_size_semantics", "max_member_weight"}
"Annotations of an action selector that p4c turns into P4Info fields (dropped elsewhere)."


def set_selector_sizes(msg: p4i.ActionProfile, anns: ir.Annotations) -> None:
    """max_group_size and the selector size semantics from a selector's annotations, as p4c
    (@max_member_weight counts only with "sum_of_members")."""
    max_group = annotation_int(anns.get("max_group_size", []))
    if max_group:
        msg.max_group_size = max_group
    semantics = annotation_string(anns.get("selector_size_semantics", []))
    if semantics == "sum_of_weights":
        msg.sum_of_weights.SetInParent()
    elif semantics == "sum_of_members":
        msg.sum_of_members.SetInParent()
        weight = annotation_int(anns.get("max_member_weight", []))
        if weight:
            msg.sum_of_members.max_member_weight = weight


def annotation_string(args: list[str]) -> str | None:
    """The string literal argument of an annotation like @name("x"), unquoted."""
    if len(args) != 1:
        return None
    text = args[0].strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return None


def annotation_int(args: list[str]) -> int | None:
    if not args:
        return None
    try:
        return int(" ".join(args).strip().replace("_", ""), 0)
    except ValueError:
        return None


def render_annotation(name: str, args: list[str]) -> str:
    """An annotation as P4 source text, as p4c writes it into P4Info."""
    if not args:
        return f"@{name}"
    return f"@{name}({', '.join(a.strip() for a in args)})"


def annotation_texts(
    annotations: ir.Annotations, skip: AbstractSet[str] = frozenset()
) -> list[str]:
    return [
        render_annotation(name, args)
        for name, args in annotations.items()
        if name not in HIDDEN_FROM_P4INFO and name not in skip
    ]


def set_doc(message: object, annotations: ir.Annotations) -> None:
    brief = annotation_string(annotations.get("brief", []))
    description = annotation_string(annotations.get("description", []))
    if brief is not None:
        message.doc.brief = brief  # type: ignore[attr-defined]
    if description is not None:
        message.doc.description = description  # type: ignore[attr-defined]


def set_preamble(
    pre: p4i.Preamble, ident: int, name: str, alias: str, anns: ir.Annotations
) -> None:
    pre.id = ident
    pre.name = name
    pre.alias = alias
    pre.annotations.extend(annotation_texts(anns))
    set_doc(pre, anns)


def is_hidden(annotations: ir.Annotations) -> bool:
    return "hidden" in annotations


# --------------------------------------------------------------------------- IR walking


def walk(node: object) -> Iterator[object]:
    """Every IR node under `node` (itself included), in field order (iteratively: any depth)."""
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
            continue
        if not isinstance(item, ir.Node):
            continue
        yield item
        children = [getattr(item, f.name) for f in dataclasses.fields(item)
                    if f.name not in ("decl", "callee", "type", "resolved", "loc")]
        stack.extend(reversed([c for c in children if isinstance(c, ir.Node | list | tuple)]))


def referenced_names(node: object) -> list[str]:
    """Names used by PathExprs and ActionRefs under `node`, in traversal order."""
    names: list[str] = []
    for n in walk(node):
        if isinstance(n, ir.PathExpr):
            names.append(n.name)
        elif isinstance(n, ir.ActionRef):
            names.append(n.name)
    return names


def local_name(decl: ir.Decl, prefix: str) -> str:
    """controlPlaneName: @name (absolute with a leading '.') or the declared name, under prefix."""
    given = annotation_string(decl.annotations.get("name", []))
    if given is not None and given.startswith("."):
        return given[1:]
    base = given if given is not None else decl.name
    return f"{prefix}.{base}" if prefix else base


def user_id(decl: ir.Decl | ir.KeyElement) -> int | None:
    args = decl.annotations.get("id")
    return None if args is None else annotation_int(args)


def strip_implicit(expr: ir.Expr) -> ir.Expr:
    while isinstance(expr, ir.Cast) and isinstance(expr.expr, ir.IntLit):
        expr = expr.expr
    return expr


def key_name(key: ir.KeyElement) -> str:
    """The match field name: @name, else the name p4c derives from the key expression."""
    given = annotation_string(key.annotations.get("name", []))
    if given is not None:
        return given
    name = expr_key_name(key.expr)
    if name is None:
        raise P4InfoError(f"{key.loc}: complex key expression requires a @name annotation")
    return name


def expr_key_name(expr: ir.Expr) -> str | None:
    expr = strip_implicit(expr)
    if isinstance(expr, ir.PathExpr):
        return expr.name
    if isinstance(expr, ir.Member):
        return member_key_name(expr)
    if isinstance(expr, ir.Index):
        left, right = expr_key_name(expr.expr), expr_key_name(expr.index)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(expr, ir.IntLit):
        return str(expr.value)
    if isinstance(expr, ir.Slice):
        inner = expr_key_name(expr.expr)
        return None if inner is None else f"{inner}[{expr.hi}:{expr.lo}]"
    if isinstance(expr, ir.Binary) and expr.op == "&":
        left, right = expr_key_name(expr.left), expr_key_name(expr.right)
        return None if left is None or right is None else f"{left} & {right}"
    if isinstance(expr, ir.Call) and not expr.args and isinstance(expr.target, ir.Member):
        if expr.target.name == "isValid":
            base = expr_key_name(expr.target.expr)
            return None if base is None else f"{base}.$valid$"
    return None


def member_key_name(expr: ir.Member) -> str | None:
    fname = expr.name
    owner = expr.expr.type
    if isinstance(owner, t.StructLikeT):
        given = annotation_string(owner.field_annotations.get(fname, {}).get("name", []))
        if given is not None:
            if given.startswith("."):
                return given[1:]
            fname = given
    base = expr_key_name(expr.expr)
    return None if base is None else f"{base}.{fname}"


def type_width(ty: t.P4Type | None) -> int:
    """Bit width P4Info reports: 0 for error, plain enums and types without a fixed width."""
    try:
        return 0 if ty is None else t.width_of(ty)
    except TypeError:
        return 0


# --------------------------------------------------------------------------- program model


@dataclass
class Scope:
    """Declarations visible in a control: its locals over the program's top level."""

    top: dict[str, ir.Decl]
    local: dict[str, ir.Decl] = field(default_factory=dict)

    def find(self, name: str) -> ir.Decl | None:
        name = name.lstrip(".")
        return self.local.get(name) or self.top.get(name)


@dataclass
class ActionInfo:
    decl: ir.ActionDecl
    name: str


@dataclass
class TableInfo:
    decl: ir.TableDecl
    name: str
    scope: Scope
    prefix: str


@dataclass
class InstanceInfo:
    decl: ir.InstanceDecl
    name: str
    extern: str


@dataclass
class ProgramModel:
    """What P4Info describes, in p4c's order."""

    actions: list[ActionInfo] = field(default_factory=list)
    tables: list[TableInfo] = field(default_factory=list)
    instances: list[InstanceInfo] = field(default_factory=list)
    digests: list[tuple[str, t.P4Type, ir.Annotations]] = field(default_factory=list)
    controller_headers: list[ir.TypeDecl] = field(default_factory=list)
    value_sets: list[InstanceInfo] = field(default_factory=list)
    calls_extern_function: bool = False
    "A control calls an extern function (mark_to_drop, clone, hash, digest, ...)."
    object_prefix: str = ""
    "Before table and extern instance names: TNA's Pipeline instance (`pipe.`), as bf-p4c."
    port_metadata: tuple[str, str, t.P4Type | None] | None = None
    "TNA: the ingress parser's `$PORT_METADATA` (name, key name, port_metadata_unpack's type)."


def top_level(program: ir.Program) -> dict[str, ir.Decl]:
    result: dict[str, ir.Decl] = {}
    for decl in program.decls:
        if isinstance(decl, ir.ParserDecl | ir.ControlDecl) and decl.is_type:
            result.setdefault(decl.name, decl)
        else:
            result[decl.name] = decl
    return result


def block_of(expr: ir.Expr, top: dict[str, ir.Decl]) -> ir.Decl | None:
    """The parser/control declaration a package argument instantiates."""
    if isinstance(expr, ir.Call):
        expr = expr.target
    if isinstance(expr, ir.Cast):
        expr = expr.expr
    if not isinstance(expr, ir.PathExpr):
        return None
    decl = top.get(expr.name)
    if isinstance(decl, ir.InstanceDecl):
        decl = top.get(decl.type_ref.name)
    return decl


def main_blocks(program: ir.Program, top: dict[str, ir.Decl]) -> list[ir.Decl]:
    main = program.main or top.get("main")
    if not isinstance(main, ir.InstanceDecl):
        return []
    package = top.get(main.type_ref.name)
    names = [p.name for p in package.params] if isinstance(package, ir.PackageDecl) else []
    if not names:
        names = V1SWITCH_ORDER
    by_param: dict[str, ir.Expr] = {}
    for index, arg in enumerate(main.args):
        key = arg.name if arg.name is not None else (names[index] if index < len(names) else "")
        by_param[key] = arg.value
    blocks = []
    for name in names:
        if name in by_param:
            blocks.extend(_blocks_of(by_param[name], top))
    return blocks


def _blocks_of(expr: ir.Expr, top: dict[str, ir.Decl]) -> list[ir.Decl]:
    """The blocks a package argument instantiates: one, or a package instance's (TNA's
    `Switch(pipe)`, `pipe` a Pipeline of six blocks)."""
    decl = block_of(expr, top)
    if not isinstance(decl, ir.PackageDecl):
        return [decl] if decl is not None else []
    inst = top.get(expr.name) if isinstance(expr, ir.PathExpr) else None
    if not isinstance(inst, ir.InstanceDecl):
        return []
    return [b for arg in inst.args for b in _blocks_of(arg.value, top)]


def pipeline_prefix(program: ir.Program, top: dict[str, ir.Decl]) -> str:
    """`pipe.` for TNA's `Switch(pipe)` (bf-p4c names tables and externs after the Pipeline
    instance); empty otherwise."""
    main = program.main or top.get("main")
    if not isinstance(main, ir.InstanceDecl) or main.type_ref.name != "Switch" or not main.args:
        return ""
    arg = main.args[0].value
    return f"{arg.name}." if isinstance(arg, ir.PathExpr) else ""


def extern_type_name(decl: ir.InstanceDecl, top: dict[str, ir.Decl]) -> str | None:
    target = top.get(decl.type_ref.name)
    return decl.type_ref.name if isinstance(target, ir.ExternDecl) else None


class ModelBuilder:
    """Collects control-plane objects the way p4c's frontend + serializer see them."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.top = top_level(program)
        self.model = ProgramModel(object_prefix=pipeline_prefix(program, self.top))
        self.seen_actions: set[str] = set()

    def build(self) -> ProgramModel:
        # p4c walks the top-level block first: global extern instances precede control ones
        for decl in self.program.decls:
            if isinstance(decl, ir.InstanceDecl) and decl is not self.program.main:
                extern = extern_type_name(decl, self.top)
                if extern is not None:
                    info = InstanceInfo(decl, local_name(decl, ""), extern)
                    self.model.instances.append(info)
        for block in main_blocks(self.program, self.top):
            if isinstance(block, ir.ControlDecl):
                self.visit_control(block, block.name)
            elif isinstance(block, ir.ParserDecl):
                if self.model.object_prefix and self.model.port_metadata is None:
                    self.model.port_metadata = self.port_metadata(block)
                self.visit_parser(block, block.name)
        for decl in self.program.decls:
            if isinstance(decl, ir.TypeDecl) and decl.kind == "header":
                if "controller_header" in decl.annotations and not is_hidden(decl.annotations):
                    self.model.controller_headers.append(decl)
        return self.model

    def visit_control(self, control: ir.ControlDecl, prefix: str) -> None:
        """Adds the control's objects; nested control instances are inlined in place, their
        objects named after the instance path (ingress.c.t), as p4c names them."""
        scope = Scope(self.top, {d.name: d for d in control.locals})
        used = self.used_locals(control, scope)
        objects = self.model.object_prefix + prefix
        for action in self.used_global_actions(control, scope, used):
            self.add_action(action, local_name(action, ""))
        own = {id(d): d for d in self.own_actions(control, used)}
        tna = bool(self.model.object_prefix)
        if not tna:  # p4c lists the control's actions first, bf-p4c in declaration order
            for action in own.values():
                self.add_action(action, local_name(action, prefix))
        for decl in control.locals:
            if tna and isinstance(decl, ir.ActionDecl) and id(decl) in own:
                self.add_action(decl, local_name(decl, prefix))
            elif isinstance(decl, ir.TableDecl) and decl.name in used:
                self.model.tables.append(TableInfo(decl, local_name(decl, objects), scope, prefix))
                if tna:
                    self.add_direct_counter(decl, scope, objects)
            elif isinstance(decl, ir.InstanceDecl):
                extern = extern_type_name(decl, self.top)
                if tna and extern == "DirectCounter":
                    continue  # bf-p4c lists it where its table is
                if extern is not None:
                    info = InstanceInfo(decl, local_name(decl, objects), extern)
                    self.model.instances.append(info)
                elif decl.name in used:
                    nested = self.top.get(decl.type_ref.name)
                    if isinstance(nested, ir.ControlDecl):
                        self.visit_control(nested, local_name(decl, prefix))
        self.collect_digests(control, used)

    def add_direct_counter(self, table: ir.TableDecl, scope: Scope, objects: str) -> None:
        ref = table.properties.get("counters")
        target = scope.find(ref.name) if isinstance(ref, ir.PathExpr) else None
        if isinstance(target, ir.InstanceDecl):
            name = local_name(target, objects)
            self.model.instances.append(InstanceInfo(target, name, "DirectCounter"))

    def own_actions(self, control: ir.ControlDecl, used: set[str]) -> list[ir.ActionDecl]:
        """The control's actions P4Info lists: the used ones; for TNA not those only other
        actions call (bf-p4c inlines them and does not list them)."""
        own = [d for d in control.locals if isinstance(d, ir.ActionDecl) and d.name in used]
        if not self.model.object_prefix:
            return own
        direct = set(referenced_names(control.apply)) | {
            ref.name for d in control.locals if isinstance(d, ir.TableDecl) and d.name in used
            for ref in d.actions}
        return [d for d in own if d.name in direct]

    def port_metadata(self, parser: ir.ParserDecl) -> tuple[str, str, t.P4Type | None]:
        """bf-p4c's `$PORT_METADATA` of a TNA ingress parser: keyed by its intrinsic metadata
        parameter, of the type its port_metadata_unpack<T> reads (none: no type)."""
        key = next((p.name for p in parser.params
                    if p.type_ref.name == "ingress_intrinsic_metadata_t"), "")
        unpacked = next((node.type for node in walk(parser)
                         if isinstance(node, ir.Call) and isinstance(node.target, ir.PathExpr)
                         and node.target.name == "port_metadata_unpack"), None)
        return f"{self.model.object_prefix}{parser.name}.$PORT_METADATA", key, unpacked

    def visit_parser(self, parser: ir.ParserDecl, prefix: str) -> None:
        """A parser's value sets, and those of the sub-parsers it instantiates."""
        for decl in parser.locals:
            if not isinstance(decl, ir.InstanceDecl):
                continue
            if decl.type_ref.name == "value_set":
                name = local_name(decl, self.model.object_prefix + prefix)
                self.model.value_sets.append(InstanceInfo(decl, name, "value_set"))
            elif isinstance(nested := self.top.get(decl.type_ref.name), ir.ParserDecl):
                self.visit_parser(nested, local_name(decl, prefix))

    def used_locals(self, control: ir.ControlDecl, scope: Scope) -> set[str]:
        """Local names still used after p4c's repeated removal of unused declarations."""
        locals_by_name = {d.name: d for d in control.locals}
        used: set[str] = set()
        pending = [n for n in referenced_names(control.apply) if n in locals_by_name]
        while pending:
            name = pending.pop()
            if name in used:
                continue
            used.add(name)
            decl = locals_by_name[name]
            pending.extend(n for n in self.references_of(decl) if n in locals_by_name)
        return used

    def references_of(self, decl: ir.Decl) -> list[str]:
        names = referenced_names(decl)
        if isinstance(decl, ir.TableDecl) and decl.default_action is None:
            names.append("NoAction")
        return names

    def used_global_actions(
        self, control: ir.ControlDecl, scope: Scope, used: set[str]
    ) -> list[ir.ActionDecl]:
        """Global actions the control uses, in order of first reference. p4c inlines nested
        control instances in place before it localizes global actions at the top of the
        control, so theirs count where the instance is declared."""
        found: list[ir.ActionDecl] = []
        sources: list[object] = [d for d in control.locals if d.name in used]
        sources.append(control.apply)
        for source in sources:
            nested = self.nested_control(source)
            if nested is not None:
                inner = Scope(self.top, {d.name: d for d in nested.locals})
                for action in self.used_global_actions(nested, inner,
                                                       self.used_locals(nested, inner)):
                    if action not in found:
                        found.append(action)
                continue
            names = (
                self.references_of(source)
                if isinstance(source, ir.Decl)
                else (referenced_names(source))
            )
            for name in names:
                if name.lstrip(".") in scope.local and not name.startswith("."):
                    continue
                decl = self.top.get(name.lstrip("."))
                if isinstance(decl, ir.ActionDecl) and decl not in found:
                    found.append(decl)
        return found

    def nested_control(self, source: object) -> ir.ControlDecl | None:
        """The control a local instance declaration instantiates, if it is one."""
        if not isinstance(source, ir.InstanceDecl) or extern_type_name(source, self.top):
            return None
        nested = self.top.get(source.type_ref.name)
        return nested if isinstance(nested, ir.ControlDecl) else None

    def add_action(self, decl: ir.ActionDecl, name: str) -> None:
        if is_hidden(decl.annotations) or name in self.seen_actions:
            return
        self.seen_actions.add(name)
        self.model.actions.append(ActionInfo(decl, name))

    def calls_extern_function(self, sources: list[object], seen: set[int]) -> bool:
        """True if `sources` (or a function they call; p4c inlines those) call an extern
        function."""
        for node in walk(sources):
            if not isinstance(node, ir.Call):
                continue
            if node.kind is ir.CallKind.EXTERN_FUNCTION:
                return True
            body = node.callee if node.kind is ir.CallKind.FUNCTION else None
            if isinstance(body, ir.FunctionDecl) and id(body) not in seen:
                seen.add(id(body))
                if self.calls_extern_function([body.body], seen):
                    return True
        return False

    def collect_digests(self, control: ir.ControlDecl, used: set[str]) -> None:
        sources: list[object] = [
            d for d in control.locals if isinstance(d, ir.ActionDecl) and d.name in used
        ]
        sources.append(control.apply)
        if self.calls_extern_function(sources, set()):
            self.model.calls_extern_function = True
        for node in walk(sources):
            if not isinstance(node, ir.Call) or not isinstance(node.target, ir.PathExpr):
                continue
            if node.target.name != "digest" or len(node.args) != 2:
                continue
            data_type = node.args[1].value.type
            if node.type_args and node.type_args[0].resolved is not None:
                data_type = node.type_args[0].resolved
            if not isinstance(data_type, t.StructLikeT):
                raise P4InfoError(f"{node.loc}: digest data must be a struct for P4Info")
            decl = self.top.get(data_type.name)
            anns = decl.annotations if isinstance(decl, ir.Decl) else {}
            name = local_name(decl, "") if isinstance(decl, ir.Decl) else data_type.name
            if all(existing != name for existing, _, _ in self.model.digests):
                self.model.digests.append((name, data_type, anns))


# --------------------------------------------------------------------------- type specs


class TypeSpecs:
    """Converts types to P4DataTypeSpec, filling P4TypeInfo like p4c's TypeSpecConverter."""

    def __init__(self, info: p4t.P4TypeInfo, top: dict[str, ir.Decl]) -> None:
        self.info = info
        self.top = top

    def spec(self, ty: t.P4Type, written: ir.TypeRef | None = None) -> p4t.P4DataTypeSpec:
        out = p4t.P4DataTypeSpec()
        newtype = self.newtype_decl(written)
        if newtype is not None:
            out.new_type.name = newtype.name
            self.add_newtype(newtype, ty)
        elif isinstance(ty, t.BitsT):
            target = out.bitstring.int if ty.signed else out.bitstring.bit
            target.bitwidth = ty.width
        elif isinstance(ty, t.VarbitT):
            out.bitstring.varbit.max_bitwidth = ty.max_width
        elif isinstance(ty, t.BoolT):
            out.bool.SetInParent()
        elif isinstance(ty, t.StructLikeT):
            self.struct_like(out, ty)
        elif isinstance(ty, t.EnumT) and ty.underlying is not None:
            out.serializable_enum.name = ty.name
            self.add_serializable_enum(ty)
        elif isinstance(ty, t.EnumT) and ty.name == "error":
            out.error.SetInParent()
            if not self.info.HasField("error"):
                self.info.error.members.extend(ty.members)
        elif isinstance(ty, t.EnumT):
            out.enum.name = ty.name
            self.info.enums[ty.name].members.extend(
                p4t.P4EnumTypeSpec.Member(name=m) for m in ty.members
            )
        elif isinstance(ty, t.TupleT):
            out.tuple.members.extend(self.spec(e) for e in ty.elems)
        elif isinstance(ty, t.StackT):
            self.stack(out, ty)
        else:
            raise P4InfoError(f"type {ty} cannot be described in P4Info")
        return out

    def newtype_decl(self, written: ir.TypeRef | None) -> ir.TypeDecl | None:
        if written is None:
            return None
        decl = self.top.get(written.name)
        if isinstance(decl, ir.TypeDecl) and decl.kind == "type":
            return decl
        return None

    def add_newtype(self, decl: ir.TypeDecl, ty: t.P4Type) -> None:
        if decl.name in self.info.new_types:
            return
        value = self.info.new_types[decl.name]
        translation = decl.annotations.get("p4runtime_translation")
        if translation:
            value.translated_type.uri = annotation_string(translation[:1]) or ""
            width = annotation_int(translation[1:2])
            if width is not None:
                value.translated_type.sdn_bitwidth = width
            else:
                value.translated_type.sdn_string.SetInParent()
        else:
            value.original_type.CopyFrom(self.spec(ty))

    def add_serializable_enum(self, ty: t.EnumT) -> None:
        if ty.name in self.info.serializable_enums or ty.underlying is None:
            return
        value = self.info.serializable_enums[ty.name]
        width = ty.underlying.width
        value.underlying_type.bitwidth = width
        for member in ty.members:
            raw = ty.values[member] & ((1 << width) - 1)
            value.members.add(name=member, value=raw.to_bytes((width + 7) // 8, "big"))

    def struct_like(self, out: p4t.P4DataTypeSpec, ty: t.StructLikeT) -> None:
        if ty.kind == "header":
            out.header.name = ty.name
            if ty.name not in self.info.headers:
                value = self.info.headers[ty.name]
                for fname, ftype in flat_fields(ty):
                    member = value.members.add(name=fname)
                    if isinstance(ftype, t.BitsT):
                        target = member.type_spec.int if ftype.signed else member.type_spec.bit
                        target.bitwidth = ftype.width
                    else:
                        member.type_spec.bit.bitwidth = type_width(ftype)
            return
        if ty.kind == "header_union":
            out.header_union.name = ty.name
            if ty.name not in self.info.header_unions:
                value = self.info.header_unions[ty.name]
                for fname, ftype in ty.fields:
                    member_spec = self.spec(ftype)
                    value.members.add(name=fname, header=member_spec.header)
            return
        out.struct.name = ty.name
        if ty.name not in self.info.structs:
            value = self.info.structs[ty.name]
            for fname, ftype in ty.fields:
                value.members.add(name=fname, type_spec=self.spec(ftype))

    def stack(self, out: p4t.P4DataTypeSpec, ty: t.StackT) -> None:
        elem = self.spec(ty.elem)
        if elem.HasField("header"):
            out.header_stack.header.CopyFrom(elem.header)
            out.header_stack.size = ty.size
        else:
            out.header_union_stack.header_union.CopyFrom(elem.header_union)
            out.header_union_stack.size = ty.size


# --------------------------------------------------------------------------- P4Info builder


def flat_fields(ty: t.StructLikeT, prefix: str = "") -> list[tuple[str, t.P4Type]]:
    """Fields with nested structs flattened into dotted names (p4c's FlattenHeader)."""
    result: list[tuple[str, t.P4Type]] = []
    for fname, ftype in ty.fields:
        if isinstance(ftype, t.StructLikeT) and ftype.kind == "struct":
            result.extend(flat_fields(ftype, f"{prefix}{fname}."))
        else:
            result.append((prefix + fname, ftype))
    return result


def action_arguments(decl: ir.ActionDecl, args: list[ir.Argument]) -> dict[str, ir.Expr]:
    """The expressions an action call binds to each parameter (positional or named). Positional
    arguments of a table's default action fill the directional parameters first, then the
    control-plane ones, in declaration order."""
    bound: dict[str, ir.Expr] = {}
    names = [p.name for p in decl.params]
    for index, arg in enumerate(args):
        name = arg.name if arg.name is not None else (names[index] if index < len(names) else "")
        bound[name] = arg.value
    return bound


def ctor_arg(decl: ir.InstanceDecl, position: int, name: str) -> ir.Expr | None:
    for index, arg in enumerate(decl.args):
        if arg.name == name or (arg.name is None and index == position):
            return arg.value
    return None


def instance_size(inst: InstanceInfo, position: int, kind: str) -> int:
    """An extern instance's size argument (0 if none), which P4Info holds in an int32."""
    size = const_int(ctor_arg(inst.decl, position, "size")) or 0
    if not 0 <= size < 2**31:
        raise P4InfoError(f"{kind} '{inst.name}' has a size that doesn't fit in an integer: "
                          f"{size}")
    return size


def const_int(expr: ir.Expr | None) -> int | None:
    if expr is None:
        return None
    expr = strip_implicit(expr)
    if isinstance(expr, ir.Cast):
        return const_int(expr.expr)
    if isinstance(expr, ir.IntLit):
        return expr.value
    if isinstance(expr, ir.BoolLit):
        return int(expr.value)
    if isinstance(expr, ir.TypeMember) and isinstance(expr.type, t.EnumT):
        return expr.type.values.get(expr.member) if expr.type.underlying else None
    value = const_value(expr)  # a constant expression, e.g. a size written `512 * 8`
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def enum_member(expr: ir.Expr | None) -> str:
    if isinstance(expr, ir.TypeMember):
        return expr.member
    if isinstance(expr, ir.Member):
        return expr.name
    return ""


COUNTER_UNITS = {
    "packets": p4i.CounterSpec.PACKETS,
    "bytes": p4i.CounterSpec.BYTES,
    "packets_and_bytes": p4i.CounterSpec.BOTH,
}
METER_UNITS = {"packets": p4i.MeterSpec.PACKETS, "bytes": p4i.MeterSpec.BYTES}
EXTERN_KINDS = {
    "action_profile": ACTION_PROFILE,
    "action_selector": ACTION_PROFILE,
    "counter": COUNTER,
    "direct_counter": DIRECT_COUNTER,
    "meter": METER,
    "direct_meter": DIRECT_METER,
    "register": REGISTER,
}
TYPE_INFO_USERS = ("tables", "digests", "controller_packet_metadata")
"""p4c's serializer touches type_info for every table, digest, controller header, action
parameter, extern instance and extern function call: then P4Info has one, empty or not."""


class P4InfoBuilder:
    """Turns the program model into a P4Info message."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.model = ModelBuilder(program).build()
        self.top = top_level(program)
        self.symbols = SymbolTable()
        self.info = p4i.P4Info()
        self.types = TypeSpecs(self.info.type_info, self.top)
        self.direct_tables: dict[str, str] = {}
        self.table_actions: set[str] = set()

    def build(self) -> p4i.P4Info:
        self.collect()
        self.symbols.compute_ids()
        self.table_actions = {self.action_name(table, ref) for table in self.model.tables
                              for ref in table.decl.actions}
        self.add_pkg_info()
        for action in self.model.actions:
            self.add_action(action)
        for table in self.model.tables:
            self.add_table(table)
        for instance in self.model.instances:
            self.add_instance(instance)
        for header in self.model.controller_headers:
            self.add_controller_header(header)
        for name, ty, anns in self.model.digests:
            self.add_digest(name, ty, anns)
        for vs in self.model.value_sets:
            self.add_value_set(vs)
        if self.model.port_metadata is not None:  # after the value sets, as bf-p4c
            self.add_port_metadata(*self.model.port_metadata)
        if (self.model.calls_extern_function or self.model.instances
                or any(action.params for action in self.info.actions)
                or any(len(getattr(self.info, name)) for name in TYPE_INFO_USERS)):
            self.info.type_info.SetInParent()
        return self.info

    def add_pkg_info(self) -> None:
        """pkg_info: arch v1model (tna for TNA's Switch, as bf-p4c names it), @pkginfo(key="value",
        ...) and other annotations of main."""
        pkg = self.info.pkg_info
        main = self.program.main or self.top.get("main")
        tna = isinstance(main, ir.InstanceDecl) and main.type_ref.name == "Switch"
        pkg.arch = "tna" if tna else "v1model"
        anns = main.annotations if isinstance(main, ir.Decl) else {}
        text = " ".join(anns.get("pkginfo", []))
        for key, value in PKGINFO_PAIR.findall(text):
            if key in ("name", "version", "organization", "contact", "url", "arch"):
                setattr(pkg, key, value)
        pkg.annotations.extend(annotation_texts(anns, skip={"pkginfo"}))
        set_doc(pkg, anns)

    def extern_kind(self, extern: str) -> int | None:
        """The id prefix of an extern type's instances (for TNA, bf-p4c's extern_type_id)."""
        return (TNA_EXTERNS if self.model.object_prefix else EXTERN_KINDS).get(extern)

    def direct_name(self, target: ir.Decl, table: TableInfo) -> str:
        return self.model.object_prefix + local_name(target, table.prefix)

    def collect(self) -> None:
        for action in self.model.actions:
            self.symbols.add(ACTION, action.name, user_id(action.decl))
        for table in self.model.tables:
            if is_hidden(table.decl.annotations):
                continue
            self.symbols.add(TABLE, table.name, user_id(table.decl))
            for prop in DIRECT_PROPERTIES:
                ref = table.decl.properties.get(prop)
                if isinstance(ref, ir.PathExpr):
                    target = table.scope.find(ref.name)
                    if isinstance(target, ir.Decl):
                        self.direct_tables[self.direct_name(target, table)] = table.name
        for inst in self.model.instances:
            kind = self.extern_kind(inst.extern)
            if kind is not None and not is_hidden(inst.decl.annotations):
                direct = (DIRECT_COUNTER, DIRECT_METER, TNA_DIRECT_COUNTER, TNA_DIRECT_REGISTER)
                if kind in direct and inst.name not in self.direct_tables:
                    continue
                self.symbols.add(kind, inst.name, user_id(inst.decl))
        for header in self.model.controller_headers:
            self.symbols.add(CONTROLLER_HEADER, local_name(header, ""), user_id(header))
        for vs in self.model.value_sets:
            kind = TNA_VALUE_SET if self.model.object_prefix else VALUE_SET
            self.symbols.add(kind, vs.name, user_id(vs.decl))
        for name, _, anns in self.model.digests:
            self.symbols.add(DIGEST, name, annotation_int(anns.get("id", [])))
        if self.model.port_metadata is not None:
            self.symbols.add(TNA_PORT_METADATA, self.model.port_metadata[0], None)

    def add_action(self, action: ActionInfo) -> None:
        msg = self.info.actions.add()
        set_preamble(
            msg.preamble,
            self.symbols.id(ACTION, action.name),
            action.name,
            self.symbols.alias(action.name),
            action.decl.annotations,
        )
        # bf-p4c's core.p4 declares NoAction without @corelib
        tna = bool(self.model.object_prefix)
        if action.name == "NoAction" and (tna or not noaction_is_corelib()):
            msg.preamble.annotations.remove("@corelib")
        params = [p for p in action.decl.params if not p.direction]
        if action.name not in self.table_actions:
            params = []  # p4c turns the data parameters of only-called actions into locals
        for param, ident in zip(params, field_ids(params), strict=True):
            out = msg.params.add(id=ident, name=local_name(param, ""))
            out.annotations.extend(annotation_texts(param.annotations))
            set_doc(out, param.annotations)
            ty = param.type_ref.resolved
            if not (isinstance(ty, t.EnumT) and ty.underlying is None):
                out.bitwidth = type_width(ty)
            type_name = self.named_type(ty, param.type_ref)
            if type_name is not None:
                out.type_name.name = type_name

    def named_type(self, ty: t.P4Type | None, written: ir.TypeRef | None) -> str | None:
        """The user type name P4Info references (new types and enums), registering it."""
        if ty is None:
            return None
        newtype = self.types.newtype_decl(written)
        if newtype is not None:
            self.types.spec(ty, written)
            return newtype.name
        if isinstance(ty, t.EnumT) and ty.name not in ("error", "match_kind"):
            self.types.spec(ty)
            return ty.name
        return None

    def add_table(self, table: TableInfo) -> None:
        decl = table.decl
        if is_hidden(decl.annotations):
            return
        msg = self.info.tables.add()
        set_preamble(
            msg.preamble,
            self.symbols.id(TABLE, table.name),
            table.name,
            self.symbols.alias(table.name),
            decl.annotations,
        )
        self.add_match_fields(msg, table)
        self.add_action_refs(msg, table)
        default = decl.default_action
        if default is not None and decl.default_is_const:
            msg.const_default_action_id = self.symbols.id(ACTION, self.action_name(table, default))
        self.add_initial_default_action(msg, table)
        for prop in DIRECT_PROPERTIES:
            ref = decl.properties.get(prop)
            if isinstance(ref, ir.PathExpr):
                target = table.scope.find(ref.name)
                kind = (self.extern_kind(target.type_ref.name)
                        if isinstance(target, ir.InstanceDecl) else None)
                if isinstance(target, ir.InstanceDecl) and kind is not None:
                    msg.direct_resource_ids.append(
                        self.symbols.id(kind, self.direct_name(target, table)))
        profile = self.implementation(table)
        if profile is not None:
            msg.implementation_id = self.symbols.id(ACTION_PROFILE, profile)
        size = const_int(decl.size) if decl.size is not None else None
        default_size = TNA_DEFAULT_TABLE_SIZE if self.model.object_prefix else DEFAULT_TABLE_SIZE
        msg.size = size if size else default_size
        timeout = decl.properties.get("support_timeout")
        if isinstance(timeout, ir.BoolLit) and timeout.value:
            msg.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
        if decl.entries:
            msg.is_const_table = decl.entries_are_const
            msg.has_initial_entries = True

    def implementation(self, table: TableInfo) -> str | None:
        """The P4Info name of the table's action profile or selector, if it has one."""
        ref = table.decl.properties.get("implementation")
        if isinstance(ref, ir.PathExpr):
            target = table.scope.find(ref.name)
            if isinstance(target, ir.InstanceDecl):
                return local_name(target, table.prefix)
        return None

    def add_initial_default_action(self, msg: p4i.Table, table: TableInfo) -> None:
        """initial_default_action (P4Runtime 1.4): the default action (NoAction when the program
        names none) with its compile-time arguments as full-width byte strings."""
        ref = table.decl.default_action
        name = "NoAction" if ref is None else self.action_name(table, ref)
        if name not in self.symbols.symbols.get(ACTION, {}):
            return
        call = msg.initial_default_action
        call.action_id = self.symbols.id(ACTION, name)
        decl = None if ref is None else (ref.decl or table.scope.find(ref.name))
        if not isinstance(decl, ir.ActionDecl):
            return
        params = [p for p in decl.params if not p.direction]
        given = action_arguments(decl, ref.args if ref is not None else [])
        for param, ident in zip(params, field_ids(params), strict=True):
            value = const_int(given.get(param.name, param.default))
            if value is None:
                continue
            width = type_width(param.type_ref.resolved)
            raw = value & ((1 << width) - 1) if width else value
            call.arguments.add(param_id=ident, value=raw.to_bytes(max(1, (width + 7) // 8), "big"))

    def add_match_fields(self, msg: p4i.Table, table: TableInfo) -> None:
        keys = [k for k in table.decl.keys if k.match_kind != "selector"]
        for key, ident in zip(keys, field_ids(keys), strict=True):
            out = msg.match_fields.add(id=ident, name=key_name(key))
            out.annotations.extend(annotation_texts(key.annotations))
            set_doc(out, key.annotations)
            ty = key.expr.type
            out.bitwidth = 0 if isinstance(ty, t.EnumT) and ty.name == "error" else type_width(ty)
            if isinstance(ty, t.EnumT) and ty.underlying is not None:
                self.types.spec(ty)  # p4c lists a serializable enum key's type in type_info
            if key.match_kind in MATCH_TYPES:
                out.match_type = MATCH_TYPES[key.match_kind]
            else:
                out.other_match_type = key.match_kind

    def action_name(self, table: TableInfo, ref: ir.ActionRef) -> str:
        decl = ref.decl if ref.decl is not None else table.scope.find(ref.name)
        if not isinstance(decl, ir.ActionDecl):
            raise P4InfoError(f"{ref.loc}: '{ref.name}' is not an action")
        is_local = any(d is decl for d in table.scope.local.values())
        return local_name(decl, table.prefix if is_local else "")

    def add_action_refs(self, msg: p4i.Table, table: TableInfo) -> None:
        refs = list(table.decl.actions)
        names = [self.action_name(table, r) for r in refs]
        for ref, name in zip(refs, names, strict=True):
            if name not in self.symbols.symbols.get(ACTION, {}):
                continue
            out = msg.action_refs.add(id=self.symbols.id(ACTION, name))
            out.annotations.extend(annotation_texts(ref.annotations))
            if "tableonly" in ref.annotations and "defaultonly" in ref.annotations:
                raise P4InfoError(f"{ref.loc}: action is both @tableonly and @defaultonly")
            if "tableonly" in ref.annotations:
                out.scope = p4i.ActionRef.TABLE_ONLY
            elif "defaultonly" in ref.annotations:
                out.scope = p4i.ActionRef.DEFAULT_ONLY
        if table.decl.default_action is None and "NoAction" not in names:
            out = msg.action_refs.add(id=self.symbols.id(ACTION, "NoAction"))
            out.annotations.append("@defaultonly")
            out.scope = p4i.ActionRef.DEFAULT_ONLY

    def add_instance(self, inst: InstanceInfo) -> None:
        kind = self.extern_kind(inst.extern)
        if kind is None or is_hidden(inst.decl.annotations):
            return
        if inst.name not in self.symbols.symbols.get(kind, {}):
            return
        ident = self.symbols.id(kind, inst.name)
        alias = self.symbols.alias(inst.name)
        anns = inst.decl.annotations
        if self.model.object_prefix:
            preamble = p4i.Preamble()
            set_preamble(preamble, ident, inst.name, alias, anns)
            add_extern(self.info, kind, preamble, self.tna_extern_info(kind, inst))
        elif kind == ACTION_PROFILE:
            msg = self.info.action_profiles.add()
            set_preamble(msg.preamble, ident, inst.name, alias,
                         {k: v for k, v in anns.items() if k not in SELECTOR_ANNOTATIONS})
            for table in self.model.tables:
                if self.implementation(table) == inst.name and not is_hidden(
                        table.decl.annotations):
                    msg.table_ids.append(self.symbols.id(TABLE, table.name))
            selector = inst.extern == "action_selector"
            msg.with_selector = selector
            msg.size = instance_size(inst, 1 if selector else 0, "Action profile")
            if selector:
                set_selector_sizes(msg, anns)
        elif kind == COUNTER:
            msg = self.info.counters.add()
            set_preamble(msg.preamble, ident, inst.name, alias, anns)
            msg.spec.unit = COUNTER_UNITS.get(enum_member(ctor_arg(inst.decl, 1, "type")), 0)
            msg.size = instance_size(inst, 0, "Counter")
        elif kind == DIRECT_COUNTER:
            msg = self.info.direct_counters.add()
            set_preamble(msg.preamble, ident, inst.name, alias, anns)
            msg.spec.unit = COUNTER_UNITS.get(enum_member(ctor_arg(inst.decl, 0, "type")), 0)
            msg.direct_table_id = self.symbols.id(TABLE, self.direct_tables[inst.name])
        elif kind == METER:
            msg = self.info.meters.add()
            set_preamble(msg.preamble, ident, inst.name, alias, anns)
            msg.spec.unit = METER_UNITS.get(enum_member(ctor_arg(inst.decl, 1, "type")), 0)
            msg.size = instance_size(inst, 0, "Meter")
        elif kind == DIRECT_METER:
            msg = self.info.direct_meters.add()
            set_preamble(msg.preamble, ident, inst.name, alias, anns)
            msg.spec.unit = METER_UNITS.get(enum_member(ctor_arg(inst.decl, 0, "type")), 0)
            msg.direct_table_id = self.symbols.id(TABLE, self.direct_tables[inst.name])
        else:
            msg = self.info.registers.add()
            set_preamble(msg.preamble, ident, inst.name, alias, anns)
            written = inst.decl.type_ref.args[0] if inst.decl.type_ref.args else None
            if written is not None and written.resolved is not None:
                msg.type_spec.CopyFrom(self.types.spec(written.resolved, written))
            msg.size = instance_size(inst, 0, "Register")

    def type_arg_spec(self, inst: InstanceInfo) -> p4t.P4DataTypeSpec:
        """The P4Info type of an instance's first type argument (Register<T, ..>, Digest<T>)."""
        written = inst.decl.type_ref.args[0] if inst.decl.type_ref.args else None
        if written is None or written.resolved is None:
            return p4t.P4DataTypeSpec()
        return self.types.spec(written.resolved, written)

    def tna_extern_info(self, kind: int, inst: InstanceInfo) -> object:
        """The barefoot.Register / Counter / DirectCounter / Meter message of a TNA instance."""
        if kind == TNA_REGISTER:
            return register_info(self.type_arg_spec(inst), instance_size(inst, 0, "Register"),
                                 pipeline_name(inst.name))
        if kind == TNA_DIRECT_REGISTER:
            return direct_register_info(self.type_arg_spec(inst), pipeline_name(inst.name))
        if kind == TNA_DIGEST:
            return digest_info(self.type_arg_spec(inst))
        if kind == TNA_METER:
            unit = METER_UNITS.get(enum_member(ctor_arg(inst.decl, 1, "type")).lower(), 0)
            return meter_info(unit, instance_size(inst, 0, "Meter"))
        position = 0 if kind == TNA_DIRECT_COUNTER else 1
        unit = COUNTER_UNITS.get(enum_member(ctor_arg(inst.decl, position, "type")).lower(), 0)
        if kind == TNA_DIRECT_COUNTER:
            return direct_counter_info(unit, self.symbols.id(TABLE, self.direct_tables[inst.name]))
        return counter_info(unit, instance_size(inst, 0, "Counter"))

    def add_port_metadata(self, name: str, key_name: str, unpacked: t.P4Type | None) -> None:
        """bf-p4c's PortMetadata entry: the ingress parser's per-port metadata table."""
        preamble = p4i.Preamble()
        set_preamble(preamble, self.symbols.id(TNA_PORT_METADATA, name), name,
                     self.symbols.alias(name), {})
        spec = self.types.spec(unpacked) if unpacked is not None else None
        add_extern(self.info, TNA_PORT_METADATA, preamble, port_metadata_info(key_name, spec))

    def add_value_set(self, vs: InstanceInfo) -> None:
        """One match per select key: the element itself, or each field of a struct element
        (named, with its @match kind; exact by default). TNA: bf-p4c's ValueSet extern entry,
        its alias the whole name."""
        vtype = vs.decl.type_ref.resolved
        assert isinstance(vtype, t.ValueSetT)
        if self.model.object_prefix:
            preamble = p4i.Preamble()
            set_preamble(preamble, self.symbols.id(TNA_VALUE_SET, vs.name), vs.name, vs.name,
                         vs.decl.annotations)
            spec = self.types.spec(vtype.elem)
            add_extern(self.info, TNA_VALUE_SET, preamble, value_set_info(spec, vtype.size))
            return
        msg = self.info.value_sets.add()
        set_preamble(msg.preamble, self.symbols.id(VALUE_SET, vs.name),
                     vs.name, self.symbols.alias(vs.name), vs.decl.annotations)
        elem = vtype.elem
        fields = elem.fields if isinstance(elem, t.StructLikeT) else [("", elem)]
        for ident, (fname, ftype) in enumerate(fields, start=1):
            match = msg.match.add(id=ident, name=fname, bitwidth=type_width(ftype))
            anns = elem.field_annotations.get(fname, {}) if isinstance(elem, t.StructLikeT) else {}
            kind = "".join(anns.get("match", [])).strip() or "exact"
            if kind in MATCH_TYPES:
                match.match_type = MATCH_TYPES[kind]
            else:
                match.other_match_type = kind
        msg.size = vtype.size

    def add_controller_header(self, header: ir.TypeDecl) -> None:
        label = annotation_string(header.annotations.get("controller_header", [])) or header.name
        msg = self.info.controller_packet_metadata.add()
        ident = self.symbols.id(CONTROLLER_HEADER, local_name(header, ""))
        set_preamble(msg.preamble, ident, label, label, header.annotations)
        fields = flatten_fields(header)
        for (name, ty, written, anns), fid in zip(fields, field_ids_from(fields), strict=True):
            if is_hidden(anns):
                continue
            out = msg.metadata.add(id=fid, name=name)
            out.annotations.extend(annotation_texts(anns))
            out.bitwidth = type_width(ty)
            type_name = self.named_type(ty, written)
            if type_name is not None:
                out.type_name.name = type_name

    def add_digest(self, name: str, ty: t.P4Type, anns: ir.Annotations) -> None:
        msg = self.info.digests.add()
        ident = self.symbols.id(DIGEST, name)
        set_preamble(msg.preamble, ident, name, self.symbols.alias(name), anns)
        msg.type_spec.CopyFrom(self.types.spec(ty))


def flatten_fields(
    header: ir.TypeDecl,
) -> list[tuple[str, t.P4Type | None, ir.TypeRef, ir.Annotations]]:
    """A controller header's fields with their types (nested structs flattened with '.')."""
    resolved = header.resolved
    result: list[tuple[str, t.P4Type | None, ir.TypeRef, ir.Annotations]] = []
    for (name, written, anns), (_, ty) in zip(
        header.fields, resolved.fields if isinstance(resolved, t.StructLikeT) else [], strict=False
    ):
        given = annotation_string(anns.get("name", []))
        result.append((given if given is not None else name, ty, written, anns))
    return result


def field_ids(items: list[ir.Param] | list[ir.KeyElement]) -> list[int]:
    """Ids 1..n in declaration order, honouring @id (p4c's FieldIdAllocator)."""
    return allocate_ids([user_id(item) for item in items])


def field_ids_from(fields: Sequence[tuple[str, object, object, ir.Annotations]]) -> list[int]:
    return allocate_ids(
        [annotation_int(anns.get("id", [])) if "id" in anns else None for _, _, _, anns in fields]
    )


def allocate_ids(user: list[int | None]) -> list[int]:
    taken = {u for u in user if u is not None}
    if 0 in taken:
        raise P4InfoError("0 is not a valid @id value")
    result: list[int] = []
    index = 1
    for given in user:
        if given is not None:
            result.append(given)
            index += 1
            continue
        while index in taken:
            index += 1
        result.append(index)
        taken.add(index)
    return result


def build_p4info(program: ir.Program) -> p4i.P4Info:
    """The P4Info message p4c would generate for this (checked) v1model program."""
    return P4InfoBuilder(program).build()


def p4info_text(program: ir.Program) -> str:
    """P4Info in protobuf text format, as p4c writes `--p4runtime-files x.p4info.txtpb`."""
    text: str = text_format.MessageToString(build_p4info(program))
    return TEXT_HEADER + text
