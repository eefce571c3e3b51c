"""The program tree: built by the parser, resolved and typed by the checker, run by the interpreter.

Contract between the frontend and the interpreter:
- The parser builds these nodes with `loc` set; `type`, `decl` and `CallKind` fields are None.
- The checker (frontend/check.py) fills, for every Expr, `type` (a types.P4Type after
  specialisation; untyped literals get InfIntT, and are converted by an implicit `Cast` node
  where the context gives them a width), for every PathExpr its `decl`, and for every Call its
  `kind` and `callee`. Implicit casts the language inserts (int literal -> bit<W>, serializable
  enum -> its underlying type, see below) are made explicit as `Cast` nodes, so the
  interpreter never has to infer a width.
- Constants: the checker folds compile-time constant expressions of `const` declarations and
  sizes into `ConstDecl.value` (an int, bool, or a member name for enums).

Frontend additions to the contract (frontend/check.py; they extend the above):
- `CallKind.CONSTRUCTOR`: `Type(args)` as an expression (the blocks passed to `main`, or an
  extern constructed inline); `callee` is the ParserDecl / ControlDecl / ExternDecl.
- `Program.blocks`: package parameter name -> block decl (V1Switch: p, vr, ig, eg, ck, dep).
- After checking, every `Call.args` (and `InstanceDecl.args`, `ActionRef.args`) is in parameter
  order, one Argument per parameter (named arguments reordered, `name` kept); a missing
  parameter with a default gets its default expression, a missing `@optional` one a DontCare.
  For an action in a table's `actions` list only the given prefix (directional params) is bound.
- `Call.callee` for EXTERN_FUNCTION is the ExternDecl (its `.function` is the signature), for
  EXTERN_METHOD the ExternMethod (the object's type is `target.expr.type`, an ExternT with
  its type arguments), for TABLE_APPLY the TableDecl, for BLOCK_APPLY the ParserDecl /
  ControlDecl, for HEADER_METHOD / STACK_METHOD the method name. A stack method's count
  argument is folded to an IntLit.
- Generic externs: an instance may give fewer type arguments than the extern declares; the
  unbound ones are inferred per call. Unbound type variables bound only by untyped integer
  arguments become InfIntT (e.g. `hash(..., 0, data, 1024)`).
- A call's `target` (PathExpr or Member) has the call's result type.
- `Slice.hi` / `.lo` hold Exprs until checked, ints after.
- `Index` also reads a tuple element (`t[1]`): the index is then an IntLit constant.
- `Member(..., "action_run")` has type ApplyResultT(table); `switch` labels on it are PathExprs
  whose `decl` is the ActionDecl. `.hit` / `.miss` are BoolT.
- ListExpr / StructExpr initialising a struct or header (assignment, argument, `(T){...}`) have
  that StructLikeT as type (the cast is dropped); otherwise a ListExpr is a TupleT.
- `TableDecl.size` and `Entry.priority` become IntLit after checking. An entry keyset that is a
  single `default` or `_` is expanded to one per key. Keyset elements, select cases and masks
  are converted to the key types; DefaultKey / DontCare get the key type.
- Annotations: `{name: [arg, ...]}` with the raw text of each top-level comma-separated
  argument (string literals keep their quotes: `@name("x")` -> `{"name": ['"x"']}`).
- A serializable enum used where its underlying type is wanted (assignment, argument,
  arithmetic or comparison with a number, slices, shifts, `++`) gets an explicit Cast to the
  underlying BitsT, as the P4 spec's implicit conversion; a number never becomes an enum
  implicitly.
- `x.minSizeInBits()` / `minSizeInBytes()` / `maxSizeInBits()` / `maxSizeInBytes()` are folded
  to an IntLit (InfIntT).
- IntLit values of width literals are reduced to the width; `-5` (untyped) is an IntLit -5.
- `type` declarations are treated as their underlying type. A ParserState with `transition`
  None transitions to reject (as p4c).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from lgkit.sw.lang.types import P4Type


@dataclass(frozen=True)
class Loc:
    """A source location (1-based line and column, file as the user named it)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


Annotations = dict[str, list[str]]  # name -> raw argument tokens as text (e.g. {"name": ['"x"']})


