"""Risk classes and grant signatures: what a remembered approval is bound to."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

from orchestrator.models import Kind

if TYPE_CHECKING:
    from orchestrator.models import ToolCall

#: risk classes from most to least severe; a call gets the first one that applies
RISK_CLASSES = (
    "force-push", "history-rewrite", "recursive-delete", "file-delete", "unresolved-target",
    "unknown-tool", "unknown-command", "destructive",
)
#: bounds of a diff preview: a person reads it in a terminal, and the request file stays small
# programs that run arbitrary code given as arguments: a grant for "python" would grant anything
# (including writing a decision file), so their grants bind to the exact command
_INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "dash", "fish", "perl", "ruby", "php",
                           "deno", "bun", "npx", "uvx", "pipx", "eval", "exec", "xargs", "ssh", "docker", "kubectl",
                           "osascript", "powershell", "pwsh", "lua", "Rscript", "java", "env"})
_COMPOUND = re.compile(r"[;&|`$<>()\n]")
# programs whose first non-option argument is a subcommand worth keeping in a signature
_MULTI = frozenset({"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
                    "poetry", "make", "terraform", "helm", "gh", "bun", "deno", "dotnet", "mvn", "gradle"})


def _argv(command: str) -> list[str] | None:
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    # skip leading VAR=value assignments, and wrappers that do not change what runs
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
        argv = argv[1:]
    while argv and os.path.basename(argv[0]) in ("sudo", "env", "command", "nohup", "time", "nice"):
        argv = argv[1:]
    return argv


def _segments(command: str) -> list[list[str]]:
    """Simple commands of a (possibly compound) command line, split on ; && || | and newlines."""
    out = []
    for part in re.split(r"\|\||&&|[;|\n&]", command):
        argv = _argv(part.strip())
        if argv:
            out.append(argv)
    return out


def _command_risks(command: str) -> set[str]:
    risks: set[str] = set()
    for argv in _segments(command):
        prog = os.path.basename(argv[0])
        args = argv[1:]
        if prog == "git" and args:
            # git -C dir push ...: find the subcommand
            i = 0
            while i < len(args) and args[i].startswith("-"):
                i += 2 if args[i] in ("-C", "-c") else 1
            sub, rest = (args[i], args[i + 1:]) if i < len(args) else ("", [])
            if sub == "push" and (any(a in ("-f", "--force", "--mirror") or a.startswith("--force")
                                      for a in rest) or any(a.startswith("+") for a in rest)):
                risks.add("force-push")
            if sub == "push" and any(a in ("-d", "--delete") or a.startswith(":") for a in rest):
                risks.add("history-rewrite")
            if sub in ("rebase", "filter-branch", "filter-repo", "replace") or \
                    (sub == "reset" and "--hard" in rest) or (sub == "commit" and "--amend" in rest) or \
                    (sub == "branch" and any(a in ("-D", "-f", "--force") for a in rest)) or \
                    (sub in ("clean",) and any("f" in a for a in rest if a.startswith("-"))) or \
                    (sub in ("checkout", "restore") and ("--" in rest or "." in rest or "-f" in rest)):
                risks.add("history-rewrite")
        elif prog in ("rm", "rmdir", "unlink", "shred"):
            if any(a in ("-r", "-R", "--recursive") or (a.startswith("-") and not a.startswith("--")
                                                        and ("r" in a or "R" in a)) for a in args):
                risks.add("recursive-delete")
            else:
                risks.add("file-delete")
        elif prog == "find" and "-delete" in args:
            risks.add("recursive-delete")
    return risks


def risk_class(call: ToolCall, reasons: Iterable[str] = ()) -> str:
    """The single risk class of a call: the most severe that applies (see :data:`RISK_CLASSES`)."""
    found: set[str] = set()
    text = " ".join(reasons).lower()
    if call.command:
        found |= _command_risks(call.command)
    if "recursive delete" in text:
        found.add("recursive-delete")
    if "force" in text and "push" in text:
        found.add("force-push")
    if "history" in text or "rewrite" in text:
        found.add("history-rewrite")
    if call.kind is Kind.DELETE:
        found.add("file-delete")
    if call.kind is Kind.UNKNOWN:
        found.add("unknown-tool")
    sh = call.shell
    if sh is not None:
        if getattr(sh, "unresolved", False):
            found.add("unresolved-target")
        if getattr(sh, "kind", None) == "unknown":
            found.add("unknown-command")
    for cls in RISK_CLASSES:
        if cls in found:
            return cls
    return "destructive"


def signature(call: ToolCall, risk: str) -> str:
    """What a remembered grant is bound to, besides its scope key and risk class.

    - ``unknown-command``: the program and, for multi-command tools (git, npm, cargo...), its
      subcommand — ``exec:pytest``, ``exec:npm run`` — so "approve for session" stops the same
      question about ``pytest tests/a`` and ``pytest tests/b``. A compound command (pipes,
      ``&&``, redirections, substitutions) binds to its exact text: its parts cannot be vouched for;
      so does an interpreter or launcher (python, node, bash -c, docker, ssh...): "python" for the
      session would mean "any code", including code that forges approvals.
    - ``unknown-tool``: the tool name.
    - every other class (deletes, unresolved targets, force-push, history rewrites): the exact
      command (whitespace-normalised) or the tool and its resolved targets — a grant never
      extends a destructive action to other targets.
    """
    if call.command is not None:
        cmd = " ".join(call.command.split())
        if risk == "unknown-command" and not _COMPOUND.search(cmd):
            argv = _argv(cmd) or []
            prog = os.path.basename(argv[0]) if argv else ""
            if argv and not re.match(r"^(python|pypy)[0-9.]*$", prog) and prog not in _INTERPRETERS:
                sub = next((a for a in argv[1:] if not a.startswith("-")), None) if prog in _MULTI else None
                # `uv run X`, `npm exec X`, `go run .`: the launcher runs whatever follows
                if sub not in ("run", "exec", "x", "dlx", "tool", "shell"):
                    return f"exec:{prog}" + (f" {sub}" if sub else "")
        return f"cmd:{cmd}"
    if risk == "unknown-tool":
        return f"tool:{call.tool}"
    return f"tool:{call.tool}:" + ",".join(sorted(call.resolved))


__all__ = ["RISK_CLASSES", "risk_class", "signature"]
