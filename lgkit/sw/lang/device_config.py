"""Device configs the built-in target loads: our JSON, our BMv2-style JSON, P4DeviceConfig."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

FORMAT = "lgkit-device-config"
VERSION = 1
EMBED_KEY = "lgkit"  # the member of a BMv2-style JSON that carries our config
# p4.tmp.P4DeviceConfig (PI): reassign = 1 (bool), extras = 2 (message), device_data = 3 (bytes)
P4DEVICECONFIG_DEVICE_DATA = 3
REAL_BMV2_JSON = ("it is a BMv2 JSON from p4c, which the built-in target cannot run; compile "
                  "the program with the kit's p4c-bm2-ss (or `lgkit compile`) instead")


class DeviceConfigError(ValueError):
    """A device config this target cannot load; the message says why."""


@dataclass(frozen=True)
class DeviceConfig:
    """What the target needs to load a program: its file name and preprocessed source."""

    program: str
    source: str


def config_document(program: str, source: str, p4info_text: str) -> dict[str, Any]:
    """Our device config as a JSON object (docs/design.md, "Compilation and device config")."""
    return {"format": FORMAT, "version": VERSION, "program": program, "source": source,
            "p4info_sha256": hashlib.sha256(p4info_text.encode()).hexdigest()}


def parse_device_config(data: bytes | str) -> DeviceConfig:
    """The program in `data`: our JSON, a BMv2-style JSON carrying it, or a P4DeviceConfig."""
    if isinstance(data, str):
        data = data.encode()
    if not data:
        raise DeviceConfigError("the device config is empty")
    if not data.lstrip().startswith((b"{", b"[")):
        device_data = p4_device_config_data(data)
        if device_data is None:
            raise DeviceConfigError("the device config is neither JSON nor a P4DeviceConfig "
                                    "protobuf with device_data")
        return parse_device_config(device_data)
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DeviceConfigError(f"the device config is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise DeviceConfigError("the device config must be a JSON object")
    if "header_types" in doc or "pipelines" in doc:
        embedded = doc.get(EMBED_KEY)
        if not isinstance(embedded, dict):
            raise DeviceConfigError(REAL_BMV2_JSON)
        doc = embedded
    return _from_document(doc)


def _from_document(doc: dict[str, Any]) -> DeviceConfig:
    if doc.get("format") != FORMAT:
        raise DeviceConfigError(f"the device config is not an {FORMAT} JSON (no \"format\": "
                                f"\"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise DeviceConfigError(f"unsupported {FORMAT} version {doc.get('version')!r} "
                                f"(this kit reads version {VERSION})")
    source = doc.get("source")
    if not isinstance(source, str) or not source.strip():
        raise DeviceConfigError("the device config has no program source")
    return DeviceConfig(str(doc.get("program") or "<device config>"), source)


def p4_device_config_data(data: bytes) -> bytes | None:
    """device_data of a serialized P4DeviceConfig, or None if `data` is not one."""
    fields = _protobuf_fields(data)
    if fields is None:
        return None
    found = [value for number, value in fields if number == P4DEVICECONFIG_DEVICE_DATA]
    if not found or not isinstance(found[-1], bytes):
        return None
    return found[-1]


def _protobuf_fields(data: bytes) -> list[tuple[int, int | bytes]] | None:
    """The top-level (field number, value) pairs of a protobuf message; None if malformed."""
    fields: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        if tag is None:
            return None
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            return None
        if wire_type == 0:
            value, pos = _varint(data, pos)
            if value is None:
                return None
            fields.append((number, value))
        elif wire_type == 2:
            length, pos = _varint(data, pos)
            if length is None or pos + length > len(data):
                return None
            fields.append((number, data[pos:pos + length]))
            pos += length
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
            if pos > len(data):
                return None
        else:
            return None
    return fields


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None, pos