@dataclass(eq=False)
class Node:
    loc: Loc


# --------------------------------------------------------------------------- expressions


@dataclass(eq=False)
class Expr(Node):
    type: P4Type | None = field(default=None, init=False)


def checked(t: P4Type | None) -> P4Type:
    """A type the checker fills in (Expr.type, TypeRef.resolved), read after it has run."""
    if t is None:
        raise TypeError("the program has not been type-checked")
    return t


@dataclass(eq=False)
class IntLit(Expr):
    """An integer literal; `width`/`signed` set when written with a width (8w5, 4s3)."""

    value: int
    width: int | None = None
    signed: bool = False


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False)
class StringLit(Expr):
    value: str


@dataclass(eq=False)
class PathExpr(Expr):
    """A name. `decl` is what it resolves to (a Decl, Param or a type for type members)."""

    name: str
    decl: Any = field(default=None, init=False)


def decl_of(e: Expr) -> Any:
    """What a name refers to (PathExpr.decl); None for any other expression."""
    return e.decl if isinstance(e, PathExpr) else None


@dataclass(eq=False)
class TypeMember(Expr):
    """A member of a type: error.NoError, MyEnum.A, HashAlgorithm.crc16, match_kind members."""

    type_name: str
    member: str


@dataclass(eq=False)
class Member(Expr):
    """expr.name: field access, stack .next/.last/.size/.lastIndex, apply-result .hit/.miss."""

    expr: Expr
    name: str


@dataclass(eq=False)
class Index(Expr):
    """stack[index]."""

    expr: Expr
    index: Expr


@dataclass(eq=False)
class Slice(Expr):
    """expr[hi:lo] (hi, lo are compile-time constants after checking)."""

    expr: Expr
    hi: int
    lo: int


@dataclass(eq=False)
class Unary(Expr):
    """op in {'-', '~', '!'}."""

    op: str
    expr: Expr


@dataclass(eq=False)
class Binary(Expr):
    """op in {'+','-','*','/','%','|+|','|-|','<<','>>','&','|','^','++',
    '==','!=','<','<=','>','>=','&&','||'}. Also '&&&' (mask) and '..' (range) in keysets."""

    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False)
class Cast(Expr):
    """(T) expr; `to` is the written type as a TypeRef until checked, then type == the P4Type."""

    to: TypeRef
    expr: Expr


@dataclass(eq=False)
class ListExpr(Expr):
    """{a, b, ...}: tuples, struct/header initialisers and field lists."""

    items: list[Expr]


@dataclass(eq=False)
class StructExpr(Expr):
    """{name = value, ...} (or `(T){...}` with a Cast around it)."""

    items: list[tuple[str, Expr]]


@dataclass(eq=False)
class DontCare(Expr):
    """`_` in keysets and as an out argument."""


@dataclass(eq=False)
class DefaultKey(Expr):
    """`default` in select cases and entries."""


class CallKind(Enum):
    ACTION = "action"  # direct action call
    FUNCTION = "function"  # user function
    EXTERN_METHOD = "extern_method"  # obj.method(...) on an extern instance (incl. packet_in/out)
    EXTERN_FUNCTION = "extern_function"  # mark_to_drop, hash, clone, verify, ...
    TABLE_APPLY = "table_apply"  # t.apply()
    BLOCK_APPLY = "block_apply"  # control/parser instance .apply(...)
    HEADER_METHOD = "header_method"  # isValid / setValid / setInvalid (also on unions)
    STACK_METHOD = "stack_method"  # push_front / pop_front
    CONSTRUCTOR = "constructor"  # `Type(args)` as an expression (package arguments); added


@dataclass(eq=False)
class Call(Expr):
    """target(args). For methods `target` is a Member; `type_args` are explicit <T> args."""

    target: Expr
    args: list[Argument]
    type_args: list[TypeRef] = field(default_factory=list)
    kind: CallKind | None = field(default=None, init=False)
    callee: Any = field(default=None, init=False)  # the Decl / extern method / builtin name


@dataclass(eq=False)
class Argument(Node):
    """A call argument; `name` for named arguments (f(x = 1))."""

    value: Expr
    name: str | None = None


