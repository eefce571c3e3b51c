"""Mutation strategies for fuzzing the kit's text inputs (P4 sources, STF files) with hypothesis.

A mutant is a seed text with a few edits drawn by hypothesis (so failures shrink to the fewest,
smallest edits): delete, duplicate or move a span, insert a token from the language's own
vocabulary or a random character, replace an identifier or a number. The number of examples
per test is LGKIT_FUZZ_EXAMPLES (small in `make test`, large in `make fuzz`); each input has
INPUT_SECONDS to finish (`per_input_limit`), so a hang fails on the input that hangs.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("LGKIT_FUZZ_EXAMPLES", "60"))
INPUT_SECONDS = 30.0  # one input (compile, load, run a packet): typically under 0.1 s
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # hangs are caught by pytest-timeout; slow inputs are not bugs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=EXAMPLES <= 100,  # `make test` runs the same inputs every time
)

P4_TOKENS = [
    "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", ".", ":", "=", "==", "!=", "&&&", "..",
    "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "<<", ">>", "++", "|+|", "|-|", "?",
    "+=", "<<=", "&&", "||", "@name(\"x\")", "@priority(1)", "#include \"x.p4\"", "#define X 1",
    "bit<8>", "int<4>", "varbit<16>", "bool", "error", "header", "struct", "header_union",
    "enum", "typedef", "type", "const", "action", "table", "control", "parser", "state",
    "transition", "select", "default", "accept", "reject", "apply", "if", "else", "switch",
    "return", "exit", "for", "in", "break", "continue", "extern", "package", "out", "inout",
    "key", "actions", "entries", "default_action", "size", "exact", "ternary", "lpm",
    "true", "false", "0", "1", "8w255", "4s-1", "0x1F", "32w0xFFFFFFFF", "1_000", "_",
    "hdr", "meta", "sm", "standard_metadata", "isValid()", "setValid()", ".next", ".last",
    "[0]", "[7:0]", "extract", "emit", "lookahead<bit<8>>()", "NoAction", "mark_to_drop(sm)",
    "\"str\"", "/*", "*/", "//", "\n", "\t", "\\", "'", "`", "\x00", "\u00e9", "\ufeff",
]
STF_TOKENS = [
    "packet", "expect", "add", "setdefault", "mirroring_add", "mc_mgrp_create",
    "mc_node_create", "mc_node_associate", "counter_read", "counter_write", "register_read",
    "register_write", "register_reset", "meter_set_rates", "wait", "check_counter", "#",
    "0", "1", "-1", "511", "65536", "99999999999999999999", "0x", "0xZZ", "*", "**", "$",
    "&&&", "/", "/33", "->", ":", "(", ")", ",", "=", "==", "<", ">=", "packets", "bytes",
    "ff", "FF", "0.5:10", "1:", ":1", "MyIngress.", "NoAction()", "a(x:1)", "\n", "\t",
    "\x00", "\u00e9", " ",
]

_WORD = re.compile(r"[A-Za-z_]\w*|\d\w*")


@st.composite
def mutants(draw: st.DrawFn, seeds: list[str], tokens: list[str], max_edits: int = 4) -> str:
    """A seed text with 1..max_edits random edits."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, max_edits))):
        text = _edit(draw, text, tokens)
    return text


def _edit(draw: st.DrawFn, text: str, tokens: list[str]) -> str:
    n = len(text)
    at = draw(st.integers(0, n))
    kind = draw(st.sampled_from(["delete", "duplicate", "move", "token", "char", "word",
                                 "truncate"]))
    span = draw(st.integers(1, 40))
    end = min(n, at + span)
    if kind == "delete":
        return text[:at] + text[end:]
    if kind == "duplicate":
        return text[:end] + text[at:end] + text[end:]
    if kind == "move":
        piece, rest = text[at:end], text[:at] + text[end:]
        to = draw(st.integers(0, len(rest)))
        return rest[:to] + piece + rest[to:]
    if kind == "token":
        return text[:at] + " " + draw(st.sampled_from(tokens)) + " " + text[at:]
    if kind == "char":
        return text[:at] + draw(st.characters(codec="utf-8")) + text[at:]
    if kind == "word":
        words = [m for m in _WORD.finditer(text)]
        if not words:
            return text
        target = draw(st.sampled_from(words))
        other = draw(st.sampled_from(words)).group(0)
        return text[: target.start()] + other + text[target.end():]
    return text[:at]


class InputHang(Exception):
    """An input ran longer than INPUT_SECONDS."""


@contextmanager
def per_input_limit(seconds: float = INPUT_SECONDS) -> Iterator[None]:
    """Raise InputHang in the block after `seconds` (SIGALRM; the fuzz tests turn
    pytest-timeout off, which would use the same signal)."""

    def on_alarm(signum: int, frame: object) -> None:
        raise InputHang(f"one input took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
