"""P4InfoHelper: names <-> ids from a P4Info text file, and request builders."""

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .convert import encode

KINDS = ("tables", "actions", "counters", "direct_counters", "meters", "direct_meters",
         "registers", "digests", "controller_packet_metadata")


class P4InfoHelper:
    def __init__(self, p4info_path):
        self.p4info = p4info_pb2.P4Info()
        with open(p4info_path) as f:
            text_format.Merge(f.read(), self.p4info, allow_unknown_field=True)

    def get(self, kind, name=None, id=None):
        for entity in getattr(self.p4info, kind):
            pre = entity.preamble
            if (name is not None and name in (pre.name, pre.alias)) or (
                    name is None and pre.id == id):
                return entity
        raise AttributeError(f"no {kind} named {name!r}" if name else f"no {kind} id {id}")

    def get_id(self, kind, name):
        return self.get(kind, name=name).preamble.id

    def get_name(self, kind, id):
        return self.get(kind, id=id).preamble.name

    def __getattr__(self, attr):
        # get_tables_id("MyIngress.t"), get_actions_name(123), ... for every kind in P4Info
        for kind in KINDS:
            if attr == f"get_{kind}_id":
                return lambda name: self.get_id(kind, name)
            if attr == f"get_{kind}_name":
                return lambda id: self.get_name(kind, id)
        raise AttributeError(attr)

    def get_match_field(self, table_name, name):
        for field in self.get("tables", name=table_name).match_fields:
            if field.name == name:
                return field
        raise AttributeError(f"table {table_name} has no match field {name}")

    def get_match_field_pb(self, table_name, name, value):
        info = self.get_match_field(table_name, name)
        match = p4runtime_pb2.FieldMatch(field_id=info.id)
        kind, width = info.match_type, info.bitwidth
        if kind == p4info_pb2.MatchField.EXACT:
            match.exact.value = encode(value, width)
        elif kind == p4info_pb2.MatchField.LPM:
            match.lpm.value, match.lpm.prefix_len = encode(value[0], width), value[1]
        elif kind == p4info_pb2.MatchField.TERNARY:
            match.ternary.value = encode(value[0], width)
            match.ternary.mask = encode(value[1], width)
        elif kind == p4info_pb2.MatchField.RANGE:
            match.range.low, match.range.high = encode(value[0], width), encode(value[1], width)
        else:
            raise ValueError(f"match kind {kind} of {name} is not supported here")
        return match

    def get_action_param_pb(self, action_name, name, value):
        for param in self.get("actions", name=action_name).params:
            if param.name == name:
                return p4runtime_pb2.Action.Param(param_id=param.id,
                                                  value=encode(value, param.bitwidth))
        raise AttributeError(f"action {action_name} has no parameter {name}")

    def buildTableEntry(self, table_name, match_fields=None, default_action=False,
                        action_name=None, action_params=None, priority=None,
                        idle_timeout_ns=None):
        entry = p4runtime_pb2.TableEntry(table_id=self.get_tables_id(table_name))
        if priority is not None:
            entry.priority = priority
        if idle_timeout_ns is not None:
            entry.idle_timeout_ns = idle_timeout_ns
        for name, value in (match_fields or {}).items():
            entry.match.append(self.get_match_field_pb(table_name, name, value))
        entry.is_default_action = bool(default_action)
        if action_name:
            action = entry.action.action
            action.action_id = self.get_actions_id(action_name)
            for name, value in (action_params or {}).items():
                action.params.append(self.get_action_param_pb(action_name, name, value))
        return entry

    def buildMulticastGroupEntry(self, group_id, replicas):
        entry = p4runtime_pb2.PacketReplicationEngineEntry()
        entry.multicast_group_entry.multicast_group_id = group_id
        for r in replicas:
            entry.multicast_group_entry.replicas.add(egress_port=r["egress_port"],
                                                     instance=r["instance"])
        return entry

    def buildCloneSessionEntry(self, session_id, replicas, packet_length_bytes=0):
        entry = p4runtime_pb2.PacketReplicationEngineEntry()
        session = entry.clone_session_entry
        session.session_id, session.packet_length_bytes = session_id, packet_length_bytes
        for r in replicas:
            session.replicas.add(egress_port=r["egress_port"], instance=r["instance"])
        return entry
