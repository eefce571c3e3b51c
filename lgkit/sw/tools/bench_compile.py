"""Frontend speed: `python -m lgkit.sw.tools.bench_compile [--lines N] [FILE.p4 ...]`."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.frontend.diagnostics import P4Error
from lgkit.sw.lang.frontend.preprocess import preprocess

_HEAD = """#include <core.p4>
#include <v1model.p4>
header h_t {
    bit<8> a;
    bit<16> b;
    bit<32> c;
}
struct headers_t {
    h_t h;
}
struct meta_t {
    bit<32> x;
    bit<16> y;
}
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            0: accept;
            default: reject;
        }
    }
}
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
"""
_BLOCK = """    action set_{i}(bit<9> port, bit<32> value) {{
        sm.egress_spec = port;
        meta.x = value + (bit<32>)hdr.h.b * {i};
        hdr.h.c = hdr.h.c ^ meta.x;
    }}
    table t_{i} {{
        key = {{
            hdr.h.a: exact;
            hdr.h.c: ternary;
        }}
        actions = {{ set_{i}; NoAction; }}
        size = 1024;
        default_action = NoAction();
    }}
"""
_APPLY = "        if (t_{i}.apply().hit) {{ meta.y = meta.y + 1; }}\n"
_TAIL = """    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
"""


def synthetic_program(lines: int) -> str:
    """A v1model program of about `lines` lines (tables, actions, an apply chain)."""
    fixed = _HEAD.count("\n") + _TAIL.count("\n") + 1
    per_table = _BLOCK.count("\n") + 1
    count = max(1, (lines - fixed) // per_table)
    blocks = "".join(_BLOCK.format(i=i) for i in range(count))
    applies = "".join(_APPLY.format(i=i) for i in range(count))
    return _HEAD + blocks + "    apply {\n" + applies + _TAIL


def _timed(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(name: str, text: str, filename: str, repeat: int, compile_once: Callable[[], object]
           ) -> None:
    source = preprocess(text, filename)
    first = _timed(compile_once, 1)
    warm = _timed(compile_once, repeat)
    reload = _timed(lambda: compile_source(source, filename), repeat)
    print(f"{name}: {text.count(chr(10))} lines ({source.count(chr(10))} preprocessed): "
          f"first compile {first * 1000:.0f} ms, compile {warm * 1000:.0f} ms, "
          f"reload from preprocessed source {reload * 1000:.0f} ms (median of {repeat})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="*", help="P4 programs to time as well")
    parser.add_argument("--lines", type=int, default=500, help="size of the synthetic program")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("-I", dest="include_dirs", action="append", default=[])
    args = parser.parse_args(argv)
    text = synthetic_program(args.lines)
    try:
        report("synthetic", text, "synthetic.p4", args.repeat,
               lambda: compile_source(text, "synthetic.p4"))
        for path in args.files:
            with open(path) as f:
                body = f.read()
            report(path, body, path, args.repeat,
                   partial(compile_file, path, args.include_dirs))
    except (P4Error, OSError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
