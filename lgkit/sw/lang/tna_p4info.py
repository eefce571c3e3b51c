"""TNA's P4Info extern entries as bf-p4c writes them (barefoot.Register etc.), both ways."""

from __future__ import annotations

from typing import Any

from finsy.proto import p4i, p4t
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# extern_type_id of bf-p4c's --p4runtime-files; also the 8-bit prefix of the instance ids.
TNA_COUNTER, TNA_DIRECT_COUNTER, TNA_METER, TNA_REGISTER = 131, 132, 133, 139
TNA_DIRECT_REGISTER, TNA_DIGEST, TNA_PORT_METADATA = 140, 142, 144
TNA_VALUE_SET = 254  # a parser value_set
TNA_EXTERNS = {"Counter": TNA_COUNTER, "DirectCounter": TNA_DIRECT_COUNTER, "Meter": TNA_METER,
               "Register": TNA_REGISTER, "DirectRegister": TNA_DIRECT_REGISTER,
               "Digest": TNA_DIGEST, "ValueSet": TNA_VALUE_SET}
# kept as extern entries in the standard view (P4Runtime has no entity of their kind)
EXTERN_ONLY = {TNA_DIRECT_REGISTER, TNA_PORT_METADATA}
TYPE_URL = "type.googleapis.com/barefoot."
F = descriptor_pb2.FieldDescriptorProto


def _field(name: str, number: int, kind: int,
           type_name: str | None = None) -> descriptor_pb2.FieldDescriptorProto:
    field = F(name=name, number=number, type=kind, label=F.LABEL_OPTIONAL)
    if type_name is not None:
        field.type_name = type_name
    return field


def _messages() -> dict[str, Any]:
    """The barefoot messages, with the field numbers bf-p4c's output carries."""
    spec = F.TYPE_MESSAGE
    counter_spec, meter_spec = (
        descriptor_pb2.DescriptorProto(
            name=name, field=[_field("unit", 1, F.TYPE_ENUM, f".barefoot.{name}.Unit")],
            enum_type=[descriptor_pb2.EnumDescriptorProto(name="Unit", value=[
                descriptor_pb2.EnumValueDescriptorProto(name=n, number=i)
                for i, n in enumerate(units)])])
        for name, units in (("CounterSpec", ("UNSPECIFIED", "BYTES", "PACKETS",
                                             "PACKETS_AND_BYTES")),
                            ("MeterSpec", ("UNSPECIFIED", "BYTES", "PACKETS"))))
    file = descriptor_pb2.FileDescriptorProto(
        name="lgkit/barefoot_p4info.proto", package="barefoot", syntax="proto3",
        dependency=["p4/config/v1/p4types.proto"],
        message_type=[
            counter_spec, meter_spec,
            descriptor_pb2.DescriptorProto(name="Meter", field=[
                _field("spec", 1, spec, ".barefoot.MeterSpec"),
                _field("size", 2, F.TYPE_INT64)]),
            descriptor_pb2.DescriptorProto(name="Counter", field=[
                _field("spec", 1, spec, ".barefoot.CounterSpec"),
                _field("size", 2, F.TYPE_INT64)]),
            descriptor_pb2.DescriptorProto(name="DirectCounter", field=[
                _field("spec", 1, spec, ".barefoot.CounterSpec"),
                _field("direct_table_id", 2, F.TYPE_UINT32)]),
            descriptor_pb2.DescriptorProto(name="Digest", field=[
                _field("type_spec", 1, spec, ".p4.config.v1.P4DataTypeSpec")]),
            descriptor_pb2.DescriptorProto(name="ValueSet", field=[
                _field("type_spec", 1, spec, ".p4.config.v1.P4DataTypeSpec"),
                _field("size", 2, F.TYPE_INT64)]),
            descriptor_pb2.DescriptorProto(name="Register", field=[
                _field("type_spec", 1, spec, ".p4.config.v1.P4DataTypeSpec"),
                _field("size", 2, F.TYPE_INT64),
                _field("data_field_name", 3, F.TYPE_STRING)]),
            descriptor_pb2.DescriptorProto(name="DirectRegister", field=[
                _field("type_spec", 1, spec, ".p4.config.v1.P4DataTypeSpec"),
                _field("data_field_name", 2, F.TYPE_STRING)]),
            descriptor_pb2.DescriptorProto(name="PortMetadata", field=[
                _field("key_name", 1, F.TYPE_STRING),
                _field("type_spec", 2, spec, ".p4.config.v1.P4DataTypeSpec")]),
        ])
    assert p4t.DESCRIPTOR.name in file.dependency
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(file.name)
    except KeyError:
        pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"barefoot.{name}"))
            for name in [*TNA_EXTERNS, "PortMetadata"]}


MESSAGES = _messages()
NAMES = {ident: name for name, ident in TNA_EXTERNS.items()} | {TNA_PORT_METADATA: "PortMetadata"}


