"""A table of thousands of entries over P4Runtime: Reads come in chunks and give back exactly what
was written; the idle-timeout scan reports only the entries with a timeout."""

from __future__ import annotations

import pytest
from finsy.proto import p4r
from test_p4rt_support import (
    RunningSwitch,
    StreamClient,
    compile_program,
    forwarding_config,
    set_pipeline,
)
from testpaths import REPO

from lgkit.sw.p4runtime.errors import MAX_WRITE_UPDATES
from lgkit.sw.p4runtime.service import READ_CHUNK
from lgkit.sw.tools.bench_tables import BULK_BASE, TABLE, Entries

PROGRAM = REPO / "p4" / "bench_tables.p4"
COUNT = 2 * READ_CHUNK + 45
INSERT, MODIFY = p4r.Update.INSERT, p4r.Update.MODIFY


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return forwarding_config(*compile_program(PROGRAM, tmp_path_factory.mktemp("bench")))


@pytest.fixture
def rig(config):
    running = RunningSwitch()
    client = StreamClient(running.port)
    client.become_primary(10)
    set_pipeline(client, config)
    yield running, client, Entries(config.p4info)
    client.close()
    running.stop()


def _insert(client: StreamClient, entries: Entries, ips: list[int], **fields) -> None:
    for at in range(0, len(ips), MAX_WRITE_UPDATES):
        updates = [entries.update(INSERT, ip, mac=ip & 0xFFFF, port=1 + ip % 2)
                   for ip in ips[at:at + MAX_WRITE_UPDATES]]
        for update in updates:
            for name, value in fields.items():
                setattr(update.entity.table_entry, name, value)
        client.write(*updates)


def test_a_large_read_comes_in_chunks_with_every_entry(rig):
    _, client, entries = rig
    ips = [BULK_BASE + 7 * i for i in range(COUNT)]
    _insert(client, entries, ips)
    request = p4r.ReadRequest(device_id=client.device_id, entities=[
        p4r.Entity(table_entry=p4r.TableEntry(table_id=entries.table_id))])
    responses = list(client.stub.Read(request))
    assert [len(r.entities) for r in responses] == [READ_CHUNK, READ_CHUNK, 45]
    got = [e.table_entry for r in responses for e in r.entities]
    assert [int.from_bytes(e.match[0].exact.value, "big") for e in got] == ips  # in order
    for entry, ip in zip(got, ips, strict=True):
        mac, port = (int.from_bytes(p.value, "big") for p in entry.action.action.params)
        assert (mac, port) == (ip & 0xFFFF, 1 + ip % 2)
    one = p4r.TableEntry(table_id=entries.table_id)
    one.match.add(field_id=entries.field_id).exact.value = ips[234].to_bytes(4, "big")
    [found] = client.read(p4r.Entity(table_entry=one))
    assert found.table_entry == got[234]


def test_idle_scan_visits_and_reports_only_entries_with_a_timeout(rig):
    running, client, entries = rig
    table = running.switch.pipeline.tables[TABLE]
    _insert(client, entries, [BULK_BASE + i for i in range(500)])
    assert table.entry_count() == 500 and not table.timed  # no timeout: nothing to scan
    timed = [BULK_BASE + 1000 + i for i in range(3)]
    _insert(client, entries, timed, idle_timeout_ns=50_000_000)
    assert len(table.timed) == 3
    note = client.next_of("idle_timeout_notification").idle_timeout_notification
    reported = sorted(int.from_bytes(e.match[0].exact.value, "big") for e in note.table_entry)
    assert reported == timed and {e.idle_timeout_ns for e in note.table_entry} == {50_000_000}
    cleared = entries.update(MODIFY, timed[0], mac=1, port=1)  # idle_timeout_ns 0: no timeout
    client.write(cleared)
    assert sorted(ident[0][0].value for ident in table.timed) == timed[1:]
