#!/usr/bin/env python3
"""Send and receive test packets on a host's eth0 (scapy), for the exercises' checks.

send:    packets.py send DST_IP MESSAGE [--tunnel DST_ID] [--tos N] [--count N] [--interval S]
                [--size BYTES] [--numbered]  (--numbered: MESSAGE#0, MESSAGE#1, ...)
receive: packets.py receive OUT_FILE [--seconds S] [--expect N] [--ready FILE]
                [--stop-file FILE [--idle S]]
         one line per UDP or tunnel packet and ARP request ("arp who-has IP",
         "udp tos=0xN dst=IP msg=...", "tunnel dst_id=N udp ..."); writes the --ready file once
         it listens; stops after N lines, after S seconds, or once the --stop-file exists (the
         senders are done) and no packet came for --idle seconds
"""

import argparse
import os
import pathlib
import socket
import time

from scapy.all import (
    ARP,
    IP,
    UDP,
    AsyncSniffer,
    Ether,
    Packet,
    Raw,
    ShortField,
    bind_layers,
    get_if_hwaddr,
    sendp,
)
from scapy.error import Scapy_Exception

PORT = 4321


class Tunnel(Packet):
    name = "Tunnel"
    fields_desc = [ShortField("proto_id", 0x0800), ShortField("dst_id", 0)]


bind_layers(Ether, Tunnel, type=0x1212)
bind_layers(Tunnel, IP, proto_id=0x0800)


def send(args):
    frame = Ether(src=get_if_hwaddr("eth0"), dst="ff:ff:ff:ff:ff:ff")
    if args.tunnel is not None:
        frame = frame / Tunnel(dst_id=args.tunnel)
    frames = []
    for index in range(args.count):
        text = f"{args.message}#{index}" if args.numbered else args.message
        frames.append(frame / IP(dst=socket.gethostbyname(args.dst), tos=args.tos) / UDP(
            sport=PORT, dport=PORT) / Raw(text.encode().ljust(args.size, b".")))
    if args.interval:
        for one in frames:
            sendp(one, iface="eth0", verbose=False)
            time.sleep(args.interval)
    else:
        sendp(frames, iface="eth0", verbose=False)


def describe(pkt):
    if ARP in pkt and pkt[ARP].op == 1:
        return f"arp who-has {pkt[ARP].pdst}"
    if UDP in pkt and pkt[UDP].dport == PORT:
        message = bytes(pkt[Raw].load).rstrip(b".").decode(errors="replace")
        line = f"udp tos={pkt[IP].tos:#x} dst={pkt[IP].dst} msg={message}"
        return (f"tunnel dst_id={pkt[Tunnel].dst_id} " + line) if Tunnel in pkt else line
    return None


def receive(args):
    seen, last = [], [time.monotonic()]

    with open(args.out, "w", buffering=1) as out:
        def record(pkt):
            line = describe(pkt)
            if line:
                seen.append(line)
                last[0] = time.monotonic()
                out.write(line + "\n")

        def ready():
            if args.ready:
                pathlib.Path(args.ready).write_text("listening\n")

        sniffer = AsyncSniffer(iface="eth0", prn=record, store=False, started_callback=ready,
                               stop_filter=lambda _: args.expect is not None
                               and len(seen) >= args.expect)
        sniffer.start()
        deadline = time.monotonic() + args.seconds
        noticed = None  # when the stop file was first seen
        while sniffer.thread.is_alive() and time.monotonic() < deadline:
            if noticed is None and args.stop_file and os.path.exists(args.stop_file):
                noticed = time.monotonic()
            if noticed is not None and time.monotonic() - max(noticed, last[0]) > args.idle:
                break
            time.sleep(0.05)
        try:
            sniffer.stop(join=False)
        except Scapy_Exception:
            pass  # it stopped by itself (--expect)
        sniffer.join()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("send")
    s.add_argument("dst")
    s.add_argument("message")
    s.add_argument("--tunnel", type=int, default=None)
    s.add_argument("--tos", type=lambda v: int(v, 0), default=0)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--interval", type=float, default=0.0)
    s.add_argument("--size", type=int, default=0, help="pad the payload to this many bytes")
    s.add_argument("--numbered", action="store_true", help="append #INDEX to each message")
    r = sub.add_parser("receive")
    r.add_argument("out")
    r.add_argument("--seconds", type=float, default=10)
    r.add_argument("--expect", type=int, default=None)
    r.add_argument("--ready", default=None, help="write this file once listening")
    r.add_argument("--stop-file", default=None,
                   help="once this file exists, stop after --idle seconds without a packet")
    r.add_argument("--idle", type=float, default=2.0)
    args = parser.parse_args()
    send(args) if args.command == "send" else receive(args)


if __name__ == "__main__":
    main()
