"""A connection to a BMv2-like switch: the device config is the compiler's JSON, as bytes."""

from .switch import SwitchConnection


def buildDeviceConfig(bmv2_json_file_path):
    with open(bmv2_json_file_path, "rb") as f:
        return f.read()


class Bmv2SwitchConnection(SwitchConnection):
    def buildDeviceConfig(self, **kwargs):
        return buildDeviceConfig(**kwargs)
