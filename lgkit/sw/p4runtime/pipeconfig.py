"""Forwarding pipeline configs: a device config (lang/device_config.py) -> a loaded pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from finsy.proto import p4r

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.device_config import DeviceConfig, DeviceConfigError, parse_device_config
from lgkit.sw.lang.frontend.compiler import compile_source
from lgkit.sw.lang.frontend.diagnostics import P4Error

from .errors import invalid
from .schema import P4InfoIndex


@dataclass
class BuiltConfig:
    """A verified config: the request's config, its P4Info index and a fresh pipeline."""

    config: p4r.ForwardingPipelineConfig
    index: P4InfoIndex
    pipeline: Pipeline
    source: str


def parse_config(data: bytes) -> DeviceConfig:
    """The program in p4_device_config (our JSON, our BMv2-style JSON, a P4DeviceConfig)."""
    try:
        return parse_device_config(data)
    except DeviceConfigError as exc:
        raise invalid(f"p4_device_config: {exc}") from None


def _program_step(failure: str, step: Callable[..., Any], *args: Any) -> Any:
    """Run a compile or load step; any failure is the program's: INVALID_ARGUMENT, with why."""
    try:
        return step(*args)
    except P4Error as exc:
        raise invalid(f"the device config's program {failure}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 (e.g. a program too deep for the code generator)
        raise invalid(f"the device config's program {failure}: "
                      f"{type(exc).__name__}: {exc}") from None


def build_config(config: p4r.ForwardingPipelineConfig) -> BuiltConfig:
    """Verify a config: parse, compile and load the program, check the P4Info against it."""
    if not config.HasField("p4info"):
        raise invalid("the forwarding pipeline config has no P4Info")
    device = parse_config(config.p4_device_config)
    compiled = _program_step("does not compile", compile_source, device.source, device.program)
    pipeline = _program_step("cannot be loaded", Pipeline.load, compiled)
    index = P4InfoIndex.build(config.p4info)
    index.check_against(pipeline)
    return BuiltConfig(config, index, pipeline, device.source)
