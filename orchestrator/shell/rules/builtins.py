"""Rules for shell builtins: cd/pushd/popd (the cwd of later targets) and trap."""
from __future__ import annotations

import posixpath

from orchestrator.shell.words import _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
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
