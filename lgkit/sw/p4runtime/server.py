"""P4RuntimeServer: the asyncio gRPC server that exposes a Switch over P4Runtime (plus extra
services such as switch-cli's).

Streams (StreamChannel) are coroutines on the server's event loop and hold no thread, however
many clients keep one open; unary RPCs (and Read) run on a pool of their own threads, so a
Capabilities, Read or Write is always served.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent import futures
from typing import Any

import grpc
from finsy.proto import p4r

from .device import Device
from .service import P4RuntimeService, TooLarge

MAX_RECEIVE_BYTES = 16 * 1024 * 1024
"Largest request message (a SetForwardingPipelineConfig with a big P4Info fits easily)."
MAX_SEND_BYTES = 64 * 1024 * 1024
"Largest response message (a Read of large tables)."
MAX_WRITE_BYTES = 1024 * 1024
"""Largest Write request decoded (MAX_WRITE_UPDATES updates take a few tens of KiB): a larger one
is refused before it is parsed, so one request cannot take much memory."""
UNARY_WORKERS = 16
"Threads that serve unary RPCs and Read (streams take none)."
SERVICE = "p4.v1.P4Runtime"


def _bounded_write(data: bytes) -> p4r.WriteRequest | TooLarge:
    """Decode a WriteRequest unless it is larger than MAX_WRITE_BYTES."""
    if len(data) > MAX_WRITE_BYTES:
        return TooLarge(len(data), MAX_WRITE_BYTES)
    return p4r.WriteRequest.FromString(data)


def p4runtime_handler(service: P4RuntimeService) -> grpc.GenericRpcHandler:
    """The p4.v1.P4Runtime service over `service` (Write requests decoded with a size bound)."""
    def unary(method: Callable, request: Any, response: Any,
              decode: Callable[[bytes], Any] | None = None) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            method, request_deserializer=decode or request.FromString,
            response_serializer=response.SerializeToString)

    methods = {
        "Write": unary(service.Write, p4r.WriteRequest, p4r.WriteResponse, _bounded_write),
        "Read": grpc.unary_stream_rpc_method_handler(
            service.Read, request_deserializer=p4r.ReadRequest.FromString,
            response_serializer=p4r.ReadResponse.SerializeToString),
        "SetForwardingPipelineConfig": unary(
            service.SetForwardingPipelineConfig, p4r.SetForwardingPipelineConfigRequest,
            p4r.SetForwardingPipelineConfigResponse),
        "GetForwardingPipelineConfig": unary(
            service.GetForwardingPipelineConfig, p4r.GetForwardingPipelineConfigRequest,
            p4r.GetForwardingPipelineConfigResponse),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            service.StreamChannel, request_deserializer=p4r.StreamMessageRequest.FromString,
            response_serializer=p4r.StreamMessageResponse.SerializeToString),
        "Capabilities": unary(service.Capabilities, p4r.CapabilitiesRequest,
                              p4r.CapabilitiesResponse),
    }
    return grpc.method_handlers_generic_handler(SERVICE, methods)


class P4RuntimeServer:
    """Serves P4Runtime for `switch` on `address`; extra_handlers are more gRPC services (their
    methods run on the unary thread pool)."""

    def __init__(self, switch: Device, address: str = "127.0.0.1:9559",
                 extra_handlers: tuple[grpc.GenericRpcHandler, ...] = ()) -> None:
        self.service = P4RuntimeService(switch)
        self.address = address
        self._pool = futures.ThreadPoolExecutor(UNARY_WORKERS, thread_name_prefix="p4rt-rpc")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="p4rt-loop")
        self._thread.start()
        try:
            self._server, self.port = self._call(self._create(address, extra_handlers))
        except BaseException:
            self._close_loop()
            raise

    def _call(self, coroutine: Coroutine[Any, Any, Any], timeout: float | None = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _create(self, address: str, extra: tuple[grpc.GenericRpcHandler, ...]
                      ) -> tuple[grpc.aio.Server, int]:
        options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
                   ("grpc.max_send_message_length", MAX_SEND_BYTES),
                   ("grpc.so_reuseport", 0)]
        server = grpc.aio.server(migration_thread_pool=self._pool,
                                 handlers=[p4runtime_handler(self.service), *extra],
                                 options=options)
        try:
            port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        return server, port

    def start(self) -> None:
        self.service.start()
        self._call(self._server.start())

    def stop(self, grace: float = 0.5) -> None:
        """Stop serving (streams end, calls in flight get `grace` seconds) and free the loop."""
        if not self._loop.is_running():
            return
        self.service.stop()
        try:
            self._call(self._shutdown(grace), timeout=grace + 10)
        finally:
            self._close_loop()

    async def _shutdown(self, grace: float) -> None:
        """Stop the server, then end what is left on the loop (handlers of calls whose clients
        are gone) so that the loop closes clean."""
        await self._server.stop(grace)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
