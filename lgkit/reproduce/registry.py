"""The experiments `lgkit reproduce` knows: name -> module, registered here, imported on demand."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Entry:
    """One reproducible experiment."""

    name: str
    "What the user types: `lgkit reproduce NAME`."
    module: str
    "The module that runs it (see docs/reproduce.md for what it must define)."
    paper: str
    "The figure or table of the paper it reproduces."
    summary: str
    "One line for `lgkit reproduce --list`."
    network: bool
    """True: it starts a Mininet testbed (needs root; holds the machine's network lock, and the
    run's folder is cleaned up after like `lgkit run`). False: it runs in virtual time."""


ENTRIES: tuple[Entry, ...] = (
    Entry("fig8", "lgkit.reproduce.fig8", "Fig. 8",
          "effective loss and link speed, LG and LG_NB, 25G/100G line-rate stress", False),
    Entry("fig9", "lgkit.reproduce.fig9", "Fig. 9",
          "throughput, queue depth and Rx buffer over time as corruption, then LG, start",
          network=True),
    Entry("fig10", "lgkit.reproduce.fig10", "Fig. 10",
          "top-5% FCT of 24,387 B flows: no loss, loss, LG, LG_NB", network=True),
    Entry("fig11", "lgkit.reproduce.fig11", "Fig. 11",
          "top-1% FCT of 143 B flows: no loss, loss, LG, LG_NB", network=True),
    Entry("fig12", "lgkit.reproduce.fig12", "Fig. 12",
          "Tx and Rx buffer usage under the line-rate stress test", False),
    Entry("fig17", "lgkit.reproduce.fig17", "Fig. 17",
          "retransmission delay, calibrated timing model", False),
    Entry("fig18", "lgkit.reproduce.fig18", "Fig. 18",
          "consecutive losses at 1% and 5%, i.i.d. and bursty", False),
    Entry("table2", "lgkit.reproduce.table2", "Table 2",
          "FCT tails by mechanism: ReTx, +Order, +Tail, +Tail+Order", network=True),
    Entry("table3", "lgkit.reproduce.table3", "Table 3",
          "TCP CUBIC goodput vs loss rate: none, LG, LG_NB (Wharf as reference)", network=True),
    Entry("table4", "lgkit.reproduce.table4", "Table 4",
          "recirculation overhead of LG, % of pipeline capacity", False),
    Entry("timeouts", "lgkit.reproduce.timeouts", "§4.1",
          "ackNo timeouts among the loss events of the stress tests", False),
    Entry("pabo", "lgkit.reproduce.pabo", "PABO §V-B, Table I, Fig. 7b",
          "PABO's tree burst test: drop ratio with and without packet bounce", False),
    Entry("vertigo", "lgkit.reproduce.vertigo", "Vertigo §4.2, Fig. 6 (TCP)",
          "incast QCT and FCT: ECMP, DRILL, DIBS and Vertigo on a leaf-spine", True),
    Entry("joint", "lgkit.reproduce.joint", "issue 16 (no paper figure)",
          "corruption and incast: which loss LG, Vertigo and PABO each remove", False),
    Entry("lgrate", "lgkit.reproduce.lgrate", "Table 3 (10G, 1e-2)",
          "the highest link rate at which LG masks 1e-2 corruption on this machine",
          network=True),
)
"Every experiment, in the order `--list` shows them. Add one line per new experiment."

EXPERIMENTS: dict[str, Entry] = {entry.name: entry for entry in ENTRIES}


class UnknownExperiment(KeyError):
    """No experiment of that name (the message lists the known ones)."""

    def __str__(self) -> str:
        return str(self.args[0])


def lookup(name: str) -> Entry:
    """The entry of an experiment name."""
    if name not in EXPERIMENTS:
        known = ", ".join(EXPERIMENTS) or "none yet"
        raise UnknownExperiment(f"no experiment {name!r} (known: {known}; see --list)")
    return EXPERIMENTS[name]


def load(entry: Entry) -> ModuleType:
    """Import the experiment's module (only this one)."""
    return importlib.import_module(entry.module)
