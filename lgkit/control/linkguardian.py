"""LinkGuardian control model: per-link parameters, Eq. 2, and the writes that switch LG on/off."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

MTU_BYTES = 1514
SEQ_SPACE = 1 << 17  # (era, seq_no)
MAX_HOLES_CAP = 32
MODES = ("lg", "lg_nb")


def copies_for(target_loss: float, actual_loss: float) -> int:
    """Eq. 2: retransmitted copies N = ceil(log(target) / log(actual)) - 1, at least 1.

    >>> [copies_for(1e-8, p) for p in (1e-5, 1e-4, 1e-3)]
    [1, 1, 2]
    """
    if not 0.0 < target_loss < 1.0 or not 0.0 < actual_loss < 1.0:
        raise ValueError("loss rates must be in (0, 1)")
    ratio = math.log(target_loss) / math.log(actual_loss)
    # log(1e-8)/log(1e-4) is 2.0000000000000004 in floating point: round away the noise.
    return max(1, math.ceil(round(ratio, 9)) - 1)


@dataclass(frozen=True)
class LGParams:
    """Every run-time parameter of LinkGuardian on one protected link (docs/protocol.md §4)."""

    mode: str = "lg"
    """'lg' (ordered delivery) or 'lg_nb' (non-blocking)."""
    target_loss: float = 1e-8
    """Effective loss rate the operator wants (rate); input of Eq. 2."""
    actual_loss: float = 1e-3
    """Measured loss rate of the link (rate); input of Eq. 2."""
    copies: int | None = None
    """Retransmitted copies N (copies); None = Eq. 2 from target_loss and actual_loss."""
    max_holes: int = 5
    """K: consecutive lost packets one notification covers (packets, 1..32)."""
    ack_timeout_us: int = 7
    """ackNoTimeout (us; 0 = never)."""
    resume_bytes: int = 37_000
    """resumeThreshold of the reordering buffer (bytes)."""
    pause_bytes: int | None = None
    """pauseThreshold (bytes); None = resume_bytes + 2 MTU; 0 = no backpressure."""
    dummy_repeat: int = 3
    """Dummies allowed after each data packet (packets; the authors' notify count)."""
    ack_repeat: int = 3
    """Explicit ACKs allowed after each receiver update (packets)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        if not 1 <= self.max_holes <= MAX_HOLES_CAP:
            raise ValueError(f"max_holes must be in 1..{MAX_HOLES_CAP}")
        if self.copies is not None and not 1 <= self.copies <= 16:
            raise ValueError("copies must be in 1..16")
        for name in ("ack_timeout_us", "resume_bytes", "dummy_repeat", "ack_repeat"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.dummy_repeat > 255 or self.ack_repeat > 255:
            raise ValueError("dummy_repeat and ack_repeat must fit 8 bits")

    @classmethod
    def for_link(cls, gbps: int, **overrides: object) -> LGParams:
        """The paper's settings (App. B.1) for a 25G or 100G link; others use 100G's."""
        if gbps == 25:
            base = cls(ack_timeout_us=8, resume_bytes=40_000)  # 7.5 us, rounded up
        else:
            base = cls(ack_timeout_us=7, resume_bytes=37_000)
        return replace(base, **overrides)  # type: ignore[arg-type]

    @property
    def n_copies(self) -> int:
        return self.copies if self.copies is not None else copies_for(self.target_loss,
                                                                      self.actual_loss)

    @property
    def pause_threshold(self) -> int:
        return self.resume_bytes + 2 * MTU_BYTES if self.pause_bytes is None else self.pause_bytes


@dataclass(frozen=True)
class LGLayout:
    """Where LG's resources live on one switch: recirculation port and id ranges."""

    recirc_port: int = 68
    """A port number with no link; its queue holds every looping packet."""
    recirc_session: int = 511
    """Clone session toward the recirculation port."""
    port_session_base: int = 1
    """Clone session of port p (the couriers' queue) = base + p."""
    mgid_base: int = 0x4000
    """Multicast group of port p (N replicas of p, retransmissions) = base + p."""
    prio_normal: int = 1
    prio_high: int = 2

    def port_session(self, port: int) -> int:
        session = self.port_session_base + port
        if not 1 <= session <= 511 or session == self.recirc_session:
            raise ValueError(f"no clone session id left for port {port}")
        return session

    def tx_mgid(self, port: int) -> int:
        return self.mgid_base + port


DEFAULT_LAYOUT = LGLayout()


@dataclass(frozen=True)
class RegisterWrite:
    name: str
    index: int
    value: int


@dataclass(frozen=True)
class RegisterBump:
    """Read, add one modulo 2**width, write back (generation numbers)."""

    name: str
    index: int
    width: int


@dataclass(frozen=True)
class CloneSession:
    session: int
    replicas: tuple[tuple[int, int], ...]
    """(egress port, instance) pairs."""


@dataclass(frozen=True)
class MulticastGroup:
    group: int
    replicas: tuple[tuple[int, int], ...]
    """(egress port, instance) pairs, in replication order."""


Op = RegisterWrite | RegisterBump | CloneSession | MulticastGroup


class LGWriter(Protocol):
    """What a switch must offer to receive LG's configuration (in-process or P4Runtime)."""

    def write_register(self, name: str, index: int, value: int) -> None: ...

    def read_register(self, name: str, index: int) -> int: ...

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None: ...

    def set_multicast_group(self, group: int, replicas: Sequence[tuple[int, int]]) -> None: ...


def apply_ops(writer: LGWriter, ops: Iterable[Op]) -> None:
    """Carry out `ops` in order on one switch."""
    for op in ops:
        if isinstance(op, RegisterWrite):
            writer.write_register(op.name, op.index, op.value)
        elif isinstance(op, RegisterBump):
            value = writer.read_register(op.name, op.index)
            writer.write_register(op.name, op.index, (value + 1) % (1 << op.width))
        elif isinstance(op, CloneSession):
            writer.set_clone_session(op.session, op.replicas)
        else:
            writer.set_multicast_group(op.group, op.replicas)


def switch_setup_ops(layout: LGLayout = DEFAULT_LAYOUT, priority_queues: int = 3) -> list[Op]:
    """Once per switch: recirculation port and session, queue priorities."""
    three = priority_queues >= 3
    return [
        CloneSession(layout.recirc_session, ((layout.recirc_port, 0),)),
        RegisterWrite("lg_cfg_recirc_port", 0, layout.recirc_port),
        RegisterWrite("lg_cfg_recirc_session", 0, layout.recirc_session),
        RegisterWrite("lg_cfg_prio_normal", 0, layout.prio_normal if three else 0),
        RegisterWrite("lg_cfg_prio_high", 0, layout.prio_high if three else 0),
    ]


RX_STATE_RESETS = ("lg_rx_expected", "lg_rx_ack_no", "lg_rx_stall_since", "lg_rx_paused",
                   "lg_rx_buf_bytes", "lg_rx_buf_pkts", "lg_rx_buf_max_bytes",
                   "lg_rx_buf_max_pkts", "lg_ack_budget", "lg_rx_notify_pending",
                   "lg_rx_safe_ack")
TX_STATE_RESETS = ("lg_tx_next", "lg_tx_paused", "lg_tx_hold_head", "lg_tx_hold_tail",
                   "lg_tx_buf_bytes", "lg_tx_buf_pkts", "lg_tx_buf_max_bytes",
                   "lg_tx_buf_max_pkts", "lg_dummy_budget")


def activate_receiver_ops(port: int, params: LGParams, layout: LGLayout = DEFAULT_LAYOUT
                          ) -> list[Op]:
    """Receiver role on ingress port `port`: fresh state, parameters, then on."""
    session = layout.port_session(port)
    ops: list[Op] = [
        RegisterWrite("lg_cfg_rx_on", port, 0),
        CloneSession(session, ((port, 0),)),
        RegisterWrite("lg_cfg_port_session", port, session),
    ]
    ops += [RegisterWrite(name, port, 0) for name in RX_STATE_RESETS]
    ops += [
        RegisterWrite("lg_ack_parked", port, 1),
        RegisterBump("lg_ack_gen", port, 8),
        RegisterWrite("lg_cfg_rx_max_holes", port, params.max_holes),
        RegisterWrite("lg_cfg_rx_timeout_us", port, params.ack_timeout_us),
        RegisterWrite("lg_cfg_rx_pause_bytes", port, params.pause_threshold),
        RegisterWrite("lg_cfg_rx_resume_bytes", port, params.resume_bytes),
        RegisterWrite("lg_cfg_ack_repeat", port, params.ack_repeat),
        RegisterWrite("lg_cfg_rx_on", port, 1),
    ]
    return ops


def activate_sender_ops(port: int, params: LGParams, layout: LGLayout = DEFAULT_LAYOUT
                        ) -> list[Op]:
    """Sender role on egress port `port`: fresh state, N-copy group, parameters, then on."""
    session = layout.port_session(port)
    ops: list[Op] = [
        RegisterWrite("lg_cfg_tx_on", port, 0),
        CloneSession(session, ((port, 0),)),
        RegisterWrite("lg_cfg_port_session", port, session),
        *set_copies_ops(port, params.n_copies, layout),
    ]
    ops += [RegisterWrite(name, port, 0) for name in TX_STATE_RESETS]
    ops += [
        RegisterWrite("lg_tx_leading_ack", port, SEQ_SPACE - 1),
        RegisterWrite("lg_dummy_parked", port, 1),
        RegisterBump("lg_dummy_gen", port, 8),
        RegisterWrite("lg_cfg_dummy_repeat", port, params.dummy_repeat),
        *set_mode_ops(port, params.mode),
        RegisterWrite("lg_cfg_tx_on", port, 1),
    ]
    return ops


def set_mode_ops(port: int, mode: str) -> list[Op]:
    """Switch the sender on `port` between LG and LG_NB (the receiver follows the header)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    return [RegisterWrite("lg_cfg_tx_blocking", port, 1 if mode == "lg" else 0)]


def set_copies_ops(port: int, copies: int, layout: LGLayout = DEFAULT_LAYOUT) -> list[Op]:
    """N retransmitted copies: the port's multicast group gets N replicas of the port."""
    if not 1 <= copies <= 16:
        raise ValueError("copies must be in 1..16")
    group = layout.tx_mgid(port)
    return [
        MulticastGroup(group, tuple((port, i + 1) for i in range(copies))),
        RegisterWrite("lg_cfg_tx_mgid", port, group),
    ]


def deactivate_sender_ops(port: int) -> list[Op]:
    return [RegisterWrite("lg_cfg_tx_on", port, 0)]


def deactivate_receiver_ops(port: int) -> list[Op]:
    return [RegisterWrite("lg_cfg_rx_on", port, 0)]


def corruption_ops(port: int, probability: float) -> list[Op]:
    """The in-P4 corruption emulator: drop frames leaving `port` with this probability."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError("probability must be in [0, 1]")
    return [RegisterWrite("lg_cfg_drop_threshold", port, round(probability * 0xFFFFFFFF))]


def ecn_ops(port: int, qdepth_packets: int) -> list[Op]:
    """Mark CE on packets that find more than `qdepth_packets` queued at `port` (0 = off)."""
    if not 0 <= qdepth_packets < (1 << 19):
        raise ValueError("ECN threshold must fit 19 bits")
    return [RegisterWrite("lg_cfg_ecn_qdepth", port, qdepth_packets)]


@dataclass(frozen=True)
class ProtectedLink:
    """One protected direction: `sender` switch's port `sender_port` -> `receiver`'s
    `receiver_port`, with its parameters."""

    sender: str
    sender_port: int
    receiver: str
    receiver_port: int
    params: LGParams = field(default_factory=LGParams)

    def activation(self, layout: LGLayout = DEFAULT_LAYOUT) -> list[tuple[str, list[Op]]]:
        """(switch, ops) in the order to apply them: receiver first, then sender."""
        return [
            (self.receiver, activate_receiver_ops(self.receiver_port, self.params, layout)),
            (self.sender, activate_sender_ops(self.sender_port, self.params, layout)),
        ]

    def deactivation(self) -> list[tuple[str, list[Op]]]:
        """Sender off first (no new protected packets), then the receiver."""
        return [
            (self.sender, deactivate_sender_ops(self.sender_port)),
            (self.receiver, deactivate_receiver_ops(self.receiver_port)),
        ]
