"""Real switch ports: AF_PACKET raw sockets on Linux interfaces, driven by one epoll event loop."""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING

from .claims import InterfaceClaim
from .clock import RealClock
from .mmsg import BatchReceiver, BatchSender
from .native_loop import POLL_S, SYNC_S, NativeSession, native_engine_of
from .pcap import PcapWriter
from .switch import Switch
from .watchdog import Watchdog

if TYPE_CHECKING:
    from lgkit.sw.exec.native.engine import NativeEngine

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_IGNORE_OUTGOING = 23
PACKET_STATISTICS = 6
PACKET_FANOUT = 18
PACKET_FANOUT_CBPF = 6
PACKET_FANOUT_FLAG_UNIQUEID = 0x2000
PACKET_FANOUT_FLAG_IGNORE_OUTGOING = 0x4000
FANOUT_JOIN = (PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_UNIQUEID
               | PACKET_FANOUT_FLAG_IGNORE_OUTGOING) << 16
"""A new fanout group of its own (PACKET_FANOUT_FLAG_UNIQUEID) picking its member by a classic
BPF program (PACKET_FANOUT_CBPF), not reading outgoing frames (PACKET_FANOUT_FLAG_IGNORE_OUTGOING:
a group member's PACKET_IGNORE_OUTGOING no longer applies): alone in it, the socket gets every
frame; the native loop's ring socket joins it to take the frames over (exec/native/ring_c.py)."""
READ_BATCH = 64
RX_BATCH = 16  # frames per recvmmsg call (16 slots of 64 KiB)
RECV_BUFFER = 65535
# The kernel doubles it: ~900 full-size frames of receive buffer, about BMv2's 1024-packet input
# queue plus its default socket buffer.
SOCKET_BUFFER_BYTES = 1 << 20
SO_RCVBUFFORCE, SO_SNDBUFFORCE = 33, 32
HOUSEKEEPING_S = 1.0
PASS_BUDGET_S = 1.0
"""CPU time one pipeline pass may take before the watchdog aborts it (a pass normally takes
tens of microseconds; the control plane waits for the switch lock while a pass runs)."""
# Frames a port holds between the traffic manager's dequeue and one sendmmsg call (a shallow
# transmit ring, flushed after every batch of event-loop work): the TM's strict priority, rate and
# queue timing are decided at most one batch before the frame is in the kernel.
TX_BATCH = 64


def _set_buffer(sock: socket.socket, forced: int, plain: int) -> None:
    """Set a socket buffer size beyond net.core.[rw]mem_max if we may (root), else up to it."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, forced, SOCKET_BUFFER_BYTES)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER_BYTES)


def _open_socket(ifname: str, ifindex: int) -> socket.socket:
    """A non-blocking raw socket on the interface, promiscuous, not reading our own sends."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        sock.bind((ifname, ETH_P_ALL))
        membership = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
        sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, membership)
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        try:
            sock.setsockopt(SOL_PACKET, PACKET_FANOUT, FANOUT_JOIN)
        except OSError:
            pass  # an older kernel: the native loop reads this socket itself (no ring)
        _set_buffer(sock, SO_RCVBUFFORCE, socket.SO_RCVBUF)
        _set_buffer(sock, SO_SNDBUFFORCE, socket.SO_SNDBUF)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class AfPacketPort:
    """One interface opened with a raw AF_PACKET socket, non-blocking.

    Promiscuous mode is taken as a socket membership, which the kernel drops when the socket
    closes (also when the process is killed), so the interface is left as it was. Frames this
    host sends on the interface (our own transmissions) are not read back. The interface is
    claimed (claims.py): a second switch on it is refused with InterfaceBusy.
    """

    def __init__(self, ifname: str, pcap_dir: str | None = None) -> None:
        self.ifname = ifname
        try:
            ifindex = socket.if_nametoindex(ifname)
        except OSError as exc:
            raise ValueError(f"no such interface: {ifname}") from exc
        self.claim = InterfaceClaim(ifname)
        try:
            sock = _open_socket(ifname, ifindex)
        except OSError:
            self.claim.release()
            raise
        self.sock = sock
        self.tx_errors = 0
        self.rx_error: OSError | None = None
        self.pcap_in: PcapWriter | None = None
        self.pcap_out: PcapWriter | None = None
        if pcap_dir is not None:
            self.pcap_in = PcapWriter(os.path.join(pcap_dir, f"{ifname}_in.pcap"))
            self.pcap_out = PcapWriter(os.path.join(pcap_dir, f"{ifname}_out.pcap"))
        # One recvmmsg call reads RX_BATCH frames into slots that take any frame size (a
        # recv(65535) per frame allocates and shrinks a 64 KiB object each time: slow).
        self._receiver = BatchReceiver(sock, RX_BATCH, RECV_BUFFER)
        # Sends are batched, not handed to a thread: a transmit thread needs the GIL, which a
        # busy event loop holds, and frames waited there up to a second (LinkGuardian's
        # retransmissions and ACKs behind a FIFO nobody prioritises).
        self._sender = BatchSender(sock, TX_BATCH)
        self._ring: list[bytes] = []
        self.loop_thread: int | None = None  # the event loop's thread; others send at once

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, data: bytes) -> None:
        """Put a frame on the transmit ring; it leaves at the next `flush_tx` (frames leave in
        order). A full ring, or a send from outside the event loop, is flushed at once."""
        if self.pcap_out is not None:
            self.pcap_out.write(data)
        ring = self._ring
        ring.append(data)
        if len(ring) >= TX_BATCH or threading.get_ident() != self.loop_thread:
            self.flush_tx()

    def flush_tx(self) -> None:
        """Send the ring with one sendmmsg call; a failed frame (ENOBUFS under overload,
        ENETDOWN) is lost, like on a wire, and counted."""
        if self._ring:
            ring, self._ring = self._ring, []
            self.tx_errors += self._sender.send(ring)

    def take_tx_errors(self) -> int:
        """Failed sends since the last call."""
        new, self.tx_errors = self.tx_errors, 0
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
        """Send what is on the ring, close the socket and pcap files, release the claim."""
        self.flush_tx()
        self.sock.close()
        self.claim.release()
        for writer in (self.pcap_in, self.pcap_out):
            if writer is not None:
                writer.close()


