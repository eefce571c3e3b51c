"""How corruptd tells a switch's control to protect a link: Redis pub/sub or in process."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Protocol

import redis

CHANNEL = "lgkit:corruptd"


@dataclass(frozen=True)
class ProtectRequest:
    """corruptd's decision about one link."""

    link: str
    "Link id, `sender-receiver` (spec names)."
    protect: bool
    "True: turn LinkGuardian on; False: the link is repaired, turn it off."
    loss: float
    "Loss rate measured over the window."
    frames: int
    "Frames in the window."

    def to_json(self) -> str:
        """Wire format on the Redis channel."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> ProtectRequest:
        """Parse the wire format."""
        return cls(**json.loads(text))


Handler = Callable[[ProtectRequest], None]


class Notifier(Protocol):
    """Carries ProtectRequests from corruptd to the upstream switch's control."""

    def publish(self, request: ProtectRequest) -> None:
        """Send a request."""

    def subscribe(self, handler: Handler) -> None:
        """Call handler for every request (from a background thread)."""

    def close(self) -> None:
        """Stop delivering."""


class LocalNotifier:
    """In-process delivery, for runs without Redis."""

    def __init__(self) -> None:
        self._handlers: list[Handler] = []
        self._queue: queue.Queue[ProtectRequest | None] = queue.Queue()
        self._thread = threading.Thread(target=self._deliver, daemon=True)
        self._thread.start()

    def _deliver(self) -> None:
        while (request := self._queue.get()) is not None:
            for handler in list(self._handlers):
                handler(request)

    def publish(self, request: ProtectRequest) -> None:
        """Queue a request for the subscribers."""
        self._queue.put(request)

    def subscribe(self, handler: Handler) -> None:
        """Add a subscriber."""
        self._handlers.append(handler)

    def close(self) -> None:
        """Stop the delivery thread."""
        self._queue.put(None)
        self._thread.join(2.0)


class RedisNotifier:
    """Redis pub/sub on CHANNEL, as the paper's corruptd does (App. C)."""

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url)
        self._client.ping()
        self._pubsub = None
        self._thread = None

    def publish(self, request: ProtectRequest) -> None:
        """Publish on the channel."""
        self._client.publish(CHANNEL, request.to_json())

    def subscribe(self, handler: Handler) -> None:
        """Subscribe; the handler runs in redis-py's listener thread."""
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(**{CHANNEL: lambda msg: handler(ProtectRequest.from_json(msg["data"]))})
        self._pubsub = pubsub
        self._thread = pubsub.run_in_thread(sleep_time=0.05, daemon=True)

    def close(self) -> None:
        """Stop listening and disconnect."""
        if self._thread is not None:
            self._thread.stop()
            self._thread.join(2.0)
        if self._pubsub is not None:
            self._pubsub.close()
        self._client.close()
