"""The p4c-bm2-ss / p4c shims and the device configs they write, read by switch and P4Runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from finsy.proto import U128, p4i, p4r
from google.protobuf import text_format
from test_p4rt_support import StreamClient, start_server
from testpaths import REPO

from lgkit.course.p4config_pb2 import P4DeviceConfig
from lgkit.sw.lang.device_config import DeviceConfigError, parse_device_config
from lgkit.sw.switch.loader import load_program

ROOT = REPO
BASIC = ROOT / "p4" / "basic.p4"
BIN = Path(sys.executable).parent
Cfg = p4r.SetForwardingPipelineConfigRequest


def shim(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / name), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("p4c")
    result = shim("lgkit-p4c-bm2-ss", "--p4v", "16", "--p4runtime-files",
                  "build/basic.p4info.txtpb,build/basic.p4info.json,build/basic.p4info.bin",
                  "-o", "build/basic.json", "--emit-externs", "--std", "p4-16",
                  "-DUNUSED=1", "-I", str(ROOT / "p4"), str(BASIC), cwd=out)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return out / "build"


@pytest.mark.slow
def test_p4info_files_in_every_format_agree(built):
    text = p4i.P4Info()
    text_format.Parse((built / "basic.p4info.txtpb").read_text(), text)
    binary = p4i.P4Info.FromString((built / "basic.p4info.bin").read_bytes())
    as_json = json.loads((built / "basic.p4info.json").read_text())
    assert text == binary
    assert [t["preamble"]["name"] for t in as_json["tables"]] == [
        t.preamble.name for t in text.tables]
    assert {"MyIngress.ipv4_lpm", "MyIngress.dmac"} <= {t.preamble.name for t in text.tables}


def test_output_looks_like_bmv2_json_and_carries_the_program(built):
    doc = json.loads((built / "basic.json").read_text())
    for key in ("header_types", "headers", "actions", "pipelines", "__meta__"):
        assert key in doc
    tables = {t["name"]: t for t in doc["pipelines"][0]["tables"]}
    lpm = tables["MyIngress.ipv4_lpm"]
    assert lpm["match_type"] == "lpm" and lpm["key"][0]["target"] == ["ipv4", "dstAddr"]
    header = next(h for h in doc["headers"] if h["name"] == "ipv4")
    fields = next(t for t in doc["header_types"] if t["name"] == header["header_type"])["fields"]
    assert ["dstAddr", 32, False] in fields
    forward = next(a for a in doc["actions"] if a["name"] == "MyIngress.ipv4_forward")
    assert [p["bitwidth"] for p in forward["runtime_data"]] == [48, 9]
    device = parse_device_config((built / "basic.json").read_bytes())
    assert device.program == "basic.p4" and "control MyIngress" in device.source
    assert "ipv4_lpm" in load_program(str(built / "basic.json")).tables["MyIngress.ipv4_lpm"].name


def test_p4c_driver_writes_json_and_p4i_into_the_output_directory(tmp_path):
    result = shim("lgkit-p4c", "--target", "bmv2", "--arch", "v1model", "-o", "out",
                  "--p4runtime-files", "out/basic.p4info.txt", str(BASIC), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "basic.json", "basic.p4i", "basic.p4info.txt"}


def test_unknown_and_unhonoured_options_warn_in_one_line_each(tmp_path):
    result = shim("lgkit-p4c-bm2-ss", "--frobnicate", "--toJSON", "ir.json", "-o", "b.json",
                  str(BASIC), cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert lines == ["p4c-bm2-ss: warning: unknown option --frobnicate; ignored",
                     "p4c-bm2-ss: warning: --toJSON is not supported by the kit's compiler; "
                     "ignored"]
    assert (tmp_path / "b.json").is_file() and not (tmp_path / "ir.json").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--std", "p4-14", "x.p4"], "p4c-bm2-ss: error: --std p4-14: the kit compiles P4_16 only"),
    (["--target", "tofino", "x.p4"], "--target tofino"),
    (["-o"], "option -o needs a value"),
    ([], "no P4 program given"),
    (["missing.p4"], "missing.p4: error: no such file"),
])
def test_bad_command_lines_fail_in_one_line(tmp_path, args, message):
    result = shim("lgkit-p4c-bm2-ss", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr


def test_compile_errors_are_located_and_load_errors_are_caught_at_compile(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\ncontrol C( {}\n")
    result = shim("lgkit-p4c-bm2-ss", "-o", "bad.json", "bad.p4", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.startswith("bad.p4:2:")
    assert "Traceback" not in result.stderr and not (tmp_path / "bad.json").exists()


def test_device_config_formats_and_their_errors(built):
    bmv2_style = (built / "basic.json").read_bytes()
    wrapped = P4DeviceConfig(reassign=True, device_data=bmv2_style).SerializeToString()
    assert parse_device_config(wrapped).program == "basic.p4"
    inner = json.dumps(json.loads(bmv2_style)["lgkit"]).encode()
    assert parse_device_config(inner).source == parse_device_config(bmv2_style).source
    for data, reason in [
        (b"", "empty"),
        (json.dumps({"header_types": [], "pipelines": []}).encode(), "BMv2 JSON from p4c"),
        (P4DeviceConfig(reassign=True).SerializeToString(), "neither JSON nor a P4DeviceConfig"),
        (P4DeviceConfig(device_data=b"\x00\x01").SerializeToString(), "neither JSON"),
        (b"\xff\xfe garbage", "neither JSON nor a P4DeviceConfig"),
        (b'{"format": "lgkit-device-config", "version": 9, "source": "x"}', "version 9"),
        (b"[1, 2]", "JSON object"),
    ]:
        with pytest.raises(DeviceConfigError, match=reason):
            parse_device_config(data)


def config_request(client: StreamClient, device_config: bytes, p4info: p4i.P4Info) -> Cfg:
    config = p4r.ForwardingPipelineConfig(p4_device_config=device_config, p4info=p4info)
    return Cfg(device_id=client.device_id, election_id=U128.encode(client.election_id),
               config=config, action=Cfg.VERIFY_AND_COMMIT)


def test_p4runtime_accepts_every_form_and_refuses_unusable_ones(built):
    server, switch = start_server()
    client = StreamClient(server.port)
    try:
        client.become_primary(1)
        info = p4i.P4Info()
        text_format.Parse((built / "basic.p4info.txtpb").read_text(), info)
        bmv2_style = (built / "basic.json").read_bytes()
        for data in (bmv2_style, P4DeviceConfig(device_data=bmv2_style).SerializeToString(),
                     json.dumps(json.loads(bmv2_style)["lgkit"]).encode()):
            client.stub.SetForwardingPipelineConfig(config_request(client, data, info))
            assert "MyIngress.ipv4_lpm" in switch.pipeline.tables
        for data, reason in [
            (P4DeviceConfig(extras=P4DeviceConfig.Extras(kv={"a": "b"})).SerializeToString(),
             "neither JSON nor a P4DeviceConfig"),
            (P4DeviceConfig(device_data=b'{"header_types": []}').SerializeToString(),
             "BMv2 JSON from p4c"),
        ]:
            with pytest.raises(grpc.RpcError) as err:
                client.stub.SetForwardingPipelineConfig(config_request(client, data, info))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason in err.value.details()
        assert client.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
    finally:
        client.close()
        server.stop()


def test_field_lists_named_by_constants(tmp_path):
    from lgkit.sw.exec.arch.v1model.passes import run_untimed
    from lgkit.sw.exec.pipeline import Pipeline
    from lgkit.sw.lang.frontend.compiler import compile_file

    program = ROOT / "tests" / "p4" / "frontend" / "field_list_const.p4"
    pipeline = Pipeline.load(compile_file(str(program)))
    assert run_untimed(pipeline, 0, b"\x01") == [(1, b"\x07")]  # kept = 7 survives, lost = 0
    bad = tmp_path / "bad.p4"
    bad.write_text(program.read_text().replace("@field_list(FL_RECIRC)", "@field_list(NOPE)"))
    result = shim("lgkit-p4c-bm2-ss", "-o", "bad.json", "bad.p4", cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.p4:6:1: error: @field_list(NOPE): not an integer or an integer constant" in \
        result.stderr and "Traceback" not in result.stderr
