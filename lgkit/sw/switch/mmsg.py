"""Batched socket I/O: many frames in one sendmmsg(2) or recvmmsg(2) call (through ctypes, which
releases the GIL for the whole batch)."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from collections.abc import Sequence

SLOT_BYTES = 2048  # frames up to this size are copied into the batch buffer; larger ones go alone


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(_IoVec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class _MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", _MsgHdr), ("len", ctypes.c_uint)]


_libc = ctypes.CDLL(None, use_errno=True)
_sendmmsg = _libc.sendmmsg
_sendmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int]
_sendmmsg.restype = ctypes.c_int
_recvmmsg = _libc.recvmmsg
_recvmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int,
                      ctypes.c_void_p]
_recvmmsg.restype = ctypes.c_int
_MMSG_SIZE = ctypes.sizeof(_MMsgHdr)
MSG_DONTWAIT = 0x40


def _slots(buffer: bytearray, slot_bytes: int, count: int) -> tuple[ctypes.Array, list]:
    """An mmsghdr array whose message i has one iovec on slot i of `buffer`."""
    base = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    iovs = (_IoVec * count)()
    msgs = (_MMsgHdr * count)()
    for i in range(count):
        iovs[i].base = base + i * slot_bytes
        iovs[i].len = slot_bytes
        msgs[i].hdr.iov = ctypes.pointer(iovs[i])
        msgs[i].hdr.iovlen = 1
    msgs._keep = iovs  # type: ignore[attr-defined]  # the iovecs live as long as the messages
    return msgs, [iovs[i] for i in range(count)]


class BatchSender:
    """Sends lists of frames on a connected/bound socket with as few system calls as possible.

    Frames are copied into fixed slots of one buffer (`SLOT_BYTES` each) described by
    preallocated iovecs; a larger frame is sent by itself, in order.
    """

    def __init__(self, sock: socket.socket, batch: int) -> None:
        self.sock = sock
        self.batch = batch
        self._buffer = bytearray(batch * SLOT_BYTES)
        self._view = memoryview(self._buffer)
        self._msgs, self._iov_items = _slots(self._buffer, SLOT_BYTES, batch)
        self._address = ctypes.addressof(self._msgs)

    def send(self, frames: Sequence[bytes]) -> int:
        """Send `frames` (at most `batch`) in order; returns how many could not be sent (the
        link is down, the kernel had no buffer): those are lost, like a failed send(2)."""
        view = self._view
        iovs = self._iov_items
        count = 0
        failed = 0
        for frame in frames:
            size = len(frame)
            if size > SLOT_BYTES:
                failed += self._flush(count)
                count = 0
                failed += self._send_one(frame)
                continue
            offset = count * SLOT_BYTES
            view[offset:offset + size] = frame
            iovs[count].len = size
            count += 1
        return failed + self._flush(count)

    def _flush(self, count: int) -> int:
        """sendmmsg the first `count` slots; a message that fails is skipped (counted)."""
        failed = 0
        start = 0
        fd = self.sock.fileno()
        while start < count:
            sent = _sendmmsg(fd, self._address + start * _MMSG_SIZE, count - start, 0)
            if sent > 0:
                start += sent
            elif sent < 0 and ctypes.get_errno() == errno.EINTR:
                continue
            else:  # this message failed; the ones after it are tried again
                failed += 1
                start += 1
        return failed

    def _send_one(self, frame: bytes) -> int:
        try:
            self.sock.send(frame)
        except OSError:
            return 1
        return 0


class BatchReceiver:
    """Reads up to `batch` frames of up to `frame_bytes` each with one recvmmsg(2) call."""

    def __init__(self, sock: socket.socket, batch: int, frame_bytes: int) -> None:
        self.sock = sock
        self.batch = batch
        self.frame_bytes = frame_bytes
        self._buffer = bytearray(batch * frame_bytes)
        self._view = memoryview(self._buffer)
        self._msgs, _ = _slots(self._buffer, frame_bytes, batch)
        self._msg_items = [self._msgs[i] for i in range(batch)]
        self._address = ctypes.addressof(self._msgs)

    def receive(self, limit: int | None = None) -> list[bytes]:
        """The frames waiting now (at most `limit` or `batch`; none if there are none).
        OSError if the socket fails (ENETDOWN: the link went down, ENXIO/ENODEV: the interface
        is gone)."""
        most = self.batch if limit is None else min(limit, self.batch)
        count = _recvmmsg(self.sock.fileno(), self._address, most, MSG_DONTWAIT, None)
        if count < 0:
            err = ctypes.get_errno()
            if err in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR):
                return []
            raise OSError(err, os.strerror(err))
        view = self._view
        size = self.frame_bytes
        items = self._msg_items
        return [bytes(view[i * size:i * size + items[i].len]) for i in range(count)]
