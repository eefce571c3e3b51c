"""The built-in P4_16 frontend: preprocess, parse, check (see compiler.py)."""

from lgkit.target.frontend.compiler import CompiledProgram, compile_file, compile_source
from lgkit.target.frontend.diagnostics import Diagnostic, P4Error

__all__ = ["CompiledProgram", "Diagnostic", "P4Error", "compile_file", "compile_source"]
