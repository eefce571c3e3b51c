"""Table entries, default actions and direct counters/meters: P4Runtime <-> pipeline tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
from finsy.proto import p4i, p4r

from lgkit.sw.exec.externs.meter import TrTcm
from lgkit.sw.exec.interp.tables import Exact, Lpm, Optional_, Range, TableEntry, Ternary

from . import codec
from .errors import P4RTError, invalid, not_found, unimplemented
from .schema import NEEDS_PRIORITY
from .state import DeviceState

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def write_table_entry(state: DeviceState, kind: int, msg: p4r.TableEntry) -> None:
    info = state.index.table(msg.table_id)
    table = state.pipeline.tables[info.preamble.name]
    if msg.is_const:
        raise invalid("is_const must be false in a write")
    if msg.is_default_action:
        _write_default(state, info, table, kind, msg)
        return
    if not info.match_fields and kind == INSERT:
        raise invalid(f"table {table.name} has no key: only its default entry can be written")
    if msg.idle_timeout_ns:
        _check_idle_timeout(info)
    entry = decode_match(info, msg)
    existing = table.find(entry.keys, entry.priority)
    only_resources = kind == MODIFY and not msg.HasField("action")
    if table.const_entries and not only_resources:
        raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                        f"table {table.name} is const: only direct resources can be modified")
    if kind != INSERT and existing is None:
        raise not_found(f"{table.name}: no such entry")
    if kind == DELETE and existing is not None:  # (None was refused above)
        table.delete(existing)
        return
    if only_resources:
        _set_direct_resources(table, existing, msg)
        return
    if info.implementation_id:
        entry.member, entry.group = decode_indirect(state, info, table, msg)
    else:
        entry.action, entry.params = decode_action(state, info, msg, default=False)
    if kind == INSERT:
        if existing is not None:
            raise P4RTError(grpc.StatusCode.ALREADY_EXISTS, f"{table.name}: entry exists")
        if table.entry_count() >= table.size:
            raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{table.name} is full")
        _set_direct_resources(table, entry, msg)
        _start_idle_clock(state, entry, msg.idle_timeout_ns)
        table.insert(entry)
        return
    _set_direct_resources(table, existing, msg)
    _start_idle_clock(state, existing, msg.idle_timeout_ns)
    table.modify(entry)


def _start_idle_clock(state: DeviceState, entry: Any, idle_timeout_ns: int) -> None:
    """A written entry counts as idle from now on (idletimeout.py reports it when expired)."""
    entry.idle_timeout_ns = idle_timeout_ns
    entry.last_hit_us = state.now_us()
    entry.idle_reported_at_hit = None


def _write_default(state: DeviceState, info: p4i.Table, table: Any, kind: int,
                   msg: p4r.TableEntry) -> None:
    if kind != MODIFY:
        raise invalid("the default entry can only be modified")
    if info.implementation_id:
        raise invalid("Cannot set / reset default action for indirect table")
    if msg.match or msg.priority:
        raise invalid("a default entry has no match fields and no priority")
    if table.default_is_const:
        raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                        f"{table.name}: the default action is const")
    if msg.HasField("action"):
        action, params = decode_action(state, info, msg, default=True)
    else:
        action, params = state.initial_defaults[table.name]
    table.set_default(action, params)


def _check_idle_timeout(info: p4i.Table) -> None:
    if info.idle_timeout_behavior == p4i.Table.NO_TIMEOUT:
        raise invalid(f"table {info.preamble.name} does not support idle timeout")


def _set_direct_resources(table: Any, entry: Any, msg: p4r.TableEntry) -> None:
    if msg.HasField("counter_data"):
        if table.direct_counter is None:
            raise invalid(f"table {table.name} has no direct counter")
        entry.counter = (msg.counter_data.packet_count, msg.counter_data.byte_count)
    if msg.HasField("meter_config"):
        if table.direct_meter is None:
            raise invalid(f"table {table.name} has no direct meter")
        set_direct_meter(entry, decode_meter_config(msg.meter_config))


def set_direct_meter(entry: Any, rates: tuple[tuple[int, int], tuple[int, int]] | None) -> None:
    entry.meter_config = rates
    entry.meter_state = TrTcm.new_state(rates) if rates is not None else None


def decode_meter_config(config: p4r.MeterConfig) -> tuple[tuple[int, int], tuple[int, int]]:
    """((cir, cburst), (pir, pburst)) as the pipeline's meters take them."""
    if config.cir < 0 or config.pir < 0 or config.cburst < 0 or config.pburst < 0:
        raise invalid("meter rates and bursts must not be negative")
    if config.cir > config.pir:
        raise invalid("meter CIR must not exceed PIR")
    return (config.cir, config.cburst), (config.pir, config.pburst)


