"""The in-P4 corruption emulator of the LinkGuardian program as an injector."""

from __future__ import annotations

from finsy import P4CounterEntry

from lgkit.control.linkguardian import apply_ops, corruption_ops
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.net.inject.injectors import InjectorUnavailable, LGSender, LinkAccess
from lgkit.net.inject.switcher import StateSwitcher
from lgkit.sw.switch.loss import LossModel

DROP_COUNTER = "lg_cnt_corrupt_drops"
"The LG program's count of frames its corruption emulator dropped, per port."


class P4Dropper:
    """The in-P4 corruption emulator on the LG sender's protected port (`drop_threshold`)."""

    name = "p4"

    def __init__(self, sender: LGSender, model: LossModel, frames_per_s: float) -> None:
        self.switch, self.port = sender.switch, sender.port
        self.writer = P4RuntimeLGWriter(sender.session)
        self.model = model
        self._switcher = (StateSwitcher(model, self._apply, frames_per_s)
                          if model.kind == "ge" else None)

    def _apply(self, rate: float) -> None:
        apply_ops(self.writer, corruption_ops(self.port, rate))

    def unseen_drops(self) -> int:
        """Frames the dropper has taken off the link so far (inside the sender, after point B:
        the wire never sees them)."""
        entries = self.writer.session.read(P4CounterEntry(DROP_COUNTER, index=self.port))
        return int(entries[0].data.packet_count) if entries and entries[0].data else 0

    def start(self) -> None:
        """Set the drop probability (or alternate it for Gilbert-Elliott)."""
        if self._switcher is None:  # i.i.d.: one rate throughout
            self._apply(self.model.rate)
            return
        self._apply(0.0)
        self._switcher.start()

    def stop(self) -> None:
        """No more drops."""
        if self._switcher is not None:
            self._switcher.stop()
        self._apply(0.0)

    def describe(self) -> str:
        """One line for the user."""
        timing = f"; {self._switcher.describe()}" if self._switcher is not None else ""
        return (f"in-P4 dropper on {self.switch} port {self.port} (after the LG header), "
                f"{self.model.describe()}{timing}")


def make(link: LinkAccess, model: LossModel) -> P4Dropper:
    """The dropper on the LG sender's port (the v1model LG program on a P4 target only)."""
    if link.lg_sender is None:
        raise InjectorUnavailable("p4: unavailable (needs the v1model LinkGuardian program at "
                                  "the LG sender on a P4 target)")
    return P4Dropper(link.lg_sender, model, link.frames_per_s)
