"""LinkGuardian control model: Eq. 2, parameters, and the activation writes."""

from __future__ import annotations

import threading

import pytest

from lgkit.control.linkguardian import (
    GlobalConfig,
    LGLayout,
    LGParams,
    PortConfig,
    activate_receiver_ops,
    activate_sender_ops,
    apply_ops,
    copies_for,
    corruption_ops,
    deactivate_sender_ops,
    set_copies_ops,
    switch_setup_ops,
    update_port,
)


class DictWriter:
    """An LGWriter over plain dicts, recording the order of writes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.global_config: GlobalConfig | None = None
        self.ports: dict[int, PortConfig] = {}
        self.sessions: dict[int, list[tuple[int, int]]] = {}
        self.groups: dict[int, list[tuple[int, int]]] = {}
        self.order: list[str] = []

    def write_global(self, config: GlobalConfig) -> None:
        self.global_config = config
        self.order.append("global")

    def read_port(self, port: int) -> PortConfig | None:
        return self.ports.get(port)

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        assert insert == (port not in self.ports)
        self.ports[port] = config
        self.order.append(f"port {port}")

    def set_clone_session(self, session: int, replicas) -> None:
        self.sessions[session] = list(replicas)
        self.order.append(f"session {session}")

    def set_multicast_group(self, group: int, replicas) -> None:
        self.groups[group] = list(replicas)
        self.order.append(f"group {group}")


@pytest.mark.parametrize(("target", "actual", "copies"), [
    (1e-8, 1e-5, 1), (1e-8, 1e-4, 1), (1e-8, 1e-3, 2), (1e-6, 1e-2, 2), (1e-8, 1e-2, 3),
    (1e-9, 1e-3, 2), (1e-12, 1e-3, 3),
])
def test_eq2_copies(target: float, actual: float, copies: int) -> None:
    assert copies_for(target, actual) == copies


def test_eq2_rejects_rates_outside_0_1() -> None:
    with pytest.raises(ValueError):
        copies_for(0.0, 1e-3)
    with pytest.raises(ValueError):
        copies_for(1e-8, 1.0)


def test_params_defaults_and_presets() -> None:
    p = LGParams()
    assert p.n_copies == 2  # 1e-8 at 1e-3
    assert p.pause_threshold == 37_000 + 2 * 1514
    p25 = LGParams.for_link(25)
    assert (p25.ack_timeout_us, p25.resume_bytes) == (8, 40_000)
    assert LGParams(copies=4).n_copies == 4
    with pytest.raises(ValueError):
        LGParams(mode="fast")
    with pytest.raises(ValueError):
        LGParams(max_holes=33)


def test_switch_setup_sets_the_global_configuration() -> None:
    writer = DictWriter()
    apply_ops(writer, switch_setup_ops(LGLayout(), priority_queues=1))
    assert writer.global_config == GlobalConfig(68, 511, 0, 0, 69)
    assert writer.sessions[511] == [(68, 0)]
    apply_ops(writer, switch_setup_ops(LGLayout()))
    assert writer.global_config == GlobalConfig(68, 511, 1, 2, 69)


def test_activation_writes_groups_first_and_the_port_entry_once_with_a_new_epoch() -> None:
    writer = DictWriter()
    params = LGParams(mode="lg_nb", copies=3, max_holes=7, ack_timeout_us=9)
    apply_ops(writer, activate_receiver_ops(5, params))
    apply_ops(writer, activate_sender_ops(5, params))
    apply_ops(writer, activate_sender_ops(5, params))
    layout = LGLayout()
    session, group = layout.port_session(5), layout.tx_mgid(5)
    assert writer.order[-1] == "port 5"
    assert writer.order.index(f"group {group}") < writer.order.index("port 5", 2)
    assert writer.ports[5] == PortConfig(
        tx_epoch=2, tx_on=1, tx_blocking=0, tx_mgid=group, dummy_repeat=3,
        rx_epoch=1, rx_on=1, rx_max_holes=7, rx_timeout_us=9,
        rx_pause_bytes=params.pause_threshold, rx_resume_bytes=37_000, ack_repeat=3,
        port_session=session, tx_pause_timeout_us=36)  # 4 ackNoTimeouts
    assert writer.groups[group] == [(5, 1), (5, 2), (5, 3)]
    assert writer.sessions[session] == [(5, 0)]
    assert session != layout.recirc_session
    apply_ops(writer, deactivate_sender_ops(5))
    assert (writer.ports[5].tx_on, writer.ports[5].rx_on, writer.ports[5].tx_epoch) == (0, 1, 2)


def test_epoch_wraps_at_8_bits_and_fields_are_checked() -> None:
    writer = DictWriter()
    writer.ports[1] = PortConfig(rx_epoch=255)
    apply_ops(writer, [update_port(1, bump=("rx_epoch",))])
    assert writer.ports[1].rx_epoch == 0
    with pytest.raises(ValueError, match="rx_nothing"):
        update_port(1, rx_nothing=1)


def test_copies_and_corruption_ops_keep_the_other_fields() -> None:
    writer = DictWriter()
    writer.ports[3] = PortConfig(tx_on=1, ecn_qdepth=66)
    apply_ops(writer, set_copies_ops(3, 2) + corruption_ops(3, 1.0))
    assert writer.ports[3] == PortConfig(tx_on=1, ecn_qdepth=66, tx_mgid=LGLayout().tx_mgid(3),
                                         drop_threshold=0xFFFFFFFF)
    with pytest.raises(ValueError):
        set_copies_ops(3, 0)
    with pytest.raises(ValueError):
        corruption_ops(3, 1.5)