def encode_meter_config(rates: tuple[tuple[int, int], tuple[int, int]]) -> p4r.MeterConfig:
    (cir, cburst), (pir, pburst) = rates
    return p4r.MeterConfig(cir=cir, cburst=cburst, pir=pir, pburst=pburst)


def decode_match(info: p4i.Table, msg: p4r.TableEntry) -> Any:
    """The pipeline TableEntry (keys and priority only) that a P4Runtime match describes."""
    keys = decode_fields(info.preamble.name, info.match_fields, msg.match)
    needs_priority = any(mf.match_type in NEEDS_PRIORITY for mf in info.match_fields)
    if needs_priority and msg.priority <= 0:
        raise invalid(f"{info.preamble.name}: entries need a priority > 0")
    if not needs_priority and msg.priority != 0:
        raise invalid(f"{info.preamble.name}: entries of this table take no priority")
    return TableEntry(keys, "", [], msg.priority)


def decode_fields(name: str, match_fields: Any, match: Any) -> list[Any]:
    """Pipeline KeyMatches (None: don't care), in P4Info order, of P4Runtime FieldMatches
    against P4Info MatchFields (of a table or a value set named `name`)."""
    fields = {mf.id: (pos, mf) for pos, mf in enumerate(match_fields)}
    keys: list[Any] = [None] * len(fields)
    seen: set[int] = set()
    for fm in match:
        if fm.field_id not in fields:
            raise invalid(f"{name}: unknown match field id {fm.field_id}")
        if fm.field_id in seen:
            raise invalid(f"{name}: match field {fm.field_id} given twice")
        seen.add(fm.field_id)
        pos, mf = fields[fm.field_id]
        keys[pos] = _decode_field(mf, fm)
    for pos, mf in enumerate(match_fields):
        if keys[pos] is None:
            if mf.match_type == p4i.MatchField.EXACT:
                raise invalid(f"{name}: exact match field {mf.name or mf.id} is missing")
            if mf.match_type == p4i.MatchField.LPM:
                keys[pos] = Lpm(0, 0)
    return keys


def _decode_field(mf: p4i.MatchField, fm: p4r.FieldMatch) -> Any:
    width, what = mf.bitwidth, f"match field {mf.name}"
    kind = fm.WhichOneof("field_match_type")
    expected = {p4i.MatchField.EXACT: "exact", p4i.MatchField.LPM: "lpm",
                p4i.MatchField.TERNARY: "ternary", p4i.MatchField.RANGE: "range",
                p4i.MatchField.OPTIONAL: "optional"}.get(mf.match_type)
    if kind != expected:
        raise invalid(f"{what}: expected a {expected} match, got {kind}")
    if kind == "exact":
        return Exact(codec.decode(fm.exact.value, width, what))
    if kind == "optional":
        return Optional_(codec.decode(fm.optional.value, width, what))
    if kind == "ternary":
        return _decode_ternary(fm.ternary, width, what)
    if kind == "lpm":
        return _decode_lpm(fm.lpm, width, what)
    return _decode_range(fm.range, width, what)


def _decode_ternary(ternary: p4r.FieldMatch.Ternary, width: int, what: str) -> Any:
    value = codec.decode(ternary.value, width, what)
    mask = codec.decode(ternary.mask, width, what + " mask")
    if mask == 0:
        raise invalid(f"{what}: a zero mask is a don't-care; omit the field")
    if value & ~mask:
        raise invalid(f"{what}: value has bits set outside the mask")
    return Ternary(value, mask)


def _decode_lpm(lpm: p4r.FieldMatch.LPM, width: int, what: str) -> Any:
    value = codec.decode(lpm.value, width, what)
    if not 0 < lpm.prefix_len <= width:
        raise invalid(f"{what}: prefix length {lpm.prefix_len} not in 1..{width}")
    if value & ((1 << (width - lpm.prefix_len)) - 1):
        raise invalid(f"{what}: value has bits set beyond the prefix")
    return Lpm(value, lpm.prefix_len)


def _decode_range(rng: p4r.FieldMatch.Range, width: int, what: str) -> Any:
    low = codec.decode(rng.low, width, what + " low")
    high = codec.decode(rng.high, width, what + " high")
    if low > high:
        raise invalid(f"{what}: low bound above high bound")
    if low == 0 and high == (1 << width) - 1:
        raise invalid(f"{what}: a full range is a don't-care; omit the field")
    return Range(low, high)