def add_extern(info: p4i.P4Info, type_id: int, preamble: p4i.Preamble, body: Any) -> None:
    """One instance into the `externs` entry of its type (made on first use)."""
    group = next((e for e in info.externs if e.extern_type_id == type_id), None)
    if group is None:
        group = info.externs.add(extern_type_id=type_id, extern_type_name=NAMES[type_id])
    instance = group.instances.add()
    instance.preamble.CopyFrom(preamble)
    instance.info.Pack(body, type_url_prefix="type.googleapis.com/")


def register_info(type_spec: p4t.P4DataTypeSpec, size: int, data_field_name: str) -> Any:
    return MESSAGES["Register"](type_spec=type_spec, size=size, data_field_name=data_field_name)


def direct_register_info(type_spec: p4t.P4DataTypeSpec, data_field_name: str) -> Any:
    return MESSAGES["DirectRegister"](type_spec=type_spec, data_field_name=data_field_name)


def port_metadata_info(key_name: str, type_spec: p4t.P4DataTypeSpec | None) -> Any:
    """bf-p4c's entry of the ingress parser's port metadata (no type_spec: no unpack)."""
    return MESSAGES["PortMetadata"](key_name=key_name, type_spec=type_spec)


def counter_info(unit: int, size: int) -> Any:
    return MESSAGES["Counter"](spec={"unit": unit}, size=size)


def digest_info(type_spec: p4t.P4DataTypeSpec) -> Any:
    return MESSAGES["Digest"](type_spec=type_spec)


def value_set_info(type_spec: p4t.P4DataTypeSpec, size: int) -> Any:
    return MESSAGES["ValueSet"](type_spec=type_spec, size=size)


def meter_info(unit: int, size: int) -> Any:
    return MESSAGES["Meter"](spec={"unit": unit}, size=size)


def direct_counter_info(unit: int, table_id: int) -> Any:
    return MESSAGES["DirectCounter"](spec={"unit": unit}, direct_table_id=table_id)


def pipeline_name(name: str) -> str:
    """A P4Info name without bf-p4c's leading Pipeline instance (`pipe.Ig.t` -> `Ig.t`)."""
    return name.split(".", 1)[1] if "." in name else name


def standard_view(info: p4i.P4Info) -> p4i.P4Info:
    """A TNA P4Info as the server and the STF runner index it (any other P4Info unchanged):
    tables and extern instances under the pipeline's names, the TNA extern entries as
    P4Runtime's registers / counters / direct_counters / meters / digests / value_sets (same
    ids, so a
    client's RegisterEntry etc. reach them)."""
    if info.pkg_info.arch != "tna":
        return info
    view = p4i.P4Info()
    view.CopyFrom(info)
    del view.externs[:]
    for table in view.tables:
        table.preamble.name = pipeline_name(table.preamble.name)
    for group in info.externs:
        if group.extern_type_id not in NAMES or group.extern_type_id in EXTERN_ONLY:
            view.externs.add().CopyFrom(group)
            continue
        for instance in group.instances:
            _standard_entry(view, group.extern_type_id, instance)
    return view


def _standard_entry(view: p4i.P4Info, type_id: int, instance: p4i.ExternInstance) -> None:
    body = MESSAGES[NAMES[type_id]]()
    if not instance.info.Unpack(body):
        name = instance.preamble.name
        raise ValueError(f"extern {name}: info is not a barefoot.{NAMES[type_id]}")
    if type_id == TNA_REGISTER:
        out: Any = view.registers.add(type_spec=body.type_spec, size=body.size)
    elif type_id == TNA_COUNTER:
        out = view.counters.add(spec={"unit": body.spec.unit}, size=body.size)
    elif type_id == TNA_METER:
        out = view.meters.add(spec={"unit": body.spec.unit}, size=body.size)
    elif type_id == TNA_DIGEST:
        out = view.digests.add(type_spec=body.type_spec)
    elif type_id == TNA_VALUE_SET:
        out = view.value_sets.add(size=body.size)
        out.match.extend(_value_set_match(view, body.type_spec))
    else:
        out = view.direct_counters.add(spec={"unit": body.spec.unit},
                                       direct_table_id=body.direct_table_id)
    out.preamble.CopyFrom(instance.preamble)
    out.preamble.name = pipeline_name(instance.preamble.name)


def _value_set_match(view: p4i.P4Info, spec: p4t.P4DataTypeSpec) -> list[p4i.MatchField]:
    """A value set's element as P4Runtime's exact matches: the bitstring, or each member of
    a struct (bf-p4c's entry keeps no @match kinds)."""
    if spec.WhichOneof("type_spec") == "struct":
        members = [(m.name, m.type_spec) for m in view.type_info.structs[spec.struct.name].members]
    else:
        members = [("", spec)]
    return [p4i.MatchField(id=i, name=name, bitwidth=member.bitstring.bit.bitwidth,
                           match_type=p4i.MatchField.EXACT)
            for i, (name, member) in enumerate(members, start=1)]
