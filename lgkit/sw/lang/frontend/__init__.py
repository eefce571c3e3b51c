"""The built-in P4_16 frontend: preprocess, parse, check (see compiler.py)."""

from lgkit.sw.lang.frontend.compiler import CompiledProgram, compile_file, compile_source
from lgkit.sw.lang.frontend.diagnostics import Diagnostic, P4Error

__all__ = ["CompiledProgram", "Diagnostic", "P4Error", "compile_file", "compile_source"]
