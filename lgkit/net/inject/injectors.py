"""Corruption injectors on the protected link (tc netem, nftables numgen drop) and what
every injector is given and offers."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from lgkit.control.session import P4RuntimeSession
from lgkit.core import naming
from lgkit.net.inject.switcher import StateSwitcher
from lgkit.sw.switch.loss import LossModel

NFT_SCALE = 1_000_000
"nftables draws numgen random mod NFT_SCALE: loss rates resolve to 1e-6."


@dataclass(frozen=True)
class WirePorts:
    """The wire bridge's two ports on the protected link."""

    from_sender: str
    "Receives the sender's frames: nftables drops on its netdev ingress."
    toward_receiver: str
    "Sends them on to the receiver: netem sits on its egress."


@dataclass(frozen=True)
class LGSender:
    """The LinkGuardian program's sender end of the protected link (in-P4 injectors)."""

    switch: str
    port: int
    session: P4RuntimeSession


@dataclass(frozen=True)
class LinkAccess:
    """Where an injector can drop frames of the protected link."""

    wire: WirePorts
    frames_per_s: float
    "Full-size frames per second at the link rate (Gilbert-Elliott in time)."
    lg_sender: LGSender | None = None
    "The LG sender's port, when the LG program runs on a P4 target."


class InjectorUnavailable(RuntimeError):
    """This injector cannot run on this machine (the message says why)."""


class Injector(Protocol):
    """Drops frames on the protected link with a loss model."""

    name: str

    def start(self) -> None:
        """Begin dropping."""

    def stop(self) -> None:
        """Stop dropping and remove every rule."""

    def describe(self) -> str:
        """One line: what drops where, with which model."""

    def unseen_drops(self) -> int:
        """Frames dropped where the wire's counters do not see them (0 on the wire)."""


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


@cache
def netem_status() -> tuple[bool, str]:
    """Whether the kernel has the netem qdisc, tried on a throwaway kit veth pair."""
    probe = naming.PREFIX + "probe-eth0"
    _run("ip", "link", "del", probe)
    made = _run("ip", "link", "add", probe, "type", "veth", "peer", "name",
                naming.PREFIX + "probe-eth1")
    if made.returncode:
        return False, f"cannot create a probe interface: {made.stderr.strip()}"
    try:
        tried = _run("tc", "qdisc", "add", "dev", probe, "root", "netem", "loss", "1%")
        if tried.returncode:
            return False, f"kernel lacks sch_netem: {tried.stderr.strip().splitlines()[0]}"
        return True, "available"
    finally:
        _run("ip", "link", "del", probe)


@cache
def nft_status() -> tuple[bool, str]:
    """Whether nftables with netdev ingress and numgen works here."""
    if _run("which", "nft").returncode:
        return False, "the nft command is not installed (apt-get install nftables)"
    table = naming.NFT_TABLE_PREFIX + "probe"
    script = f"add table netdev {table}\ndelete table netdev {table}\n"
    done = subprocess.run(["nft", "-f", "-"], input=script, capture_output=True, text=True)
    if done.returncode:
        return False, f"nft netdev tables refused: {done.stderr.strip()}"
    return True, "available"


class NetemInjector:
    """tc netem loss on the wire's egress toward the receiver (netem loss / gemodel)."""

    name = "netem"

    def __init__(self, iface: str, model: LossModel) -> None:
        ok, why = netem_status()
        if not ok:
            raise InjectorUnavailable(f"netem: unavailable ({why})")
        self.iface, self.model = iface, model

    @staticmethod
    def qdisc_argv(iface: str, m: LossModel) -> list[str]:
        """The `tc` command line that puts netem with the model's loss on an interface's egress."""
        if m.kind == "iid":
            loss = ["random", f"{m.rate * 100:.6f}%"]
        else:
            # gemodel p r 1-h 1-k: p good->bad, r bad->good, 1-h the loss probability in the bad
            # state, 1-k in the good one (iproute2 turns 1-h into the kernel's h)
            loss = ["gemodel", f"{m.p_good_to_bad * 100:.6f}%", f"{m.p_bad_to_good * 100:.6f}%",
                    f"{m.bad_loss * 100:.6f}%", "0%"]
        return ["tc", "qdisc", "replace", "dev", iface, "root", "netem", "loss", *loss]

    def start(self) -> None:
        """Attach the netem qdisc."""
        done = _run(*self.qdisc_argv(self.iface, self.model))
        if done.returncode:
            raise InjectorUnavailable(f"netem: unavailable ({done.stderr.strip()})")

    def stop(self) -> None:
        """Remove the qdisc."""
        _run("tc", "qdisc", "del", "dev", self.iface, "root")

    def describe(self) -> str:
        """One line for the user."""
        return f"netem on {self.iface} egress, {self.model.describe()}"

    def unseen_drops(self) -> int:
        """None: the wire's counters see every frame netem drops."""
        return 0


