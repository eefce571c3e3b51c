"""A small NFQUEUE client over netlink (nfnetlink_queue): packets an iptables NFQUEUE rule
diverts come to user space, which may change them and gives each a verdict, in any order.

Verdicts need not follow arrival order: the kernel reinjects a packet when its verdict comes,
so holding a verdict back holds the packet (Vertigo's reorder buffer does exactly that).
Linux's message formats are documented in include/uapi/linux/netfilter/nfnetlink_queue.h.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND, NFQNL_CFG_CMD_UNBIND = 1, 2
NFQNL_COPY_PACKET = 2
NFQA_CFG_F_FAIL_OPEN = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR, NFQA_PAYLOAD = 1, 2, 10
NF_DROP, NF_ACCEPT = 0, 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NLMSG = struct.Struct("=IHHII")
NFGENMSG = struct.Struct("!BBH")
NLA = struct.Struct("=HH")
NLA_TYPE_MASK = 0x3FFF
RCVBUF_BYTES = 8 << 20


class NfQueueError(OSError):
    """The kernel refused a configuration request."""


@dataclass(frozen=True)
class QueuedPacket:
    """One packet waiting for its verdict."""

    packet_id: int
    payload: bytes
    "The network-layer packet (for IPv4: from the IP header on)."


def _attr(kind: int, data: bytes) -> bytes:
    padded = data + bytes(-len(data) % 4)
    return NLA.pack(NLA.size + len(data), kind) + padded


def _attrs(data: bytes) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    at = 0
    while at + NLA.size <= len(data):
        length, kind = NLA.unpack_from(data, at)
        if length < NLA.size:
            break
        found[kind & NLA_TYPE_MASK] = data[at + NLA.size:at + length]
        at += (length + 3) & ~3
    return found


class NfQueue:
    """One bound queue: `packets()` yields what is waiting, `verdict()` releases a packet."""

    def __init__(self, queue_num: int, max_len: int = 4096) -> None:
        self.queue_num = queue_num
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
        self.sock.bind((0, 0))
        self._seq = 0
        self.overflows = 0
        """Times the socket's buffer overflowed (meanwhile the kernel let packets pass without
        the agent: the queue fails open)."""
        self.received = 0
        "Packets read from the queue."
        try:
            self._configure(_attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND,
                                                            socket.AF_INET)))
            self._configure(_attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0xFFFF,
                                                               NFQNL_COPY_PACKET))
                            + _attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", max_len))
                            + _attr(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN))
                            + _attr(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)))
        except BaseException:
            self.sock.close()
            raise
        self.sock.setblocking(False)

    def fileno(self) -> int:
        """The socket, for select/poll."""
        return self.sock.fileno()

    def _message(self, msg_type: int, body: bytes, flags: int) -> bytes:
        self._seq += 1
        payload = NFGENMSG.pack(socket.AF_UNSPEC, 0, self.queue_num) + body
        header = NLMSG.pack(NLMSG.size + len(payload), (NFNL_SUBSYS_QUEUE << 8) | msg_type,
                            flags, self._seq, 0)
        return header + payload

    def _configure(self, body: bytes) -> None:
        """Send a configuration request and wait for its acknowledgement (packet messages that
        come first are skipped: they are only sent while no verdicts are given)."""
        self.sock.send(self._message(NFQNL_MSG_CONFIG, body, NLM_F_REQUEST | NLM_F_ACK))
        while True:
            reply = self.sock.recv(1 << 17)
            at = 0
            while at + NLMSG.size <= len(reply):
                length, kind, _, seq, _ = NLMSG.unpack_from(reply, at)
                if kind == NLMSG_ERROR and seq == self._seq:
                    code = -struct.unpack_from("=i", reply, at + NLMSG.size)[0]
                    if code:
                        raise NfQueueError(code, f"nfqueue {self.queue_num}: "
                                                 f"{os.strerror(code)}")
                    return
                if length < NLMSG.size:
                    break
                at += (length + 3) & ~3

    def packets(self) -> Iterator[QueuedPacket]:
        """Every packet the kernel has queued so far (never blocks)."""
        while True:
            try:
                data = self.sock.recv(1 << 17)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:
                    self.overflows += 1
                    continue
                raise
            for packet in self._parse(data):
                self.received += 1
                yield packet

    @staticmethod
    def _parse(data: bytes) -> Iterator[QueuedPacket]:
        at = 0
        while at + NLMSG.size <= len(data):
            length, kind, _, _, _ = NLMSG.unpack_from(data, at)
            if length < NLMSG.size:
                return
            if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                attrs = _attrs(data[at + NLMSG.size + NFGENMSG.size:at + length])
                if NFQA_PACKET_HDR in attrs and NFQA_PAYLOAD in attrs:
                    packet_id = struct.unpack_from("!I", attrs[NFQA_PACKET_HDR])[0]
                    yield QueuedPacket(packet_id, attrs[NFQA_PAYLOAD])
            at += (length + 3) & ~3

    def verdict(self, packet_id: int, accept: bool = True, payload: bytes | None = None) -> None:
        """Release (accept, optionally with a new payload) or drop a queued packet."""
        body = _attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT if accept else NF_DROP,
                                                   packet_id))
        if payload is not None:
            body += _attr(NFQA_PAYLOAD, payload)
        self.sock.send(self._message(NFQNL_MSG_VERDICT, body, NLM_F_REQUEST))

    def close(self) -> None:
        """Unbind and close; the kernel drops the packets still waiting for a verdict, so give
        them one first."""
        try:
            self.sock.setblocking(True)
            self._configure(_attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_UNBIND,
                                                            socket.AF_INET)))
        except OSError:
            pass
        finally:
            self.sock.close()
