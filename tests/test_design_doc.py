"""docs/design.md names every module and package of lgkit/sw in its list of rooms."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SW = REPO / "lgkit" / "sw"


def _sw_rooms() -> str:
    """The part of docs/design.md's room list about lgkit/sw (it ends where lgkit/core starts)."""
    text = (REPO / "docs" / "design.md").read_text()
    start = text.index("One line per room:")
    return text[start:text.index("- `lgkit/core/`", start)]


def _missing(rooms: str, modules: list[Path]) -> list[str]:
    """Modules whose file name the text names fewer times than there are modules of that name
    (`tables.py` twice for interp/ and p4runtime/), and packages whose folder it never names."""
    wanted = Counter(m.name for m in modules if m.name != "__init__.py")
    missing = [name for name, count in sorted(wanted.items())
               if len(re.findall(r"(?<![\w.])" + re.escape(name), rooms)) < count]
    packages = sorted({m.parent.relative_to(SW.parent) for m in modules
                       if m.name == "__init__.py" and m.parent != SW})
    return missing + [f"{p}/" for p in packages if f"{p.name}/" not in rooms]


def test_design_doc_names_every_sw_module() -> None:
    missing = _missing(_sw_rooms(), sorted(SW.rglob("*.py")))
    assert not missing, "docs/design.md does not name these modules of lgkit/sw: " + ", ".join(
        missing)


def test_missing_module_is_found() -> None:
    rooms = "- `lgkit/sw/exec/`: `pipeline.py`, `interp/`: `tables.py`"
    modules = [SW / "exec" / "pipeline.py", SW / "exec" / "interp" / "__init__.py",
               SW / "exec" / "interp" / "tables.py", SW / "p4runtime" / "tables.py",
               SW / "exec" / "native" / "__init__.py", SW / "exec" / "native" / "engine.py"]
    assert _missing(rooms, modules) == ["engine.py", "tables.py", "sw/exec/native/"]
