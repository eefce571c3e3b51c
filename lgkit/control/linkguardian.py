"""LinkGuardian control model: per-link parameters, Eq. 2, and the table entries, clone sessions
and multicast groups that switch LG on and off."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

MTU_BYTES = 1514
MAX_HOLES_CAP = 32
MODES = ("lg", "lg_nb")
PAUSE_TIMEOUT_ACK_TIMEOUTS = 4
"Default pause timeout, in ackNoTimeouts."
DEFAULT_PAUSE_TIMEOUT_US = 1000
"Default pause timeout when the ackNoTimeout is off."


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
    pause_timeout_us: int | None = None
    """A pause the receiver did not refresh (every ACK repeats `xoff`) for this long expires at
    the sender (us; 0 = never); None = PAUSE_TIMEOUT_ACK_TIMEOUTS ackNoTimeouts, or
    DEFAULT_PAUSE_TIMEOUT_US without an ackNoTimeout."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        if not 1 <= self.max_holes <= MAX_HOLES_CAP:
            raise ValueError(f"max_holes must be in 1..{MAX_HOLES_CAP}")
        if self.copies is not None and not 1 <= self.copies <= 16:
            raise ValueError("copies must be in 1..16")
        for name in ("ack_timeout_us", "resume_bytes", "dummy_repeat", "ack_repeat",
                     "pause_timeout"):
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
    def pause_timeout(self) -> int:
        """tx_pause_timeout_us: the set value, else a few ackNoTimeouts (the receiver's
        reordering buffer drains within about one, so a longer pause is stale)."""
        if self.pause_timeout_us is not None:
            return self.pause_timeout_us
        if self.ack_timeout_us:
            return PAUSE_TIMEOUT_ACK_TIMEOUTS * self.ack_timeout_us
        return DEFAULT_PAUSE_TIMEOUT_US

    @property
    def pause_threshold(self) -> int:
        return self.resume_bytes + 2 * MTU_BYTES if self.pause_bytes is None else self.pause_bytes


@dataclass(frozen=True)
class LGLayout:
    """Where LG's resources live on one switch: recirculation port and id ranges."""

    recirc_port: int = 68
    """A port number with no link; clones on their way back to ingress (a Tx copy's first
    pass, loss notifications, pause/resume) wait in its queue."""
    recirc_session: int = 511
    """Clone session toward the recirculation port."""
    loop_port: int = 69
    """A port number with no link; its queue holds every looping packet (Tx copies, the
    reordering buffer, held packets). Separate from recirc_port, so a queue rate on it bounds
    the loops' passes without delaying notifications (0: loop through recirc_port)."""
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
class GlobalConfig:
    """The switch-wide configuration: the default action `lg_set_global` of every `lg_global`
    table (p4/include/config.p4; field names are the action's parameters)."""

    recirc_port: int = 0
    recirc_session: int = 0
    prio_normal: int = 0
    prio_high: int = 0
    loop_port: int = 0


@dataclass(frozen=True)
class PortConfig:
    """One port's configuration: its entry `lg_set_port` in every `lg_port` table
    (p4/include/config.p4; field names are the action's parameters, in order). All zero, or no
    entry: LG off on the port."""

    tx_epoch: int = 0
    tx_on: int = 0
    tx_blocking: int = 0
    tx_mgid: int = 0
    dummy_repeat: int = 0
    rx_epoch: int = 0
    rx_on: int = 0
    rx_max_holes: int = 0
    rx_timeout_us: int = 0
    rx_pause_bytes: int = 0
    rx_resume_bytes: int = 0
    ack_repeat: int = 0
    port_session: int = 0
    ecn_qdepth: int = 0
    drop_threshold: int = 0
    tx_pause_timeout_us: int = 0


EPOCH_FIELDS = ("tx_epoch", "rx_epoch")
EPOCH_BITS = 8


@dataclass(frozen=True)
class SetGlobal:
    config: GlobalConfig


@dataclass(frozen=True)
class UpdatePort:
    """Read the port's configuration, change some fields, write it back. Each field in `bump`
    advances by one (mod 2**8): a new epoch makes the data plane reset that role's state."""

    port: int
    changes: tuple[tuple[str, int], ...] = ()
    bump: tuple[str, ...] = ()

    def apply_to(self, config: PortConfig) -> PortConfig:
        bumped = {name: (getattr(config, name) + 1) % (1 << EPOCH_BITS) for name in self.bump}
        return replace(config, **dict(self.changes), **bumped)


def update_port(port: int, bump: tuple[str, ...] = (), **changes: int) -> UpdatePort:
    """An UpdatePort op (field names checked)."""
    names = {f.name for f in fields(PortConfig)}
    unknown = (set(changes) | set(bump)) - names
    if unknown:
        raise ValueError(f"no such port configuration field: {sorted(unknown)}")
    return UpdatePort(port, tuple(changes.items()), bump)


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


Op = SetGlobal | UpdatePort | CloneSession | MulticastGroup


