"""Forwarding pipeline configs: our JSON device config -> a compiled, loaded pipeline."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from finsy.proto import p4r

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_source
from lgkit.sw.lang.frontend.diagnostics import P4Error

from .errors import invalid
from .schema import P4InfoIndex

DEVICE_CONFIG_FORMAT = "lgkit-device-config"


@dataclass
class BuiltConfig:
    """A verified config: the request's config, its P4Info index and a fresh pipeline."""

    config: p4r.ForwardingPipelineConfig
    index: P4InfoIndex
    pipeline: Any
    source: str


def parse_device_config(data: bytes) -> dict[str, Any]:
    """The device config JSON; a BMv2 JSON or anything else is INVALID_ARGUMENT."""
    if not data:
        raise invalid("p4_device_config is empty (expected an lgkit device config JSON)")
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"p4_device_config is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise invalid("p4_device_config must be a JSON object")
    if "header_types" in doc:
        raise invalid("p4_device_config is a BMv2 JSON; this target needs the lgkit device "
                      "config written by `lgkit compile PROG.p4 --out DIR` (PROG.json)")
    if doc.get("format") != DEVICE_CONFIG_FORMAT or not isinstance(doc.get("source"), str):
        raise invalid(f"p4_device_config is not an {DEVICE_CONFIG_FORMAT} JSON")
    return doc


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
    doc = parse_device_config(config.p4_device_config)
    name = str(doc.get("program", "<device config>"))
    compiled = _program_step("does not compile", compile_source, doc["source"], name)
    pipeline = _program_step("cannot be loaded", Pipeline.load, compiled)
    index = P4InfoIndex.build(config.p4info)
    index.check_against(pipeline)
    return BuiltConfig(config, index, pipeline, doc["source"])
