"""Forwarding pipeline configs: our JSON device config -> a compiled, loaded pipeline."""

from __future__ import annotations

import json
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


def build_config(config: p4r.ForwardingPipelineConfig) -> BuiltConfig:
    """Verify a config: parse, compile and load the program, check the P4Info against it."""
    if not config.HasField("p4info"):
        raise invalid("the forwarding pipeline config has no P4Info")
    doc = parse_device_config(config.p4_device_config)
    try:
        compiled = compile_source(doc["source"], str(doc.get("program", "<device config>")))
        pipeline = Pipeline.load(compiled)
    except P4Error as exc:
        raise invalid(f"the device config's program does not compile: {exc}") from None
    index = P4InfoIndex.build(config.p4info)
    index.check_against(pipeline)
    return BuiltConfig(config, index, pipeline, doc["source"])
