"""v1model's packet-path requests: mark_to_drop, clone (and clone3, preserving a field list),
resubmit, recirculate, truncate; the architecture acts on them at the end of a block."""

from __future__ import annotations

from string import Formatter
from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.layout import field_offset, size_of
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx


class MarkToDrop(ExternFunction):
    """egress_spec = the pipeline's drop port (global _drop_port), mcast_grp = 0. The
    deprecated argument-less form acts on the pass's standard_metadata."""

    name = "mark_to_drop"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        spec: str | None
        mcast: str | None
        if args:
            place = fx.eg.place(args[0])
            t = place.type
            if not isinstance(t, StructLikeT):
                raise unsupported(call, "mark_to_drop of a non-struct")
            spec = f"S[{place.at(field_offset(t, 'egress_spec'))}]"
            mcast = f"S[{place.at(field_offset(t, 'mcast_grp'))}]"
        else:
            spec, mcast = calls.gen.sm_ref("egress_spec"), calls.gen.sm_ref("mcast_grp")
            if spec is None or mcast is None:
                raise unsupported(call, "mark_to_drop() without standard_metadata")
        fx.line(f"{spec} = _drop_port")
        fx.line(f"{mcast} = 0")
        return ""


class Request(ExternFunction):
    """A request register of the pass (P.clone, P.resubmit, P.recirc, P.truncate) set from the
    arguments: `template` formats the ones it names (`{1}`: the second; `{anon}`: an anonymous
    field list of argument `anon`, the older resubmit(data)/recirculate(data)/clone3 forms)."""

    def __init__(self, name: str, template: str, anon: int | None = None):
        self.name = name
        self.template = template
        self.anon = anon

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        used = {int(f) for _, f, _, _ in Formatter().parse(self.template) if f and f.isdigit()}
        values = [fx.eg.ex(a) if i in used else "" for i, a in enumerate(args)]
        anon = anon_field_list(calls, fx, args[self.anon]) if self.anon is not None else None
        return self.template.format(*values, anon=anon)


def anon_field_list(calls: Calls, fx: FnCtx, data: ir.Expr) -> int:
    """The slots of the listed fields as a field list with a negative id."""
    items = data.items if isinstance(data, ir.ListExpr) else [data]
    slots: list[int] = []
    for item in items:
        if not fx.eg.is_place(item):
            raise unsupported(item, "a field list entry that is not a variable")
        place = fx.eg.place(item)
        if place.static is None:
            raise unsupported(item, "a field list entry with a run-time index")
        slots.extend(range(place.static, place.static + size_of(place.type)))
    ident = -(len(calls.gen.anon_field_lists) + 1)
    calls.gen.anon_field_lists[ident] = slots
    return ident


PATHS = (
    MarkToDrop(),
    Request("clone", "P.clone = ({1}, None)"),
    Request("clone_preserving_field_list", "P.clone = ({1}, {2})"),
    Request("clone3", "P.clone = ({1}, {anon})", anon=2),
    Request("resubmit_preserving_field_list", "P.resubmit = {0}"),
    Request("resubmit", "P.resubmit = {anon}", anon=0),
    Request("recirculate_preserving_field_list", "P.recirc = {0}"),
    Request("recirculate", "P.recirc = {anon}", anon=0),
    Request("truncate", "P.truncate = {0}"),
)
