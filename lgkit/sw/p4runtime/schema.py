"""An index of a P4Info message by object id, checked against the loaded pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from finsy.proto import p4i, p4t

from lgkit.sw.lang.tna_p4info import standard_view

from .errors import invalid, not_found

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

NEEDS_PRIORITY = {p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL}


@dataclass
class P4InfoIndex:
    """P4Info objects looked up by id; names are the pipeline's fully qualified names."""

    p4info: p4i.P4Info
    tables: dict[int, p4i.Table] = field(default_factory=dict)
    actions: dict[int, p4i.Action] = field(default_factory=dict)
    counters: dict[int, p4i.Counter] = field(default_factory=dict)
    direct_counters: dict[int, p4i.DirectCounter] = field(default_factory=dict)
    meters: dict[int, p4i.Meter] = field(default_factory=dict)
    direct_meters: dict[int, p4i.DirectMeter] = field(default_factory=dict)
    registers: dict[int, p4i.Register] = field(default_factory=dict)
    digests: dict[int, p4i.Digest] = field(default_factory=dict)
    value_sets: dict[int, p4i.ValueSet] = field(default_factory=dict)
    action_profiles: dict[int, p4i.ActionProfile] = field(default_factory=dict)
    controller_headers: dict[str, p4i.ControllerPacketMetadata] = field(default_factory=dict)

    @classmethod
    def build(cls, p4info: p4i.P4Info) -> P4InfoIndex:
        """The index; a TNA P4Info (bf-p4c's form) is indexed as its standard view."""
        index = cls(p4info)
        try:
            p4info = standard_view(p4info)
        except ValueError as exc:
            raise invalid(f"P4Info: {exc}") from None
        groups: list[tuple[dict[int, Any], Any]] = [
            (index.tables, p4info.tables), (index.actions, p4info.actions),
            (index.counters, p4info.counters), (index.direct_counters, p4info.direct_counters),
            (index.meters, p4info.meters), (index.direct_meters, p4info.direct_meters),
            (index.registers, p4info.registers), (index.digests, p4info.digests),
            (index.value_sets, p4info.value_sets),
            (index.action_profiles, p4info.action_profiles),
        ]
        for target, objects in groups:
            for obj in objects:
                if obj.preamble.id in target:
                    raise invalid(f"P4Info: duplicate id {obj.preamble.id:#x}")
                target[obj.preamble.id] = obj
        for header in p4info.controller_packet_metadata:
            index.controller_headers[header.preamble.name] = header
        return index

    def table(self, table_id: int) -> p4i.Table:
        return _lookup(self.tables, table_id, "table")

    def action(self, action_id: int) -> p4i.Action:
        return _lookup(self.actions, action_id, "action")

    def counter(self, counter_id: int) -> p4i.Counter:
        return _lookup(self.counters, counter_id, "counter")

    def meter(self, meter_id: int) -> p4i.Meter:
        return _lookup(self.meters, meter_id, "meter")

    def register(self, register_id: int) -> p4i.Register:
        return _lookup(self.registers, register_id, "register")

    def value_set(self, value_set_id: int) -> p4i.ValueSet:
        return _lookup(self.value_sets, value_set_id, "value set")

    def action_profile(self, profile_id: int) -> p4i.ActionProfile:
        return _lookup(self.action_profiles, profile_id, "action profile")

    def digest(self, digest_id: int) -> p4i.Digest:
        return _lookup(self.digests, digest_id, "digest")

    def digest_widths(self, digest: p4i.Digest) -> list[int]:
        """Bit widths of the members of a digest's struct (or of a single bitstring)."""
        return type_widths(self.p4info.type_info, digest.type_spec)

    def check_against(self, pipeline: Pipeline) -> None:
        """Reject a P4Info that does not describe the pipeline's tables and externs."""
        for table in self.tables.values():
            name = table.preamble.name
            if name not in pipeline.tables:
                raise invalid(f"P4Info table {name!r} is not in the program")
            keys = pipeline.tables[name].keys
            if len(keys) != len(table.match_fields):
                raise invalid(f"P4Info table {name!r}: match fields differ from the program")
        for kind, objects in (("registers", self.registers), ("counters", self.counters),
                              ("meters", self.meters)):
            for obj in objects.values():
                known = getattr(pipeline, kind).keys() | (
                    pipeline.struct_registers.keys() if kind == "registers" else set())
                if obj.preamble.name not in known:
                    raise invalid(f"P4Info {kind[:-1]} {obj.preamble.name!r} is not in the program")


def _lookup(objects: dict[int, Any], object_id: int, kind: str) -> Any:
    try:
        return objects[object_id]
    except KeyError:
        raise not_found(f"unknown {kind} id {object_id:#x}") from None


def type_widths(type_info: p4t.P4TypeInfo, spec: p4t.P4DataTypeSpec) -> list[int]:
    """Bit widths of a bitstring type or of each member of a struct/header type."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        return [bitstring_width(spec.bitstring)]
    if kind == "struct":
        members = type_info.structs[spec.struct.name].members
        return [w for member in members for w in type_widths(type_info, member.type_spec)]
    if kind == "header":
        members = type_info.headers[spec.header.name].members
        return [bitstring_width(member.type_spec) for member in members]
    raise invalid(f"unsupported P4Info type {kind!r}")


def bitstring_width(spec: p4t.P4BitstringLikeTypeSpec) -> int:
    kind = spec.WhichOneof("type_spec")
    if kind == "bit":
        return spec.bit.bitwidth
    if kind == "int":
        return spec.int.bitwidth
    raise invalid(f"unsupported bitstring type {kind!r}")


def register_width(register: p4i.Register) -> int:
    return bitstring_width(register.type_spec.bitstring)