# --------------------------------------------------------------------------- types as written


@dataclass(eq=False)
class TypeRef(Node):
    """A type as written: name with optional type arguments, or a built-in with a width.

    Examples: TypeRef('bit', width=IntLit 8), TypeRef('int', width=...), TypeRef('varbit', ...),
    TypeRef('bool'), TypeRef('headers_t'), TypeRef('register', args=[TypeRef('bit', ...)]),
    TypeRef('tuple', args=[...]), and a stack: TypeRef('h_t', stack_size=IntLit 4).
    `resolved` is filled by the checker.
    """

    name: str
    width: Expr | None = None
    args: list[TypeRef] = field(default_factory=list)
    stack_size: Expr | None = None
    resolved: P4Type | None = field(default=None, init=False)


# --------------------------------------------------------------------------- statements


@dataclass(eq=False)
class Stmt(Node):
    pass


@dataclass(eq=False)
class Assign(Stmt):
    """`lhs = rhs`, or with `op` a compound assignment `lhs op= rhs`: the checker makes rhs
    the Binary `lhs op rhs`, and the location lhs is evaluated once."""

    lhs: Expr
    rhs: Expr
    op: str | None = None


@dataclass(eq=False)
class CallStmt(Stmt):
    call: Call


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None = None


@dataclass(eq=False)
class Block(Stmt):
    stmts: list[Stmt]


@dataclass(eq=False)
class SwitchCase(Node):
    """`labels` are action names (for action_run) or constant Exprs, or DefaultKey.
    `body` None means fall through to the next case with a body."""

    labels: list[Expr]
    body: Block | None


