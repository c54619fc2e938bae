"""Per-program rules: one table per program family, merged into one registry.

Each family module exports ``RULES`` (program name -> rule, a function of :class:`orchestrator.shell.run._Run`);
a program belongs to exactly one family. :mod:`orchestrator.shell.dispatch` looks a simple command's program up
in :data:`_RULES` after wrappers, shells and interpreters; :data:`_READ_ONLY` is the set of programs that never
write by themselves and have no rule. Shell-wide checks that run for every command (secrets, outside effects)
and where git writes (:mod:`.git_writes`, loaded on demand) are not in the registry.
"""
from __future__ import annotations

from orchestrator.shell.programs import _READ_ONLY as _ALL_READ_ONLY
from orchestrator.shell.rules import (
    archive,
    builtins,
    databases,
    editors,
    fs,
    git,
    interpreters,
    net,
    services,
    system,
    text,
    wrappers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable

    from orchestrator.shell.run import _Run

FAMILIES = (fs, text, archive, net, system, databases, services, interpreters, wrappers, git, editors, builtins)


def _merge() -> dict[str, Callable[[_Run], None]]:
    rules: dict[str, Callable[[_Run], None]] = {}
    for family in FAMILIES:
        for name, rule in family.RULES.items():
            if name in rules:  # one owner per program: a second entry would silently win
                raise RuntimeError(f"{name!r} has a rule in two families ({family.__name__})")
            rules[name] = rule
    return rules


_RULES = _merge()
_READ_ONLY = _ALL_READ_ONLY - frozenset(_RULES)
