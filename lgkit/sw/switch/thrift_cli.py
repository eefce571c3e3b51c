"""`simple_switch_CLI` for the built-in switch: runtime_CLI commands (the ones `lgkit switch-cli`
supports) over the Thrift port, one per line from stdin, as BMv2's CLI reads them."""

from __future__ import annotations

import argparse
import sys

from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from .thrift_service import LGKIT_SERVICE, read_struct


class Client:
    """One connection to the switch's Thrift port."""

    def __init__(self, host: str, port: int) -> None:
        self.transport = TTransport.TBufferedTransport(TSocket.TSocket(host, port))
        self.protocol = TMultiplexedProtocol.TMultiplexedProtocol(
            TBinaryProtocol.TBinaryProtocol(self.transport), LGKIT_SERVICE)
        self.transport.open()
        self.seqid = 0

    def run(self, line: str) -> str:
        self.seqid += 1
        p = self.protocol
        p.writeMessageBegin("run", TMessageType.CALL, self.seqid)
        p.writeStructBegin("args")
        p.writeFieldBegin("line", TType.STRING, 1)
        p.writeString(line)
        p.writeFieldEnd()
        p.writeFieldStop()
        p.writeStructEnd()
        p.writeMessageEnd()
        self.transport.flush()
        _, kind, _ = p.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            error = TApplicationException()
            error.read(p)
            raise ConnectionError(f"this Thrift server does not serve the lgkit commands "
                                  f"(a real BMv2? use its simple_switch_CLI): {error}")
        result = read_struct(p)
        p.readMessageEnd()
        return result[0].decode()


def main() -> int:
    """Console script `lgkit-simple-switch-cli` (`simple_switch_CLI` in the shims dir)."""
    parser = argparse.ArgumentParser(prog="simple_switch_CLI",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--thrift-port", type=int, default=9090)
    parser.add_argument("--thrift-ip", default="127.0.0.1")
    parser.add_argument("--json", help="ignored (the switch knows its program)")
    parser.add_argument("--pre", help="ignored")
    args = parser.parse_args()
    try:
        client = Client(args.thrift_ip, args.thrift_port)
    except TTransport.TTransportException:
        print(f"Could not connect to thrift client on port {args.thrift_port}\n"
              "Make sure the switch is running and that you have the right port")
        return 1
    status = 0
    for line in sys.stdin:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            output = client.run(line)
        except (ConnectionError, TTransport.TTransportException) as exc:
            print(f"simple_switch_CLI: {exc}", file=sys.stderr)
            return 1
        print(f"RuntimeCmd: {output}" if output else "RuntimeCmd: ")
        status |= output.startswith("error: ")
    return status
