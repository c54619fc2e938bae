"""``orch``: the command line. One module per subcommand in :mod:`orchestrator.commands`.

The single error boundary lives here: expected errors (:class:`OrchestratorError`) print one line
and exit 1; anything else is a bug: traceback, exit 3; Ctrl-C exits 130.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
import traceback
from collections.abc import Sequence

from orchestrator.core.errors import OrchestratorError

#: subcommand name -> module under orchestrator.commands (imported only when that command runs,
#: so `orch hook` never pays for textual or rich)
COMMANDS: dict[str, str] = {
    "init": "init",
    "intents": "intents",
    "intent": "intent",
    "check": "check",
    "lesson": "lesson",
    "trace": "trace",
    "key": "key",
    "hook": "hook",
    "install": "install",
    "uninstall": "uninstall",
    "mcp": "mcp",
    "serve": "serve",
    "approvals": "approvals",
    "approve": "approve",
    "reject": "reject",
    "tui": "tui",
    "console": "console",
    "approver": "approver",
    "demo": "demo",
    "doctor": "doctor",
    "status": "status",
    "explain": "explain",
    "validate": "validate",
    "refusals": "refusals",
    "telemetry": "telemetry",
}

HELP = {
    "init": "create .orchestration/ in a repository",
    "intents": "list or show intents",
    "intent": "select an intent for a session",
    "check": "dry-run a tool call through the pre-hooks",
    "lesson": "record a lesson in AGENTS.md",
    "trace": "audit the ledger (list, show, verify, blame, export, stats, audit, repair, anchor)",
    "key": "this machine's ledger signing key and the team's trusted keys (show, list, trust, untrust)",
    "hook": "run as an agent's hook (reads the event on stdin)",
    "install": "install hooks for an agent",
    "uninstall": "remove the hooks install added",
    "mcp": "serve the orchestrator MCP tools on stdio",
    "serve": "run the resident hook daemon",
    "approvals": "list pending approval requests",
    "approve": "approve a pending request",
    "reject": "reject a pending request",
    "tui": "the approval console",
    "console": "the web console: decisions signed with a passkey, from anywhere",
    "approver": "register or list the passkeys whose signed decisions the approval hook accepts",
    "demo": "run a narrated, offline demo session",
    "doctor": "check that this workspace is governed as intended, with a fix for each finding",
    "status": "active sessions of every worktree, their daemons and pending approvals",
    "explain": "show how a shell command is analysed and what the pipeline would decide (dry run)",
    "validate": "check the governance files (intents, policy, .intentignore); file:line errors",
    "refusals": "list the calls the pre-hooks refused or put to a person",
    "telemetry": "OTLP export of decisions and records: spool status, flush (docs/telemetry.md)",
}


def _available() -> dict[str, str]:
    """Commands whose modules exist in this build."""
    from importlib.util import find_spec

    return {name: mod for name, mod in COMMANDS.items() if find_spec(f"orchestrator.commands.{mod}") is not None}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, import just that subcommand's module (fast path for hooks)."""
    from orchestrator._version import __version__

    parser = argparse.ArgumentParser(prog="orch", description="Governance middleware for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"orch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = _available()
    for name, mod in names.items():
        if only is not None and name != only:
            sub.add_parser(name, help=HELP.get(name), add_help=False)
            continue
        module = importlib.import_module(f"orchestrator.commands.{mod}")
        p = sub.add_parser(name, help=HELP.get(name), description=HELP.get(name))
        module.register(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``orch``. Returns the exit code (never 1 or 3 for ``orch hook``: see below)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    try:
        parser = build_parser(first if first in COMMANDS else None)
        args = parser.parse_args(args_list)
        if not getattr(args, "_run", None):
            parser.print_help()
            return 0 if not args_list else 2
        return int(args._run(args) or 0)
    except OrchestratorError as exc:
        sys.stderr.write(f"orch: error: {exc}\n")
        if exc.hint:
            sys.stderr.write(f"orch: hint: {exc.hint}\n")
        return 2 if first == "hook" else 1
    except KeyboardInterrupt:
        sys.stderr.write("orch: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if first == "hook" or exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            return _internal_error(first)
        # expected inside the agent's sandbox: orchestrator's state is read-only there, its run directory hidden
        sys.stderr.write(f"orch: error: {exc}\norch: hint: in an agent's sandbox orchestrator's own state is "
                         "read-only and its run directory hidden: a person runs this command\n")
        return 1
    except Exception:  # noqa: BLE001 — the one place bugs are reported
        return _internal_error(first)


def _internal_error(first: str | None) -> int:
    """A bug: the traceback, and the exit code for it (2 for ``orch hook``: fail closed)."""
    traceback.print_exc()
    if first == "hook":
        # an agent's hook must fail closed: Claude Code treats exit 1 (and 3) as "allow", 2 blocks
        sys.stderr.write("orch: internal error in the hook; the call is blocked\n")
        return 2
    sys.stderr.write("orch: internal error (this is a bug; please report it with the traceback above)\n")
    return 3
