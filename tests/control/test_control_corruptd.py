"""corruptd on a synthetic counter feed, and its notification over a real redis-server."""

from __future__ import annotations

import queue
import shutil
import socket

import pytest

from lgkit.control.corruptd import Corruptd, CorruptdParams, LinkWatch
from lgkit.control.notify import LocalNotifier, ProtectRequest, RedisNotifier
from lgkit.control.redis_server import RedisServer, RedisUnavailable


class SyntheticLink:
    """Cumulative counters of a link whose loss rate the test sets per step."""

    def __init__(self) -> None:
        self.sent = 0
        self.received = 0

    def step(self, frames: int, lost: int) -> None:
        self.sent += frames
        self.received += frames - lost

    def feed(self) -> tuple[int, int]:
        return self.sent, self.received


PARAMS = CorruptdParams(interval_s=0.01, window_frames=10_000, threshold=1e-3)


def test_activates_once_a_full_window_reaches_the_threshold() -> None:
    link = SyntheticLink()
    watch = LinkWatch("tx-rx", link.feed, PARAMS)
    assert watch.poll() is None
    decisions = []
    for _ in range(4):
        link.step(3000, 6)  # 2e-3 loss, but the first 9000 frames are less than a window
        decisions.append(watch.poll())
    assert decisions[:3] == [None, None, None]
    assert decisions[3] == ProtectRequest("tx-rx", True, pytest.approx(2e-3), 12000)
    assert watch.protected


def test_below_threshold_keeps_the_link_unprotected() -> None:
    link = SyntheticLink()
    watch = LinkWatch("tx-rx", link.feed, PARAMS)
    watch.poll()
    for _ in range(10):
        link.step(5000, 4)  # 8e-4 < 1e-3
        assert watch.poll() is None
    assert not watch.protected


def test_deactivates_only_after_a_whole_clean_window() -> None:
    link = SyntheticLink()
    watch = LinkWatch("tx-rx", link.feed, PARAMS)
    watch.poll()
    link.step(10_000, 50)
    assert watch.poll().protect is True
    link.step(6000, 0)  # repaired, but only 6000 frames seen since activation
    assert watch.poll() is None
    link.step(6000, 0)
    request = watch.poll()
    assert request is not None and request.protect is False and request.loss == 0.0
    assert not watch.protected


def test_window_moves_past_old_losses() -> None:
    link = SyntheticLink()
    watch = LinkWatch("tx-rx", link.feed, CorruptdParams(window_frames=4000, threshold=1e-3))
    link.step(1000, 10)
    assert watch.poll() is None  # 1e-2, but not yet a full window
    link.step(4000, 0)
    assert watch.poll() is None  # the window now holds only the last 4000 clean frames
    assert watch.window() == (4000, 0)
    link.step(2000, 8)
    request = watch.poll()
    assert request is not None and request.protect
    assert request.loss == pytest.approx(8 / 6000)


def test_daemon_publishes_in_process() -> None:
    notifier = LocalNotifier()
    received: queue.Queue[ProtectRequest] = queue.Queue()
    notifier.subscribe(received.put)
    link = SyntheticLink()
    daemon = Corruptd(notifier, PARAMS)
    daemon.watch("tx-rx", link.feed)
    daemon.start()
    try:
        link.step(20_000, 100)
        request = received.get(timeout=5)
        assert request.protect and request.link == "tx-rx"
    finally:
        daemon.stop()
        notifier.close()


@pytest.mark.root  # the kit's redis-server keeps its pid file in /run/lgkit
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")
def test_redis_pubsub_carries_requests_end_to_end() -> None:
    received: queue.Queue[ProtectRequest] = queue.Queue()
    with RedisServer() as server:
        subscriber = RedisNotifier(server.url)
        publisher = RedisNotifier(server.url)
        subscriber.subscribe(received.put)
        link = SyntheticLink()
        daemon = Corruptd(publisher, PARAMS)
        daemon.watch("tx-rx", link.feed)
        daemon.start()
        try:
            link.step(20_000, 100)
            first = received.get(timeout=5)
            link.step(20_000, 0)
            second = received.get(timeout=5)
        finally:
            daemon.stop()
            publisher.close()
            subscriber.close()
        pid = server.process.pid
    assert (first.protect, second.protect) == (True, False)
    assert first.loss == pytest.approx(100 / 20_000)
    with pytest.raises(ProcessLookupError):
        import os

        os.kill(pid, 0)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")
def test_redis_beside_a_silent_listener() -> None:
    """A listener that never answers: the default server takes another port and answers PING;
    asked for the held port, starting fails in one line naming the port and its holder."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        held = silent.getsockname()[1]
        with RedisServer() as server:
            assert server.port != held
            import redis

            assert redis.Redis.from_url(server.url).ping()
        with pytest.raises(RedisUnavailable, match=rf"port {held} is held by .*python"):
            RedisServer(port=held).start()