def decode_action(state: DeviceState, info: p4i.Table, msg: p4r.TableEntry,
                  default: bool) -> tuple[str, list[int]]:
    kind = msg.action.WhichOneof("type")
    if kind is None:
        raise invalid(f"{info.preamble.name}: entry has no action")
    if kind != "action":
        raise invalid(f"{info.preamble.name} is a direct table: {kind} does not apply")
    call = msg.action.action
    refs = {ref.id: ref for ref in info.action_refs}
    if call.action_id not in refs:
        raise invalid(f"action {call.action_id:#x} is not an action of {info.preamble.name}")
    scope = refs[call.action_id].scope
    if default and scope == p4i.ActionRef.TABLE_ONLY:
        raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                        "this action cannot be the default action (@tableonly)")
    if not default and scope == p4i.ActionRef.DEFAULT_ONLY:
        raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                        "this action can only be the default action (@defaultonly)")
    action = state.index.action(call.action_id)
    return action.preamble.name, decode_params(action, call.params)


def decode_indirect(state: DeviceState, info: p4i.Table, table: Any, msg: p4r.TableEntry
                    ) -> tuple[int | None, int | None]:
    """(member, group) of an entry of a table with an action profile or selector."""
    kind = msg.action.WhichOneof("type")
    name, profile = info.preamble.name, table.profile
    if kind == "action_profile_member_id":
        member = msg.action.action_profile_member_id
        if member not in profile.members:
            raise not_found(f"{name}: no member {member} in {profile.name}")
        return member, None
    if kind == "action_profile_group_id":
        group = msg.action.action_profile_group_id
        if not profile.selector:
            raise invalid(f"{name}: {profile.name} has no selector: entries point at members")
        if group not in profile.groups:
            raise not_found(f"{name}: no group {group} in {profile.name}")
        return None, group
    if kind == "action_profile_action_set":
        raise unimplemented("one-shot action selector programming is not supported")
    raise invalid(f"{name} is an indirect table: an entry points at a member or a group")


def decode_params(action: p4i.Action, params: Any) -> list[int]:
    by_id = {p.id: (pos, p) for pos, p in enumerate(action.params)}
    values: list[int | None] = [None] * len(by_id)
    for param in params:
        if param.param_id not in by_id:
            raise invalid(f"{action.preamble.name}: unknown parameter id {param.param_id}")
        pos, spec = by_id[param.param_id]
        if values[pos] is not None:
            raise invalid(f"{action.preamble.name}: parameter {spec.name} given twice")
        values[pos] = codec.decode(param.value, spec.bitwidth, f"parameter {spec.name}")
    missing = [action.params[i].name for i, v in enumerate(values) if v is None]
    if missing:
        raise invalid(f"{action.preamble.name}: missing parameters {', '.join(missing)}")
    return [v for v in values if v is not None]


def encode_entry(state: DeviceState, info: p4i.Table, entry: Any,
                 request: p4r.TableEntry) -> p4r.TableEntry:
    """A pipeline entry as P4Runtime reports it, with direct resources if the read asked."""
    msg = p4r.TableEntry(table_id=info.preamble.id, priority=entry.priority)
    for mf, key in zip(info.match_fields, entry.keys, strict=True):
        field = encode_field(mf, key)
        if field is not None:
            msg.match.append(field)
    if entry.member is not None:
        msg.action.action_profile_member_id = entry.member
    elif entry.group is not None:
        msg.action.action_profile_group_id = entry.group
    else:
        msg.action.action.CopyFrom(encode_action(state, entry.action, entry.params))
    msg.idle_timeout_ns = entry.idle_timeout_ns
    if request.HasField("time_since_last_hit") and entry.idle_timeout_ns:
        msg.time_since_last_hit.elapsed_ns = max(0, state.now_us() - entry.last_hit_us) * 1000
    table = state.pipeline.tables[info.preamble.name]
    if request.HasField("counter_data") and table.direct_counter is not None:
        packets, nbytes = entry.counter
        msg.counter_data.CopyFrom(p4r.CounterData(packet_count=packets, byte_count=nbytes))
    if request.HasField("meter_config") and entry.meter_config is not None:
        msg.meter_config.CopyFrom(encode_meter_config(entry.meter_config))
    return msg


def encode_field(mf: p4i.MatchField, key: Any) -> p4r.FieldMatch | None:
    fm = p4r.FieldMatch(field_id=mf.id)
    if key is None:
        return None
    if isinstance(key, Exact):
        fm.exact.value = codec.encode(key.value)
    elif isinstance(key, Optional_):
        fm.optional.value = codec.encode(key.value)
    elif isinstance(key, Ternary):
        fm.ternary.value, fm.ternary.mask = codec.encode(key.value), codec.encode(key.mask)
    elif isinstance(key, Lpm):
        if key.prefix_len == 0:
            return None
        fm.lpm.value, fm.lpm.prefix_len = codec.encode(key.value), key.prefix_len
    else:
        fm.range.low, fm.range.high = codec.encode(key.lo), codec.encode(key.hi)
    return fm


