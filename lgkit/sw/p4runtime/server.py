"""P4RuntimeServer: the gRPC server that exposes a Switch over P4Runtime (plus extra services)."""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
from finsy.proto import p4r_grpc

from .service import P4RuntimeService

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class P4RuntimeServer:
    """Serves P4Runtime for `switch` on `address`; extra_handlers are more gRPC services."""

    def __init__(self, switch: Any, address: str = "127.0.0.1:9559",
                 extra_handlers: tuple[grpc.GenericRpcHandler, ...] = ()) -> None:
        self.service = P4RuntimeService(switch)
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.so_reuseport", 0)]
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                                   handlers=list(extra_handlers), options=options)
        p4r_grpc.add_P4RuntimeServicer_to_server(self.service, self._server)
        try:
            self.port = self._server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        self.address = address

    def start(self) -> None:
        self.service.start()
        self._server.start()

    def stop(self, grace: float = 0.5) -> None:
        self.service.stop()
        self._server.stop(grace).wait()