class LGWriter(Protocol):
    """What a switch must offer to receive LG's configuration (in-process or P4Runtime)."""

    @property
    def lock(self) -> AbstractContextManager[object]:
        """Held across a port's read-modify-write (other writers may share the switch)."""

    def write_global(self, config: GlobalConfig) -> None: ...

    def read_port(self, port: int) -> PortConfig | None:
        """The port's configuration, None if it has no entry yet."""

    def write_port(self, port: int, config: PortConfig, insert: bool) -> None:
        """Write the port's entry (insert: it has none yet)."""

    def set_clone_session(self, session: int, replicas: Sequence[tuple[int, int]]) -> None: ...

    def set_multicast_group(self, group: int, replicas: Sequence[tuple[int, int]]) -> None: ...


def apply_ops(writer: LGWriter, ops: Iterable[Op]) -> None:
    """Carry out `ops` in order on one switch."""
    for op in ops:
        if isinstance(op, SetGlobal):
            writer.write_global(op.config)
        elif isinstance(op, UpdatePort):
            with writer.lock:
                current = writer.read_port(op.port)
                config = op.apply_to(current or PortConfig())
                writer.write_port(op.port, config, insert=current is None)
        elif isinstance(op, CloneSession):
            writer.set_clone_session(op.session, op.replicas)
        else:
            writer.set_multicast_group(op.group, op.replicas)


def switch_setup_ops(layout: LGLayout = DEFAULT_LAYOUT, priority_queues: int = 3) -> list[Op]:
    """Once per switch: recirculation port and session, queue priorities."""
    three = priority_queues >= 3
    return [
        CloneSession(layout.recirc_session, ((layout.recirc_port, 0),)),
        SetGlobal(GlobalConfig(recirc_port=layout.recirc_port,
                               recirc_session=layout.recirc_session,
                               prio_normal=layout.prio_normal if three else 0,
                               prio_high=layout.prio_high if three else 0,
                               loop_port=layout.loop_port)),
    ]


def activate_receiver_ops(port: int, params: LGParams, layout: LGLayout = DEFAULT_LAYOUT
                          ) -> list[Op]:
    """Receiver role on ingress port `port`: its clone session, then parameters, on and a new
    epoch in one write (the data plane resets the receiver state before the next packet)."""
    session = layout.port_session(port)
    return [
        CloneSession(session, ((port, 0),)),
        update_port(port, bump=("rx_epoch",), rx_on=1, port_session=session,
                    rx_max_holes=params.max_holes, rx_timeout_us=params.ack_timeout_us,
                    rx_pause_bytes=params.pause_threshold,
                    rx_resume_bytes=params.resume_bytes, ack_repeat=params.ack_repeat),
    ]


def activate_sender_ops(port: int, params: LGParams, layout: LGLayout = DEFAULT_LAYOUT
                        ) -> list[Op]:
    """Sender role on egress port `port`: clone session and N-copy group, then parameters, on
    and a new epoch in one write (the data plane resets the sender state first)."""
    session = layout.port_session(port)
    return [
        CloneSession(session, ((port, 0),)),
        *set_copies_ops(port, params.n_copies, layout),
        update_port(port, bump=("tx_epoch",), tx_on=1, port_session=session,
                    tx_blocking=blocking(params.mode), dummy_repeat=params.dummy_repeat,
                    tx_pause_timeout_us=params.pause_timeout),
    ]


def blocking(mode: str) -> int:
    """tx_blocking for a mode: LG 1, LG_NB 0."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    return 1 if mode == "lg" else 0


def set_mode_ops(port: int, mode: str) -> list[Op]:
    """Switch the sender on `port` between LG and LG_NB (the receiver follows the header)."""
    return [update_port(port, tx_blocking=blocking(mode))]


def set_copies_ops(port: int, copies: int, layout: LGLayout = DEFAULT_LAYOUT) -> list[Op]:
    """N retransmitted copies: the port's multicast group gets N replicas of the port."""
    if not 1 <= copies <= 16:
        raise ValueError("copies must be in 1..16")
    group = layout.tx_mgid(port)
    return [
        MulticastGroup(group, tuple((port, i + 1) for i in range(copies))),
        update_port(port, tx_mgid=group),
    ]


def deactivate_sender_ops(port: int) -> list[Op]:
    return [update_port(port, tx_on=0)]


def deactivate_receiver_ops(port: int) -> list[Op]:
    return [update_port(port, rx_on=0)]


def corruption_ops(port: int, probability: float) -> list[Op]:
    """The in-P4 corruption emulator: drop frames leaving `port` with this probability."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError("probability must be in [0, 1]")
    return [update_port(port, drop_threshold=round(probability * 0xFFFFFFFF))]


def ecn_ops(port: int, qdepth_packets: int) -> list[Op]:
    """Mark CE on packets that find more than `qdepth_packets` queued at `port` (0 = off)."""
    if not 0 <= qdepth_packets < (1 << 19):
        raise ValueError("ECN threshold must fit 19 bits")
    return [update_port(port, ecn_qdepth=qdepth_packets)]


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
