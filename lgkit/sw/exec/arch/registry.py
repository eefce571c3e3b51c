"""The architectures of the built-in target, by the package type of a program's `main`."""

from __future__ import annotations

from lgkit.sw.exec.arch.base import Architecture
from lgkit.sw.exec.arch.tna import TNA
from lgkit.sw.exec.arch.v1model import V1MODEL
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import P4Error, error_at

ARCHITECTURES: tuple[Architecture, ...] = (V1MODEL, TNA)


def architecture_of(program: ir.Program) -> Architecture:
    """The architecture whose package `main` instantiates (P4Error `unsupported:` otherwise)."""
    main = program.main
    if main is None:
        main = next((d for d in program.decls
                     if isinstance(d, ir.InstanceDecl) and d.name == "main"), None)
    if main is None:
        raise error_at(program.loc, "unsupported: a program without a `main` package instance")
    for arch in ARCHITECTURES:
        if main.type_ref.name == arch.package:
            return arch
    known = ", ".join(f"{a.package} ({a.name})" for a in ARCHITECTURES)
    raise _unsupported(main, f"package {main.type_ref.name}: the built-in target runs {known}")


def _unsupported(node: ir.Node, what: str) -> P4Error:
    return error_at(node.loc, f"unsupported: {what}")
