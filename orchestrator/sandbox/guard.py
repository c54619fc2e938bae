"""What the sandbox's scope plan must never grant besides the governance paths: ``core.hooksPath`` directories
inside the workspace (husky's ``.husky/``, a ``.githooks/``), and orchestrator's own Python when it is installed
inside the workspace (a project ``.venv``).

Selfguard refuses a named write there (:mod:`orchestrator.vcs.hooks`), but with a scope that covers the directory
(``**``) Landlock granted it, and a script could plant a hook that the person's own, unsandboxed ``git commit`` runs
later (red-team corpus, ``RT-hookspath-*``). Likewise a ``.pth`` file, a module or the interpreter itself planted in
the environment the hook runs from would run, unsandboxed, at the next hook call (redteam2, ``R2-own-python``).
And another worktree of the repository that lies inside this one (``git worktree add src/wt``): its
``.orchestration/`` holds its launcher, spec files and state, which its next wrapped command runs unsandboxed
(:func:`nested_governance`). :func:`protected_in` extends :func:`orchestrator.core.governance.protected_by` with those
directories for one workspace.
"""

from __future__ import annotations

from typing import Any

from orchestrator.core.own_python import own_python


def nested_governance(root: str) -> tuple[str, ...]:
    """``<wt>/.orchestration`` of every other worktree of ``root``'s repository that lies inside ``root``, relative to
    it (whether or not it exists yet: a created one would be trusted by that worktree's hooks too). Read from git's
    registry without git (:func:`orchestrator.vcs.worktrees.worktrees`)."""
    import os

    from orchestrator.vcs.worktrees import worktrees

    real = os.path.realpath(root)
    return tuple(sorted(os.path.relpath(os.path.join(wt.path, ".orchestration"), real).replace(os.sep, "/")
                        for wt in worktrees(real) if wt.path.startswith(real + os.sep)))


def protected_in(root: str) -> Any:
    """``protected_by`` for ``root``: a callable ``rel -> pattern | None`` with ``.holds(rel)``, true when a
    protected hooks directory lies beneath ``rel`` (so ``rel`` may only be granted child by child).

    A ``core.hooksPath`` that is the workspace root itself is left to selfguard (the root is never granted whole)."""
    from orchestrator.vcs.hooks import hook_dirs
    from orchestrator.core.governance import protected_by

    try:
        hooks = tuple(h for h in hook_dirs(root) if h not in (".", ""))
    except Exception:  # noqa: BLE001 - an unreadable git config: the governance paths alone, as before
        hooks = ()
    python = own_python(root)
    # (a nested worktree's .orchestration is a governance path already: only its parents must be split)
    kept = hooks + python + nested_governance(root)

    def check(rel: str) -> str | None:
        hit = protected_by(rel)
        if hit is None and any(rel == h or rel.startswith(h + "/") for h in hooks):
            return "core.hooksPath"
        if hit is None and any(rel == h or rel.startswith(h + "/") for h in python):
            return "orchestrator's own Python"
        return hit

    check.holds = lambda rel: any(h.startswith(rel + "/") for h in kept)  # type: ignore[attr-defined]
    return check


__all__ = ["nested_governance", "own_python", "protected_in"]
