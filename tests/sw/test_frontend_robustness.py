"""Mangled versions of a real program: every one gives P4Error or compiles, never a traceback."""

from __future__ import annotations

import functools
import random
import re

import pytest
from testpaths import TESTS

from lgkit.sw.lang.frontend import P4Error, compile_source
from lgkit.sw.lang.frontend.preprocess import preprocess

PROGRAM = TESTS / "p4" / "frontend" / "constructs.p4"


def _tokens_removed(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for _ in range(3):
        del words[rng.randrange(len(words))]
    return " ".join(words)


@functools.cache
def _mangled_sources() -> list[str]:
    text = preprocess(PROGRAM.read_text(), str(PROGRAM))
    rng = random.Random(1234)
    variants = [text[: rng.randrange(len(text))] for _ in range(15)]
    variants += [_tokens_removed(text, rng) for _ in range(25)]
    for needle, replacement in [("bit<8>", "bit<16>"), ("==", "="), ("8w", "8s"), ("apply", "")]:
        variants.append(text.replace(needle, replacement, 5))
    variants += [_names_swapped(text, rng) for _ in range(25)]
    return variants


def _names_swapped(text: str, rng: random.Random) -> str:
    """Two identifiers of the user's part replaced by other names of the program."""
    start = text.index("typedef bit<48> mac_t")
    names = [m for m in re.finditer(r"[A-Za-z_]\w*", text) if m.start() > start]
    pool = sorted({m.group() for m in names})
    for m in sorted(rng.sample(names, 2), key=lambda m: -m.start()):
        text = text[: m.start()] + rng.choice(pool) + text[m.end() :]
    return text


@pytest.mark.parametrize("index", range(len(_mangled_sources())))
def test_mangled_program_never_crashes(index: int) -> None:
    source = _mangled_sources()[index]
    try:
        compile_source(source, "mangled.p4")
    except P4Error as exc:
        assert exc.diagnostics
        for diag in exc.diagnostics:
            assert str(diag).startswith(f"{diag.loc.file}:{diag.loc.line}:{diag.loc.col}: error: ")
            assert "internal error" not in diag.message, diag.message


@pytest.mark.slow
def test_deep_nesting_is_compiled_not_crashed() -> None:
    depth = 1500
    chain = " else ".join(f"if (x == {i}) {{ x = {i + 1}; }}" for i in range(depth))
    terms = " + ".join(["x"] * depth)
    source = f"control c(inout bit<16> x) {{ apply {{ {chain} x = {terms}; }} }}"
    with pytest.raises(P4Error) as info:
        compile_source(source, "deep.p4")
    assert str(info.value) == "deep.p4:1:1: error: program has no 'main' package instance"
