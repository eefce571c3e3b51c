"""The loss model of a link, i.i.d. or Gilbert-Elliott (two-state bursty): one description for
the injectors of the testbed (which realise it in time) and the virtual network (frame by frame)."""

from __future__ import annotations

import random
from dataclasses import dataclass

MODELS = ("iid", "ge")


@dataclass(frozen=True)
class LossModel:
    """A mean loss rate and how losses cluster.

    Gilbert-Elliott here: no loss in the good state, `bad_loss` in the bad state, bad periods of
    `mean_burst` packets on average; the transition probabilities follow from the mean rate.
    """

    rate: float
    kind: str = "iid"
    bad_loss: float = 0.5
    mean_burst: float = 4.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate < 1.0:
            raise ValueError(f"loss rate must be in [0, 1), got {self.rate}")
        if self.kind not in MODELS:
            raise ValueError(f"loss model must be one of {', '.join(MODELS)}, got {self.kind}")
        if self.kind == "ge" and not self.rate < self.bad_loss <= 1.0:
            raise ValueError("Gilbert-Elliott needs rate < bad_loss <= 1")

    @property
    def bad_share(self) -> float:
        """Stationary probability of the bad state."""
        return self.rate / self.bad_loss

    @property
    def p_good_to_bad(self) -> float:
        """Per-packet probability of entering the bad state."""
        pi = self.bad_share
        return self.p_bad_to_good * pi / (1.0 - pi)

    @property
    def p_bad_to_good(self) -> float:
        """Per-packet probability of leaving the bad state."""
        return 1.0 / self.mean_burst

    def frames(self) -> FrameLoss:
        """This model decided frame by frame (for a link of the virtual network)."""
        if self.kind == "iid":
            return IidLoss(self.rate)
        return GilbertElliott(self.p_good_to_bad, self.p_bad_to_good, loss_bad=self.bad_loss)

    def describe(self) -> str:
        """Short human description."""
        if self.kind == "iid":
            return f"i.i.d. {self.rate:g}"
        return (f"Gilbert-Elliott mean {self.rate:g} (bad state {self.bad_loss:g} loss, "
                f"mean burst {self.mean_burst:g} pkts)")


class FrameLoss:
    """Decides, packet by packet, whether a link loses a frame."""

    def lost(self, rng: random.Random) -> bool:
        raise NotImplementedError


class IidLoss(FrameLoss):
    """Each frame is lost independently with probability `p`."""

    def __init__(self, p: float) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError("loss probability must be in [0, 1]")
        self.p = p

    def lost(self, rng: random.Random) -> bool:
        return rng.random() < self.p


class GilbertElliott(FrameLoss):
    """Two-state Markov loss: per frame, move good->bad with `p_gb`, bad->good with `p_bg`,
    then lose the frame with `loss_good` or `loss_bad` depending on the state."""

    def __init__(self, p_gb: float, p_bg: float, loss_good: float = 0.0,
                 loss_bad: float = 1.0) -> None:
        for value in (p_gb, p_bg, loss_good, loss_bad):
            if not 0.0 <= value <= 1.0:
                raise ValueError("Gilbert-Elliott probabilities must be in [0, 1]")
        self.p_gb, self.p_bg = p_gb, p_bg
        self.loss_good, self.loss_bad = loss_good, loss_bad
        self.bad = False

    @classmethod
    def bursty(cls, loss: float, mean_burst: float) -> GilbertElliott:
        """Every frame of a bad spell lost, none in good ones: stationary loss rate `loss`,
        bursts of `mean_burst` frames on average (geometric)."""
        if not 0.0 < loss < 1.0 or mean_burst < 1.0:
            raise ValueError("need 0 < loss < 1 and mean_burst >= 1")
        model = LossModel(loss, "ge", bad_loss=1.0, mean_burst=mean_burst)
        if model.p_good_to_bad > 1.0:
            raise ValueError("loss too high for this burst length")
        return cls(p_gb=model.p_good_to_bad, p_bg=model.p_bad_to_good)

    def lost(self, rng: random.Random) -> bool:
        if self.bad:
            self.bad = rng.random() >= self.p_bg
        else:
            self.bad = rng.random() < self.p_gb
        return rng.random() < (self.loss_bad if self.bad else self.loss_good)


class TruncatedGaps(FrameLoss):
    """Another model's losses with every loss-free run longer than `max_gap` frames cut to
    `max_gap`; `skipped` counts the frames cut out of the runs completed so far.

    The model is still stepped once per frame of the full sequence, so losses and bursts are
    exactly the model's; only the long quiet stretches between them are shortened. A system
    back in its steady state `max_gap` frames after a loss behaves the same in the cut frames
    as in any other loss-free frame, so a run accounts for them as steady-state frames (they
    stand just before the loss that ends their run).
    """

    def __init__(self, model: FrameLoss, max_gap: int) -> None:
        if max_gap < 1:
            raise ValueError("max_gap must be >= 1")
        self.model = model
        self.max_gap = max_gap
        self.skipped = 0
        self.cuts: list[int] = []
        """Frames cut out of each completed run that was cut, in order."""
        self.cutting = False
        """Whether the run in progress has been cut."""
        self._quiet = -1  # loss-free frames left before the next loss (-1: draw the next gap)
        self._cut = 0

    def lost(self, rng: random.Random) -> bool:
        if self._quiet < 0:
            gap = 0
            lost = self.model.lost
            while not lost(rng):
                gap += 1
            self._cut = max(0, gap - self.max_gap)
            self.cutting = self._cut > 0
            self._quiet = gap - self._cut
        if self._quiet == 0:
            self._quiet = -1
            if self._cut:
                self.skipped += self._cut
                self.cuts.append(self._cut)
            return True
        self._quiet -= 1
        return False
