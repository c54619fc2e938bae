"""What the sandbox's scope plan must never grant besides the governance paths: ``core.hooksPath`` directories
inside the workspace (husky's ``.husky/``, a ``.githooks/``), and orchestrator's own Python when it is installed
inside the workspace (a project ``.venv``).

Selfguard refuses a named write there (:mod:`orchestrator.githooks`), but with a scope that covers the directory
(``**``) Landlock granted it, and a script could plant a hook that the person's own, unsandboxed ``git commit`` runs
later (red-team corpus, ``RT-hookspath-*``). Likewise a ``.pth`` file, a module or the interpreter itself planted in
the environment the hook runs from would run, unsandboxed, at the next hook call (redteam2, ``R2-own-python``).
:func:`protected_in` extends :func:`orchestrator.governance.protected_by` with those directories for one workspace.
"""

from __future__ import annotations

from typing import Any

from orchestrator.own_python import own_python


def protected_in(root: str) -> Any:
    """``protected_by`` for ``root``: a callable ``rel -> pattern | None`` with ``.holds(rel)``, true when a
    protected hooks directory lies beneath ``rel`` (so ``rel`` may only be granted child by child).

    A ``core.hooksPath`` that is the workspace root itself is left to selfguard (the root is never granted whole)."""
    from orchestrator.githooks import hook_dirs
    from orchestrator.governance import protected_by

    try:
        hooks = tuple(h for h in hook_dirs(root) if h not in (".", ""))
    except Exception:  # noqa: BLE001 - an unreadable git config: the governance paths alone, as before
        hooks = ()
    python = own_python(root)
    kept = hooks + python

    def check(rel: str) -> str | None:
        hit = protected_by(rel)
        if hit is None and any(rel == h or rel.startswith(h + "/") for h in hooks):
            return "core.hooksPath"
        if hit is None and any(rel == h or rel.startswith(h + "/") for h in python):
            return "orchestrator's own Python"
        return hit

    check.holds = lambda rel: any(h.startswith(rel + "/") for h in kept)  # type: ignore[attr-defined]
    return check


__all__ = ["own_python", "protected_in"]
