"""`p4c-bm2-ss` and `p4c --target bmv2 --arch v1model` command lines over the kit's compiler."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lgkit.sw.atomic_file import write_all
from lgkit.sw.lang.p4info import TEXT_HEADER

if TYPE_CHECKING:
    from finsy.proto import p4i

VERSION = "p4c-bm2-ss (lgkit shim; the LinkGuardian kit's built-in compiler)"
# Options we honour are handled in _Parser._honoured; these are accepted and mean nothing here.
QUIET_FLAGS = {"--emit-externs", "--ndebug", "-g", "-c", "-S", "--loopsUnroll",
               "--parser-inline-opt", "--doNotEmitIncludes", "-O", "-O0", "-O1", "-O2", "-O3"}
QUIET_WITH_VALUE = {"--Wdisable", "--Winfo", "--Wwarn", "--Werror", "--maxErrorCount",
                    "--disable-annotations"}
# Options p4c has that the kit cannot honour: one warning line each, then go on.
UNHONOURED_WITH_VALUE = {"-U", "-T", "--top4", "--dump", "--toJSON", "--fromJSON", "--pp",
                         "--p4runtime-entries-file", "--p4runtime-entries-files", "--metrics",
                         "--excludeFrontendPasses", "--excludeMidendPasses", "-MF", "-MT",
                         "-MQ", "-W", "-Xassembler", "-Xlinker", "-Xpreprocessor"}
UNHONOURED_FLAGS = {"-v", "--nocpp", "-e", "-M", "-MD", "-MG", "-MP", "--testJson",
                    "--listFrontendPasses", "--listMidendPasses", "--help-pragmas",
                    "--help-targets", "-###", "--test-only"}
STD_ALIASES = {"p4-16": 16, "p4_16": 16, "16": 16, "P4₁₆": 16, "p4-14": 14, "p4_14": 14,
               "14": 14, "P4₁₄": 14}


class UsageError(Exception):
    """A command line the shim cannot act on (exit status 1, one line)."""


@dataclass
class Request:
    """What a p4c command line asks for."""

    sources: list[str] = field(default_factory=list)
    output: str | None = None
    p4runtime_files: list[str] = field(default_factory=list)
    p4runtime_file: str | None = None
    p4runtime_format: str = "binary"
    include: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    preprocess_only: bool = False
    warnings: list[str] = field(default_factory=list)


def _values(argv: list[str]) -> list[tuple[str, str | None]]:
    """(option, value) pairs; `--opt=value`, `-Ipath` and `-Dname=v` are split here."""
    pairs: list[tuple[str, str | None]] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            pairs.extend(("", w) for w in words)
            break
        if not word.startswith("-") or word == "-":
            pairs.append(("", word))
            continue
        option, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        for short in ("-I", "-D", "-U", "-o", "-T", "-b", "-a", "-W"):
            if word.startswith(short) and len(word) > 2 and not word.startswith("--"):
                option, eq, inline = short, "=", word[2:]
        if eq:
            pairs.append((option, inline))
        elif _takes_value(option):
            pairs.append((option, next(words, None)))
        else:
            pairs.append((option, None))
    return pairs


def _takes_value(option: str) -> bool:
    return option in ({"-o", "--output", "-I", "-D", "--p4runtime-files", "--p4runtime-file",
                       "--p4runtime-format", "--std", "--p4v", "--target", "-b", "--arch",
                       "-a", "-Xp4c"} | UNHONOURED_WITH_VALUE) or option in (
        QUIET_WITH_VALUE - {"--Wdisable", "--Winfo", "--Wwarn", "--Werror"})


def parse(argv: list[str], prog: str) -> Request:
    """The request in a p4c-bm2-ss / p4c command line; UsageError for what cannot be done."""
    request = Request()
    for option, value in _values(argv):
        if option == "":
            if value is not None:
                request.sources.append(value)
            continue
        if value is None and _takes_value(option):
            raise UsageError(f"option {option} needs a value")
        _apply(request, option, value, prog)
    if not request.sources:
        raise UsageError("no P4 program given")
    if len(request.sources) > 1:
        raise UsageError(f"one P4 program at a time (got {' '.join(request.sources)})")
    return request


def _apply(request: Request, option: str, value: str | None, prog: str) -> None:
    handler = HONOURED.get(option)
    if handler is not None:
        handler(request, value or "")
    elif option in QUIET_FLAGS or option in QUIET_WITH_VALUE:
        return
    elif option in UNHONOURED_WITH_VALUE or option in UNHONOURED_FLAGS:
        request.warnings.append(f"{prog}: warning: {option} is not supported by the kit's "
                                "compiler; ignored")
    else:
        request.warnings.append(f"{prog}: warning: unknown option {option}; ignored")


def _define(request: Request, value: str) -> None:
    name, _, text = value.partition("=")
    request.defines[name] = text or "1"


def _std(request: Request, value: str) -> None:
    version = STD_ALIASES.get(value)
    if version != 16:
        raise UsageError(f"--std {value}: the kit compiles P4_16 only")


def _p4v(request: Request, value: str) -> None:
    if value not in ("16", "p4-16"):
        raise UsageError(f"--p4v {value}: the kit compiles P4_16 only")


def _target(request: Request, value: str) -> None:
    if value != "bmv2":
        raise UsageError(f"--target {value}: the kit's compiler serves --target bmv2 only")


def _arch(request: Request, value: str) -> None:
    if value not in ("v1model", "ss"):
        raise UsageError(f"--arch {value}: the kit's compiler serves --arch v1model only")


def _format(request: Request, value: str) -> None:
    if value not in ("binary", "json", "text"):
        raise UsageError(f"--p4runtime-format {value}: expected binary, json or text")
    request.p4runtime_format = value


def _xp4c(request: Request, value: str) -> None:
    for option, inner in _values(value.split()):
        if option:
            _apply(request, option, inner, "p4c")


HONOURED: dict[str, Callable[[Request, str], None]] = {
    "-o": lambda r, v: setattr(r, "output", v),
    "--output": lambda r, v: setattr(r, "output", v),
    "-I": lambda r, v: r.include.append(v),
    "-D": _define,
    "--p4runtime-files": lambda r, v: r.p4runtime_files.extend(p for p in v.split(",") if p),
    "--p4runtime-file": lambda r, v: setattr(r, "p4runtime_file", v),
    "--p4runtime-format": _format,
    "--std": _std, "--p4v": _p4v, "--target": _target, "-b": _target,
    "--arch": _arch, "-a": _arch, "-E": lambda r, v: setattr(r, "preprocess_only", True),
    "-Xp4c": _xp4c,
}


def p4info_bytes(info: p4i.P4Info, text: str, path: str, fmt: str | None = None) -> bytes:
    """P4Info serialized as p4c does: by the file's suffix (.txt/.txtpb, .json, else binary)."""
    from google.protobuf import json_format

    suffix = Path(path).suffix
    kind = fmt or ("text" if suffix in (".txt", ".txtpb") else "json" if suffix == ".json"
                   else "binary")
    if kind == "text":
        return text.encode()
    if kind == "json":
        return (json_format.MessageToJson(info) + "\n").encode()
    return info.SerializeToString()


