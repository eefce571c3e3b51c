"""P4_16 text (preprocessed, with #line markers) -> ir.Program, with lark's LALR parser."""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import P4Error, error_at
from lgkit.sw.lang.frontend.lexer import (
    PostLexer,
    parse_annotation,
    parse_int_literal,
    scan_type_names,
)
from lgkit.sw.lang.frontend.preprocess import split_line_markers
from lgkit.sw.lang.types import MAX_WIDTH

_PARSE_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _lark() -> tuple[Lark, PostLexer]:
    postlex = PostLexer()
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    parser = Lark(
        grammar,
        parser="lalr",
        lexer="basic",
        postlex=postlex,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )
    return parser, postlex


def parse_program(text: str, filename: str) -> ir.Program:
    """Parse preprocessed text into an (unchecked) ir.Program; syntax errors raise P4Error."""
    clean, origin = split_line_markers(text, filename)
    parser, postlex = _lark()
    builder = _IrBuilder(origin)
    try:
        with _PARSE_LOCK:  # the post-lexer's type names belong to this parse
            postlex.type_names = scan_type_names(clean)
            tree = parser.parse(clean)
    except UnexpectedInput as exc:
        raise error_at(builder.loc_at(exc.line, exc.column), _syntax_message(exc)) from None
    try:
        return builder.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, P4Error | RecursionError):
            raise exc.orig_exc from None
        raise


def _syntax_message(exc: UnexpectedInput) -> str:
    if isinstance(exc, UnexpectedCharacters):
        return f"syntax error: unexpected character {exc.char!r}"
    if isinstance(exc, UnexpectedEOF):
        return "syntax error: unexpected end of file"
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return "syntax error: unexpected end of file"
        if exc.token.type == "IDENT" and "TYPE_IDENT" in exc.expected:
            return f"unknown type '{exc.token.value}'"
        return f"syntax error: unexpected '{exc.token.value}'"
    return "syntax error"


_Children = list[Any]


class _TupleKeyset:
    """A parenthesised tuple keyset while parsing (select cases and table entries)."""

    def __init__(self, loc: ir.Loc, items: list[ir.Expr]) -> None:
        self.loc, self.items = loc, list(items)


