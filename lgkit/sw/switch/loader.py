"""A pipeline from a file: a .p4 program (compiled now) or a device config (JSON or protobuf)."""

from __future__ import annotations

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.device_config import DeviceConfigError, parse_device_config
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
