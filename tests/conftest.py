"""Shared pytest fixtures and the markers that select tests: root, bmv2, slow."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from finsy.proto import p4r
from test_net_support import network_lock
from test_p4rt_support import (
    PKTIO,
    PKTIO_COOKIE,
    Names,
    RunningSwitch,
    StreamClient,
    compile_program,
    forwarding_config,
    set_pipeline,
)

from lgkit.sw.tools.bmv2_stf import TOOLS as BMV2_TOOLS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `root` tests for other users and `bmv2` tests where BMv2/p4c are missing."""
    is_root = os.geteuid() == 0
    for item in items:
        if not is_root and item.get_closest_marker("root"):
            item.add_marker(pytest.mark.skip(reason="needs root (namespaces, veths, Mininet)"))
        marker = item.get_closest_marker("bmv2")
        if marker is not None:
            missing = [tool for tool in marker.args or BMV2_TOOLS if shutil.which(tool) is None]
            if missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"BMv2/p4c: {', '.join(missing)} not on PATH"))


@pytest.fixture
def mininet_lock() -> Iterator[None]:
    """Hold the machine-wide network lock for one test (one network at a time)."""
    with network_lock():
        yield


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """pktio.p4 compiled: (p4info, device config) paths."""
    return compile_program(PKTIO, tmp_path_factory.mktemp("pktio"))


@pytest.fixture(scope="module")
def config(compiled: tuple[Path, Path]) -> p4r.ForwardingPipelineConfig:
    """pktio.p4's forwarding pipeline config (cookie PKTIO_COOKIE)."""
    return forwarding_config(*compiled, cookie=PKTIO_COOKIE)


@pytest.fixture(scope="module")
def names(config: p4r.ForwardingPipelineConfig) -> Names:
    """pktio.p4's P4Info names -> ids."""
    return Names(config.p4info)


@pytest.fixture
def rig(config: p4r.ForwardingPipelineConfig) -> Iterator[tuple[RunningSwitch, StreamClient]]:
    """A fresh switch with pktio.p4 committed by a primary client (election id 10)."""
    running = RunningSwitch()
    client = StreamClient(running.port)
    client.become_primary(10)
    set_pipeline(client, config)
    yield running, client
    client.close()
    running.stop()
