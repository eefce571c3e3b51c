"""Frontend entry points: P4 source -> preprocessed text -> checked ir.Program."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.check import check_program
from lgkit.sw.lang.frontend.diagnostics import P4Error, error_at
from lgkit.sw.lang.frontend.limits import check_nesting, deep_recursion
from lgkit.sw.lang.frontend.parser import parse_program
from lgkit.sw.lang.frontend.preprocess import needs_preprocessing, preprocess


@dataclass
class CompiledProgram:
    """A checked program; `source` is the preprocessed text (compile_source reloads it)."""

    ir: ir.Program
    source: str
    name: str


def compile_source(text: str, filename: str = "<string>") -> CompiledProgram:
    """Compile P4 text; includes are searched in lgkit's p4include dir. Raises P4Error."""
    source = preprocess(text, filename) if needs_preprocessing(text) else text
    return _compile_preprocessed(source, filename)


def compile_file(
    path: str,
    include_dirs: tuple[str, ...] | list[str] = (),
    defines: dict[str, str] | None = None,
) -> CompiledProgram:
    """Compile a P4 file, with extra include directories and -D defines. Raises P4Error."""
    if "\0" in path:
        raise error_at(ir.Loc(path, 1, 1), "cannot read a file whose name contains a NUL")
    if Path(path).exists() and not Path(path).is_file():
        raise error_at(ir.Loc(path, 1, 1), f"cannot read {path}: not a regular file")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise error_at(ir.Loc(path, 1, 1), f"cannot read {path}: {exc}") from None
    source = preprocess(text, path, include_dirs, defines)
    return _compile_preprocessed(source, path)


def _compile_preprocessed(source: str, filename: str) -> CompiledProgram:
    with deep_recursion():
        return _parse_and_check(source, filename)


def _parse_and_check(source: str, filename: str) -> CompiledProgram:
    try:
        program = parse_program(source, filename)
        check_nesting(program)
        check_program(program)
    except P4Error:
        raise
    except RecursionError:
        raise error_at(ir.Loc(filename, 1, 1), "program nesting is too deep") from None
    except Exception as exc:  # a frontend bug must still give a message, not a traceback
        message = f"internal error: {type(exc).__name__}: {exc}"
        raise error_at(ir.Loc(filename, 1, 1), message) from None
    name = Path(filename).stem if filename != "<string>" else "program"
    return CompiledProgram(program, source, name)
