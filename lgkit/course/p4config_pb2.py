"""p4.tmp.P4DeviceConfig (PI's device-config wrapper) for protobuf 3.20 and later.

The tutorial environment installs this file as `p4/tmp/p4config_pb2.py`, since the `p4runtime`
wheel does not ship it. Fields: reassign = 1 (bool), extras = 2 (Extras: map<string, string>
kv = 1), device_data = 3 (bytes).
"""

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal import builder

FIELD = descriptor_pb2.FieldDescriptorProto


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="p4/tmp/p4config.proto", package="p4.tmp",
                                               syntax="proto3")
    config = proto.message_type.add(name="P4DeviceConfig")
    extras = config.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    for number, name in ((1, "key"), (2, "value")):
        entry.field.add(name=name, number=number, type=FIELD.TYPE_STRING,
                        label=FIELD.LABEL_OPTIONAL)
    extras.field.add(name="kv", number=1, type=FIELD.TYPE_MESSAGE, label=FIELD.LABEL_REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    config.field.add(name="reassign", number=1, type=FIELD.TYPE_BOOL,
                     label=FIELD.LABEL_OPTIONAL)
    config.field.add(name="extras", number=2, type=FIELD.TYPE_MESSAGE,
                     label=FIELD.LABEL_OPTIONAL, type_name=".p4.tmp.P4DeviceConfig.Extras")
    config.field.add(name="device_data", number=3, type=FIELD.TYPE_BYTES,
                     label=FIELD.LABEL_OPTIONAL)
    return proto


DESCRIPTOR = descriptor_pool.Default().AddSerializedFile(_file().SerializeToString())
builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, "p4.tmp.p4config_pb2", globals())
