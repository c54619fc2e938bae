"""Which shell commands a wrapping host runs outside the kernel sandbox (two exemptions), and which it refuses.

Issue 21: on a host that can replace a command, every shell command is wrapped. The exceptions are decided here, in
one place, so that they can be read (and replaced) as a whole:

- :func:`git_exempt` — git porcelain that must write ``.git`` (the sandbox keeps ``.git`` read-only). Issue 21 item 2
  (helper ``sbx-git-net``) replaces it with git run inside the sandbox.
- :func:`cwd_only` — a bare ``cd``: the host's shell must keep its working directory for the next call.

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


#: git porcelain that must write ``.git`` and runs unwrapped (:func:`git_exempt`); everything else git does is wrapped
GIT_EXEMPT = frozenset({"add", "commit", "stash", "branch", "tag", "fetch", "push", "pull", "checkout", "switch",
                        "restore", "merge", "rebase", "cherry-pick", "revert", "reset", "rm", "mv", "notes"})
#: programs that may accompany exempt git porcelain in one command (they write only the targets they name)
_GIT_COMPANIONS = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "mkdir", "touch"})
#: words that take a git command out of the exemption (they write files, run programs or re-point git)
_GIT_UNSAFE = ("--output", "--upload-pack", "--receive-pack", "--exec", "--template", "--git-dir", "--work-tree",
               "--orphan", "--config", "GIT_", " -c", "stash pop", "stash apply", "stash branch", "stash drop",
               "stash clear", "stash store")


def git_exempt(sh: Any, command: str = "") -> bool:
    """THE exemption from the kernel for git (issue 21 item 2 replaces it: helper ``sbx-git-net``).

    The sandbox keeps ``.git`` read-only, so git porcelain that must write it cannot run inside. A command made of
    the subcommands in :data:`GIT_EXEMPT` (and a few companions such as ``cd``, ``echo >> file``, ``mkdir``) that
    the analyzer fully understands runs unwrapped, exactly as before issue 21: its named targets are scope-checked,
    destructive ones still ask. Anything else is wrapped: opaque commands (``git -c``, code), read-only git
    (``git log``, ``git rev-list --output=…``), plumbing (``checkout-index``, ``read-tree``), a word of
    :data:`_GIT_UNSAFE` anywhere in the text (quotes removed), ``stash pop``.
    """
    if sh is None or sh.kind not in ("mutating", "destructive") or opaque(sh):
        return False
    text = "".join(ch for ch in command if ch not in "'\"\\")
    if any(word in text for word in _GIT_UNSAFE):
        return False
    has_git = False
    for program, sub in sh.programs:
        if program == "git":
            if sub not in GIT_EXEMPT:
                return False
            has_git = True
        elif program not in _GIT_COMPANIONS:
            return False
    return has_git


def cwd_only(sh: Any) -> bool:
    """A bare ``cd``/``pushd``/``popd`` with literal words: it changes only the host shell's working directory, which
    must persist to the next call (inside the launcher it would be lost with the child shell)."""
    argv = getattr(sh, "argv", None) if sh is not None else None
    if not argv:
        return False
    return argv[0] in _CWD_BUILTINS and sh.kind == "read_only" and not sh.risks


def exempt(sh: Any, command: str = "") -> str | None:
    """Why a shell command runs unwrapped on a host that wraps commands (``"git"``, ``"cwd"``), or None: wrapped."""
    if git_exempt(sh, command):
        return "git"
    if cwd_only(sh):
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


__all__ = ["GIT_EXEMPT", "MAX_COMMAND_BYTES", "opaque", "git_exempt", "cwd_only", "exempt", "unwrappable",
           "writes_workspace"]
