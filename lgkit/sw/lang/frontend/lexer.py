"""Lexing help for the LALR parser: which names are types, type-argument brackets, literals."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lark import Token

_NAME = r"[A-Za-z_]\w*"
_TYPE_NAME_PATTERNS = [
    re.compile(rf"\b(?:header|header_union|struct|parser|control|package)\s+({_NAME})"),
    re.compile(rf"\benum\b[^{{;]*?({_NAME})\s*\{{"),
    re.compile(rf"\bextern\s+({_NAME})\s*(?:<[^>{{;]*>\s*)?[{{;]"),
    re.compile(rf"\b(?:typedef|type)\s+[^;{{}}()]*?\b({_NAME})\s*;"),
]
_TYPE_PARAMS = re.compile(rf"<\s*({_NAME}(?:\s*,\s*{_NAME})*)\s*>\s*[({{]")
_COMMENTS_AND_STRINGS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.DOTALL)
_BUILTIN_TYPE_NAMES = {"packet_in", "packet_out", "value_set"}
_KEYWORD_TYPE_STARTS = {"bit", "int", "varbit", "bool", "tuple", "error", "string"}
_TYPE_WITH_ARGS = {"bit", "int", "varbit", "tuple"}
_NAME_TYPES = {"IDENT", "TYPE_IDENT", "DONTCARE"}


def scan_type_names(text: str) -> set[str]:
    """Every identifier the program declares as a type (or a type parameter).

    Like p4c's lexer, the parser needs to know which identifiers name types; P4 programs
    declare types at the top level, so one scan of the whole text finds them.
    """
    names = set(_BUILTIN_TYPE_NAMES)
    text = _COMMENTS_AND_STRINGS.sub(" ", text)
    for pattern in _TYPE_NAME_PATTERNS:
        names.update(m.group(1) for m in pattern.finditer(text))
    for m in _TYPE_PARAMS.finditer(text):
        names.update(n.strip() for n in m.group(1).split(","))
    return names


class _Shadows:
    """Type names redeclared as parameters or variables (`out T hdr` while a type `hdr` exists),
    with the braces they live in, so their uses lex as plain identifiers."""

    def __init__(self) -> None:
        self.entries: list[list[Any]] = []  # [name, brace level, is_param, body entered]

    def __contains__(self, name: str) -> bool:
        return any(e[0] == name for e in self.entries)

    def declare(self, name: str, level: int, is_param: bool) -> None:
        self.entries.append([name, level, is_param, False])

    def open_brace(self, level: int) -> None:
        for entry in self.entries:
            if entry[2] and entry[1] == level - 1:
                entry[3] = True

    def close_brace(self, level: int) -> None:
        self.entries = [
            e for e in self.entries
            if not (e[1] > level or (e[2] and e[3] and e[1] == level))
        ]

    def end_declaration(self, level: int) -> None:
        self.entries = [e for e in self.entries if not (e[2] and not e[3] and e[1] == level)]


class PostLexer:
    """Retypes identifiers and the angle brackets of type arguments (see grammar.lark)."""

    always_accept = ()

    def __init__(self) -> None:
        self.type_names: set[str] = set()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        tokens = self._retype_names(stream)
        pending = next(tokens, None)
        prev: Token | None = None
        open_depths: list[int] = []
        shadows = _Shadows()
        depth = braces = 0
        top_const = False
        while pending is not None:
            tok, pending = pending, next(tokens, None)
            value = tok.value
            if braces == 0 and tok.type != "IDENT" and value == "const":
                top_const = True
            if tok.type == "TYPE_IDENT" and self._is_shadowed(tok, prev, pending, shadows,
                                                             braces, depth, top_const):
                tok.type = "IDENT"
            if tok.type == "LT" and self._opens_type_args(prev, pending, shadows):
                open_depths.append(depth)
                tok = Token.new_borrow_pos("TA_OPEN", "<", tok)
            elif tok.type in ("GT", "SHR") and open_depths and open_depths[-1] == depth:
                closing = list(self._close(tok, open_depths))
                yield from closing
                prev = closing[-1]
                continue
            elif value in ("(", "["):
                depth += 1
            elif value in (")", "]"):
                depth -= 1
            elif value == "{":
                braces += 1
                shadows.open_brace(braces)
            elif value == "}":
                braces -= 1
                shadows.close_brace(braces)
            elif value == ";" and depth == 0:
                shadows.end_declaration(braces)
                top_const = top_const and braces > 0
            prev = tok
            yield tok

    def _retype_names(self, stream: Iterator[Token]) -> Iterator[Token]:
        for tok in stream:
            if tok.type == "IDENT":
                if tok.value == "_":
                    tok.type = "DONTCARE"
                elif tok.value in self.type_names:
                    tok.type = "TYPE_IDENT"
            yield tok

    @staticmethod
    def _is_shadowed(
        tok: Token, prev: Token | None, nxt: Token | None, shadows: _Shadows, braces: int,
        depth: int, top_const: bool,
    ) -> bool:
        """True if this type name is really a variable: declared here, or earlier in scope.

        At the top level only a constant can redeclare a name (a type parameter of core.p4
        or v1model.p4, such as `T`); it stays a value name to the end of the program.
        """
        if tok.value in shadows:
            return True
        if prev is None or nxt is None:
            return False
        ends_type = prev.type in ("TYPE_IDENT", "TA_CLOSE") or prev.value == "]" or (
            prev.value in _KEYWORD_TYPE_STARTS and prev.type not in _NAME_TYPES
        )
        if braces == 0 and depth == 0:
            if top_const and ends_type and nxt.value == "=":
                shadows.declare(tok.value, -1, is_param=False)
                return True
            return False
        if ends_type and nxt.value in (",", ")", ";", "="):
            shadows.declare(tok.value, braces, is_param=depth > 0)
            return True
        return False

    @staticmethod
    def _opens_type_args(prev: Token | None, nxt: Token | None, shadows: _Shadows) -> bool:
        if prev is None:
            return False
        if prev.type == "TYPE_IDENT":
            return True
        if prev.value in _TYPE_WITH_ARGS and prev.type not in _NAME_TYPES:
            return True
        if prev.type == "IDENT" and nxt is not None:
            if nxt.type == "DONTCARE" or (nxt.type == "TYPE_IDENT" and nxt.value not in shadows):
                return True
            return nxt.value in _KEYWORD_TYPE_STARTS and nxt.type not in _NAME_TYPES
        return False

    @staticmethod
    def _close(tok: Token, open_depths: list[int]) -> Iterator[Token]:
        open_depths.pop()
        yield Token.new_borrow_pos("TA_CLOSE", ">", tok)
        if tok.type == "SHR":
            second = Token("GT", ">", (tok.start_pos or 0) + 1, tok.line, (tok.column or 0) + 1)
            if open_depths:
                open_depths.pop()
                second = Token.new_borrow_pos("TA_CLOSE", ">", second)
            yield second


def parse_annotation(text: str) -> tuple[str, list[str]]:
    """'@name("x", 2)' -> ('name', ['"x"', '2']): top-level comma-separated raw arguments."""
    body = text[1:].strip()
    paren = body.find("(")
    if paren < 0:
        return body, []
    name, inner = body[:paren].strip(), body[paren + 1 : body.rindex(")")]
    args: list[str] = []
    depth, in_string, start, i = 0, False, 0, 0
    while i < len(inner):
        ch = inner[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
        i += 1
    last = inner[start:].strip()
    if last or args:
        args.append(last)
    return name, args


def parse_int_literal(text: str) -> tuple[int, int | None, bool]:
    """'8w0xFF' -> (255, 8, False); '16s-3' -> (-3, 16, True); '0b1_0' -> (2, None, False)."""
    width: int | None = None
    signed = False
    m = re.match(r"(\d+)([ws])", text)
    if m:
        width, signed = int(m.group(1)), m.group(2) == "s"
        text = text[m.end() :]
    negative = text.startswith("-")
    digits = text.lstrip("-").replace("_", "")
    prefix = digits[:2].lower()
    bases = {"0x": 16, "0o": 8, "0b": 2, "0d": 10}
    value = int(digits[2:], bases[prefix]) if prefix in bases else int(digits, 10)
    return (-value if negative else value), width, signed
