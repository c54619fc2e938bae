"""Rules for system administration programs: signals, kernel/log readers, packages (dpkg/rpm), crontab and the
macOS tools (verb-prefix read-only dispatch)."""
from __future__ import annotations

import re

from orchestrator.shell.words import _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _kill(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-s", "-n"))
    if _has(opts, "-l", "-L", "--list") or not run.args:
        return
    targets = [a.text for a in run.args if not a.text.startswith("-") or re.fullmatch(r"-\d+", a.text)]
    raw = [a.text for a in run.args]
    if "-1" in raw[1:] or (raw and raw[-1] == "-1") or "1" == (targets[-1] if targets else ""):
        if raw.count("-1") >= 1 and (len(raw) >= 2 or raw[-1] == "-1"):
            run.flag("destructive", "kill -1 signals every process")
            return
    run.flag("mutating", f"{run.name} signals processes")


def _dangerous_simple(kind: str, why: str) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        opts, pos = _split_opts(run.args)
        if _has(opts, "--help", "--version") and not pos:
            return
        run.flag(kind, why.format(name=run.name))
    return rule


def _crontab(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-u",))
    if _has(opts, "-r"):
        run.flag("destructive", "crontab -r deletes the crontab")
    elif _has(opts, "-l"):
        return
    else:
        run.flag("mutating", "crontab installs a crontab")


def _dmesg(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-f", "-l", "--level", "-s", "-n", "--console-level", "-F", "--file"))
    if _has(opts, "-c", "-C", "--clear", "--read-clear", "-n", "--console-level", "-D", "-E",
            "--console-off", "--console-on"):
        run.flag("mutating", "dmesg clears or configures the kernel ring buffer")


def _journalctl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    if any(o.startswith(("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys",
                         "--update-catalog")) for o in opts):
        run.flag("mutating", "journalctl changes the journal")


def _sysctl(run: _Run) -> None:
    if any("=" in a.text for a in run.args) or any(a.text in ("-w", "--write", "-p", "--load", "--system", "-f")
                                                   for a in run.args):
        run.flag("mutating", "sysctl sets kernel parameters")


def _date(run: _Run) -> None:
    if any(a.text in ("-s", "--set") or a.text.startswith("--set=") for a in run.args):
        run.flag("mutating", "date sets the clock")


def _hostname(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-F", "--file"))
    if pos or _has(opts, "-F", "--file", "-b", "--boot"):
        run.flag("mutating", "hostname sets the host name")


def _ifconfig(run: _Run) -> None:
    if len(run.args) >= 2 and not any(a.text in ("-a", "-l", "-L", "-v") for a in run.args[:1]):
        run.flag("mutating", "ifconfig changes an interface")


def _pkg_query(run: _Run, read_opts: tuple[str, ...]) -> None:
    """dpkg / rpm: query options are read-only; install/remove/purge change the system."""
    texts = [a.text for a in run.args]
    if texts and all(t.startswith("-") is False or t in read_opts or t.startswith(read_opts) for t in texts) \
            and any(t in read_opts or t.startswith(read_opts) for t in texts):
        return
    if any(t in ("-r", "-P", "--remove", "--purge", "-e", "--erase") for t in texts):
        run.flag("destructive" if any(t in ("-P", "--purge") for t in texts) else "mutating",
                 f"{run.name} removes packages")
        return
    run.flag("mutating", f"{run.name} changes installed packages")


def _dscl(run: _Run) -> None:
    for a in run.args:
        t = a.text.lstrip("-")
        if t in ("read", "readall", "list", "search", "diff", "readpl", "readpli", "help", "q", "quit"):
            return
        if t in ("create", "append", "merge", "delete", "change", "passwd", "changei", "createpl", "deletepl",
                 "mcxset", "mcxdelete", "auth", "authonly"):
            run.flag("destructive" if t in ("delete", "deletepl", "mcxdelete") else "mutating", f"dscl -{t}")
            return
    run.flag("unknown", "dscl action not recognised")


def _security(run: _Run) -> None:
    from orchestrator.shell import rules as _rules  # imported at call time: a cycle
    if not run.args:
        run.flag("unknown", "security opens an interactive prompt")
        return
    first = run.args[0].text
    if first in ("list-keychains", "default-keychain", "login-keychain") and \
            any(a.text == "-s" for a in run.args[1:]):
        run.flag("mutating", f"security {first} -s changes the keychain search list")
        return
    _rules._SECURITY_RO(run)


# -- verb-prefix read-only dispatch for macOS tools ------------------------------------------------------
def _mac_tool(read_prefixes: tuple[str, ...], read_exact: tuple[str, ...] = (),
              destroy: tuple[str, ...] = (), stdout_flags: tuple[str, ...] = ()) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        if stdout_flags and any(a.text in stdout_flags for a in run.args):
            return  # output goes to stdout
        args = run.args
        if run.name == "defaults":
            # global options before the verb: -currentHost, -host NAME
            while args and args[0].text in ("-currentHost", "-host"):
                args = args[2:] if args[0].text == "-host" else args[1:]
        first = args[0].text if args else ""
        if not run.args:
            run.flag("unknown", f"{run.name} without a subcommand")
            return
        if first in ("-h", "--help", "-help", "help", "--version", "-version", "version"):
            return
        if first.startswith(destroy) and destroy:
            run.flag("destructive", f"{run.name} {first}")
            return
        if first.startswith(read_prefixes) or first in read_exact:
            return
        run.flag("mutating", f"{run.name} {first}")
    return rule
