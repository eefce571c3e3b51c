"""The switch process and Python's garbage collector: a program load freezes what it leaves
(and frees a replaced program's cycles), collections after it are timed, and the switch says
so when it stops."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.switch.collector import Collector

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")


class _Node:
    """A container object that can join a reference cycle and be weakly referenced."""

    def __init__(self) -> None:
        self.other: object = None


@pytest.fixture
def collector():
    c = Collector()
    c.start()
    yield c
    c.stop()
    gc.unfreeze()


def _cycle() -> _Node:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return a


def test_a_program_load_freezes_the_objects_it_leaves(collector):
    program = [_Node() for _ in range(10)]
    collector.on_pipeline_change(program)
    assert gc.get_freeze_count() >= len(program)
    young_and_old = {id(o) for o in gc.get_objects()}
    assert not any(id(o) in young_and_old for o in program)


def test_the_next_load_frees_the_replaced_programs_cycles(collector):
    old = _cycle()
    alive = weakref.ref(old)
    collector.on_pipeline_change(old)
    del old
    gc.collect()
    assert alive() is not None  # frozen: full collections no longer look at it
    collector.on_pipeline_change(None)
    assert alive() is None


def test_collections_after_the_load_are_timed_per_generation(collector):
    collector.on_pipeline_change(None)
    assert [g.count for g in collector.generations] == [0, 0, 0]
    gc.collect(0)
    gc.collect(2)
    gens = collector.generations
    assert (gens[0].count, gens[1].count, gens[2].count) == (1, 0, 1)
    assert 0 < gens[2].longest_ns <= gens[2].total_ns
    summary = collector.summary()
    assert re.fullmatch(r"garbage collections since the program load: gen0 1 \(\d >= 1 ms, "
                        r"longest \d+\.\d\d ms\), gen1 0 \(0 >= 1 ms, longest 0\.00 ms\), gen2 1 "
                        r"\(\d >= 1 ms, longest \d+\.\d\d ms\); \d+ objects frozen", summary)


def test_a_stopped_collector_times_nothing(collector):
    collector.stop()
    gc.collect(0)
    assert collector.generations[0].count == 0


def test_the_switch_reports_its_collections_when_it_stops():
    proc = subprocess.Popen([sys.executable, "-m", "lgkit.cli", "switch", str(PROGRAM),
                             "--grpc-server-addr", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("lgkit switch: ready;")
    proc.terminate()
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    stopped = re.fullmatch(r"lgkit switch: stopped; native port loop runs \d+; "
                           r"garbage collections since the program "
                           r"load: gen0 .*; (\d+) objects frozen\n", out)
    assert stopped is not None, out
    assert int(stopped.group(1)) > 1000  # the compiled program's objects
