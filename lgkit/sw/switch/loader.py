"""A pipeline from a file: a .p4 program (compiled now) or an lgkit device config .json."""

from __future__ import annotations

import json

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.frontend.diagnostics import P4Error


def load_program(path: str) -> Pipeline:
    """A pipeline from a .p4 program or an lgkit device config .json; ValueError if bad."""
    try:
        if path.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            if not isinstance(doc, dict) or "header_types" in doc:
                raise ValueError(f"{path} is a BMv2 JSON; give the .p4 program or the lgkit "
                                 "device config written by `lgkit compile`")
            if doc.get("format") != "lgkit-device-config" or not isinstance(doc.get("source"),
                                                                             str):
                raise ValueError(f"{path} is not an lgkit device config")
            compiled = compile_source(doc["source"], str(doc.get("program", path)))
        else:
            compiled = compile_file(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    except P4Error as exc:
        raise ValueError(str(exc)) from None
    try:
        return Pipeline.load(compiled)
    except P4Error as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 (any load failure is the program's, not ours)
        raise ValueError(f"{path}: cannot be loaded: {type(exc).__name__}: {exc}") from None
