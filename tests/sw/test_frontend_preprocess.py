"""Preprocessing: includes (<>, "", -I), defines, conditionals, and locations after #line."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.sw.lang.frontend import P4Error, compile_file
from lgkit.sw.lang.frontend.compiler import compile_source
from lgkit.sw.lang.frontend.preprocess import needs_preprocessing, preprocess, split_line_markers

MAIN_TAIL = """
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { BODY }
}
parser MyParser(packet_in b, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control MyVerify(inout headers_t h, inout meta_t m) { apply { } }
control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t h, inout meta_t m) { apply { } }
control MyDeparser(packet_out b, in headers_t h) { apply { } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
"""


def _project(tmp_path: Path, body: str = "sm.egress_spec = PORT(1);") -> Path:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "types.p4").write_text(
        "#ifndef TYPES_P4\n#define TYPES_P4\n"
        "struct headers_t { }\nstruct meta_t { bit<8> x; }\n"
        "#define PORT(p) ((bit<9>)(p) + OFFSET)\n#endif\n"
    )
    (tmp_path / "local.p4").write_text("const bit<9> OFFSET = 9w2;\n")
    main = tmp_path / "main.p4"
    main.write_text(
        "#include <core.p4>\n#include <v1model.p4>\n#include <types.p4>\n"
        '#include "local.p4"\n#include <types.p4>\n'
        "#if defined(EXTRA) && EXTRA > 1\nconst bit<8> EXTRA_C = EXTRA;\n#endif\n"
        + MAIN_TAIL.replace("BODY", body)
    )
    return main


def test_includes_defines_and_function_macros(tmp_path: Path) -> None:
    main = _project(tmp_path)
    compiled = compile_file(str(main), include_dirs=[str(tmp_path / "inc")])
    names = [d.name for d in compiled.ir.decls]
    assert names.count("headers_t") == 1 and "OFFSET" in names and "EXTRA_C" not in names
    with_extra = compile_file(str(main), [str(tmp_path / "inc")], defines={"EXTRA": "7"})
    extra = next(d for d in with_extra.ir.decls if d.name == "EXTRA_C")
    assert extra.value == 7


def test_missing_include_dir_is_a_located_error(tmp_path: Path) -> None:
    main = _project(tmp_path)
    with pytest.raises(P4Error) as info:
        compile_file(str(main))
    assert str(info.value).startswith(f"{main}:3:1: error: Include file 'types.p4' not found")


def test_errors_point_into_included_files(tmp_path: Path) -> None:
    main = _project(tmp_path)
    (tmp_path / "local.p4").write_text("\n\nconst bit<9> OFFSET = nope;\n")
    with pytest.raises(P4Error) as info:
        compile_file(str(main), include_dirs=[str(tmp_path / "inc")])
    loc = info.value.diagnostics[0].loc
    assert (Path(loc.file).name, loc.line, loc.col) == ("local.p4", 3, 23)


def test_error_after_macro_expansion_keeps_the_user_line(tmp_path: Path) -> None:
    main = _project(tmp_path, body="sm.egress_spec = PORT(1);\n meta.x = undefined_name;")
    with pytest.raises(P4Error) as info:
        compile_file(str(main), include_dirs=[str(tmp_path / "inc")])
    loc = info.value.diagnostics[0].loc
    text_lines = main.read_text().splitlines()
    assert loc.file == str(main) and "undefined_name" in text_lines[loc.line - 1]


def test_line_markers_are_mapped_and_blanked() -> None:
    text = '#line 10 "a.p4"\nx\ny\n#line 3 "b.p4"\nz\n'
    clean, origin = split_line_markers(text, "main.p4")
    assert clean.splitlines()[0] == "" and clean.splitlines()[1] == "x"
    assert origin[1] == ("a.p4", 10) and origin[2] == ("a.p4", 11) and origin[4] == ("b.p4", 3)


def test_preprocessed_text_needs_no_second_pass() -> None:
    out = preprocess("#define X 1\nconst bit<8> A = X;\n", "m.p4")
    assert "const bit<8> A = 1;" in out
    assert not needs_preprocessing(out)
    assert needs_preprocessing("#include <core.p4>\n")


def test_pragma_and_warning_lines_are_accepted() -> None:
    from lgkit.sw.lang.frontend.parser import parse_program

    text = "#pragma once\n#pragma vendor thing\n#warning careful\nconst bit<8> X = 1;\n"
    program = parse_program(preprocess(text, "p.p4"), "p.p4")
    assert [(d.name, d.loc.line) for d in program.decls] == [("X", 4)]


def test_unknown_directive_is_an_error() -> None:
    with pytest.raises(P4Error) as info:
        preprocess("const bit<8> X = 1;\n#frobnicate\n", "u.p4")
    assert str(info.value) == "u.p4:2:1: error: unknown preprocessor directive #frobnicate"


def test_a_comment_in_a_macro_body_is_not_part_of_its_expansion() -> None:
    program = compile_source("#define N 8 // bits\n#define M (N /* twice */ * 2)\n"
                             "const bit<8> A = N;\nconst bit<8> B = M;\n"
                             "control C() { apply { } }\npackage P(C c);\nP(C()) main;\n")
    values = {d.name: d.value for d in program.ir.decls if d.name in ("A", "B")}
    assert values == {"A": 8, "B": 16}
