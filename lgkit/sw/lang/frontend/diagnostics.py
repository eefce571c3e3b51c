"""Located diagnostics and the P4Error exception the frontend raises."""

from __future__ import annotations

from dataclasses import dataclass

from lgkit.sw.lang.ir import Loc

MAX_ERRORS = 5


@dataclass(frozen=True)
class Diagnostic:
    """One message about the program: `file:line:col: severity: message`."""

    loc: Loc
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.severity}: {self.message}"


class P4Error(Exception):
    """Compilation failed; `diagnostics` holds every error found (at most MAX_ERRORS)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


def error_at(loc: Loc, message: str) -> P4Error:
    """A P4Error holding a single error."""
    return P4Error([Diagnostic(loc, "error", message)])