@dataclass(eq=False)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(eq=False)
class Exit(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None = None


@dataclass(eq=False)
class Empty(Stmt):
    pass


@dataclass(eq=False)
class For(Stmt):
    """`for (init; cond; update) body`: init holds VarDecl/Assign/CallStmt, update
    Assign/CallStmt; a missing cond is true."""

    init: list[Stmt]
    cond: Expr | None
    update: list[Stmt]
    body: Stmt


@dataclass(eq=False)
class ForIn(Stmt):
    """`for (T var in lo .. hi) body`: var takes lo, lo + 1, ..., hi; with `hi` None,
    `for (T var in lo) body` over a header stack (elements 0 .. size-1) or a list: var takes
    a copy of each element in turn."""

    var: VarDecl
    lo: Expr
    hi: Expr | None
    body: Stmt


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


# --------------------------------------------------------------------------- declarations


@dataclass(eq=False)
class Decl(Node):
    name: str
    annotations: Annotations = field(default_factory=dict, kw_only=True)


@dataclass(eq=False)
class Param(Decl):
    """A parameter; direction in {'in','out','inout',''} ('' = directionless)."""

    direction: str
    type_ref: TypeRef
    default: Expr | None = None


@dataclass(eq=False)
class VarDecl(Decl, Stmt):
    """A variable (local in a block, or in a parser/control's local declarations)."""

    type_ref: TypeRef
    init: Expr | None = None


@dataclass(eq=False)
class ConstDecl(Decl, Stmt):
    type_ref: TypeRef
    init: Expr
    value: Any = field(default=None, init=False)


@dataclass(eq=False)
class TypeDecl(Decl):
    """header / header_union / struct / enum / serializable enum / error / match_kind / typedef /
    type. The checker fills `resolved` with the P4Type. `error` and `match_kind` declarations
    may appear several times; the checker merges them.

    kind: 'header' | 'header_union' | 'struct' | 'enum' | 'error' | 'match_kind' | 'typedef'
    | 'type'. fields: [(name, TypeRef, annotations)] for struct-likes; members for enums with
    optional initialiser Exprs; underlying/target TypeRef for serializable enums and typedefs.
    """

    kind: str
    fields: list[tuple[str, TypeRef, Annotations]] = field(default_factory=list)
    members: list[tuple[str, Expr | None]] = field(default_factory=list)
    target: TypeRef | None = None
    resolved: P4Type | None = field(default=None, init=False)


@dataclass(eq=False)
class ExternMethod(Decl):
    """A method (or constructor when name == the extern's name) of an extern type."""

    type_params: list[str]
    params: list[Param]
    ret: TypeRef | None  # None for constructors
    abstract: bool = False


@dataclass(eq=False)
class ExternDecl(Decl):
    """`extern Name<T...> { ... }` (object) or `extern R f<T>(...)` (function, in `function`)."""

    type_params: list[str] = field(default_factory=list)
    methods: list[ExternMethod] = field(default_factory=list)
    function: ExternMethod | None = None


@dataclass(eq=False)
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass(eq=False)
class FunctionDecl(Decl):
    ret: TypeRef
    type_params: list[str]
    params: list[Param]
    body: Block


@dataclass(eq=False)
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: Annotations = field(default_factory=dict)


@dataclass(eq=False)
class ActionRef(Node):
    """An action named in a table's actions list, default_action or an entry, with arguments."""

    name: str
    args: list[Argument] = field(default_factory=list)
    annotations: Annotations = field(default_factory=dict)
    decl: ActionDecl | None = field(default=None, init=False)


@dataclass(eq=False)
class Entry(Node):
    """A const/initial entry: keyset (one Expr per key; Binary '&&&' / '..', DontCare,
    DefaultKey allowed), action, optional priority."""

    keys: list[Expr]
    action: ActionRef
    priority: Expr | None = None
    annotations: Annotations = field(default_factory=dict)


@dataclass(eq=False)
class TableDecl(Decl):
    keys: list[KeyElement] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_is_const: bool = False
    entries: list[Entry] = field(default_factory=list)
    entries_are_const: bool = True
    size: Expr | None = None
    # other properties by name: counters/meters (direct_counter/direct_meter instance PathExprs),
    # implementation, support_timeout, largest_priority_wins, priority_delta, ...
    properties: dict[str, Expr] = field(default_factory=dict)


@dataclass(eq=False)
class InstanceDecl(Decl, Stmt):
    """`Type<args>(ctor args) name;` — extern objects, and parser/control/package instances
    (including `V1Switch(...) main;`)."""

    type_ref: TypeRef
    args: list[Argument]
    # `= { ... }`: the implementations of the extern's abstract methods (e.g. TNA's
    # RegisterAction.apply), in source order; empty for other instances
    methods: list[FunctionDecl] = field(default_factory=list)


@dataclass(eq=False)
class SelectCase(Node):
    """keyset -> next state. keyset: one Expr, or a ListExpr for tuple keys; entries may be
    values, Binary '&&&' (mask), Binary '..' (range), DontCare, DefaultKey."""

    keyset: Expr
    state: str


@dataclass(eq=False)
class Select(Node):
    keys: list[Expr]
    cases: list[SelectCase]


@dataclass(eq=False)
class ParserState(Decl):
    """`transition` is a state name (str: 'accept', 'reject' or a state) or a Select,
    or None (no transition statement: the checker reports it, p4c treats it as reject)."""

    stmts: list[Stmt]
    transition: str | Select | None
    # (added) where the transition statement is, for messages about it
    transition_loc: Loc | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class ParserDecl(Decl):
    """A parser declaration (with `states`) or a parser type (`states` empty, is_type True)."""

    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param] = field(default_factory=list)
    locals: list[Decl] = field(default_factory=list)
    states: list[ParserState] = field(default_factory=list)
    is_type: bool = False


@dataclass(eq=False)
class ControlDecl(Decl):
    """A control declaration (with `apply`) or a control type (is_type True)."""

    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param] = field(default_factory=list)
    locals: list[Decl] = field(default_factory=list)
    apply: Block | None = None
    is_type: bool = False


@dataclass(eq=False)
class PackageDecl(Decl):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class Program(Node):
    """The whole preprocessed program, core.p4 and v1model.p4 declarations included."""

    decls: list[Decl]
    # filled by the checker: the top-level `main` instance and the six v1model blocks
    main: InstanceDecl | None = field(default=None, init=False)
    # (added) the blocks `main` is built from, keyed by the package's parameter names
    # (V1Switch: p, vr, ig, eg, ck, dep) -> the ParserDecl / ControlDecl
    blocks: dict[str, Decl] = field(default_factory=dict, init=False)
