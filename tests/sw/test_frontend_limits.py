"""Include loops, unreadable includes, deep nesting, macro bombs, recursion, huge widths and
huge arrays end in a located error or run: never a traceback, a hang, a multi-GB allocation or
a dependence on Python's own nesting limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_interp_helpers import PRELUDE, load, send, v1switch
from testpaths import REPO

from lgkit.sw.exec.interp.codegen import MAX_PACKET_SLOTS
from lgkit.sw.exec.interp.instances import MAX_ARRAY_CELLS
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.frontend.limits import MAX_BRANCH_DEPTH, MAX_LAZY_DEPTH
from lgkit.sw.lang.frontend.preprocess import MAX_EXPANSION_WORK
from lgkit.sw.lang.p4info import P4InfoError, build_p4info
from lgkit.sw.lang.types import MAX_WIDTH

HEADERS = """
header h_t { bit<8> a; bit<8> b; bit<8> o; }
struct headers { h_t h; }
struct metadata { }
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
"""

PARSER = """
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
"""


def ingress(body: str, functions: str = "") -> str:
    return (HEADERS + PARSER + functions + "control MyIngress(inout headers hdr, inout metadata "
            "meta, inout standard_metadata_t sm) {\n apply {\n" + body
            + "\n sm.egress_spec = 1;\n }\n}\n" + v1switch())


def error_of(source: str) -> str:
    with pytest.raises(P4Error) as info:
        load(source)
    text = str(info.value)
    assert text.startswith("test.p4:") and ": error: " in text, text
    return text


# ------------------------------------------------------------------ includes


def test_a_file_including_itself_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "self.p4").write_text('#include "self.p4"\n')
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "self.p4"))
    assert "self.p4:1:1: error: #include nested more than 64 files deep" in str(info.value)


def test_two_files_including_each_other_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "a.p4").write_text('// a\n#include "b.p4"\n')
    (tmp_path / "b.p4").write_text('#include "a.p4"\n')
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "a.p4"))
    assert "(does a file include itself?)" in str(info.value)


@pytest.mark.parametrize("target", ["/dev/zero", "."])
def test_including_a_device_or_directory_is_refused(tmp_path: Path, target: str) -> None:
    (tmp_path / "main.p4").write_text(f'// main\n#include "{target}"\n')
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "main.p4"))
    assert "main.p4:2:1: error: cannot include" in str(info.value)
    assert "not a regular file" in str(info.value)


def test_an_include_name_with_a_nul_is_refused() -> None:
    # found by `make fuzz`: the NUL reached open() and raised ValueError
    with pytest.raises(P4Error) as info:
        compile_source("// a NUL in the name\n#include < \x00 v1model.p4>\n", "nul.p4")
    assert "nul.p4:2:1: error: cannot include" in str(info.value)
    assert "the name contains a NUL character" in str(info.value)


def test_an_included_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.p4").write_bytes("// caf\xe9\n".encode("latin-1"))
    (tmp_path / "main.p4").write_text('#include "latin1.p4"\n')
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "main.p4"))
    assert "main.p4:1:1: error: cannot include" in str(info.value)
    assert "not UTF-8 text (byte 6)" in str(info.value)


def test_compiling_a_device_is_refused() -> None:
    with pytest.raises(P4Error) as info:
        compile_file("/dev/zero")
    assert str(info.value) == "/dev/zero:1:1: error: cannot read /dev/zero: not a regular file"


# ------------------------------------------------------------------ nesting


def nested_ifs(depth: int) -> str:
    return "if (hdr.h.a != 0) {\n" * depth + "hdr.h.o = 7;" + "}" * depth


def test_ifs_nested_to_the_limit_run() -> None:
    out = send(load(ingress(nested_ifs(MAX_BRANCH_DEPTH))), 0, bytes([1, 2, 3]))
    assert out == [(1, bytes([1, 2, 7]))]


def test_ifs_nested_beyond_the_limit_are_a_located_error() -> None:
    text = error_of(ingress(nested_ifs(MAX_BRANCH_DEPTH + 1)))
    line = 6 + HEADERS.count("\n") + PARSER.count("\n") + MAX_BRANCH_DEPTH
    assert text.startswith(f"test.p4:{line}:1: error: unsupported: if, for and switch "), text


def test_a_thousand_nested_blocks_are_a_located_error() -> None:
    text = error_of(ingress("{" * 1000 + "hdr.h.o = 1;" + "}" * 1000))
    assert "error: unsupported: blocks nested more than 100 deep" in text


def test_a_long_else_if_chain_is_flat() -> None:
    chain = " else ".join(f"if (hdr.h.a == {i}) {{ hdr.h.o = {i}; }}" for i in range(200))
    out = send(load(ingress(chain)), 0, bytes([199, 0, 0]))
    assert out == [(1, bytes([199, 0, 199]))]


def deep_ternary(depth: int) -> str:
    """?: nested `depth` deep, each branch a call with a side effect on hdr.h.b."""
    expr = "bump(hdr.h.b)"
    for _ in range(depth - 1):
        expr = f"(hdr.h.a == 0 ? bump(hdr.h.b) : {expr})"
    return f"hdr.h.o = {expr};"


BUMP = "bit<8> bump(inout bit<8> x) { x = x + 1; return x; }\n"


def test_ternaries_with_calls_nested_to_the_limit_inside_deep_ifs_run() -> None:
    body = nested_ifs(MAX_BRANCH_DEPTH).replace("hdr.h.o = 7;", deep_ternary(MAX_LAZY_DEPTH))
    out = send(load(ingress(body, BUMP)), 0, bytes([1, 10, 0]))
    assert out == [(1, bytes([1, 11, 11]))]  # only the innermost bump ran


def test_ternaries_nested_beyond_the_limit_are_a_located_error() -> None:
    text = error_of(ingress(deep_ternary(200), BUMP))
    assert f"error: unsupported: ?:, && and || nested more than {MAX_LAZY_DEPTH} deep" in text


@pytest.mark.slow
def test_a_long_signed_expression_runs_and_has_p4info() -> None:
    terms = " - ".join(["(int<8>)hdr.h.a"] * 600)
    source = ingress(f"hdr.h.o = (bit<8>)({terms});")
    pipeline = load(source)
    assert send(pipeline, 0, bytes([3, 0, 0])) == [(1, bytes([3, 0, (3 - 599 * 3) & 0xFF]))]
    build_p4info(compile_source("#include <v1model.p4>\n" + source, "test.p4").ir)


def test_a_3000_state_parser_chain_runs() -> None:
    states = "".join(f"state s{i} {{ transition s{i + 1}; }}\n" for i in range(3000))
    parser = PARSER.replace("transition accept; }", "transition s0; }\n" + states
                            + "state s3000 { transition accept; }")
    source = (HEADERS + parser + "control MyIngress(inout headers hdr, inout metadata meta, "
              "inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }\n" + v1switch())
    assert send(load(source), 0, bytes([1, 2, 3])) == [(1, bytes([1, 2, 3]))]


# ------------------------------------------------------------------ bounded work (p4c's limits)


def test_a_macro_expansion_bomb_is_a_located_error_in_bounded_work(tmp_path: Path) -> None:
    doubling = "".join(f"#define X{i} X{i - 1} X{i - 1}\n" for i in range(1, 41))
    (tmp_path / "bomb.p4").write_text("#define X0 a\n" + doubling + "X40\n")
    with pytest.raises(P4Error) as info:
        compile_file(str(tmp_path / "bomb.p4"))
    assert f"error: macro expansion exceeds {MAX_EXPANSION_WORK:,} tokens" in str(info.value)


def test_the_kits_largest_program_compiles_within_the_expansion_bound() -> None:
    compile_file(str(REPO / "p4" / "linkguardian.p4"))


RECURSIVE = {
    "function": ("bit<8> f(in bit<8> x) { return f(x); }", "hdr.h.o = f(hdr.h.a);", "'f'"),
    "action": ("action a1() { a1(); }", "a1();", "'a1'"),
}


@pytest.mark.parametrize("kind", sorted(RECURSIVE))
def test_recursion_is_an_undeclared_name_as_in_p4c(kind: str) -> None:
    callable_, call, name = RECURSIVE[kind]
    assert f"error: unknown name {name}" in error_of(ingress(call, callable_))


def test_a_control_local_action_calling_itself_is_an_undeclared_name() -> None:
    source = ingress("", "").replace(" apply {\n", " action a2() { a2(); }\n apply {\n a2();", 1)
    assert "error: unknown name 'a2'" in error_of(source)


def test_an_action_calling_an_earlier_one_still_compiles() -> None:
    out = send(load(ingress("a2();", "action a1() { } action a2() { a1(); }")), 0, b"\1\2\3")
    assert out == [(1, b"\1\2\3")]


@pytest.mark.parametrize("declaration", [
    "bit<2049> big;", "int<65536> big;", "varbit<99999999999> big;", "bit<99999999999> big;"])
def test_widths_beyond_2048_are_refused_as_p4c_does(declaration: str) -> None:
    kind, width = declaration.split(">")[0].split("<")
    text = error_of(ingress("", f"header wide_t {{ {declaration} }}"))
    assert f"error: {kind}<{width}>: Compiler only supports widths up to {MAX_WIDTH}" in text


def test_a_literal_wider_than_2048_bits_is_refused_without_building_it() -> None:
    text = error_of(ingress("hdr.h.o = (bit<8>)(99999999999w1 >> 3);"))
    assert f"error: 99999999999w: Compiler only supports widths up to {MAX_WIDTH}" in text


def test_a_2048_bit_field_runs() -> None:
    out = send(load(ingress("hdr.h.o = (bit<8>)(((bit<2048>)hdr.h.a) << 2040 >> 2040);")), 0,
               b"\5\0\0")
    assert out == [(1, b"\5\0\5")]


@pytest.mark.parametrize("extern", [
    "register<bit<32>>(1 << 30) r;", "counter(1 << 30, CounterType.packets) r;",
    "meter(1 << 30, MeterType.packets) r;"])
def test_arrays_of_2_to_the_30_cells_are_refused_before_allocating(extern: str) -> None:
    source = ingress("", "").replace(" apply {\n", f" {extern}\n apply {{\n", 1)
    text = error_of(source)
    assert f"'MyIngress.r' of {1 << 30} cells: the built-in target holds at most " \
           f"{MAX_ARRAY_CELLS} cells" in text


def test_a_size_beyond_int32_is_refused_in_p4info_as_p4c_does() -> None:
    source = ingress("", "").replace(" apply {\n", " register<bit<8>>(32w0xffffffff) r;\n"
                                     " apply {\n", 1)
    with pytest.raises(P4InfoError) as info:
        build_p4info(compile_source(PRELUDE + source, "test.p4").ir)
    assert str(info.value) == ("Register 'MyIngress.r' has a size that doesn't fit in an "
                               "integer: 4294967295")


def test_a_header_stack_of_two_billion_is_refused_before_allocating() -> None:
    source = ingress("").replace("struct headers { h_t h; }",
                                 "struct headers { h_t h; h_t[2000000000] hs; }", 1)
    assert f"error: unsupported: a packet's headers, metadata and locals need more than " \
           f"{MAX_PACKET_SLOTS} values" in error_of(source)
