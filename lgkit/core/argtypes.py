"""argparse for every command: types for numbers that say which range they allow (nan, inf, out
of range: rejected), and a parser whose usage errors are one line."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, NoReturn


def ranged(kind: type[int] | type[float], low: float, high: float, *, above: bool = False,
           below: bool = False, even: bool = False) -> Callable[[str], Any]:
    """Parser of a finite `kind` within [low, high]; `above` excludes low, `below` high."""
    form = "g" if kind is float else "d"
    interval = f"{'(' if above else '['}{low:{form}}, {high:{form}}{')' if below else ']'}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a valid {kind.__name__}: {text!r}") from None
        if (not math.isfinite(value) or value < low or value > high or (above and value == low)
                or (below and value == high)):
            raise argparse.ArgumentTypeError(f"{text} is not within {interval}")
        if even and value % 2:
            raise argparse.ArgumentTypeError(f"{text} is not an even number")
        return value

    return parse


SEED = ranged(int, 0, 2**32 - 1)
"""A random seed (numpy's seeds are 32-bit)."""
SHARE = ranged(float, 0.0, 1.0)
"""A share within [0, 1] (0.5 = 50%)."""
LOSS_RATE = ranged(float, 0.0, 1.0, below=True)
"""A loss rate: 1.0 would lose everything."""


def host_port(text: str) -> str:
    """A server address HOST:PORT, optionally with a tcp:// scheme (a Dask scheduler's form)."""
    host, sep, port = text.removeprefix("tcp://").rpartition(":")
    if not (sep and host and port.isdigit() and 1 <= int(port) <= 65535):
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 1..65535), got {text!r}")
    return text

RATE_MBPS = ranged(float, 0.0, 100_000.0, above=True)
"""A link rate in Mb/s (at most 100 Gb/s)."""
SECONDS = ranged(float, 0.0, 86_400.0, above=True)
"""A length of time in seconds (at most a day)."""


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line `lgkit: error: COMMAND: message` (exit status 2, argparse's for
    usage errors), the whole usage being one `--help` away; subcommand parsers inherit it."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("lgkit").strip()
        self.exit(2, f"lgkit: error: {command + ': ' if command else ''}{message}\n")