def encode_action(state: DeviceState, name: str, params: list[int]) -> p4r.Action:
    action = state.action_by_name[name]
    msg = p4r.Action(action_id=action.preamble.id)
    for spec, value in zip(action.params, params, strict=True):
        msg.params.append(p4r.Action.Param(param_id=spec.id, value=codec.encode(value)))
    return msg


def read_table_entries(state: DeviceState, request: p4r.TableEntry) -> Iterator[p4r.TableEntry]:
    infos = _selected_tables(state, request.table_id)
    for info in infos:
        table = state.pipeline.tables[info.preamble.name]
        if request.is_default_action:
            yield _encode_default(state, info, table)
        elif request.match:
            entry = table.find(decode_match(info, request).keys, request.priority)
            if entry is not None:
                yield encode_entry(state, info, entry, request)
        else:
            for entry in _filtered(state, table.entries(), request):
                yield encode_entry(state, info, entry, request)


def _filtered(state: DeviceState, entries: list[Any], request: p4r.TableEntry) -> list[Any]:
    """Wildcard-read filters of the spec: priority and action id (0 / unset = any)."""
    if request.priority:
        entries = [e for e in entries if e.priority == request.priority]
    action_id = request.action.action.action_id if request.HasField("action") else 0
    if action_id:
        name = state.index.action(action_id).preamble.name
        entries = [e for e in entries if e.action == name]
    return entries


def _encode_default(state: DeviceState, info: p4i.Table, table: Any) -> p4r.TableEntry:
    action, params = table.default_action
    msg = p4r.TableEntry(table_id=info.preamble.id, is_default_action=True)
    msg.action.action.CopyFrom(encode_action(state, action, params))
    return msg


def _selected_tables(state: DeviceState, table_id: int) -> list[p4i.Table]:
    if table_id == 0:
        return list(state.index.tables.values())
    return [state.index.table(table_id)]


def write_direct_counter(state: DeviceState, kind: int, msg: p4r.DirectCounterEntry) -> None:
    if kind != MODIFY:
        raise invalid("direct counter entries can only be modified")
    _, entry = _direct_target(state, msg.table_entry, "direct_counter")
    entry.counter = (msg.data.packet_count, msg.data.byte_count)


def write_direct_meter(state: DeviceState, kind: int, msg: p4r.DirectMeterEntry) -> None:
    if kind != MODIFY:
        raise invalid("direct meter entries can only be modified")
    _, entry = _direct_target(state, msg.table_entry, "direct_meter")
    set_direct_meter(entry, decode_meter_config(msg.config) if msg.HasField("config") else None)


def _direct_target(state: DeviceState, msg: p4r.TableEntry, resource: str) -> tuple[Any, Any]:
    info = state.index.table(msg.table_id)
    table = state.pipeline.tables[info.preamble.name]
    if getattr(table, resource) is None:
        raise invalid(f"table {table.name} has no {resource.replace('_', ' ')}")
    entry = table.find(decode_match(info, msg).keys, msg.priority)
    if entry is None:
        raise not_found(f"{table.name}: no such entry")
    return table, entry


def read_direct_counters(state: DeviceState,
                         request: p4r.DirectCounterEntry) -> Iterator[p4r.DirectCounterEntry]:
    selector = p4r.TableEntry()
    selector.CopyFrom(request.table_entry)
    selector.counter_data.SetInParent()
    for info in _selected_tables(state, request.table_entry.table_id):
        if state.pipeline.tables[info.preamble.name].direct_counter is None:
            continue
        selector.table_id = info.preamble.id
        for entry in read_table_entries(state, selector):
            data = entry.counter_data
            entry.ClearField("counter_data")
            yield p4r.DirectCounterEntry(table_entry=entry, data=data)


def read_direct_meters(state: DeviceState,
                       request: p4r.DirectMeterEntry) -> Iterator[p4r.DirectMeterEntry]:
    selector = p4r.TableEntry()
    selector.CopyFrom(request.table_entry)
    selector.meter_config.SetInParent()
    for info in _selected_tables(state, request.table_entry.table_id):
        if state.pipeline.tables[info.preamble.name].direct_meter is None:
            continue
        selector.table_id = info.preamble.id
        for entry in read_table_entries(state, selector):
            out = p4r.DirectMeterEntry()
            if entry.HasField("meter_config"):
                out.config.CopyFrom(entry.meter_config)
                entry.ClearField("meter_config")
            out.table_entry.CopyFrom(entry)
            yield out
