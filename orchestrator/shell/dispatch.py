"""One simple command to its rule: wrappers, shells, interpreters, per-program rules, service CLIs, else unknown."""
from __future__ import annotations

import re

from orchestrator.shell.words import _prog_name
from orchestrator.shell.programs import (
    _DISK_TOOLS,
    _DOWNLOADERS,
    _HELP_ARGS,
    _INTERPRETERS,
    _POWER,
    _SHELLS,
    _SYSTEM_BIN,
    _UNICODE_DASHES,
    _WRAPPERS,
)
from orchestrator.shell.run import _Run
from orchestrator.shell.rules.interpreters import _interpreter, _shell
from orchestrator.shell.rules.wrappers import _wrapper
from orchestrator.shell.rules import _READ_ONLY, _SERVICE_NAMES, family, rule_for
from orchestrator.shell.rules import outside as _outside
from orchestrator.shell.rules import secrets as _shell_secrets

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from orchestrator.shell.words import W
    from orchestrator.shell.run import _Ctx, _Walker


def _run_argv(wk: _Walker, argv: list[W], ctx: _Ctx, depth: int, xargs: bool = False) -> None:
    """Dispatch one simple command (after assignments and redirections were taken out)."""
    if not argv:
        return
    head = argv[0]
    if head.dyn or head.glob:
        # A name the command itself computed (`c=curl; $c -d @f URL`, `"${a[@]}"`, `/usr/bin/cur?`) may be any
        # program -- a network client too, whose upload or force-push the kernel would let through: a person
        # decides. A variable of the agent's environment (`$PYTHON`) only names what its owner set: contained.
        from orchestrator.shell.rules.net import _computed

        chosen = head.glob or _computed(_Run(wk, ctx, depth, "", [], xargs), head)
        wk.acc.flag("unknown", f"program name is not literal: {head.text[:60]}",
                    risk="unclassified" if chosen else "unresolved-target")
        wk.acc.unresolved = True
        return
    name = _prog_name(head)
    args = argv[1:]
    if "/" in head.text and not _SYSTEM_BIN.match(head.text):
        # `./ls` or `tools/cat` is whatever file sits there (the agent may have just written it): never
        # read-only. The name is still analyzed so `./rm -rf /` stays destructive.
        wk.acc.flag("unknown", f"program {head.text[:60]!r} is not a system binary", risk="runs-code")
    if name not in _WRAPPERS and name not in ("env", "timeout"):
        # what runs, after wrappers: (program, its first non-option word) -- approval signatures bind to it
        wk.acc.programs.append((name, next((a.text for a in args if not a.text.startswith("-")), None)))
    run = _Run(wk, ctx, depth, name, args, xargs)
    if wk.acc.secrets is not None:
        _shell_secrets.check_argv(run)
    if name in _outside.TABLE:
        _outside.check(run)
    if name in wk.functions:
        wk.call(name, args, ctx)  # the body again, with the call's arguments for "$@", $1...
        return
    if name in _DOWNLOADERS:
        wk.stage_downloads = True
    if name in ("echo", "printf") and all(a.literal for a in args):
        out = " ".join(a.text for a in args if not (name == "echo" and a.text in ("-n", "-e", "-E")))
        if name == "printf" or "-e" in (a.text for a in args):
            out = out.replace("\\n", "\n").replace("\\t", "\t")
        wk.stage_output = out
    if any(a.text[:1] in _UNICODE_DASHES for a in args if not a.dyn):
        # `git reset ‐‐hard` with U+2010: not an option to the program, and a classic way to fool matchers.
        wk.acc.flag("unknown", f"{name}: an argument starts with a unicode dash")
        return
    rule = rule_for(name)
    if len(args) == 1 and _only_help(head, name, args, rule is not None, xargs):
        return
    if rule is not None:
        rule(run)
        return
    if name in _WRAPPERS:
        _wrapper(run)
        return
    if name in _SHELLS:
        _shell(run)
        return
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*", name) or name in _INTERPRETERS:
        _interpreter(run)
        return
    if name in _READ_ONLY:
        return
    if name == "mdadm" and any(a.text in ("--detail", "-D", "--examine", "-E", "--query", "-Q", "--version",
                                          "--help") for a in args) and \
            not any(a.text in ("--zero-superblock", "--create", "-C", "--remove", "--fail", "--stop", "-S")
                    for a in args):
        return
    if name.startswith("mkfs") or name in _DISK_TOOLS:
        run.flag("destructive", f"{name} can destroy disks or file systems")
        return
    if name in _POWER:
        run.flag("destructive", f"{name} stops or restarts the machine")
        return
    if name in _SERVICE_NAMES:
        services = family("services")  # cloud, cluster, container and package CLIs (verb trees)
        services._service_cli(run, services._SERVICE_CLIS[name])
        return
    wk.acc.flag("unknown", f"unknown program {name!r}", risk="runs-code")


def _only_help(head: W, name: str, args: list[W], has_rule: bool, xargs: bool) -> bool:
    """Whether the command's one argument only asks ``name`` for its help or version (it prints and exits)."""
    if args[0].dyn:
        return False
    # `--help` / `--version` as the only argument of a program we know prints and exits.
    if args[0].text in _HELP_ARGS and (
            has_rule or name in _READ_ONLY or name in _WRAPPERS
            or name in _INTERPRETERS or name in _SHELLS or re.fullmatch(r"python[0-9.]*", name)
            or name in _SERVICE_NAMES):
        return True
    # A program looked up on PATH asked only for help/version prints and exits. A workspace script
    # shadowing that name would have to be installed on PATH outside the workspace, which the pipeline
    # refuses; `./tool --help` runs a workspace file and stays unknown.
    return args[0].text in ("--help", "-h", "--version", "-V") and \
        not xargs and "/" not in head.text and name not in _POWER and name not in _DISK_TOOLS and \
        not name.startswith("mkfs") and name not in ("init", "telinit")
