"""tna.p4 as bf-p4c ships it: our copies are byte-identical to the install, and they compile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lgkit.sw.lang.frontend.compiler import compile_source
from lgkit.sw.lang.frontend.preprocess import P4INCLUDE_DIR

TNA_FILES = ("tna.p4", "tofino1_specs.p4", "tofino1_arch.p4", "tofino1_base.p4")


def installed_p4include() -> Path | None:
    """bf-p4c's p4include folder (<install>/share/p4c/p4include beside its bin/), or None."""
    driver = shutil.which("bf-p4c")
    if driver is None:
        return None
    for root in (Path(driver).parent.parent, Path(driver).resolve().parent.parent):
        folder = root / "share" / "p4c" / "p4include"
        if (folder / "tna.p4").is_file():
            return folder
    return None


def test_shipped_tna_files_are_byte_identical_to_bf_p4c() -> None:
    folder = installed_p4include()
    if folder is None:
        pytest.skip("bf-p4c not on PATH (source /work/shared/oracle/env-tofino.sh)")
    for name in TNA_FILES:
        ours = (Path(P4INCLUDE_DIR) / name).read_bytes()
        assert ours == (folder / name).read_bytes(), name


def test_tna_p4_selects_tofino1_inside_our_copy_only() -> None:
    # __TARGET_TOFINO__ is 1 inside tna.p4 (as bf-p4c --target tofino defines it) ...
    program = compile_source("#include <tna.p4>\nconst bit<32> N = PORT_METADATA_SIZE;\n"
                             "control C() { apply { } }\npackage P(C c);\nP(C()) main;\n")
    const = next(d for d in program.ir.decls if getattr(d, "name", "") == "N")
    assert const.value == 64  # tofino1_specs.p4: 64 bits of port metadata
    # ... and an ordinary program's #if sees an undefined macro as 0, as C says
    program = compile_source("#if __TARGET_TOFINO__ == 1\nconst bit<8> T = 1;\n#else\n"
                             "const bit<8> T = 0;\n#endif\ncontrol C() { apply { } }\n"
                             "package P(C c);\nP(C()) main;\n")
    const = next(d for d in program.ir.decls if getattr(d, "name", "") == "T")
    assert const.value == 0
