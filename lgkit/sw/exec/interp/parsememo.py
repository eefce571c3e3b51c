"""Parse memo: which top-level parsers are a function of the packet's first bytes alone.

A parser qualifies when its states only extract fixed-size headers into its `headers` parameter
and select on those headers' fields, lookaheads and constants, with no loop, local, metadata,
value set or sub-parser. Its outcome (the header slots, parser_error, the cursor and the state
transitions taken) then depends only on the first `memo_bytes` bytes of the packet (all of it
when shorter), so it can be remembered per prefix. The generated parser does that for
recirculated and resubmitted packets (instance_type != 0), which come back with the bytes an
earlier pass produced (LinkGuardian's Tx-buffer copies loop with identical bytes); a fresh
packet is always parsed. The pass gets the entry (`P.parsed`), which also keeps what a
recirculating egress pass learnt about deparsing those headers (interp/passthrough.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from lgkit.sw.exec.interp.layout import leaf_types, scalar_width
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, StructLikeT

MEMO_ENTRIES = 4096
"Prefixes remembered per parser; the memo starts over when full."


class _NotPure(Exception):
    pass


def memo_bytes(decl: ir.ParserDecl, hdr: ir.Param, packet: ir.Param) -> int | None:
    """Bytes of the packet that determine the parse, or None if the parser does not qualify."""
    if decl.locals:
        return None
    states = {s.name: s for s in decl.states}
    if "start" not in states:
        return None
    bits: dict[str, int] = {}
    visiting: set[str] = set()

    def reach(name: str) -> int:
        """Most bits read from the cursor at the entry of state `name` onwards."""
        if name in ("accept", "reject"):
            return 0
        if name in visiting or name not in states:
            raise _NotPure  # a loop (or an unknown state, which the parser reports)
        if name in bits:
            return bits[name]
        visiting.add(name)
        state = states[name]
        extracted = sum(_extract_bits(stmt, hdr, packet) for stmt in state.stmts)
        tr = state.transition
        after = 0
        if isinstance(tr, ir.Select):
            for key in tr.keys:
                after = max(after, _key_lookahead_bits(key, hdr, packet))
            for case in tr.cases:
                _check_keyset(case.keyset)
                after = max(after, reach(case.state))
        else:
            after = reach(tr or "reject")
        visiting.discard(name)
        bits[name] = extracted + after
        return bits[name]

    try:
        return (reach("start") + 7) >> 3
    except _NotPure:
        return None


def _extract_bits(stmt: ir.Stmt, hdr: ir.Param, packet: ir.Param) -> int:
    """Bits a `packet.extract(hdr.h)` of a fixed header consumes; anything else is not pure."""
    if not isinstance(stmt, ir.CallStmt):
        raise _NotPure
    call = stmt.call
    target = call.target
    if not (isinstance(target, ir.Member) and target.name == "extract"
            and _is_param(target.expr, packet) and len(call.args) == 1):
        raise _NotPure
    arg = call.args[0].value
    t = arg.type
    if not (isinstance(t, StructLikeT) and t.kind == "header" and _is_field_of(arg, hdr)):
        raise _NotPure
    if not all(isinstance(ft, BitsT | BoolT) for ft in leaf_types(t)):
        raise _NotPure  # varbit fields
    return sum(scalar_width(ft) for ft in leaf_types(t))


def _key_lookahead_bits(key: ir.Expr, hdr: ir.Param, packet: ir.Param) -> int:
    """Bits a select key looks ahead; the key may read only headers, lookaheads, constants."""
    most = 0
    for node in _nodes(key):
        if isinstance(node, ir.Call):
            target = node.target
            if not (isinstance(target, ir.Member) and target.name == "lookahead"
                    and _is_param(target.expr, packet) and not node.args
                    and isinstance(node.type, BitsT | BoolT)):
                raise _NotPure
            most = max(most, scalar_width(node.type))
        elif isinstance(node, ir.PathExpr) and not _is_param(node, packet):
            if not (_is_param(node, hdr) or isinstance(node.decl, ir.ConstDecl)):
                raise _NotPure
        elif isinstance(node, ir.Index):
            raise _NotPure  # header stacks
    return most


def _check_keyset(keyset: ir.Expr) -> None:
    """Keysets of constants only (a value set would depend on the control plane)."""
    for node in _nodes(keyset):
        if isinstance(node, ir.PathExpr) and not isinstance(node.decl, ir.ConstDecl):
            raise _NotPure
        if isinstance(node, ir.Call):
            raise _NotPure


def _is_param(e: ir.Expr, param: ir.Param) -> bool:
    return isinstance(e, ir.PathExpr) and e.decl is param


def _is_field_of(e: ir.Expr, param: ir.Param) -> bool:
    """e is param.a.b... (members only: no stack index, next or last)."""
    while isinstance(e, ir.Member):
        if e.name in ("next", "last"):
            return False
        e = e.expr
    return _is_param(e, param)


def _nodes(e: object) -> Iterator[object]:
    yield e
    if isinstance(e, ir.Node):
        for value in vars(e).values():
            if isinstance(value, list):
                for item in value:
                    yield from _nodes(item)
            elif isinstance(value, ir.Node) and not isinstance(value, ir.Decl | ir.TypeRef):
                yield from _nodes(value)
