"""TNA programs on the built-in target: the STF files of tests/p4/tna (forwarding, a
RegisterAction counter, mirrors, resubmit, recirculation, multicast), digests, the packets the
passes see, what is refused, and (where bf-p4c is installed) that bf-p4c compiles the same
program."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.exec.interp.tables import Exact, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.switch import Switch

FOLDER = TESTS / "p4" / "tna"
PROGRAM = FOLDER / "features.p4"
STFS = sorted(FOLDER.glob("*.stf"))
PACKET = bytes.fromhex("000000000002 000000000001 0800 DEADBEEF".replace(" ", ""))


@pytest.mark.parametrize("stf", STFS, ids=[p.stem for p in STFS])
def test_stf(stf: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stf", str(PROGRAM), str(stf)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_a_wrong_expectation_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "t.stf"
    stf.write_text((FOLDER / "counter.stf").read_text().replace("register_read Ig.pkts 1 == 2",
                                                                "register_read Ig.pkts 1 == 3"))
    assert main(["stf", str(PROGRAM), str(stf)]) == 1
    assert "FAIL" in capsys.readouterr().out


def load_with(port: int, action: str, params: list[int]) -> Pipeline:
    pl = Pipeline.load(compile_file(str(PROGRAM)), seed=1)
    pl.tables["Ig.t"].insert(TableEntry([Exact(port)], action, params))
    return pl


def test_every_output_of_a_mirrored_packet() -> None:
    pl = load_with(1, "Ig.mirror_fwd", [2, 9])
    pl.clone_sessions[9] = [(6, 0)]
    out = pl.run_untimed(1, PACKET)
    original = bytes.fromhex("000000000202") + PACKET[6:]
    copy = bytes.fromhex("000000000601") + PACKET[6:]
    assert sorted(out) == [(2, original), (6, copy)]
    pl.clone_sessions.clear()  # a session the control plane has not set: no copy
    assert pl.run_untimed(1, PACKET) == [(2, original)]


def test_a_digest_reaches_the_control_plane_only_when_digest_type_is_set() -> None:
    pl = load_with(1, "Ig.learn_fwd", [2])
    pl.tables["Ig.t"].insert(TableEntry([Exact(3)], "Ig.fwd", [2]))
    pl.run_untimed(1, PACKET)
    pl.run_untimed(3, PACKET)
    assert [values for _, values in pl.digests] == [(1, 1)]


def test_drop_ctl_drops_before_the_traffic_manager() -> None:
    pl = load_with(1, "Ig.drop_fwd", [2])
    assert pl.run_untimed(1, PACKET) == []
    result = pl.ingress(1, PACKET, 0)
    assert (result.egress, result.drops) == ([], 1)


def test_recirculation_re_enters_ingress_on_the_recirculation_port() -> None:
    pl = load_with(1, "Ig.recirc_fwd", [2])
    assert pl.run_untimed(1, PACKET) == []  # port 68 has no entry: the second pass drops it
    first = pl.ingress(1, PACKET, 0)
    assert [job.port for job in first.egress] == [68]
    back = pl.egress(first.egress[0], 0)
    assert back.out is None and back.recirculate is not None
    assert back.recirculate.preserved == (68,)


TNA_MAIN = """#include <tna.p4>
struct h_t { } struct m_t { }
parser IP(packet_in p, out h_t h, out m_t m, out ingress_intrinsic_metadata_t i) {
    state start { p.extract(i); p.advance(PORT_METADATA_SIZE); transition accept; } }
control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t i,
          in ingress_intrinsic_metadata_from_parser_t pr,
          inout ingress_intrinsic_metadata_for_deparser_t d,
          inout ingress_intrinsic_metadata_for_tm_t tm) { %s apply { %s } }
control ID(packet_out p, inout h_t h, in m_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) { apply { } }
parser EP(packet_in p, out h_t h, out m_t m, out egress_intrinsic_metadata_t e) {
    state start { p.extract(e); transition accept; } }