@dataclass
class NftCounts:
    """Frames the injector saw and dropped."""

    seen: int
    dropped: int


class NftInjector:
    """nftables `numgen random` drop on the netdev ingress hook of the wire's receiving port.

    i.i.d. is exact per frame. Gilbert-Elliott is approximated in time (StateSwitcher): bursts
    are correlated in time, not counted in frames.
    """

    name = "nft"

    def __init__(self, iface: str, model: LossModel, frames_per_s: float = 5000.0,
                 seed: int | None = None) -> None:
        ok, why = nft_status()
        if not ok:
            raise InjectorUnavailable(f"nft: unavailable ({why})")
        self.iface, self.model, self.frames_per_s = iface, model, frames_per_s
        self.table = naming.NFT_TABLE_PREFIX + "inj_" + iface.replace("-", "_")
        self._switcher = (StateSwitcher(model, lambda rate: self._apply(rate, create=False),
                                        frames_per_s, seed) if model.kind == "ge" else None)

    def _apply(self, rate: float, create: bool) -> None:
        threshold = round(rate * NFT_SCALE)
        lines = []
        if create:
            lines += [
                f"add table netdev {self.table}",
                f"add counter netdev {self.table} seen",
                f"add counter netdev {self.table} dropped",
                f"add chain netdev {self.table} ingress {{ type filter hook ingress device "
                f"\"{self.iface}\" priority -500; policy accept; }}",
            ]
        lines += [
            f"flush chain netdev {self.table} ingress",
            f"add rule netdev {self.table} ingress counter name seen",
        ]
        if threshold > 0:
            lines.append(f"add rule netdev {self.table} ingress numgen random mod {NFT_SCALE} "
                         f"< {threshold} counter name dropped drop")
        done = subprocess.run(["nft", "-f", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True)
        if done.returncode:
            raise InjectorUnavailable(f"nft: rule refused ({done.stderr.strip()})")

    def start(self) -> None:
        """Install the table; for Gilbert-Elliott start the state switcher."""
        if self._switcher is None:  # i.i.d.: one rate throughout
            self._apply(self.model.rate, create=True)
            return
        self._apply(0.0, create=True)
        self._switcher.start()

    def counts(self) -> NftCounts:
        """Frames seen and dropped so far."""
        values = {}
        for name in ("seen", "dropped"):
            done = _run("nft", "-j", "list", "counter", "netdev", self.table, name)
            items = json.loads(done.stdout or "{}").get("nftables", [])
            values[name] = next((i["counter"]["packets"] for i in items if "counter" in i), 0)
        return NftCounts(values["seen"], values["dropped"])

    def stop(self) -> None:
        """Stop the state switcher and delete the table."""
        if self._switcher is not None:
            self._switcher.stop()
        _run("nft", "delete", "table", "netdev", self.table)

    def describe(self) -> str:
        """One line for the user."""
        timing = f"; {self._switcher.describe()}" if self._switcher is not None else ""
        return f"nft numgen drop on {self.iface} netdev ingress, {self.model.describe()}{timing}"

    def unseen_drops(self) -> int:
        """None: the wire's counters see every frame nft drops."""
        return 0


def netem(link: LinkAccess, model: LossModel) -> NetemInjector:
    """netem on the wire's egress toward the receiver."""
    return NetemInjector(link.wire.toward_receiver, model)


def nft(link: LinkAccess, model: LossModel) -> NftInjector:
    """nftables on the wire's ingress from the sender."""
    return NftInjector(link.wire.from_sender, model, link.frames_per_s)
