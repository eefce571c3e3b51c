"""Real switch ports: AF_PACKET raw sockets on Linux interfaces, driven by one epoll event loop."""

from __future__ import annotations

import logging
import os
import queue
import select
import socket
import struct
import threading
import time

from .clock import RealClock
from .mmsg import BatchReceiver, BatchSender
from .pcap import PcapWriter
from .switch import Switch

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_IGNORE_OUTGOING = 23
PACKET_STATISTICS = 6
READ_BATCH = 64
RX_BATCH = 16  # frames per recvmmsg call (16 slots of 64 KiB)
RECV_BUFFER = 65535
# The kernel doubles it: ~900 full-size frames of receive buffer, about BMv2's 1024-packet input
# queue plus its default socket buffer.
SOCKET_BUFFER_BYTES = 1 << 20
SO_RCVBUFFORCE, SO_SNDBUFFORCE = 33, 32
HOUSEKEEPING_S = 1.0
# Frames handed to a port's transmit thread and not yet sent; beyond it the event loop waits
# (back-pressure, like BMv2's bounded output buffer), so overload drops at the receive socket.
TX_QUEUE_FRAMES = 256
TX_BACKOFF_S = 50e-6
TX_BATCH = 64
TX_CLOSE_S = 2.0


def _set_buffer(sock: socket.socket, forced: int, plain: int) -> None:
    """Set a socket buffer size beyond net.core.[rw]mem_max if we may (root), else up to it."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, forced, SOCKET_BUFFER_BYTES)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER_BYTES)


class AfPacketPort:
    """One interface opened with a raw AF_PACKET socket, non-blocking.

    Promiscuous mode is taken as a socket membership, which the kernel drops when the socket
    closes (also when the process is killed), so the interface is left as it was. Frames this
    host sends on the interface (our own transmissions) are not read back.
    """

    def __init__(self, ifname: str, pcap_dir: str | None = None) -> None:
        self.ifname = ifname
        try:
            ifindex = socket.if_nametoindex(ifname)
        except OSError as exc:
            raise ValueError(f"no such interface: {ifname}") from exc
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        try:
            sock.bind((ifname, ETH_P_ALL))
            membership = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, membership)
            sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            _set_buffer(sock, SO_RCVBUFFORCE, socket.SO_RCVBUF)
            _set_buffer(sock, SO_SNDBUFFORCE, socket.SO_SNDBUF)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.sock = sock
        self.tx_errors = 0  # written by the transmit thread only
        self._tx_errors_taken = 0
        self.rx_error: OSError | None = None
        self.pcap_in: PcapWriter | None = None
        self.pcap_out: PcapWriter | None = None
        if pcap_dir is not None:
            self.pcap_in = PcapWriter(os.path.join(pcap_dir, f"{ifname}_in.pcap"))
            self.pcap_out = PcapWriter(os.path.join(pcap_dir, f"{ifname}_out.pcap"))
        # One recvmmsg call reads RX_BATCH frames into slots that take any frame size (a
        # recv(65535) per frame allocates and shrinks a 64 KiB object each time: slow).
        self._receiver = BatchReceiver(sock, RX_BATCH, RECV_BUFFER)
        # A send on a veth runs the receiving host's network stack inside the system call,
        # with the GIL released: a thread per port (sendmmsg, up to TX_BATCH frames a call)
        # overlaps that kernel work with the pipeline passes of the event loop.
        self._tx_queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._tx_thread = threading.Thread(target=self._transmit_loop, daemon=True,
                                           name=f"tx-{ifname}")
        self._tx_thread.start()

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, data: bytes) -> None:
        """Hand a frame to the transmit thread (frames leave in order)."""
        if self.pcap_out is not None:
            self.pcap_out.write(data)
        tx_queue = self._tx_queue
        tx_queue.put(data)
        while tx_queue.qsize() > TX_QUEUE_FRAMES and self._tx_thread.is_alive():
            time.sleep(TX_BACKOFF_S)

    def _transmit_loop(self) -> None:
        """Send what is queued, up to TX_BATCH frames per system call, until None arrives."""
        sender = BatchSender(self.sock, TX_BATCH)
        tx_queue = self._tx_queue
        get, get_nowait, qsize = tx_queue.get, tx_queue.get_nowait, tx_queue.qsize
        while True:
            frames = [get()]
            for _ in range(min(qsize(), TX_BATCH - 1)):  # this thread is the only consumer
                frames.append(get_nowait())
            stop = None in frames
            if stop:
                frames = frames[:frames.index(None)]
            # a failed frame (ENOBUFS under overload, ENETDOWN) is lost, like on a wire
            self.tx_errors += sender.send(frames)
            if stop:
                return

    def take_tx_errors(self) -> int:
        """Failed sends since the last call (the transmit thread only ever increments)."""
        total = self.tx_errors
        new, self._tx_errors_taken = total - self._tx_errors_taken, total
        return new

    def read_batch(self, limit: int = READ_BATCH) -> list[bytes]:
        """Up to `limit` frames that are waiting; never blocks."""
        receive = self._receiver.receive
        frames: list[bytes] = []
        try:
            while len(frames) < limit:
                wanted = min(RX_BATCH, limit - len(frames))
                batch = receive(wanted)
                frames += batch
                if len(batch) < wanted:
                    break
        except OSError as exc:  # the link went down (ENETDOWN) or the interface is gone
            self.rx_error = exc
        if self.pcap_in is not None:
            for frame in frames:
                self.pcap_in.write(frame)
        return frames

    def take_kernel_drops(self) -> int:
        """Frames the kernel dropped because the socket's receive buffer was full, since the
        last call (reading the statistics resets them)."""
        stats = self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        return struct.unpack("II", stats)[1]

    def flush(self) -> None:
        for writer in (self.pcap_in, self.pcap_out):
            if writer is not None:
                writer.flush()

    def close(self) -> None:
        """Send what is queued, stop the transmit thread, close the socket and pcap files."""
        self._tx_queue.put(None)
        self._tx_thread.join(TX_CLOSE_S)
        self.sock.close()
        for writer in (self.pcap_in, self.pcap_out):
            if writer is not None:
                writer.close()


class PortLoop:
    """The switch's single-threaded event loop: epoll over the port sockets, the clock's timers
    and a wake-up pipe (for timers added by gRPC threads and for `stop`)."""

    def __init__(self, switch: Switch, pcap_dir: str | None = None,
                 log: logging.Logger | None = None) -> None:
        if not isinstance(switch.clock, RealClock):
            raise TypeError("real ports need a switch on a RealClock")
        self.switch = switch
        self.clock: RealClock = switch.clock
        self.pcap_dir = pcap_dir
        self.log = log if log is not None else logging.getLogger("lgkit.switch")
        self.epoll = select.epoll()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.epoll.register(self._wake_r, select.EPOLLIN)
        self.clock.wakeup = self.wake
        self.by_fd: dict[int, tuple[int, AfPacketPort]] = {}
        self._stopping = False
        self.pipeline_errors = 0

    def add_interface(self, port: int, ifname: str) -> AfPacketPort:
        backend = AfPacketPort(ifname, self.pcap_dir)
        try:
            self.switch.add_port(port, backend)
        except ValueError:
            backend.close()
            raise
        self.by_fd[backend.fileno()] = (port, backend)
        self.epoll.register(backend.fileno(), select.EPOLLIN)
        return backend

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass

    def stop(self) -> None:
        """Ask the loop to return (safe from signal handlers and other threads)."""
        self._stopping = True
        self.wake()

    def run(self) -> None:
        self.clock.loop_thread = threading.get_ident()
        switch = self.switch
        clock = self.clock
        by_fd = self.by_fd
        next_housekeeping = time.monotonic() + HOUSEKEEPING_S
        debug = self.log.isEnabledFor(logging.DEBUG)
        while not self._stopping:
            events = self.epoll.poll(clock.seconds_to_next(HOUSEKEEPING_S))
            with switch.lock:
                self._run_timers()
                for fd, _ in events:
                    if fd == self._wake_r:
                        self._drain_wake_pipe()
                        continue
                    port, backend = by_fd[fd]
                    for frame in backend.read_batch():
                        if debug:
                            self.log.debug("port %d: received %d bytes: %s", port, len(frame),
                                           frame[:64].hex())
                        self._receive(port, frame)
                    if backend.rx_error is not None:
                        self._port_error(fd, port, backend)
                pipeline = switch.pipeline
                if pipeline is not None and pipeline.logs:
                    for message in pipeline.logs:
                        self.log.info("P4: %s", message)
                    pipeline.logs.clear()
            if time.monotonic() >= next_housekeeping:
                next_housekeeping = time.monotonic() + HOUSEKEEPING_S
                self._housekeeping()

    def _housekeeping(self) -> None:
        """Once a second: flush pcap files, collect socket-level drops into the counters."""
        with self.switch.lock:
            drops = self.switch.drops
            for _, backend in self.by_fd.values():
                backend.flush()
                kernel_drops = backend.take_kernel_drops()
                if kernel_drops:
                    drops["rx_socket_overflow"] += kernel_drops
                tx_errors = backend.take_tx_errors()
                if tx_errors:
                    drops["tx_error"] += tx_errors

    def _port_error(self, fd: int, port: int, backend: AfPacketPort) -> None:
        """A down link keeps its port (the kernel reports ENETDOWN once); a deleted interface
        is detached so that epoll does not spin on it."""
        exc, backend.rx_error = backend.rx_error, None
        if os.path.exists(f"/sys/class/net/{backend.ifname}"):
            self.log.warning("port %d (%s): %s", port, backend.ifname, exc)
            return
        self.log.warning("port %d: interface %s is gone; port detached", port, backend.ifname)
        self.epoll.unregister(fd)
        del self.by_fd[fd]
        self.switch.ports.pop(port, None)
        backend.close()

    def _run_timers(self) -> None:
        try:
            self.clock.run_due()
        except Exception:
            self._count_error("error in a timer (traffic manager or recirculation)")

    def _count_error(self, what: str) -> None:
        self.switch.drops["pipeline_error"] += 1
        self.pipeline_errors += 1
        if self.pipeline_errors <= 10:
            self.log.exception(what)

    def _receive(self, port: int, frame: bytes) -> None:
        try:
            self.switch.receive(port, frame)
        except Exception:  # a bug in a pass must not take the switch down
            self._count_error(f"error processing a frame from port {port}")

    def _drain_wake_pipe(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        self._housekeeping()
        for _, backend in self.by_fd.values():
            backend.close()
        self.by_fd.clear()
        self.epoll.close()
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.clock.wakeup = None