control E(inout h_t h, inout m_t m) { apply { } }
control ED(packet_out p, inout h_t h, in m_t m) { apply { } }
parser ED_P(packet_in p, out h_t h, out m_t m) { state start { transition accept; } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
%s
"""


@pytest.mark.parametrize(("locals_", "body", "main_", "message"), [
    ("Hash<bit<16>>(HashAlgorithm_t.CRC64) hs;", "tm.qid = (QueueId_t)hs.get({i.ingress_port});",
     "Switch(pipe) main;", "unsupported: Hash algorithm CRC64"),
    ("", "", "Switch(pipe, pipe) main;", "unsupported: a Switch of more than one Pipeline"),
    ("", "", "Pipeline(IP(), I(), ID(), ED_P(), E(), ED()) pipe2; Switch(pipe2) main;",
     "unsupported: a TNA parser without its egress_intrinsic_metadata_t parameter"),
    ("Register<bit<8>, bit<1>>(2) r; RegisterAction<bit<8>, bit<1>, bit<8>>(r) a = "
     "{ void apply(inout bit<8> v) { v = 1; } };", "a.execute_log();", "Switch(pipe) main;",
     "unsupported: RegisterAction.execute_log"),
])
def test_unmodelled_features_are_refused_at_compile_time(
        locals_: str, body: str, main_: str, message: str) -> None:
    program = compile_source(TNA_MAIN % (locals_, body, main_))
    with pytest.raises(P4Error, match=message):
        Pipeline.load(program)


@pytest.mark.parametrize("program", [PROGRAM, FOLDER / "direct" / "direct.p4",
                                     FOLDER / "pktgen" / "gen.p4",
                                     FOLDER / "port_metadata" / "pm.p4"],
                         ids=["features", "direct", "pktgen", "port_metadata"])
def test_bf_p4c_compiles_the_same_program(program: Path, tmp_path: Path) -> None:
    """The model's test programs are TNA as bf-p4c takes it (bf-p4c also requires a direct
    register to be executed by every hit action of its table, which the model does not check)."""
    driver = shutil.which("bf-p4c")
    if driver is None:
        pytest.skip("bf-p4c not on PATH (source /work/shared/oracle/env-tofino.sh)")
    proc = subprocess.run([driver, "--std", "p4-16", "--target", "tofino", "--arch", "tna",
                           "-o", str(tmp_path / "out"), str(program)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


class Wire:
    """A port backend that records what the switch transmits."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.frames.append(data)


def test_the_switch_runs_a_tna_program_through_its_traffic_manager() -> None:
    pl = load_with(1, "Ig.recirc_fwd", [2])
    pl.tables["Ig.t"].insert(TableEntry([Exact(68)], "Ig.recirc_fwd", [2]))
    clock = VirtualClock()
    switch = Switch(clock=clock)
    switch.set_pipeline(pl)
    wire = Wire()
    switch.add_port(2, wire)
    switch.receive(1, PACKET)
    clock.run_until()
    assert wire.frames == [bytes.fromhex("000000000202 00000000CDCC".replace(" ", ""))
                           + PACKET[12:]]


EXTRAS = """#include <tna.p4>
header eth_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct h_t { eth_h eth; }
struct port_md_t { bit<16> tag; }
struct m_t { port_md_t port_md; }
parser IP(packet_in p, out h_t h, out m_t m, out ingress_intrinsic_metadata_t i) {
    state start {
        p.extract(i);
        m.port_md = port_metadata_unpack<port_md_t>(p);
        p.extract(h.eth);
        transition accept;
    }
}
control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t i,
          in ingress_intrinsic_metadata_from_parser_t pr,
          inout ingress_intrinsic_metadata_for_deparser_t d,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;
    action to(PortId_t port) { tm.ucast_egress_port = port; tm.bypass_egress = 1; hits.count(); }
    table t { key = { i.ingress_port : exact; } actions = { to; } counters = hits; size = 4; }
    apply {
        t.apply();
        h.eth.src[7:0] = max(h.eth.src[7:0], 8w0x40);
        h.eth.src[15:8] = min(h.eth.src[15:8], 8w0x40);
        h.eth.src[31:16] = m.port_md.tag;
        d.mirror_type = 1;
    }
}
control ID(packet_out p, inout h_t h, in m_t m, in ingress_intrinsic_metadata_for_deparser_t d) {
    Mirror() mirror;
    apply {
        mirror.emit<eth_h>(3, {h.eth.src, h.eth.dst, 0x0102});
        p.emit(h);
    }
}
parser EP(packet_in p, out h_t h, out m_t m, out egress_intrinsic_metadata_t e) {
    state start { p.extract(e); transition accept; } }
control E(inout h_t h, inout m_t m) { apply { } }
control ED(packet_out p, inout h_t h, in m_t m) { apply { p.emit(h); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"""


def test_min_max_port_metadata_direct_counter_and_a_mirror_header_of_fields() -> None:
    pl = Pipeline.load(compile_source(EXTRAS))
    pl.tables["I.t"].insert(TableEntry([Exact(1)], "I.to", [2]))
    pl.clone_sessions[3] = [(5, 0)]
    frame = bytes.fromhex("000000000002" "00000000ff11" "0800") + b"payload"
    out = dict(pl.run_untimed(1, frame))
    # no port metadata set for port 1: tag 0; max(0x11, 0x40), min(0xff, 0x40)
    assert out[2] == bytes.fromhex("000000000002" "000000004040" "0800") + b"payload"
    # the mirror header (src, dst, 0x0102) before the original packet, through egress on port 5
    assert out[5] == bytes.fromhex("000000004040" "000000000002" "0102") + frame
    assert pl.tables["I.t"].entries()[0].counter == (1, len(frame))
