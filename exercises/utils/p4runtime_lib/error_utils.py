"""Readable gRPC errors, with the per-update P4Runtime errors of a failed Write."""

import sys

from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2


def printGrpcError(e):
    print(f"gRPC error: {e.code().name} {e.details()}", file=sys.stderr)
    for metadata in e.trailing_metadata() or ():
        if metadata.key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(metadata.value)
            for index, detail in enumerate(status.details):
                error = p4runtime_pb2.Error()
                if detail.Unpack(error) and error.canonical_code != code_pb2.OK:
                    print(f"  update #{index}: {code_pb2.Code.Name(error.canonical_code)} "
                          f"{error.message}", file=sys.stderr)
