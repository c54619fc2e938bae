"""Which shell commands a wrapping host runs outside the kernel sandbox (one exemption), and which it refuses.

Issue 21: on a host that can replace a command, every shell command is wrapped. The exceptions are decided here, in
one place, so that they can be read (and replaced) as a whole:

- :func:`cwd_only` — a bare ``cd``: the host's shell must keep its working directory for the next call.

There is no git exemption: git porcelain that must write ``.git`` runs in the sandbox with the git dir writable and
what git later runs or trusts restored after it (orchestrator/sandbox/gitdir.py, issue 21 item 2); such a command
needs an intent (:func:`writes_git`).

:func:`unwrappable` says why a command cannot be handed to the launcher at all (it is then refused, never run bare);
:func:`writes_workspace` whether a command names a workspace target (without an intent, one that names none runs in
the read plan).
"""

from __future__ import annotations

from typing import Any

#: risks that mean "the analyzer could not see what this does": a command carrying one is never exempt
_OPAQUE = frozenset({"runs-code", "unparseable", "hijack", "unresolved-target", "unclassified"})
#: a command longer than this (bytes) is refused: it could not be handed to the launcher as one argument
#: (Linux MAX_ARG_STRLEN is 128 KiB, minus the launcher's own words)
MAX_COMMAND_BYTES = 100_000
#: builtins that only change the host shell's working directory (which must persist to the next call)
_CWD_BUILTINS = frozenset({"cd", "pushd", "popd"})


def opaque(sh: Any) -> bool:
    """Whether the analysis of a shell command leaves something the analyzer could not see (code it runs, a target
    it cannot resolve, text it cannot parse)."""
    if sh is None:
        return True
    return sh.kind == "unknown" or bool(sh.unresolved) or bool(_OPAQUE & sh.risks)


def writes_git(sh: Any) -> bool:
    """Whether a command runs git and is more than read-only to the analyzer (``git commit``, ``git add``, a script
    of git commands): it changes history, so it needs an intent. It runs in the sandbox's scope plan with the git
    dir writable and guarded (orchestrator/sandbox/gitdir.py); the read plan keeps ``.git`` read-only."""
    if sh is None or sh.kind == "read_only":
        return False
    return any(program == "git" for program, _sub in sh.programs)


def fetches(sh: Any) -> bool:
    """A read-only command that still writes git's own store (``git fetch``: objects, remote-tracking refs,
    FETCH_HEAD): its read plan gets the git dir writable and guarded (gitdir.py), and nothing else."""
    return any(name == "git" and sub in ("fetch", "lfs") for name, sub in getattr(sh, "programs", ()))


def cwd_only(sh: Any) -> bool:
    """A bare ``cd``/``pushd``/``popd`` with literal words: it changes only the host shell's working directory, which
    must persist to the next call (inside the launcher it would be lost with the child shell)."""
    argv = getattr(sh, "argv", None) if sh is not None else None
    if not argv:
        return False
    return argv[0] in _CWD_BUILTINS and sh.kind == "read_only" and not sh.risks


def exempt(sh: Any, command: str = "") -> str | None:
    """Why a shell command runs unwrapped on a host that wraps commands (``"cwd"``: a bare ``cd``), or None: wrapped.

    ``command`` (the text the host's shell will run) must also be one line of printable characters: the exemption
    rests on the parser and bash reading it alike, and a control character is where they part (``cd
    src\\<CR><LF>CMD`` ran CMD bare; redteam2 R2-cr-*; the analyzer now parses as bash does too)."""
    if cwd_only(sh) and not any(ch < " " or ch == "\x7f" for ch in command):
        return "cwd"
    return None


def unwrappable(command: Any) -> str | None:
    """Why ``command`` cannot be handed to the launcher (it is then refused, never run bare), or None."""
    if not isinstance(command, str):
        return "the command is not text"
    if "\0" in command:
        return "the command contains a NUL byte (no shell argument can carry it)"
    size = len(command.encode("utf-8", "surrogateescape"))
    if size > MAX_COMMAND_BYTES:
        return f"the command is {size} bytes long; at most {MAX_COMMAND_BYTES} can be wrapped"
    return None


def writes_workspace(call: Any) -> bool:
    """Whether a shell call names a write target in the workspace. One that names none (``ls``, ``echo x > /tmp/y``,
    ``pytest``, ``echo x > "$TMPDIR/y"``) may run without an intent, in the read plan: the kernel then refuses
    every workspace write, so a target it could not resolve cannot land there either."""
    sh = call.shell
    if sh is None:
        return True
    # a target the analyzer could not resolve is kept literally (``$TMPDIR/x``): the kernel decides where it lands
    return any(not (sh.unresolved and any(ch in r for ch in "$`*?[")) for r in call.resolved)


__all__ = ["MAX_COMMAND_BYTES", "opaque", "writes_git", "cwd_only", "exempt", "unwrappable", "writes_workspace"]
