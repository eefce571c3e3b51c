"""Expression semantics of the interpreter against a Python reference, on random operands."""

from __future__ import annotations

import random

import pytest
from test_interp_helpers import load, send, v1switch

# Results are written into header `r` (one 16-bit field per expression) and emitted.
EXPRS: list[tuple[str, str]] = [
    ("add", "(bit<16>)(h.a + h.b)"),
    ("sub", "(bit<16>)(h.a - h.b)"),
    ("mul", "(bit<16>)(h.a * h.b)"),
    ("sadd", "(bit<16>)(h.a |+| h.b)"),
    ("ssub", "(bit<16>)(h.a |-| h.b)"),
    ("ssadd", "(bit<16>)(bit<8>)(h.sa |+| h.sb)"),
    ("sssub", "(bit<16>)(bit<8>)(h.sa |-| h.sb)"),
    ("sadd_signed", "(bit<16>)(bit<8>)(h.sa + h.sb)"),
    ("shl", "(bit<16>)(h.a << h.sh)"),
    ("shr", "(bit<16>)(h.a >> h.sh)"),
    ("shl_const", "(bit<16>)(h.a << 9)"),
    ("sshr", "(bit<16>)(bit<8>)(h.sa >> h.sh)"),
    ("neg", "(bit<16>)(-h.a)"),
    ("sneg", "(bit<16>)(bit<8>)(-h.sa)"),
    ("inv", "(bit<16>)(~h.a)"),
    ("and_or_xor", "(bit<16>)((h.a & h.b) | (h.a ^ 8w0x5a))"),
    ("slice", "(bit<16>)h.a[6:3]"),
    ("concat", "h.a ++ h.b"),
    ("sconcat", "(bit<16>)(h.sa ++ h.b)"),
    ("widen_signed", "(bit<16>)(int<16>)h.sa"),
    ("narrow", "(bit<16>)(bit<4>)h.a"),
    ("to_signed_narrow", "(bit<16>)(bit<4>)(int<4>)h.sa"),
    ("lt", "(bit<16>)(bit<1>)(h.a < h.b)"),
    ("slt", "(bit<16>)(bit<1>)(h.sa < h.sb)"),
    ("eq", "(bit<16>)(bit<1>)(h.a == h.b)"),
    ("logic", "(bit<16>)(bit<1>)(h.a > 10 && !(h.b > 10) || h.sh == 0)"),
    ("ternary", "h.a > h.b ? (bit<16>)h.a : (bit<16>)h.b"),
    ("div_mod", "(h.a / 8w4) ++ (h.a % 8w5)"),
]


def reference(a: int, b: int, sa: int, sb: int, sh: int) -> dict[str, int]:
    def s8(x: int) -> int:
        x &= 0xFF
        return x - 256 if x >= 128 else x

    def u8(x: int) -> int:
        return x & 0xFF

    def clamp(x: int, lo: int, hi: int) -> int:
        return max(lo, min(hi, x))

    return {
        "add": u8(a + b),
        "sub": u8(a - b),
        "mul": u8(a * b),
        "sadd": min(a + b, 255),
        "ssub": max(a - b, 0),
        "ssadd": u8(clamp(sa + sb, -128, 127)),
        "sssub": u8(clamp(sa - sb, -128, 127)),
        "sadd_signed": u8(s8(sa + sb)),
        "shl": u8(a << sh) if sh < 8 else 0,
        "shr": a >> sh,
        "shl_const": 0,
        "sshr": u8(sa >> sh),
        "neg": u8(-a),
        "sneg": u8(s8(-sa)),
        "inv": u8(~a),
        "and_or_xor": (a & b) | (a ^ 0x5A),
        "slice": (a >> 3) & 0xF,
        "concat": (a << 8) | b,
        "sconcat": (u8(sa) << 8) | b,
        "widen_signed": sa & 0xFFFF,
        "narrow": a & 0xF,
        "to_signed_narrow": sa & 0xF,
        "lt": int(a < b),
        "slt": int(sa < sb),
        "eq": int(a == b),
        "logic": int((a > 10 and not b > 10) or sh == 0),
        "ternary": max(a, b),
        "div_mod": (((a // 4) << 8) | (a % 5)) & 0xFFFF,
    }


def program() -> str:
    fields = "\n".join(f"    bit<16> {name};" for name, _ in EXPRS)
    assigns = "\n".join(f"        hdr.r.{name} = {code};" for name, code in EXPRS)
    return f"""
header in_t {{ bit<8> a; bit<8> b; int<8> sa; int<8> sb; bit<8> sh; }}
header r_t {{
{fields}
}}
struct headers {{ in_t h; r_t r; }}
struct metadata {{ }}
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control MyVerify(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{
        in_t h = hdr.h;
        hdr.r.setValid();
{assigns}
        sm.egress_spec = 2;
    }}
}}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{ }}
}}
control MyCompute(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control MyDeparser(packet_out pkt, in headers hdr) {{
    apply {{ pkt.emit(hdr.h); pkt.emit(hdr.r); }}
}}
""" + v1switch()


@pytest.fixture(scope="module")
def pipeline():
    return load(program())


def test_expressions_match_reference(pipeline) -> None:
    rng = random.Random(7)
    cases = [(0, 0, 0, 0, 0), (255, 255, 127, 127, 7), (255, 1, -128, 1, 8), (3, 250, -1, -128, 9)]
    for _ in range(120):
        cases.append((rng.randrange(256), rng.randrange(256), rng.randrange(-128, 128),
                      rng.randrange(-128, 128), rng.randrange(12)))
    names = [n for n, _ in EXPRS]
    for a, b, sa, sb, sh in cases:
        data = bytes([a, b, sa & 0xFF, sb & 0xFF, sh]) + b"payload"
        out = send(pipeline, 1, data)
        assert len(out) == 1 and out[0][0] == 2
        body = out[0][1]
        assert body[:5] == data[:5] and body.endswith(b"payload")
        got = {n: int.from_bytes(body[5 + 2 * i : 7 + 2 * i], "big") for i, n in enumerate(names)}
        want = reference(a, b, sa, sb, sh)
        assert got == want, (a, b, sa, sb, sh)
