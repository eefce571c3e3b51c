"""corruptd (App. C): watch link counters, protect a corrupting link, release it when repaired."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from lgkit.control.notify import Notifier, ProtectRequest

CounterFeed = Callable[[], tuple[int, int]]
"Returns cumulative (frames sent onto the link, frames received OK from it)."


@dataclass(frozen=True)
class CorruptdParams:
    """How corruptd decides."""

    interval_s: float = 1.0
    "Polling interval."
    window_frames: int = 10_000_000
    "Loss is measured over (at least) this many of the most recent frames."
    threshold: float = 1e-6
    "Loss rate at or above which the link is protected."


class LinkWatch:
    """The moving window of one link and its protection state."""

    def __init__(self, link: str, feed: CounterFeed, params: CorruptdParams) -> None:
        self.link, self.feed, self.params = link, feed, params
        self.protected = False
        self._window: deque[tuple[int, int]] = deque()
        self._last = feed()
        "Counters at the previous poll (the baseline is taken when watching starts)."

    def window(self) -> tuple[int, int]:
        """(frames, lost) in the current window."""
        frames = sum(f for f, _ in self._window)
        return frames, sum(lost for _, lost in self._window)

    def poll(self) -> ProtectRequest | None:
        """Read the counters once; return a request when the protection state must change."""
        sent, received = self.feed()
        frames = sent - self._last[0]
        lost = max(0, frames - (received - self._last[1]))
        if frames > 0:
            self._window.append((frames, lost))
        self._last = (sent, received)
        while len(self._window) > 1 and self.window()[0] - self._window[0][0] >= \
                self.params.window_frames:
            self._window.popleft()
        frames, lost = self.window()
        if frames < self.params.window_frames:
            return None
        loss = lost / frames
        if not self.protected and loss >= self.params.threshold:
            return self._switch(True, loss, frames)
        if self.protected and loss < self.params.threshold:
            return self._switch(False, loss, frames)
        return None

    def _switch(self, protect: bool, loss: float, frames: int) -> ProtectRequest:
        self.protected = protect
        self._window.clear()
        return ProtectRequest(self.link, protect, loss, frames)


class Corruptd:
    """Polls every watched link at an interval and publishes protect/unprotect requests."""

    def __init__(self, notifier: Notifier, params: CorruptdParams) -> None:
        self.notifier, self.params = notifier, params
        self.links: dict[str, LinkWatch] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, link: str, feed: CounterFeed) -> None:
        """Add a link."""
        self.links[link] = LinkWatch(link, feed, self.params)

    def poll_once(self) -> list[ProtectRequest]:
        """Poll all links once and publish the resulting requests."""
        requests = [r for w in self.links.values() if (r := w.poll()) is not None]
        for request in requests:
            self.notifier.publish(request)
        return requests

    def start(self) -> None:
        """Poll in a background thread until stop()."""
        self._thread = threading.Thread(target=self._loop, daemon=True, name="corruptd")
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.params.interval_s):
            self.poll_once()

    def stop(self) -> None:
        """Stop polling."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.params.interval_s + 2.0)
