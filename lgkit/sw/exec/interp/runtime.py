"""Helpers the generated code calls at run time, and the per-pass packet context."""

from __future__ import annotations

from lgkit.sw.exec.interp.hashes import pack_bits


class ParserError(Exception):
    """Raised inside a generated parser: parsing stops with parser_error = code."""

    def __init__(self, code: int, pos: int | None = None):
        self.code = code
        self.pos = pos  # the cursor where a sub-parser failed (None: the raiser's own)


class ExitBlock(Exception):
    """`exit`: ends the current top-level block."""


class StackIndexError(Exception):
    """A header stack index out of bounds (parser: error.StackOutOfBounds)."""


class LoopLimit(Exception):
    """A pass ran more loop iterations than the pipeline's max_loop_iterations; `loop` names
    the loop that went past the bound (its source location)."""

    def __init__(self, loop: str):
        super().__init__(loop)
        self.loop = loop


EXIT = ExitBlock()


class Ctx:
    """Per-pass packet context: input bytes and parse position, deparser output, the length
    register (follows setValid/setInvalid), and the v1model request registers."""

    __slots__ = (
        "data",
        "pos",
        "payload",
        "plen",
        "out",
        "now",
        "clone",
        "resubmit",
        "recirc",
        "digest",
        "truncate",
        "dm",
        "dreg",
        "count_len",
        "steps",
        "loops",
        "parsed",
    )

    def __init__(self, data: bytes, now: int):
        self.data = data
        self.pos = 0
        self.payload = b""
        self.plen = len(data)
        self.out: list = []
        self.now = now
        self.clone: tuple[int, int | None] | None = None
        self.resubmit: int | None = None
        self.recirc: int | None = None
        self.digest: tuple[str, tuple] | None = None
        self.truncate: int | None = None
        self.dm = 0
        self.dreg: tuple | None = None  # (direct register, hit entry) of the last table applied
        self.count_len = len(data)
        self.steps = 0  # parser state transitions so far (bounded: error.ParserTimeout)
        self.loops = 0  # loop iterations so far in this pass (bounded: LoopLimit)
        self.parsed: tuple | None = None  # the parse-memo entry of this parse (passthrough.py)


def read_bits(data: bytes, pos: int, width: int) -> int:
    """`width` bits at bit offset `pos` (caller checked the bounds)."""
    first = pos >> 3
    skip = pos & 7
    nbytes = (skip + width + 7) >> 3
    chunk = int.from_bytes(data[first : first + nbytes], "big")
    return (chunk >> (nbytes * 8 - skip - width)) & ((1 << width) - 1)


def stack_index(index: int, size: int) -> int:
    if 0 <= index < size:
        return index
    raise StackIndexError()


def shl(value: int, amount: int, mask: int, width: int) -> int:
    return (value << amount) & mask if amount < width else 0


def div(a: int, b: int) -> int:
    return a // b if b else 0


def mod(a: int, b: int) -> int:
    return a % b if b else 0


def deparse(parts: list) -> bytes:
    """Concatenate emitted pieces: whole-byte headers as bytes, others as (value, width)."""
    try:
        return b"".join(parts)
    except TypeError:
        pass
    acc = 0
    nbits = 0
    for part in parts:
        if isinstance(part, bytes):
            value, width = int.from_bytes(part, "big"), len(part) * 8
        else:
            value, width = part
        acc = (acc << width) | value
        nbits += width
    return pack_bits(acc, nbits)


def push_front(S: list, base: int, size: int, stride: int, count: int) -> None:
    """stack.push_front(count): shift elements up, new ones invalid, nextIndex grows."""
    if count <= 0:
        return
    first = base + 1
    end = first + size * stride
    count = min(count, size)
    kept = S[first : end - count * stride]
    S[first:end] = [0] * (count * stride) + kept
    S[base] = min(S[base] + count, size)


def pop_front(S: list, base: int, size: int, stride: int, count: int) -> None:
    """stack.pop_front(count): shift elements down, freed ones invalid, nextIndex shrinks."""
    if count <= 0:
        return
    first = base + 1
    end = first + size * stride
    count = min(count, size)
    moved = S[first + count * stride : end]
    S[first:end] = moved + [0] * (count * stride)
    S[base] = max(S[base] - count, 0)


def format_log(message: str, values: list) -> str:
    """log_msg: replace each "{}" with the next value, in order."""
    parts = message.split("{}")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        out.append(str(values[i]) if i < len(values) else "{}")
        out.append(rest)
    return "".join(out)
