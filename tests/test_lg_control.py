"""LinkGuardian control model: Eq. 2, parameters, and the activation writes."""

from __future__ import annotations

import pytest

from lgkit.control.linkguardian import (
    LGLayout,
    LGParams,
    RegisterBump,
    RegisterWrite,
    activate_receiver_ops,
    activate_sender_ops,
    apply_ops,
    copies_for,
    corruption_ops,
    set_copies_ops,
)


class DictWriter:
    """An LGWriter over plain dicts, recording the order of writes."""

    def __init__(self) -> None:
        self.registers: dict[tuple[str, int], int] = {}
        self.sessions: dict[int, list[tuple[int, int]]] = {}
        self.groups: dict[int, list[tuple[int, int]]] = {}
        self.order: list[str] = []

    def write_register(self, name: str, index: int, value: int) -> None:
        self.registers[(name, index)] = value
        self.order.append(name)

    def read_register(self, name: str, index: int) -> int:
        return self.registers.get((name, index), 0)

    def set_clone_session(self, session: int, replicas) -> None:
        self.sessions[session] = list(replicas)

    def set_multicast_group(self, group: int, replicas) -> None:
        self.groups[group] = list(replicas)


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


def test_activation_turns_roles_on_last_and_bumps_generations() -> None:
    writer = DictWriter()
    params = LGParams(mode="lg_nb", copies=3, max_holes=7, ack_timeout_us=9)
    apply_ops(writer, activate_receiver_ops(5, params))
    apply_ops(writer, activate_sender_ops(5, params))
    apply_ops(writer, activate_sender_ops(5, params))
    assert writer.order[-1] == "lg_cfg_tx_on"
    assert writer.registers[("lg_cfg_rx_on", 5)] == 1
    assert writer.registers[("lg_cfg_tx_on", 5)] == 1
    assert writer.registers[("lg_dummy_gen", 5)] == 2
    assert writer.registers[("lg_ack_gen", 5)] == 1
    assert writer.registers[("lg_cfg_tx_blocking", 5)] == 0
    assert writer.registers[("lg_cfg_rx_max_holes", 5)] == 7
    assert writer.registers[("lg_cfg_rx_timeout_us", 5)] == 9
    assert writer.registers[("lg_tx_leading_ack", 5)] == (1 << 17) - 1
    layout = LGLayout()
    group = writer.registers[("lg_cfg_tx_mgid", 5)]
    assert writer.groups[group] == [(5, 1), (5, 2), (5, 3)]
    session = writer.registers[("lg_cfg_port_session", 5)]
    assert writer.sessions[session] == [(5, 0)]
    assert session == layout.port_session(5) != layout.recirc_session


def test_generation_wraps_at_8_bits() -> None:
    writer = DictWriter()
    writer.registers[("lg_ack_gen", 1)] = 255
    apply_ops(writer, [RegisterBump("lg_ack_gen", 1, 8)])
    assert writer.registers[("lg_ack_gen", 1)] == 0


def test_copies_and_corruption_ops() -> None:
    ops = set_copies_ops(3, 2)
    assert ops[-1] == RegisterWrite("lg_cfg_tx_mgid", 3, LGLayout().tx_mgid(3))
    assert corruption_ops(3, 1.0) == [RegisterWrite("lg_cfg_drop_threshold", 3, 0xFFFFFFFF)]
    with pytest.raises(ValueError):
        set_copies_ops(3, 0)
    with pytest.raises(ValueError):
        corruption_ops(3, 1.5)
