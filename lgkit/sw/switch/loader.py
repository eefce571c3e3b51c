"""A pipeline from a file: a .p4 program (compiled now) or a device config (JSON or protobuf)."""

from __future__ import annotations

import json
from pathlib import Path

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.device_config import (
    EMBED_KEY,
    DeviceConfig,
    DeviceConfigError,
    config_document,
    parse_device_config,
)
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.frontend.diagnostics import P4Error


def load_program(path: str) -> Pipeline:
    """A pipeline from a .p4 program or a device config file; ValueError if bad."""
    try:
        if path.endswith(".p4"):
            compiled = compile_file(path)
        else:
            with open(path, "rb") as f:
                device = parse_device_config(f.read())
            compiled = compile_source(device.source, device.program)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except DeviceConfigError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except P4Error as exc:
        raise ValueError(str(exc)) from None
    try:
        return Pipeline.load(compiled)
    except P4Error as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 (any load failure is the program's, not ours)
        raise ValueError(f"{path}: cannot be loaded: {type(exc).__name__}: {exc}") from None


def device_config_bytes(path: str) -> bytes:
    """What `path` gives a BMv2 tool as the switch's config: the file, or for a .p4 program
    our device config of it; ValueError if it cannot be read or compiled."""
    try:
        if not path.endswith(".p4"):
            return Path(path).read_bytes()
        compiled = compile_file(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except P4Error as exc:
        raise ValueError(str(exc)) from None
    return json.dumps(config_document(Path(path).name, compiled.source, "")).encode()


def bmv2_json_text(data: bytes) -> str:
    """The BMv2-style JSON of a device config (itself, if it is one), for BMv2's runtime CLI."""
    from lgkit.sw.lang.bmv2_json import bmv2_json
    from lgkit.sw.lang.p4info import TEXT_HEADER, build_p4info

    if data.lstrip().startswith(b"{") and b'"header_types"' in data and EMBED_KEY.encode() in data:
        return data.decode()
    device: DeviceConfig = parse_device_config(data)
    compiled = compile_source(device.source, device.program)
    info = build_p4info(compiled.ir)
    from google.protobuf import text_format

    text = TEXT_HEADER + text_format.MessageToString(info)
    return json.dumps(bmv2_json(info, device.program,
                                config_document(device.program, device.source, text)), indent=1)