@v_args(meta=True)
class _IrBuilder(Transformer[Token, ir.Program]):
    """Builds ir nodes from the lark tree; every node gets the location of its first token."""

    def __init__(self, origin: list[tuple[str, int]]) -> None:
        super().__init__()
        self._origin = origin
        self._direct: list[ir.InstanceDecl] = []  # instances made for Type.apply(...)

    def loc_at(self, line: int | None, column: int | None) -> ir.Loc:
        if not line or line > len(self._origin):
            file, orig = self._origin[-1] if self._origin else ("<string>", 1)
            return ir.Loc(file, orig, 1)
        file, orig = self._origin[line - 1]
        return ir.Loc(file, orig, column or 1)

    def _loc(self, meta: Any) -> ir.Loc:
        return self.loc_at(getattr(meta, "line", None), getattr(meta, "column", None))

    def _tok_loc(self, tok: Token) -> ir.Loc:
        return self.loc_at(tok.line, tok.column)

    # ----------------------------------------------------------------- top
    def start(self, meta: Any, c: _Children) -> ir.Program:
        decls = [d for d in c if isinstance(d, ir.Decl)]
        return ir.Program(ir.Loc(self._origin[0][0] if self._origin else "<string>", 1, 1), decls)

    def annos(self, meta: Any, c: _Children) -> ir.Annotations:
        result: ir.Annotations = {}
        for tok in c:
            name, args = parse_annotation(str(tok))
            result[name] = args
        return result

    def name(self, meta: Any, c: _Children) -> str:
        return str(c[0])

    def any_name(self, meta: Any, c: _Children) -> str:
        return str(c[0])

    # ----------------------------------------------------------------- types
    def named_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), str(c[0]), args=c[1] or [])

    def type_args(self, meta: Any, c: _Children) -> list[ir.TypeRef]:
        return [
            ir.TypeRef(self._tok_loc(a), "_") if isinstance(a, Token) else a
            for a in c
            if not (isinstance(a, Token) and a.type in ("TA_OPEN", "TA_CLOSE"))
        ]

    def stack_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        ref: ir.TypeRef = c[0]
        ref.stack_size = c[1]
        return ref

    def tuple_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "tuple", args=c[0])

    def bool_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "bool")

    def error_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "error")

    def string_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "string")

    def match_kind_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "match_kind")

    def infint_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "int")

    def void_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return ir.TypeRef(self._loc(meta), "void")

    def bit1_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        loc = self._loc(meta)
        return ir.TypeRef(loc, "bit", width=ir.IntLit(loc, 1))

    def _width_type(self, name: str, meta: Any, c: _Children) -> ir.TypeRef:
        width = next(x for x in c if isinstance(x, ir.Expr))
        return ir.TypeRef(self._loc(meta), name, width=width)

    def bit_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return self._width_type("bit", meta, c)

    def int_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return self._width_type("int", meta, c)

    def varbit_type(self, meta: Any, c: _Children) -> ir.TypeRef:
        return self._width_type("varbit", meta, c)

    # ----------------------------------------------------------------- expressions
    def int_lit(self, meta: Any, c: _Children) -> ir.IntLit:
        value, width, signed = parse_int_literal(str(c[0]))
        if width is not None and width > MAX_WIDTH:
            raise error_at(self._tok_loc(c[0]), f"{width}{'s' if signed else 'w'}: Compiler "
                           f"only supports widths up to {MAX_WIDTH}")
        return ir.IntLit(self._tok_loc(c[0]), value, width, signed)

    def true_lit(self, meta: Any, c: _Children) -> ir.BoolLit:
        return ir.BoolLit(self._loc(meta), True)

    def false_lit(self, meta: Any, c: _Children) -> ir.BoolLit:
        return ir.BoolLit(self._loc(meta), False)

    def string_lit(self, meta: Any, c: _Children) -> ir.StringLit:
        raw = str(c[0])[1:-1]
        return ir.StringLit(self._tok_loc(c[0]), raw.encode().decode("unicode_escape"))

    def path(self, meta: Any, c: _Children) -> ir.PathExpr:
        return ir.PathExpr(self._loc(meta), c[0])

    def type_member(self, meta: Any, c: _Children) -> ir.TypeMember:
        return ir.TypeMember(self._loc(meta), str(c[0]), c[1])

    def error_member(self, meta: Any, c: _Children) -> ir.TypeMember:
        return ir.TypeMember(self._loc(meta), "error", c[0])

    def member(self, meta: Any, c: _Children) -> ir.Member:
        return ir.Member(self._loc(meta), c[0], c[1])

    def index(self, meta: Any, c: _Children) -> ir.Index:
        return ir.Index(self._loc(meta), c[0], c[1])

    def slice(self, meta: Any, c: _Children) -> ir.Slice:
        return ir.Slice(self._loc(meta), c[0], c[1], c[2])

    def ternary(self, meta: Any, c: _Children) -> ir.Ternary:
        return ir.Ternary(self._loc(meta), c[0], c[1], c[2])

    def binop(self, meta: Any, c: _Children) -> ir.Binary:
        return ir.Binary(self._loc(meta), str(c[1]), c[0], c[2])

    def unop(self, meta: Any, c: _Children) -> ir.Expr:
        op, operand = str(c[0]), c[1]
        if op == "+":
            return cast(ir.Expr, operand)
        if op == "-" and isinstance(operand, ir.IntLit) and operand.width is None:
            return ir.IntLit(self._loc(meta), -operand.value)
        return ir.Unary(self._loc(meta), op, operand)

    def cast(self, meta: Any, c: _Children) -> ir.Cast:
        return ir.Cast(self._loc(meta), c[0], c[1])

    def call(self, meta: Any, c: _Children) -> ir.Call:
        return ir.Call(self._loc(meta), c[0], c[2], c[1] or [])

    def ctor_call(self, meta: Any, c: _Children) -> ir.Call:
        ref: ir.TypeRef = c[0]
        call = ir.Call(self._loc(meta), ir.PathExpr(ref.loc, ref.name), c[1], ref.args)
        return call

    def list_expr(self, meta: Any, c: _Children) -> ir.ListExpr:
        return ir.ListExpr(self._loc(meta), [x for x in c if x is not None])

    def struct_expr(self, meta: Any, c: _Children) -> ir.StructExpr:
        return ir.StructExpr(self._loc(meta), [x for x in c if x is not None])

    def kv(self, meta: Any, c: _Children) -> tuple[str, ir.Expr]:
        return (c[0], c[1])

    def dontcare(self, meta: Any, c: _Children) -> ir.DontCare:
        return ir.DontCare(self._loc(meta))

    def default_key(self, meta: Any, c: _Children) -> ir.DefaultKey:
        return ir.DefaultKey(self._loc(meta))

    def args(self, meta: Any, c: _Children) -> list[ir.Argument]:
        return [a for a in c if a is not None]

    def arg(self, meta: Any, c: _Children) -> ir.Argument:
        return ir.Argument(c[0].loc, c[0])

    def named_arg(self, meta: Any, c: _Children) -> ir.Argument:
        return ir.Argument(self._loc(meta), c[1], c[0])

    def tuple_keyset(self, meta: Any, c: _Children) -> _TupleKeyset:
        return _TupleKeyset(self._loc(meta), c)

    # ----------------------------------------------------------------- statements
    def block(self, meta: Any, c: _Children) -> ir.Block:
        block = ir.Block(self._loc(meta), [s for s in c[1:] if s is not None])
        return block

    def case_block(self, meta: Any, c: _Children) -> ir.Block:
        return ir.Block(self._loc(meta), [s for s in c if s is not None])

    def assign(self, meta: Any, c: _Children) -> ir.Assign:
        return ir.Assign(self._loc(meta), c[0], c[1])

    def compound_assign(self, meta: Any, c: _Children) -> ir.Assign:
        return ir.Assign(self._loc(meta), c[0], c[2], str(c[1])[:-1])

    def direct_apply(self, meta: Any, c: _Children) -> ir.CallStmt:
        """`Type.apply(args)` of a control or parser type: an instance of Type without
        constructor arguments (named Type in P4Info, as p4c does), applied. The instance is
        declared in the enclosing control or parser when that is built."""
        loc = self._loc(meta)
        type_name = str(c[1])
        instance = ir.InstanceDecl(loc, f"{type_name}__direct{len(self._direct)}",
                                   ir.TypeRef(loc, type_name), [],
                                   annotations={"name": [f'"{type_name}"']})
        self._direct.append(instance)
        target = ir.Member(loc, ir.PathExpr(loc, instance.name), "apply")
        return ir.CallStmt(loc, ir.Call(loc, target, c[2] or []))

    def _direct_instances(self) -> list[ir.Decl]:
        """The instances made by direct applications since the last control or parser."""
        made, self._direct = self._direct, []
        return list(made)

    def call_stmt(self, meta: Any, c: _Children) -> ir.CallStmt:
        loc = self._loc(meta)
        return ir.CallStmt(loc, ir.Call(loc, c[0], c[2], c[1] or []))

    def if_stmt(self, meta: Any, c: _Children) -> ir.If:
        return ir.If(self._loc(meta), c[0], c[1], c[2])

    def exit_stmt(self, meta: Any, c: _Children) -> ir.Exit:
        return ir.Exit(self._loc(meta))

    def break_stmt(self, meta: Any, c: _Children) -> ir.Break:
        return ir.Break(self._loc(meta))

    def continue_stmt(self, meta: Any, c: _Children) -> ir.Continue:
        return ir.Continue(self._loc(meta))

    def for_stmt(self, meta: Any, c: _Children) -> ir.For:
        return ir.For(self._loc(meta), c[0] or [], c[1], c[2] or [], c[3])

    def for_in_stmt(self, meta: Any, c: _Children) -> ir.ForIn:
        loc = self._loc(meta)
        if str(c[3]) != "in":  # 'in' lexes as a parameter direction
            raise error_at(loc, f"syntax error: expected 'in', got '{c[3]}'")
        var = ir.VarDecl(loc, c[2], c[1], None, annotations=c[0])
        return ir.ForIn(loc, var, c[4], c[6], c[7])

    def for_in_list_stmt(self, meta: Any, c: _Children) -> ir.ForIn:
        loc = self._loc(meta)
        if str(c[3]) != "in":
            raise error_at(loc, f"syntax error: expected 'in', got '{c[3]}'")
        var = ir.VarDecl(loc, c[2], c[1], None, annotations=c[0])
        return ir.ForIn(loc, var, c[4], None, c[5])

    def for_inits(self, meta: Any, c: _Children) -> list[ir.Stmt]:
        return list(c)

    def for_updates(self, meta: Any, c: _Children) -> list[ir.Stmt]:
        return list(c)

    def for_var(self, meta: Any, c: _Children) -> ir.VarDecl:
        return ir.VarDecl(self._loc(meta), c[2], c[1], c[3], annotations=c[0])

    def return_stmt(self, meta: Any, c: _Children) -> ir.Return:
        return ir.Return(self._loc(meta), c[0])

    def empty_stmt(self, meta: Any, c: _Children) -> ir.Empty:
        return ir.Empty(self._loc(meta))

    def switch_stmt(self, meta: Any, c: _Children) -> ir.Switch:
        return ir.Switch(self._loc(meta), c[0], list(c[1:]))

    def switch_case(self, meta: Any, c: _Children) -> ir.SwitchCase:
        return ir.SwitchCase(self._loc(meta), [c[0]], c[1])

    def var_decl(self, meta: Any, c: _Children) -> ir.VarDecl:
        return ir.VarDecl(self._loc(meta), c[2], c[1], c[3], annotations=c[0])

    def const_decl(self, meta: Any, c: _Children) -> ir.ConstDecl:
        return ir.ConstDecl(self._loc(meta), c[2], c[1], c[3], annotations=c[0])

    def instance_decl(self, meta: Any, c: _Children) -> ir.InstanceDecl:
        return ir.InstanceDecl(self._loc(meta), c[3], c[1], c[2], annotations=c[0],
                               methods=c[4] or [])

    def obj_init(self, meta: Any, c: _Children) -> list[ir.FunctionDecl]:
        return list(c)

    # ----------------------------------------------------------------- declarations
    def params(self, meta: Any, c: _Children) -> list[ir.Param]:
        return [p for p in c if p is not None]

    def param(self, meta: Any, c: _Children) -> ir.Param:
        direction = str(c[1]) if c[1] is not None else ""
        return ir.Param(self._loc(meta), c[3], direction, c[2], c[4], annotations=c[0])

    def ctor_params(self, meta: Any, c: _Children) -> list[ir.Param]:
        return cast(list[ir.Param], c[0])

    def _no_type_params(self, args: list[ir.TypeRef] | None, what: str, loc: ir.Loc) -> None:
        if args:
            raise error_at(loc, f"unsupported: generic {what} declarations")

    def _struct_like(self, kind: str, meta: Any, c: _Children) -> ir.TypeDecl:
        loc = self._loc(meta)
        self._no_type_params(c[2], kind, loc)
        return ir.TypeDecl(loc, c[1], kind, fields=list(c[3:]), annotations=c[0])

    def header_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        return self._struct_like("header", meta, c)

    def struct_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        return self._struct_like("struct", meta, c)

    def union_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        return self._struct_like("header_union", meta, c)

    def field(self, meta: Any, c: _Children) -> tuple[str, ir.TypeRef, ir.Annotations]:
        return (c[2], c[1], c[0])

    def enum_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        members: list[tuple[str, ir.Expr | None]] = [(m, None) for m in c[2:] if m is not None]
        return ir.TypeDecl(self._loc(meta), c[1], "enum", members=members, annotations=c[0])

    def ser_enum_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        members = [m for m in c[3:] if m is not None]
        return ir.TypeDecl(
            self._loc(meta), c[2], "enum", members=members, target=c[1], annotations=c[0]
        )

    def enum_member(self, meta: Any, c: _Children) -> tuple[str, ir.Expr | None]:
        return (c[0], c[1])

    def error_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        members: list[tuple[str, ir.Expr | None]] = [(m, None) for m in c[1:] if m is not None]
        return ir.TypeDecl(self._loc(meta), "error", "error", members=members)

    def match_kind_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        members: list[tuple[str, ir.Expr | None]] = [(m, None) for m in c[1:] if m is not None]
        return ir.TypeDecl(self._loc(meta), "match_kind", "match_kind", members=members)

    def typedef_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        return ir.TypeDecl(self._loc(meta), c[2], "typedef", target=c[1], annotations=c[0])

    def newtype_decl(self, meta: Any, c: _Children) -> ir.TypeDecl:
        return ir.TypeDecl(self._loc(meta), c[2], "type", target=c[1], annotations=c[0])

    @staticmethod
    def _type_param_names(args: list[ir.TypeRef] | None, loc: ir.Loc) -> list[str]:
        names = []
        for ref in args or []:
            if ref.args or ref.width is not None or ref.stack_size is not None:
                raise error_at(ref.loc, "syntax error: expected a type parameter name")
            names.append(ref.name)
        return names

    def extern_object(self, meta: Any, c: _Children) -> ir.ExternDecl:
        loc = self._loc(meta)
        methods = list(c[3:])
        return ir.ExternDecl(
            loc,
            str(c[1]),
            type_params=self._type_param_names(c[2], loc),
            methods=methods,
            annotations=c[0],
        )

    def extern_function(self, meta: Any, c: _Children) -> ir.ExternDecl:
        loc = self._loc(meta)
        fn = ir.ExternMethod(
            loc, c[2], self._type_param_names(c[3], loc), c[4], c[1], annotations=c[0]
        )
        return ir.ExternDecl(loc, c[2], function=fn, annotations=c[0])

    def extern_forward(self, meta: Any, c: _Children) -> None:
        return None

    def ctor_decl(self, meta: Any, c: _Children) -> ir.ExternMethod:
        return ir.ExternMethod(self._loc(meta), str(c[1]), [], c[2], None, annotations=c[0])

    def method(self, meta: Any, c: _Children) -> ir.ExternMethod:
        loc = self._loc(meta)
        return ir.ExternMethod(
            loc,
            c[3],
            self._type_param_names(c[4], loc),
            c[5],
            c[2],
            abstract=c[1] is not None,
            annotations=c[0],
        )

    def action_decl(self, meta: Any, c: _Children) -> ir.ActionDecl:
        return ir.ActionDecl(self._loc(meta), c[1], c[2], c[3], annotations=c[0])

    def function_decl(self, meta: Any, c: _Children) -> ir.FunctionDecl:
        loc = self._loc(meta)
        return ir.FunctionDecl(
            loc, c[2], c[1], self._type_param_names(c[3], loc), c[4], c[5], annotations=c[0]
        )

    def package_decl(self, meta: Any, c: _Children) -> ir.PackageDecl:
        loc = self._loc(meta)
        return ir.PackageDecl(
            loc, c[1], self._type_param_names(c[2], loc), c[3], annotations=c[0]
        )

    def parser_type(self, meta: Any, c: _Children) -> ir.ParserDecl:
        loc = self._loc(meta)
        return ir.ParserDecl(
            loc, c[1], self._type_param_names(c[2], loc), c[3], is_type=True, annotations=c[0]
        )

    def parser_decl(self, meta: Any, c: _Children) -> ir.ParserDecl:
        loc = self._loc(meta)
        self._no_type_params(c[2], "parser", loc)
        body = c[5:]
        return ir.ParserDecl(
            loc,
            c[1],
            [],
            c[3],
            ctor_params=c[4] or [],
            locals=[d for d in body if not isinstance(d, ir.ParserState)]
            + self._direct_instances(),
            states=[s for s in body if isinstance(s, ir.ParserState)],
            annotations=c[0],
        )

    def parser_state(self, meta: Any, c: _Children) -> ir.ParserState:
        stmts = [s for s in c[2:-1] if s is not None]
        transition, where = c[-1] if c[-1] is not None else (None, None)
        return ir.ParserState(
            self._loc(meta), c[1], stmts, transition, transition_loc=where, annotations=c[0]
        )

    def transition(self, meta: Any, c: _Children) -> tuple[str | ir.Select, ir.Loc]:
        return c[0], self._loc(meta)

    def select_expr(self, meta: Any, c: _Children) -> ir.Select:
        keys = [x for x in c if isinstance(x, ir.Expr)]
        cases = [x for x in c if isinstance(x, ir.SelectCase)]
        return ir.Select(self._loc(meta), keys, cases)

    def select_case(self, meta: Any, c: _Children) -> ir.SelectCase:
        keyset = c[0]
        if isinstance(keyset, _TupleKeyset):
            keyset = ir.ListExpr(keyset.loc, keyset.items)
        return ir.SelectCase(self._loc(meta), keyset, c[1])

    def control_type(self, meta: Any, c: _Children) -> ir.ControlDecl:
        loc = self._loc(meta)
        return ir.ControlDecl(
            loc, c[1], self._type_param_names(c[2], loc), c[3], is_type=True, annotations=c[0]
        )

    def control_decl(self, meta: Any, c: _Children) -> ir.ControlDecl:
        loc = self._loc(meta)
        self._no_type_params(c[2], "control", loc)
        return ir.ControlDecl(
            loc,
            c[1],
            [],
            c[3],
            ctor_params=c[4] or [],
            locals=list(c[5:-1]) + self._direct_instances(),
            apply=c[-1],
            annotations=c[0],
        )

    # ----------------------------------------------------------------- tables
    def table_decl(self, meta: Any, c: _Children) -> ir.TableDecl:
        table = ir.TableDecl(self._loc(meta), c[1], annotations=c[0])
        for prop in c[2:]:
            prop(table)
        return table

    def key_prop(self, meta: Any, c: _Children) -> Any:
        def apply(table: ir.TableDecl) -> None:
            table.keys = list(c[1:])

        return apply

    def actions_prop(self, meta: Any, c: _Children) -> Any:
        def apply(table: ir.TableDecl) -> None:
            table.actions = list(c[1:])

        return apply

    def entries_prop(self, meta: Any, c: _Children) -> Any:
        def apply(table: ir.TableDecl) -> None:
            table.entries = list(c[2:])
            table.entries_are_const = c[1] is not None

        return apply

    def generic_prop(self, meta: Any, c: _Children) -> Any:
        loc = self._loc(meta)
        name, value = str(c[2]), c[3]

        def apply(table: ir.TableDecl) -> None:
            if name == "default_action":
                table.default_action = self._action_ref_of(value)
                table.default_action.annotations = c[0]
                table.default_is_const = c[1] is not None
            elif name == "size":
                table.size = value
            else:
                table.properties[name] = value

        if name == "default_action" and self._action_ref_of(value) is None:
            raise error_at(loc, "default_action must name an action")
        return apply

    @staticmethod
    def _action_ref_of(value: ir.Expr) -> Any:
        if isinstance(value, ir.PathExpr):
            return ir.ActionRef(value.loc, value.name)
        if isinstance(value, ir.Call) and isinstance(value.target, ir.PathExpr):
            return ir.ActionRef(value.loc, value.target.name, value.args)
        return None

    def key_elem(self, meta: Any, c: _Children) -> ir.KeyElement:
        return ir.KeyElement(self._loc(meta), c[0], c[1], c[2])

    def action_item(self, meta: Any, c: _Children) -> ir.ActionRef:
        ref: ir.ActionRef = c[1]
        ref.annotations = c[0]
        return ref

    def action_ref(self, meta: Any, c: _Children) -> ir.ActionRef:
        return ir.ActionRef(self._loc(meta), c[0], c[1] or [])

    def entry(self, meta: Any, c: _Children) -> ir.Entry:
        annotations = {**c[0], **c[4]}
        keyset = c[2]
        keys = keyset.items if isinstance(keyset, _TupleKeyset) else [keyset]
        return ir.Entry(self._loc(meta), keys, c[3], c[1], annotations)

    def entry_priority(self, meta: Any, c: _Children) -> ir.Expr:
        return cast(ir.Expr, c[0])
