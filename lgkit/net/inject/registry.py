"""Every corruption injector by name: the commands' --injector options and the testbed's
choice come from here. An injector is a module with a factory `(LinkAccess, LossModel) ->
Injector` and one line below."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from lgkit.net.inject.injectors import Injector, InjectorUnavailable, LinkAccess
from lgkit.sw.switch.loss import LossModel

INJECTORS: dict[str, str] = {
    "netem": "lgkit.net.inject.injectors:netem",
    "nft": "lgkit.net.inject.injectors:nft",
    "p4": "lgkit.net.inject.p4dropper:make",
}
"Name -> 'module:factory'; the module is imported only when its injector is chosen."

AUTO = ("netem", "nft")
"What `auto` tries, in order: the injectors that need nothing of the P4 program."

CHOICES = ("auto", *INJECTORS)
"The --injector choices of every command."

Factory = Callable[[LinkAccess, LossModel], Injector]


def factory(name: str) -> Factory:
    """The factory of the injector called `name` (ValueError naming the known ones)."""
    if name not in INJECTORS:
        raise ValueError(f"unknown injector '{name}' (choose from {', '.join(CHOICES)})")
    module, _, function = INJECTORS[name].partition(":")
    made: Factory = getattr(importlib.import_module(module), function)
    return made


def make_injector(choice: str, link: LinkAccess, model: LossModel,
                  log: Callable[[str], None] = print) -> Injector:
    """The requested injector, or for `auto` the first available of AUTO.

    Each unavailable injector that is passed over gets one line; the chosen one is printed.
    """
    candidates = list(AUTO) if choice == "auto" else [choice]
    reasons = []
    for name in candidates:
        try:
            injector = factory(name)(link, model)
        except InjectorUnavailable as exc:
            log(str(exc))
            reasons.append(str(exc))
            continue
        log(f"injector: {injector.describe()}")
        return injector
    raise InjectorUnavailable("; ".join(reasons))
