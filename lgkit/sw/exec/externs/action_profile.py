"""action_profile(size) and action_selector(algorithm, size, width): members and groups that
their tables' entries name (state and selection: interp/action_profiles.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.action_profiles import ActionProfile as ProfileState
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen


class ActionProfile(ExternType):
    name = "action_profile"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return ProfileState(qname, int(args[0]), selector=False)


class ActionSelector(ExternType):
    name = "action_selector"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        algo = str(args[0])  # every v1model HashAlgorithm; None: random
        return ProfileState(qname, int(args[1]), selector=True,
                            algorithm=hashes.ALGORITHMS.get(algo))
