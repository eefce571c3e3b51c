"""The benchmark router forwards correctly (known IPv4 checksum vector) and its CLI runs."""

from __future__ import annotations

from lgkit.cli import main
from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.tools import bench_pipeline as bench


def test_router_rewrites_macs_ttl_and_checksum() -> None:
    pipeline = bench.build_router()
    data = bench.router_packet(0x0A000507)
    assert data[14:34].hex() == "4500005400004000401121920a0000010a000507"
    out = run_untimed(pipeline, 1, data)
    assert len(out) == 1
    port, body = out[0]
    assert port == 1 + 5 % 4
    assert body[:12].hex() == "0000000000af" + "000000000001"
    # TTL 0x40 -> 0x3f; RFC 1624: the checksum rises by 0x0100
    assert body[14:34].hex() == "45000054000040003f1122920a0000010a000507"
    assert body[34:] == data[34:]


def test_router_drops_ttl_one_and_unknown_prefix() -> None:
    pipeline = bench.build_router()
    data = bytearray(bench.router_packet(0x0A000507))
    data[22] = 1  # TTL 1 (checksum now wrong: verify only flags it)
    assert run_untimed(pipeline, 1, bytes(data)) == []
    assert run_untimed(pipeline, 1, bench.router_packet(0x0B000001)) == []


def test_bench_cli(capsys) -> None:
    assert main(["bench-pipeline", "--packets", "300"]) == 0
    assert "packets/s" in capsys.readouterr().out
    assert main(["bench-pipeline", "--packets", "0"]) == 2
    assert "error" in capsys.readouterr().err
    assert main(["bench-pipeline", "--payload", "-1"]) == 2
    assert "error" in capsys.readouterr().err
