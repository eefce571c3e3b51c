"""A BMv2-style JSON that carries our device config, described from the program's P4Info.

Tools that only pass a p4c output along (the tutorials' Makefile and P4Runtime helpers), or read
its tables, actions and extern arrays (BMv2's runtime_CLI, through `bm_get_config`), accept it;
the built-in target loads the member "lgkit" (device_config.py). It does not describe parsers or
control flow, and a real BMv2 refuses it (JSON_VERSION).
"""

from __future__ import annotations

from typing import Any

from finsy.proto import p4i

from .device_config import EMBED_KEY

# A real BMv2 refuses major version 99 with a message that shows COMPILER: the JSON describes no
# parsers or controls, so BMv2 must not try to run it.
JSON_VERSION = [99, 0]
COMPILER = "lgkit p4c shim: runs on the kit's built-in target only (see docs/course.md)"
MATCH_KINDS = {p4i.MatchField.EXACT: "exact", p4i.MatchField.LPM: "lpm",
               p4i.MatchField.TERNARY: "ternary", p4i.MatchField.RANGE: "range",
               p4i.MatchField.OPTIONAL: "optional"}
EMPTY_MEMBERS = ["header_stacks", "header_union_types", "header_unions", "header_union_stacks",
                 "field_lists", "errors", "enums", "parsers", "parse_vsets", "deparsers",
                 "calculations", "learn_lists", "checksums", "force_arith", "extern_instances",
                 "field_aliases"]


def bmv2_json(info: p4i.P4Info, program: str, config: dict[str, Any]) -> dict[str, Any]:
    """The BMv2-style JSON document for a program with P4Info `info` and our `config`."""
    actions = {a.preamble.id: index for index, a in enumerate(info.actions)}
    header_types, headers, targets = _key_headers(info)
    doc: dict[str, Any] = {
        "header_types": header_types,
        "headers": headers,
        **{name: [] for name in EMPTY_MEMBERS},
        "meter_arrays": [_meter(m, False) for m in info.meters]
        + [_meter(m, True, _table_name(info, m.direct_table_id)) for m in info.direct_meters],
        "counter_arrays": [_counter(c, False) for c in info.counters]
        + [_counter(c, True, _table_name(info, c.direct_table_id))
           for c in info.direct_counters],
        "register_arrays": [{"name": r.preamble.name, "id": i, "size": r.size,
                             "bitwidth": r.type_spec.bitstring.bit.bitwidth
                             or r.type_spec.bitstring.int.bitwidth}
                            for i, r in enumerate(info.registers)],
        "actions": [{"name": a.preamble.name, "id": actions[a.preamble.id],
                     "runtime_data": [{"name": p.name, "bitwidth": p.bitwidth}
                                      for p in a.params], "primitives": []}
                    for a in info.actions],
        "pipelines": [{"name": "ingress", "init_table": None, "action_profiles": [],
                       "tables": [_table(info, t, actions, targets)
                                  for t in info.tables], "conditionals": []},
                      {"name": "egress", "init_table": None, "action_profiles": [],
                       "tables": [], "conditionals": []}],
        "program": program,
        "__meta__": {"version": JSON_VERSION, "compiler": COMPILER},
        EMBED_KEY: config,
    }
    for kind in ("meter_arrays", "counter_arrays"):
        for index, array in enumerate(doc[kind]):
            array["id"] = index
    return doc


def _key_headers(
    info: p4i.P4Info,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[str]]]:
    """Header types and instances that give every match field a [header, field] target."""
    fields: dict[str, dict[str, int]] = {"scalars": {}}
    targets: dict[str, list[str]] = {}
    for table in info.tables:
        for mf in table.match_fields:
            head, _, name = mf.name.rpartition(".")
            head = head.removeprefix("hdr.")
            if not head or head == "meta" or head.startswith("meta."):
                head, name = "scalars", mf.name
            members = fields.setdefault(head, {})
            members[name] = max(mf.bitwidth, members.get(name, 0))
            targets[mf.name] = [head, name]
    types, instances = [], []
    for index, (head, members) in enumerate(sorted(fields.items(), key=_scalars_first)):
        type_name = "scalars_0" if head == "scalars" else f"{head}_t"
        types.append({"name": type_name, "id": index,
                      "fields": [[n, w, False] for n, w in members.items()]})
        instances.append({"name": head, "id": index, "header_type": type_name,
                          "metadata": head in ("scalars", "standard_metadata"),
                          "pi_omit": True})
    return types, instances, targets


def _scalars_first(item: tuple[str, dict[str, int]]) -> tuple[bool, str]:
    return item[0] != "scalars", item[0]


def _table(info: p4i.P4Info, table: p4i.Table, actions: dict[int, int],
           targets: dict[str, list[str]]) -> dict[str, Any]:
    kinds = [MATCH_KINDS.get(mf.match_type, "exact") for mf in table.match_fields]
    overall = ("range" if "range" in kinds else "ternary" if {"ternary", "optional"} & set(kinds)
               else "lpm" if "lpm" in kinds else "exact")
    names = {a.preamble.id: a.preamble.name for a in info.actions}
    refs = [ref.id for ref in table.action_refs]
    default = table.initial_default_action.action_id or (refs[-1] if refs else 0)
    return {
        "name": table.preamble.name, "id": list(info.tables).index(table),
        "key": [{"match_type": kind, "name": mf.name, "target": targets[mf.name], "mask": None}
                for kind, mf in zip(kinds, table.match_fields, strict=True)],
        "match_type": overall, "type": "simple", "max_size": table.size,
        "with_counters": any(c.direct_table_id == table.preamble.id
                             for c in info.direct_counters),
        "support_timeout": table.idle_timeout_behavior != p4i.Table.NO_TIMEOUT,
        "direct_meters": next((m.preamble.name for m in info.direct_meters
                               if m.direct_table_id == table.preamble.id), None),
        "action_ids": [actions[r] for r in refs if r in actions],
        "actions": [names[r] for r in refs if r in names],
        "base_default_next": None, "next_tables": {names[r]: None for r in refs if r in names},
        "default_entry": {"action_id": actions.get(default, 0),
                          "action_const": table.const_default_action_id != 0,
                          "action_data": [], "action_entry_const": False},
    }


def _table_name(info: p4i.P4Info, table_id: int) -> str:
    return next((t.preamble.name for t in info.tables if t.preamble.id == table_id), "")


def _meter(meter: Any, direct: bool, binding: str = "") -> dict[str, Any]:
    doc = {"name": meter.preamble.name, "id": 0, "is_direct": direct,
           "rate_count": 2, "type": "bytes" if meter.spec.unit == p4i.MeterSpec.BYTES
           else "packets"}
    doc.update({"binding": binding} if direct else {"size": meter.size})
    return doc


def _counter(counter: Any, direct: bool, binding: str = "") -> dict[str, Any]:
    doc = {"name": counter.preamble.name, "id": 0, "is_direct": direct}
    doc.update({"binding": binding} if direct else {"size": counter.size})
    return doc
