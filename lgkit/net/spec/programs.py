"""Which LinkGuardian program each end of the protected link runs: `--program` by name (v1model,
tofino, or per role: sender=tofino,receiver=v1model) or a P4 file of one's own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LG_PROGRAMS = {"v1model": REPO / "p4" / "linkguardian.p4",
               "tofino": REPO / "p4" / "tofino" / "linkguardian.p4"}
"The kit's LinkGuardian programs by architecture name."
ROLES = ("sender", "receiver")


class ProgramError(ValueError):
    """A --program value names no program (the message is for the user)."""


@dataclass(frozen=True)
class LGPrograms:
    """The programs of the protected link's sender and receiver switches; every other switch
    runs `others` (the v1model program: it only forwards there)."""

    sender: Path
    receiver: Path
    others: Path

    @property
    def is_lg(self) -> bool:
        """Both ends run a kit LinkGuardian program (else only the lg_off phase can run)."""
        return {self.sender, self.receiver} <= set(LG_PROGRAMS.values())

    @property
    def uses_tna(self) -> bool:
        """An end runs the TNA program."""
        return LG_PROGRAMS["tofino"] in (self.sender, self.receiver)

    def describe(self) -> str:
        """`linkguardian.p4` or `sender tofino, receiver v1model`."""
        names = {path: arch for arch, path in LG_PROGRAMS.items()}
        if self.sender == self.receiver == self.others:
            return self.sender.name
        return ", ".join(f"{role} {names.get(path, path.name)}"
                         for role, path in (("sender", self.sender), ("receiver", self.receiver)))


def parse_programs(value: str | None) -> LGPrograms:
    """--program: none (v1model everywhere), `v1model`, `tofino` (both LG switches),
    `sender=A,receiver=B` (each A, B v1model or tofino; a role left out runs v1model), or the
    path of a program for every switch (ProgramError)."""
    v1model = LG_PROGRAMS["v1model"]
    if value is None:
        return LGPrograms(v1model, v1model, v1model)
    if value in LG_PROGRAMS:
        return LGPrograms(LG_PROGRAMS[value], LG_PROGRAMS[value], v1model)
    if "=" in value:
        return LGPrograms(**_roles(value), others=v1model)
    path = Path(value).resolve()
    if not path.is_file():
        raise ProgramError(f"no P4 program {path} (--program takes a file, "
                           f"{' or '.join(LG_PROGRAMS)}, or sender=...,receiver=...)")
    return LGPrograms(path, path, path)


def _roles(value: str) -> dict[str, Path]:
    chosen = dict.fromkeys(ROLES, LG_PROGRAMS["v1model"])
    for item in value.split(","):
        role, _, arch = item.partition("=")
        if role.strip() not in ROLES or arch.strip() not in LG_PROGRAMS:
            raise ProgramError(f"--program {value}: expected ROLE=ARCH items, ROLE one of "
                               f"{', '.join(ROLES)}, ARCH one of {', '.join(LG_PROGRAMS)}")
        chosen[role.strip()] = LG_PROGRAMS[arch.strip()]
    return chosen
