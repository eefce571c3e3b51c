"""Indirect counters, meters and registers: P4Runtime entries <-> pipeline extern arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from finsy.proto import p4d, p4r

from . import codec
from .errors import invalid, out_of_range
from .schema import register_width
from .state import DeviceState
from .tables import MODIFY, decode_meter_config, encode_meter_config


def _indices(array: Any, request: Any) -> range:
    """All indices for a wildcard request (index unset), else the one index, range-checked."""
    if not request.HasField("index"):
        return range(array.size)
    index = request.index.index
    if not 0 <= index < array.size:
        raise out_of_range(f"index {index} not in 0..{array.size - 1}")
    return range(index, index + 1)


def _selected(objects: dict[int, Any], object_id: int, lookup: Any) -> list[Any]:
    return list(objects.values()) if object_id == 0 else [lookup(object_id)]


def write_counter(state: DeviceState, kind: int, msg: p4r.CounterEntry) -> None:
    if kind != MODIFY:
        raise invalid("counter entries can only be modified")
    info = state.index.counter(msg.counter_id)
    array = state.pipeline.counters[info.preamble.name]
    for i in _indices(array, msg):
        array.write(i, msg.data.packet_count, msg.data.byte_count)


def read_counters(state: DeviceState, request: p4r.CounterEntry) -> Iterator[p4r.CounterEntry]:
    for info in _selected(state.index.counters, request.counter_id, state.index.counter):
        array = state.pipeline.counters[info.preamble.name]
        for i in _indices(array, request):
            packets, nbytes = array.read(i)
            yield p4r.CounterEntry(counter_id=info.preamble.id, index=p4r.Index(index=i),
                                   data=p4r.CounterData(packet_count=packets, byte_count=nbytes))


def write_meter(state: DeviceState, kind: int, msg: p4r.MeterEntry) -> None:
    if kind != MODIFY:
        raise invalid("meter entries can only be modified")
    info = state.index.meter(msg.meter_id)
    array = state.pipeline.meters[info.preamble.name]
    rates = decode_meter_config(msg.config) if msg.HasField("config") else None
    for i in _indices(array, msg):
        if rates is None:
            array.reset_rates(i)
        else:
            array.set_rates(i, *rates)


def read_meters(state: DeviceState, request: p4r.MeterEntry) -> Iterator[p4r.MeterEntry]:
    for info in _selected(state.index.meters, request.meter_id, state.index.meter):
        array = state.pipeline.meters[info.preamble.name]
        for i in _indices(array, request):
            out = p4r.MeterEntry(meter_id=info.preamble.id, index=p4r.Index(index=i))
            rates = array.get_rates(i)
            if rates is not None:
                out.config.CopyFrom(encode_meter_config(rates))
            yield out


def write_register(state: DeviceState, kind: int, msg: p4r.RegisterEntry) -> None:
    if kind != MODIFY:
        raise invalid("register entries can only be modified")
    info = state.index.register(msg.register_id)
    cells = state.pipeline.struct_registers.get(info.preamble.name)
    if cells is not None:
        _write_struct_register(cells, msg)
        return
    array = state.pipeline.registers[info.preamble.name]
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid("register data must be a bitstring")
    value = codec.decode(msg.data.bitstring, register_width(info), info.preamble.name)
    for i in _indices(array, msg):
        array.write(i, value)


def read_registers(state: DeviceState, request: p4r.RegisterEntry) -> Iterator[p4r.RegisterEntry]:
    for info in _selected(state.index.registers, request.register_id, state.index.register):
        cells = state.pipeline.struct_registers.get(info.preamble.name)
        if cells is not None:
            for i in _indices(cells, request):
                yield p4r.RegisterEntry(register_id=info.preamble.id, index=p4r.Index(index=i),
                                        data=_struct_data(cells.read(i)))
            continue
        array = state.pipeline.registers[info.preamble.name]
        for i in _indices(array, request):
            yield p4r.RegisterEntry(register_id=info.preamble.id, index=p4r.Index(index=i),
                                    data=p4d.P4Data(bitstring=codec.encode(array.read(i))))


def _struct_data(fields: list[int]) -> p4d.P4Data:
    """A TNA struct register's cell: a P4Data struct of its fields' bitstrings."""
    data = p4d.P4Data()
    data.struct.members.extend(p4d.P4Data(bitstring=codec.encode(v)) for v in fields)
    return data


def _write_struct_register(cells: Any, msg: p4r.RegisterEntry) -> None:
    members = msg.data.struct.members if msg.data.WhichOneof("data") == "struct" else None
    if members is None or len(members) != len(cells.widths) or any(
            m.WhichOneof("data") != "bitstring" for m in members):
        raise invalid(f"register {cells.name}: data must be a struct of "
                      f"{len(cells.widths)} bitstrings")
    values = [codec.decode(m.bitstring, w, cells.name)
              for m, w in zip(members, cells.widths, strict=True)]
    for i in _indices(cells, msg):
        cells.write(i, values)
