"""The `lgkit compile` and `lgkit stf` subcommands of the built-in P4 target."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lgkit.sw.atomic_file import write_all
from lgkit.sw.exec.native.select import ENGINE_HELP, ENGINES
from lgkit.sw.exec.passclock import LIMIT_NS, PASS_NS, PassClock

if TYPE_CHECKING:
    from finsy.proto import p4i

    from lgkit.sw.lang.frontend.compiler import CompiledProgram

NO_OPT_HELP = ("run the generated code without the optimisers (inline, peephole, slot-locals), "
               "as LGKIT_NO_OPT=1 does")


def register(subparsers: argparse._SubParsersAction) -> None:
    compile_cmd = subparsers.add_parser(
        "compile", help="compile a v1model P4 program: P4Info + device config"
    )
    compile_cmd.add_argument("program", help="the P4_16 v1model program (.p4)")
    compile_cmd.add_argument("--out", required=True, help="output directory")
    add_preprocessor_options(compile_cmd)
    compile_cmd.set_defaults(func=run_compile)

    stf_cmd = subparsers.add_parser(
        "stf", help="run a p4c STF test on the built-in target (or BMv2, or both compared)")
    stf_cmd.add_argument("program", help="the P4_16 v1model program (.p4)")
    stf_cmd.add_argument("test", help="the STF test (.stf)")
    stf_cmd.add_argument("-v", "--verbose", action="store_true", help="print what happened")
    stf_cmd.add_argument(
        "--max-parser-transitions", type=positive_int, default=None, metavar="N",
        help="parser states one packet may visit before error.ParserTimeout (default 10000)")
    stf_cmd.add_argument(
        "--max-loop-iterations", type=positive_int, default=None, metavar="N",
        help="loop iterations one pass may run before it ends and its packet is dropped "
             "(default 100000)")
    stf_cmd.add_argument(
        "--pass-ns", type=pass_ns, default=PASS_NS, metavar="NS",
        help=f"virtual time one ingress or egress pass takes (default {PASS_NS}; the verdict "
             "must not depend on it)")
    stf_cmd.add_argument(
        "--target", choices=["builtin", "bmv2", "both"], default="builtin",
        help="builtin (default); bmv2: simple_switch, one packet at a time (needs p4c-bm2-ss, "
             "simple_switch, simple_switch_CLI); both: run on both and compare every packet "
             "and every value read")
    stf_cmd.add_argument("--work", help="BMv2: keep its files (JSON, pcaps, log) here")
    stf_cmd.add_argument("--no-opt", action="store_true", help=NO_OPT_HELP)
    stf_cmd.add_argument("--engine", choices=ENGINES, default=None, help=ENGINE_HELP)
    add_preprocessor_options(stf_cmd)
    stf_cmd.set_defaults(func=run_stf)


def add_preprocessor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-I", dest="include", action="append", default=[], help="include dir")
    parser.add_argument("-D", dest="define", action="append", default=[], help="NAME[=VALUE]")


def defines(items: list[str]) -> dict[str, str]:
    result = {}
    for item in items:
        name, _, value = item.partition("=")
        result[name] = value or "1"
    return result


def compile_program(args: argparse.Namespace) -> CompiledProgram | None:
    """CompiledProgram, or None after printing located errors."""
    from lgkit.sw.lang.frontend.compiler import compile_file
    from lgkit.sw.lang.frontend.diagnostics import P4Error

    problem = file_problem(args.program)
    if problem:
        print(f"{args.program}: error: {problem}", file=sys.stderr)
        return None
    try:
        return compile_file(args.program, args.include, defines(args.define))
    except P4Error as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return None


def file_problem(path: str) -> str | None:
    """Why `path` cannot be read as a source file, or None."""
    if Path(path).is_file():
        return None
    if Path(path).is_dir():
        return "is a directory, not a P4 program"
    return "not a regular file" if Path(path).exists() else "no such file"


def p4info_or_error(compiled: CompiledProgram, program: str) -> p4i.P4Info | None:
    from lgkit.sw.lang.p4info import P4InfoError, build_p4info

    try:
        return build_p4info(compiled.ir)
    except P4InfoError as exc:
        print(f"{program}: error: {exc}", file=sys.stderr)
        return None


def loads(compiled: CompiledProgram) -> bool:
    """Whether the program loads (code generation): load-time errors are compile errors."""
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang.frontend.diagnostics import P4Error

    try:
        Pipeline.load(compiled)
    except P4Error as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return False
    return True


def run_compile(args: argparse.Namespace) -> int:
    from google.protobuf import text_format

    from lgkit.sw.lang.device_config import config_document
    from lgkit.sw.lang.p4info import TEXT_HEADER

    compiled = compile_program(args)
    if compiled is None:
        return 1
    info = p4info_or_error(compiled, args.program)
    if info is None or not loads(compiled):
        return 1
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"{args.out}: error: --out names a file, not a directory", file=sys.stderr)
        return 1
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"{args.out}: error: {exc.strerror}", file=sys.stderr)
        return 1
    stem = Path(args.program).stem
    text = TEXT_HEADER + text_format.MessageToString(info)
    config = config_document(Path(args.program).name, compiled.source, text)
    p4info_path, json_path = out / f"{stem}.p4info.txt", out / f"{stem}.json"
    try:
        write_all({p4info_path: text, json_path: json.dumps(config, indent=1) + "\n"})
    except OSError as exc:
        print(f"{exc.filename}: error: cannot write: {exc.strerror} (nothing written)",
              file=sys.stderr)
        return 1
    print(f"wrote {p4info_path} and {json_path}")
    return 0


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def pass_ns(text: str) -> int:
    """argparse type: a pass's virtual time, 1 ns up to the bound of one packet's work."""
    value = positive_int(text)
    if value > LIMIT_NS:
        raise argparse.ArgumentTypeError(f"at most {LIMIT_NS} (one packet's bound), not {value}")
    return value


def read_stf_text(path: str) -> str | None:
    """The text of an STF file, or None after printing why it cannot be one."""
    p = Path(path)
    problem = None
    if p.exists() and not p.is_file():
        problem = "not a regular file"
    else:
        try:
            data = p.read_bytes()
        except OSError as exc:
            problem = exc.strerror
        else:
            if b"\0" in data:
                problem = "a binary file, not an STF text"
            else:
                try:
                    return data.decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    problem = f"not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})"
    print(f"{path}: error: {problem}", file=sys.stderr)
    return None


def run_stf(args: argparse.Namespace) -> int:
    from lgkit.sw.tools.stf import StfError, StfRunner, format_result, parse_stf

    text = read_stf_text(args.test)
    if text is None:
        return 1
    try:
        stmts = parse_stf(text, args.test)
    except StfError as exc:
        print(exc, file=sys.stderr)
        return 1
    compiled = compile_program(args)
    if compiled is None:
        return 1
    info = p4info_or_error(compiled, args.program)
    if info is None:
        return 1
    from lgkit.sw.exec.pipeline import Pipeline, select_engine, turn_optimisers_off
    from lgkit.sw.lang.frontend.diagnostics import P4Error

    if args.no_opt:
        turn_optimisers_off()
    if args.engine:
        select_engine(args.engine)
    try:
        pipeline = Pipeline.load(compiled)
    except P4Error as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return 1
    if args.max_parser_transitions is not None:
        pipeline.max_parser_transitions = args.max_parser_transitions
    if args.max_loop_iterations is not None:
        pipeline.max_loop_iterations = args.max_loop_iterations
    pipeline.untimed_clock = PassClock(args.pass_ns)
    if args.target != "builtin":
        from lgkit.sw.tools.bmv2_stf import run_stf_on_bmv2

        return run_stf_on_bmv2(args, stmts, pipeline, info)
    try:
        result = StfRunner(pipeline, info, args.test).run(stmts)
    except StfError as exc:
        print(exc, file=sys.stderr)
        return 1
    logs = getattr(pipeline, "logs", [])
    if args.verbose:
        for line in result.log + logs:
            print(line)
    else:  # the program's errors (a pass that hit a bound) are shown even without -v
        for line in logs:
            if line.startswith("error:"):
                print(line, file=sys.stderr)
        for name, values in getattr(pipeline, "digests", []):
            print(f"digest {name}: {values}")
        for port, data in result.ignored:
            print(f"note: output on port {port} (not an STF port) ignored: {data.hex().upper()}")
    if result.passed:
        print(f"PASS {args.test}")
        return 0
    print(f"FAIL {args.test}")
    print(format_result(result))
    return 1
