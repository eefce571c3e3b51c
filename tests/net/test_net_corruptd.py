"""On built-in switches (Fig. 7, p4/basic.p4) with nft corruption on the wire: TCP under loss
retransmits, and corruptd, fed by the interface counters and talking over a real
redis-server, asks for protection under loss and releases the link after repair."""

from __future__ import annotations

import queue
import shutil
import subprocess

import pytest
from test_net_support import assert_machine_clean, network_lock

from lgkit.control.corruptd import Corruptd, CorruptdParams
from lgkit.control.notify import ProtectRequest, RedisNotifier
from lgkit.control.redis_server import RedisServer
from lgkit.core.topology import load_spec
from lgkit.measure.results import RunStore, read_table
from lgkit.net.inject.injectors import NftInjector
from lgkit.net.runner import PhaseRunner
from lgkit.net.spec.scenario import Flow, Scenario
from lgkit.net.testbed.testbed import BASIC_PROGRAM, Testbed
from lgkit.sw.switch.loss import LossModel

PARAMS = CorruptdParams(interval_s=0.2, window_frames=400, threshold=0.02)
pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def testbed(tmp_path_factory):
    with network_lock():
        bed = Testbed(load_spec("fig7"), "builtin", tmp_path_factory.mktemp("fig7"),
                      program=BASIC_PROGRAM, log=lambda line: None)
        try:
            yield bed.start()
        finally:
            bed.stop()
        assert_machine_clean()


def test_tcp_retransmits_under_loss_without_protection(testbed, tmp_path) -> None:
    loss = LossModel(0.01)
    injector = NftInjector(testbed.network.wire_ingress(), loss)
    scenario = Scenario("t", "fig7", loss, Flow("h1", "h3", "cubic", 4.0), ["lg_off"])
    store = RunStore("lgoff", {}, root=tmp_path)
    injector.start()
    try:
        result = PhaseRunner(testbed, scenario, injector, store, None).run("lg_off")
    finally:
        injector.stop()
    assert result.retransmits > 0
    assert result.frames_on_link > 1000
    assert 0.0 < result.link_loss < 0.03 and result.effective_loss > 0.0
    assert result.goodput_mbps > 1.0
    assert read_table(store.path, "phases")[0]["phase"] == "lg_off"


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")
def test_corruptd_protects_then_releases_over_redis(testbed) -> None:
    network = testbed.network
    requests: queue.Queue[ProtectRequest] = queue.Queue()
    injector = NftInjector(network.wire_ingress(), LossModel(0.1))
    pinger = None
    injector.start()
    try:
        with RedisServer() as server:
            listener, publisher = RedisNotifier(server.url), RedisNotifier(server.url)
            listener.subscribe(requests.put)
            daemon = Corruptd(publisher, PARAMS)
            daemon.watch("tx-rx", lambda: (network.counter("B"), network.counter("C")))
            daemon.start()
            try:
                h1, h3 = network.node("h1"), network.node("h3")
                pinger = h1.popen(["ping", "-q", "-i", "0.002", "-c", "6000", h3.IP()],
                                  stdout=subprocess.DEVNULL)
                first = requests.get(timeout=15)
                injector.stop()  # the link is repaired
                second = requests.get(timeout=15)
            finally:
                daemon.stop()
                listener.close()
                publisher.close()
    finally:
        if pinger is not None:
            pinger.kill()
            pinger.wait()
        injector.stop()
    assert first.protect and first.link == "tx-rx"
    assert 0.05 < first.loss < 0.2 and first.frames >= PARAMS.window_frames
    assert not second.protect and second.loss < PARAMS.threshold