def compile_request(request: Request, json_path: str, prog: str,
                    p4i_path: str | None = None) -> int:
    """Compile, check that the program loads, write the JSON and P4Info files; exit code."""
    from google.protobuf import text_format

    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang.bmv2_json import bmv2_json
    from lgkit.sw.lang.device_config import config_document
    from lgkit.sw.lang.frontend.compiler import compile_file
    from lgkit.sw.lang.frontend.diagnostics import P4Error
    from lgkit.sw.lang.p4info import P4InfoError, build_p4info

    source = request.sources[0]
    if not os.path.isfile(source):
        print(f"{source}: error: no such file", file=sys.stderr)
        return 1
    try:
        compiled = compile_file(source, request.include, request.defines)
        if request.preprocess_only:
            sys.stdout.write(compiled.source)
            return 0
        info = build_p4info(compiled.ir)
        Pipeline.load(compiled)  # what would fail when the switch loads it fails now
    except P4Error as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return 1
    except P4InfoError as exc:
        print(f"{source}: error: {exc}", file=sys.stderr)
        return 1
    text = TEXT_HEADER + text_format.MessageToString(info)
    config = config_document(Path(source).name, compiled.source, text)
    document = json.dumps(bmv2_json(info, source, config), indent=1) + "\n"
    files = {json_path: document.encode()}
    if p4i_path:
        files[p4i_path] = compiled.source.encode()
    for path in request.p4runtime_files:
        files[path] = p4info_bytes(info, text, path)
    if request.p4runtime_file:
        files[request.p4runtime_file] = p4info_bytes(info, text, request.p4runtime_file,
                                                     request.p4runtime_format)
    try:
        for path in files:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_all(files)
    except OSError as exc:
        print(f"{prog}: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


def run(argv: list[str], prog: str, driver: bool) -> int:
    """One p4c-bm2-ss (driver False) or p4c (driver True) invocation; the exit code."""
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {prog} [options] PROGRAM.p4  (the lgkit shim; see docs/course.md)\n"
              "honoured: -o, --p4runtime-files, --p4runtime-file/--p4runtime-format, -I, -D, "
              "-E, --std p4-16, --p4v 16, --target bmv2, --arch v1model, --emit-externs")
        return 0
    if any(a in ("--version", "-V") for a in argv):
        print(VERSION)
        return 0
    try:
        request = parse(argv, prog)
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    for warning in request.warnings:
        print(warning, file=sys.stderr)
    stem = Path(request.sources[0]).stem
    if driver:  # p4c: -o is a directory that gets STEM.json and STEM.p4i
        out = Path(request.output or ".")
        return compile_request(request, str(out / f"{stem}.json"), prog, str(out / f"{stem}.p4i"))
    return compile_request(request, request.output or f"{stem}.json", prog)


def p4c_bm2_ss_main() -> int:
    """Console script `lgkit-p4c-bm2-ss` (installed as `p4c-bm2-ss` in the compat dir)."""
    return run(sys.argv[1:], "p4c-bm2-ss", driver=False)


def p4c_main() -> int:
    """Console script `lgkit-p4c` (installed as `p4c` in the compat dir)."""
    return run(sys.argv[1:], "p4c", driver=True)