def wait_events(epoll: select.epoll, timeout_s: float) -> list[tuple[int, int]]:
    """epoll's ready events after at most timeout_s, to the microsecond. epoll_wait counts
    whole milliseconds (CPython rounds a timeout up), which made every timer up to 1 ms late
    (LG's tail-loss recoveries came in steps of ~1 ms); select counts microseconds, so a wait
    for a timer sleeps on the epoll fd through select."""
    if 0 < timeout_s < HOUSEKEEPING_S:
        select.select([epoll.fileno()], [], [], timeout_s)
        timeout_s = 0
    return epoll.poll(timeout_s)


class PortLoop:
    """The switch's single-threaded event loop: epoll over the port sockets, the clock's timers
    and a wake-up pipe (for timers added by gRPC threads and for `stop`).

    Every pipeline pass is guarded by a Watchdog: one that runs past `pass_budget_s` of CPU
    time is aborted and counted as `pass_timeout` (0 turns the watchdog off).

    A pipeline on the native engine whose packets the C loop can carry (native_loop.py) has its
    ports served by that loop instead, on a thread of its own without the GIL, while this
    thread copies table changes into it, collects its counters and runs the clock's timers;
    the loop is checked again when the pipeline changes and once a second."""

    def __init__(self, switch: Switch, pcap_dir: str | None = None,
                 log: logging.Logger | None = None,
                 pass_budget_s: float = PASS_BUDGET_S) -> None:
        if not isinstance(switch.clock, RealClock):
            raise TypeError("real ports need a switch on a RealClock")
        self.switch = switch
        if pass_budget_s > 0:
            switch.guard = Watchdog(pass_budget_s)
            switch.guard.start()
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
        self.native_sessions = 0
        """C loop runs started (native_loop.py)."""
        self._native_off = False  # the C loop failed: Python from now on
        self._ring_logged = False  # the line saying a port has no ring, once
        self._recheck = False  # whether the C loop may take over (pipeline changed, a second)
        switch.on_pipeline_change.append(self._pipeline_changed)

    def add_interface(self, port: int, ifname: str) -> AfPacketPort:
        backend = AfPacketPort(ifname, self.pcap_dir)
        try:
            self.switch.add_port(port, backend)
        except ValueError:
            backend.close()
            raise
        backend.loop_thread = self.clock.loop_thread
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

    def _pipeline_changed(self, pipeline: object) -> None:
        self._recheck = True
        self.wake()

    def run(self) -> None:
        self.clock.loop_thread = threading.get_ident()
        for _, backend in self.by_fd.values():
            backend.loop_thread = self.clock.loop_thread
        while not self._stopping:
            self._recheck = False
            engine = None if self._native_off else \
                native_engine_of(self.switch, self.pcap_dir, self.log)
            if engine is not None and self.by_fd:
                self._run_native(engine)
            else:
                self._run_python()

    def _run_python(self) -> None:
        """The Python loop, until stopped or the C loop may take over."""
        switch = self.switch
        clock = self.clock
        by_fd = self.by_fd
        next_housekeeping = time.monotonic() + HOUSEKEEPING_S
        debug = self.log.isEnabledFor(logging.DEBUG)
        while not self._stopping and not self._recheck:
            events = wait_events(self.epoll, clock.seconds_to_next(HOUSEKEEPING_S))
            with switch.lock:
                self._run_timers()
                self._flush_tx()
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
                    self._flush_tx()
                    if backend.rx_error is not None:
                        self._port_error(fd, port, backend)
                self._log_pipeline(0)
            if time.monotonic() >= next_housekeeping:
                next_housekeeping = time.monotonic() + HOUSEKEEPING_S
                self._housekeeping()
                self._recheck = True

    def _run_native(self, engine: NativeEngine) -> None:
        """The C loop on the ports while this thread, every POLL_S (or at a timer), runs the
        timers, copies changed tables and traffic manager settings into it and hands its CPU
        port's frames on, and every SYNC_S collects its counters, until stopped, the pipeline
        needs Python, or a port fails (handled as the Python loop does)."""
        switch = self.switch
        with switch.lock:
            self._flush_tx()
            try:
                session = NativeSession(switch, engine, [(port, fd) for fd, (port, _)
                                                         in self.by_fd.items()])
            except (ValueError, MemoryError) as exc:
                self.log.warning("native port loop: %s; the Python loop serves the ports", exc)
                self._native_off = True
                return
            switch.injector = session.inject
        if session.no_ring and not self._ring_logged:
            self._ring_logged = True
            port, err = session.no_ring[0]
            self.log.warning("native port loop: no PACKET_MMAP ring on port %d (%s): it reads "
                             "%d port(s) with recvmmsg", port, os.strerror(err),
                             len(session.no_ring))
        self.native_sessions += 1
        session.start()
        next_sync = time.monotonic()
        next_housekeeping = next_sync + HOUSEKEEPING_S
        failed: list[tuple[int, int]] = []
        try:
            while not self._stopping and not self._recheck and session.device.running():
                select.select([self._wake_r], [], [], self.clock.seconds_to_next(POLL_S))
                self._drain_wake_pipe()
                with switch.lock:
                    self._run_timers()
                    self._flush_tx()
                    engine.refresh()
                    session.push()
                    session.take()
                if time.monotonic() < next_sync:
                    continue
                next_sync = time.monotonic() + SYNC_S
                with switch.lock:
                    new = session.sync()
                    self._log_pipeline(new.get("range_errors", 0))
                if new.get("rx_error"):
                    failed = session.failed_ports()
                    break
                if time.monotonic() >= next_housekeeping:
                    next_housekeeping = time.monotonic() + HOUSEKEEPING_S
                    self._housekeeping()
        finally:
            with switch.lock:
                switch.injector = None
            handed = self._end_native(session)
        with switch.lock:  # the frames the rings held: before those the sockets get now
            for port, frame in handed:
                self._receive(port, frame)
            self._flush_tx()
        for port, err in failed:  # as the Python loop handles a read that failed
            for fd, (number, backend) in list(self.by_fd.items()):
                if number == port:
                    backend.rx_error = OSError(err, os.strerror(err))
                    self._port_error(fd, port, backend)

    def _end_native(self, session: NativeSession) -> list[tuple[int, bytes]]:
        """Stop the C loop and collect its counters and CPU port frames (what it still held
        in its queues is dropped, as a new pipeline drops them); the frames left on its rings,
        handed back."""
        device = session.device
        if not session.stop():
            self.log.error("the native port loop did not stop; the ports stay with it")
            self._native_off = True
            self._stopping = True
            return []
        with self.switch.lock:
            session.sync()
            session.take()
        handed = device.handed()
        device.close()
        if device.status:
            self.log.error("native port loop: %s; the Python loop serves the ports",
                           os.strerror(-device.status))
            self._native_off = True
        return handed

    def _log_pipeline(self, range_errors: int) -> None:
        """The P4 log of Python passes, and a line for the C loop's out-of-range accesses."""
        pipeline = self.switch.pipeline
        if pipeline is not None and pipeline.logs:
            for message in pipeline.logs:
                self.log.info("P4: %s", message)
            pipeline.logs.clear()
        if range_errors:
            self.log.info("P4: error: %d out-of-range register or counter accesses (native "
                          "loop)", range_errors)

    def _flush_tx(self) -> None:
        for _, backend in self.by_fd.values():
            backend.flush_tx()

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
        if self._pipeline_changed in self.switch.on_pipeline_change:
            self.switch.on_pipeline_change.remove(self._pipeline_changed)
        self._housekeeping()
        for _, backend in self.by_fd.values():
            backend.close()
        self.by_fd.clear()
        self.epoll.close()
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.clock.wakeup = None
        if self.switch.guard is not None:
            self.switch.guard.stop()
