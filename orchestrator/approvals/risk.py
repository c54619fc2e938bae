"""Risk classes and grant signatures: what a remembered approval is bound to."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from orchestrator.core.models import Kind

if TYPE_CHECKING:
    from orchestrator.core.models import ToolCall
    from orchestrator.shell import ShellAnalysis

#: risk classes from most to least severe; a call gets the first one that applies
RISK_CLASSES = (
    "force-push", "history-rewrite", "recursive-delete", "file-delete", "secret-read", "unresolved-target",
    "unknown-tool", "unknown-command", "destructive",
)
#: bounds of a diff preview: a person reads it in a terminal, and the request file stays small
# programs that run arbitrary code given as arguments: a grant for "python" would grant anything
# (including writing a decision file), so their grants bind to the exact command
_INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "dash", "fish", "perl", "ruby", "php",
                           "deno", "bun", "npx", "uvx", "pipx", "eval", "exec", "xargs", "ssh", "docker", "kubectl",
                           "osascript", "powershell", "pwsh", "lua", "Rscript", "java", "env",
                           # servers outside the sandbox that act on request (shell/rules/servers.py) and tunnels:
                           # a "for this session" yes to `tmux new` must not cover a later `tmux send-keys`
                           "tmux", "screen", "busctl", "dbus-send", "gdbus", "emacsclient", "nvim", "vim", "code",
                           "podman", "ngrok", "cloudflared"})
_COMPOUND = re.compile(r"[;&|`$<>()\n]")
# programs whose first non-option argument is a subcommand worth keeping in a signature
_MULTI = frozenset({"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
                    "poetry", "make", "terraform", "helm", "gh", "bun", "deno", "dotnet", "mvn", "gradle"})


def _analysis(call: ToolCall) -> ShellAnalysis | None:
    """The shell analysis of a command call: the pipeline's, else the analyzer's on the bare command."""
    if not call.command:
        return None
    if call.shell is not None:
        sh: ShellAnalysis = call.shell
        return sh
    from orchestrator.shell import analyze

    return analyze(call.command)


def risk_class(call: ToolCall, reasons: Iterable[str] = ()) -> str:
    """The single risk class of a call: the most severe that applies (see :data:`RISK_CLASSES`).

    A shell command's classes are the shell analyzer's structured risks (``ShellAnalysis.risks``: the same
    keys, tagged where the analyzer recognises the program, after wrappers and ``bash -c`` are unwrapped);
    ``reasons`` (human text) is accepted for compatibility and not read.
    """
    del reasons
    found: set[str] = set()
    if call.kind is Kind.DELETE:
        found.add("file-delete")
    if call.kind is Kind.UNKNOWN:
        found.add("unknown-tool")
    sh = _analysis(call)
    if sh is not None:
        found |= set(sh.risks)
        if sh.unresolved:
            found.add("unresolved-target")
        if sh.kind == "unknown":
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
            # what runs, as the analyzer saw it after unwrapping env/sudo/nice/timeout...: one program only
            sh = _analysis(call)
            programs: tuple[tuple[str, str | None], ...] = sh.programs if sh is not None else ()
            prog, first = programs[0] if len(programs) == 1 else ("", None)
            if prog and not re.match(r"^(python|pypy)[0-9.]*$", prog) and prog not in _INTERPRETERS:
                sub = first if prog in _MULTI else None
                # `uv run X`, `npm exec X`, `go run .`: the launcher runs whatever follows
                if sub not in ("run", "exec", "x", "dlx", "tool", "shell"):
                    return f"exec:{prog}" + (f" {sub}" if sub else "")
        return f"cmd:{cmd}"
    if risk == "unknown-tool":
        return f"tool:{call.tool}"
    return f"tool:{call.tool}:" + ",".join(sorted(call.resolved))


__all__ = ["RISK_CLASSES", "risk_class", "signature"]
