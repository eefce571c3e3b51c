"""Shared helpers of the interpreter tests: compile inline P4 and run packets through it."""

from __future__ import annotations

from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_source

PRELUDE = """
#include <core.p4>
#include <v1model.p4>
"""

EMPTY_CONTROL = """
control {name}(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
"""


def load(program: str, seed: int | None = 1, engine: str | None = None) -> Pipeline:
    """Compile a program (PRELUDE is prepended) and load its pipeline (`engine`: as
    Pipeline.load; "python" for a test of the Python engine's own workings)."""
    return Pipeline.load(compile_source(PRELUDE + program, "test.p4"), seed=seed, engine=engine)


def v1switch(parser: str = "MyParser", verify: str = "MyVerify", ingress: str = "MyIngress",
             egress: str = "MyEgress", compute: str = "MyCompute",
             deparser: str = "MyDeparser") -> str:
    return (f"V1Switch({parser}(), {verify}(), {ingress}(), {egress}(), {compute}(), "
            f"{deparser}()) main;\n")


def send(pipeline: Pipeline, port: int, data: bytes) -> list[tuple[int, bytes]]:
    return run_untimed(pipeline, port, data)
