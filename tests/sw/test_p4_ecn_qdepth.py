"""ECN marking at a run-time threshold (p4/basic.p4, p4/linkguardian.p4) and the queue-depth
register of the LinkGuardian program, driven through the pipeline's ingress and egress passes
with chosen queue depths."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from testpaths import REPO

from lgkit.control.linkguardian import apply_ops, ecn_ops
from lgkit.control.pipeline_writer import PipelineWriter
from lgkit.sw.exec.interp.tables import Lpm, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file

P4 = REPO / "p4"
DST_MAC = 0x0000_0000_0003


@pytest.fixture(scope="module")
def basic() -> Pipeline:
    pipeline = Pipeline.load(compile_file(str(P4 / "basic.p4")))
    pipeline.tables["MyIngress.ipv4_lpm"].insert(
        TableEntry([Lpm(0x0A000003, 32)], "MyIngress.ipv4_forward", [DST_MAC, 2]))
    return pipeline


@pytest.fixture(scope="module")
def lg() -> Pipeline:
    pipeline = Pipeline.load(compile_file(str(P4 / "linkguardian.p4")))
    (lpm,) = [t for name, t in pipeline.tables.items() if name.endswith("ipv4_lpm")]
    (action,) = [a for a in lpm.action_names if a.endswith("ipv4_forward")]
    lpm.insert(TableEntry([Lpm(0x0A000003, 32)], action, [DST_MAC, 2]))
    return pipeline


def _packet(tos: int) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02")
                 / IP(src="10.0.0.1", dst="10.0.0.3", tos=tos) / UDP(dport=9) / (b"x" * 20))


def _through(pipeline: Pipeline, tos: int, qdepth: int) -> IP:
    result = pipeline.ingress(1, _packet(tos), 0)
    (job,) = result.egress
    port, data = pipeline.egress(job, 0, enq_qdepth=qdepth).out
    assert port == 2
    return Ether(data)[IP]


def _checksum_ok(ip: IP) -> bool:
    fresh = ip.copy()
    del fresh.chksum
    return IP(bytes(fresh)).chksum == ip.chksum


def _set_threshold(program: str, pipeline: Pipeline, qdepth: int) -> None:
    if program == "basic":
        pipeline.tables["MyEgress.ecn"].set_default("MyEgress.set_ecn_threshold", [qdepth])
    else:
        apply_ops(PipelineWriter(pipeline), ecn_ops(2, qdepth))


@pytest.mark.slow
@pytest.mark.parametrize("program", ["basic", "lg"])
def test_ce_marked_at_or_above_the_run_time_threshold(program: str, request) -> None:
    pipeline: Pipeline = request.getfixturevalue(program)
    _set_threshold(program, pipeline, 4)
    assert _through(pipeline, tos=0x02, qdepth=3).tos == 0x02  # ECT(0), queue below
    marked = _through(pipeline, tos=0x02, qdepth=4)
    assert marked.tos == 0x03 and _checksum_ok(marked)
    assert _through(pipeline, tos=0x00, qdepth=9).tos == 0x00  # not ECN-capable
    assert _through(pipeline, tos=0xB9, qdepth=9).tos == 0xBB  # DSCP kept, ECT(1) -> CE
    _set_threshold(program, pipeline, 0)
    assert _through(pipeline, tos=0x02, qdepth=100).tos == 0x02  # threshold 0: off


def test_lg_program_keeps_the_deepest_queue_seen_per_port(lg: Pipeline) -> None:
    deepest = lg.registers["lg_qdepth_max"]
    deepest.write(2, 0)
    for qdepth in (3, 7, 5):
        _through(lg, tos=0, qdepth=qdepth)
    assert deepest.read(2) == 7
    deepest.write(2, 0)  # what the poller does after each read
    _through(lg, tos=0, qdepth=2)
    assert deepest.read(2) == 2 and deepest.read(1) == 0
