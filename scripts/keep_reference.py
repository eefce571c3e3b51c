"""Keep a default-scale `lgkit reproduce` run as the committed reference of its experiment:
copy what the notebooks read into measurements/reference/<name>/ (per-flow tables slimmed to the
columns the figures use) and render its figures there (experiments whose figures only a
notebook draws, such as vertigo, keep their tables and, for vertigo, the host agents' counters
in agents/).

    .venv/bin/python scripts/keep_reference.py measurements/runs/<run folder>
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEEP = ("metadata.json", "report.txt", "summary.csv", "conditions.csv", "fct_summary.csv",
        "goodput.csv", "intervals.csv", "timeline_tcp.csv", "events.csv", "link_speed.csv",
        "retx_delay.csv", "probes.csv", "network.csv", "queries.csv", "flows.csv", "nfqueue.csv")
AGENTS = "vertigo-agent-*.json"
"Vertigo's host agents' final counters, kept in agents/."
SLIM = {"fct.csv": ["group", "condition", "fct_us", "error"],
        "timeline_p4.csv": ["run", "t_s", "switch", "name", "index", "packets", "bytes",
                            "value"]}
P4_CELLS = ("lg_qdepth_max", "lg_rx_buf_bytes", "lg_tx_buf_bytes", "lg_cnt_d")


def keep(run: Path) -> Path:
    """Copy a run into measurements/reference/<experiment>/ and draw its figures there."""
    import pandas as pd

    meta = json.loads((run / "metadata.json").read_text())
    if meta.get("quick") or meta.get("status") != "complete":
        raise SystemExit(f"{run}: only a complete default-scale run can be the reference")
    name = meta["experiment"]
    out = REPO / "measurements" / "reference" / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for file in KEEP:
        if (run / file).exists():
            shutil.copy2(run / file, out / file)
    for file, columns in SLIM.items():
        if (run / file).exists():
            table = pd.read_csv(run / file, keep_default_na=False)
            if "name" in table:
                table = table[table["name"].isin(P4_CELLS)]
            if "fct_us" in table:
                table["fct_us"] = table["fct_us"].astype(float).round(0).astype(int)
            table[[c for c in columns if c in table]].to_csv(out / file, index=False)
    agents = sorted(run.glob(AGENTS))
    if agents:
        (out / "agents").mkdir()
        for path in agents:
            shutil.copy2(path, out / "agents" / path.name)
    os.environ["LGKIT_FIGURES"] = str(out)
    from lgkit.reproduce import figures

    for label, figure in getattr(figures, name, lambda _: [])(out):
        print(figures.save(figure, out, label))
    return out


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        print(keep(Path(folder)))
