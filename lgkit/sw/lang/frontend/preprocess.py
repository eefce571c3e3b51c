"""C preprocessing of P4 sources (pcpp) and the mapping of output lines back to user files."""

from __future__ import annotations

import copy
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pcpp

from lgkit.sw.lang.frontend.diagnostics import MAX_ERRORS, Diagnostic, P4Error
from lgkit.sw.lang.ir import Loc

MAX_INCLUDE_DEPTH = 64
# Tokens macro expansion may handle in one compile (each nested expansion counts again): the
# kit's largest program (p4/linkguardian.p4 with v1model.p4) uses 16k; 40 doubling #defines
# would ask for 2^40. Reaching the bound costs about 2 s.
MAX_EXPANSION_WORK = 250_000
P4INCLUDE_DIR = str(Path(__file__).resolve().parent.parent / "p4include")
# bf-p4c --target tofino defines __TARGET_TOFINO__ as 1; the tna.p4 we ship (as bf-p4c ships it)
# asks for it, so inside that file an undefined __TARGET_TOFINO__ is 1 (Tofino 1)
TNA_P4 = os.path.join(P4INCLUDE_DIR, "tna.p4")

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?!line\b)[A-Za-z]", re.MULTILINE)
_LINE_MARKER = re.compile(r'^[ \t]*#[ \t]*line[ \t]+(\d+)(?:[ \t]+"((?:[^"\\]|\\.)*)")?')


class _ExpansionLimit(Exception):
    """Macro expansion went past MAX_EXPANSION_WORK tokens."""


class _Preprocessor(pcpp.Preprocessor):  # type: ignore[misc]  # pcpp ships no types
    """pcpp with errors collected as diagnostics, comments kept (so lines do not move) and
    macro expansion bounded."""

    def __init__(self) -> None:
        super().__init__()
        self.line_directive = "#line"
        self.diagnostics: list[Diagnostic] = []
        self.expansion_work = 0

    def expand_macros(self, tokens: list[Any], expanding_from: list[Any] | None = None,
                      ) -> list[Any]:
        """pcpp's expansion, stopped (with a located error) past MAX_EXPANSION_WORK tokens."""
        self.expansion_work += len(tokens)
        if self.expansion_work > MAX_EXPANSION_WORK:
            where: tuple[str | None, int | None] = \
                (tokens[0].source, tokens[0].lineno) if tokens else (None, None)
            self._report(*where, f"macro expansion exceeds {MAX_EXPANSION_WORK:,} tokens "
                         "(macros that expand each other many times over?)")
            raise _ExpansionLimit
        expanded: list[Any] = super().expand_macros(tokens, expanding_from or [])
        return expanded

    def _report(self, file: str | None, line: int | None, message: str) -> None:
        self.diagnostics.append(Diagnostic(Loc(file or "<string>", line or 1, 1), "error", message))

    def on_error(self, file: str, line: int, msg: str) -> None:
        self._report(file, line, msg)

    def on_unknown_macro_in_expr(self, ident: str) -> int:
        """0 as in C, but __TARGET_TOFINO__ in our tna.p4 is 1 (see TNA_P4)."""
        return 1 if ident == "__TARGET_TOFINO__" and self.source == TNA_P4 else 0

    def include(self, tokens: list[Any], original_line: list[Any]) -> Iterator[object]:
        """#include, refusing loops (nesting deeper than MAX_INCLUDE_DEPTH)."""
        where: tuple[str | None, int | None] = \
            (tokens[0].source, tokens[0].lineno) if tokens else (None, None)
        if self.include_depth > MAX_INCLUDE_DEPTH:
            self._report(*where, f"#include nested more than {MAX_INCLUDE_DEPTH} files deep "
                         "(does a file include itself?)")
            return
        self._include_at: tuple[str | None, int | None] | None = where
        yield from super().include(tokens, original_line)

    def on_file_open(self, is_system_include: bool, includepath: str) -> io.TextIOBase:
        """Open an included file as UTF-8 text. A name with a NUL, a device, FIFO or directory
        (which could block) and a file that is not UTF-8 are refused with a located error; a
        missing file raises OSError so that the next include directory is tried."""
        problem = None
        if "\0" in includepath:
            problem = "the name contains a NUL character"
        elif os.path.exists(includepath) and not os.path.isfile(includepath):
            problem = "not a regular file"
        else:
            data = Path(includepath).read_bytes()  # OSError: try the next directory
            try:
                return io.StringIO(data.decode("utf-8-sig"))
            except UnicodeDecodeError as exc:
                problem = f"not UTF-8 text (byte {exc.start})"
        if self._include_at is not None:
            self._report(*self._include_at, f"cannot include {includepath!r}: {problem}")
            self._include_at = None
        return io.StringIO("")

    def on_comment(self, tok: object) -> bool:
        return True

    def define(self, tokens: Any) -> None:
        """#define, a comment in the body one space (C removes comments before it expands
        macros: `#define N 8 // bits` is 8)."""
        if not isinstance(tokens, str):
            tokens = [_space(t) if t.type in ("CPP_COMMENT1", "CPP_COMMENT2") else t
                      for t in tokens]
        super().define(tokens)

    def on_directive_unknown(
        self, directive: object, toks: list[Any], ifpassthru: bool, precedingtoks: list[Any]
    ) -> bool | None:
        name = directive.value  # type: ignore[attr-defined]
        source, line = directive.source, directive.lineno  # type: ignore[attr-defined]
        if name in ("line", "pragma"):
            return None
        text = "".join(t.value for t in toks).strip()
        if name == "error":
            self._report(source, line, f"#error {text}")
        elif name != "warning":
            self._report(source, line, f"unknown preprocessor directive #{name}")
        return True


def _space(tok: Any) -> Any:
    space = copy.copy(tok)
    space.type, space.value = "CPP_WS", " "
    return space


def needs_preprocessing(text: str) -> bool:
    """True if the text has any directive other than #line markers."""
    return _DIRECTIVE.search(text) is not None


def preprocess(
    text: str,
    filename: str,
    include_dirs: tuple[str, ...] | list[str] = (),
    defines: dict[str, str] | None = None,
) -> str:
    """Run the C preprocessor; the output carries #line markers naming the original files."""
    pp = _Preprocessor()
    for directory in (P4INCLUDE_DIR, *include_dirs):
        pp.add_path(directory)
    # #line markers: the main file as the user named it, included files by their full path
    main_file = re.escape(os.path.abspath(filename)) + "$"
    pp.rewrite_paths = [(main_file, filename.replace("\\", "\\\\"))]
    for name, value in (defines or {}).items():
        pp.define(f"{name} {value}")
    pp.parse(text, filename)
    out = io.StringIO()
    try:
        pp.write(out)
    except _ExpansionLimit:
        pass  # reported as a diagnostic
    if pp.diagnostics:
        raise P4Error(pp.diagnostics[:MAX_ERRORS])
    return out.getvalue()


def split_line_markers(text: str, filename: str) -> tuple[str, list[tuple[str, int]]]:
    """Blank out #line markers and other # lines; map each output line to (file, line)."""
    lines = text.split("\n")
    origin: list[tuple[str, int]] = []
    current_file, next_line = filename, 1
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            marker = _LINE_MARKER.match(line)
            if marker:
                next_line = int(marker.group(1))
                if marker.group(2) is not None:
                    current_file = marker.group(2).replace('\\"', '"').replace("\\\\", "\\")
            else:
                next_line += 1
            origin.append((current_file, next_line))
            lines[i] = ""
            continue
        origin.append((current_file, next_line))
        next_line += 1
    return "\n".join(lines), origin
