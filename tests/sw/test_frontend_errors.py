"""Malformed programs: each gives one located `file:line:col: error: message`, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.lang.frontend import P4Error, compile_file

ERRORS_DIR = TESTS / "p4" / "frontend" / "errors"
CASES = sorted(ERRORS_DIR.glob("*.p4"))


def _expectation(path: Path) -> tuple[int, int, str]:
    """The first line of each case reads `// expect: LINE:COL: message`."""
    first = path.read_text().splitlines()[0]
    line, col, message = first.split("expect:", 1)[1].strip().split(":", 2)
    return int(line), int(col), message.strip()


def test_corpus_covers_every_error_class() -> None:
    names = {p.stem for p in CASES}
    for prefix in ("syntax_", "unknown_", "width_", "bool_vs_bit", "wrong_arg", "wrong_direction",
                   "duplicate_", "bad_include", "unterminated_if", "unsupported_"):
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_malformed_program_gives_located_error(path: Path) -> None:
    line, col, message = _expectation(path)
    with pytest.raises(P4Error) as info:
        compile_file(str(path))
    first = info.value.diagnostics[0]
    assert (first.loc.file, first.loc.line, first.loc.col) == (str(path), line, col)
    assert first.severity == "error"
    assert message in first.message
    assert str(first) == f"{path}:{line}:{col}: error: {first.message}"
    assert "internal error" not in str(info.value)


def test_several_errors_are_reported_together(tmp_path: Path) -> None:
    src = tmp_path / "many.p4"
    src.write_text(
        "control a(inout bit<8> x) { apply { x = y; } }\n"
        "control b(inout bit<8> x) { apply { x = z; } }\n"
    )
    with pytest.raises(P4Error) as info:
        compile_file(str(src))
    got = [(d.loc.line, d.message) for d in info.value.diagnostics]
    assert got == [(1, "unknown name 'y'"), (2, "unknown name 'z'")]


def test_missing_file_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "absent.p4"))
    assert str(info.value).startswith(f"{tmp_path / 'absent.p4'}:1:1: error: cannot read")


def test_uses_of_a_failed_declaration_add_no_follow_on_errors(tmp_path: Path) -> None:
    src = tmp_path / "cascade.p4"
    src.write_text(
        "const bit<8> A = nope;\n"
        "const bit<8> B = A + 1;\n"
        "header h_t { bit<W> f; }\n"
        "struct s_t { h_t h; }\n"
    )
    with pytest.raises(P4Error) as info:
        compile_file(str(src))
    got = [(d.loc.line, d.message) for d in info.value.diagnostics]
    assert got == [(1, "unknown name 'nope'"), (3, "unknown name 'W'")]
