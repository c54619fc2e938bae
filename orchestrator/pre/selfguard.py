"""Self-guard: governance files are never writable by an agent, whatever its intent.

Hard-coded (unlike ``.intentignore``, which a person edits) so that no configuration mistake can
let an agent rewrite its own rules, hooks or ledger. AGENTS.md is written only by ``record_lesson``. A file with
several hard links is refused too: a write through one name changes the content under all of them, and the
governance check (like scope and ``.intentignore``) can only see the name it was given.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING, Any

from orchestrator.vcs import hooks as githooks
from orchestrator.core.governance import GOVERNANCE, protected_by
from orchestrator.core.models import Kind, Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "selfguard"

__all__ = ["GOVERNANCE", "NAME", "check", "hooks_pattern", "own_python_pattern", "protected_by"]

def hooks_pattern(path: str, dirs: tuple[str, ...]) -> str | None:
    """The ``core.hooksPath`` directory (of ``dirs``, see :mod:`orchestrator.vcs.hooks`) that ``path`` falls
    under, is, or contains (replacing a parent swaps the hooks), shown as a pattern, or None. A hooks path at the
    workspace root covers only the hook names there."""
    for d in dirs:
        if d == ".":
            if path in githooks.HOOK_NAMES:
                return "core.hooksPath (the workspace root): " + path
        elif path == d or path.startswith(d + "/") or d.startswith(path + "/") or path == ".":
            return f"core.hooksPath: {d}/**"
    return None


def _may_touch_hooks(call: Any) -> bool:
    """Whether to look up ``core.hooksPath`` for this call (a handful of ``stat`` calls): always for a shell
    command (it may make or replace whole directories); for a file tool only when it names a hook file. A file
    tool writing a non-hook file inside a hooks directory (husky's ``_/h``) is left to ``.intentignore``:
    ``orch doctor`` says when the hooks directory is missing there (it costs nothing per call)."""
    if call.shell is not None or call.kind not in (Kind.WRITE, Kind.EDIT, Kind.DELETE):
        return True
    return any(p.rpartition("/")[2] in githooks.HOOK_NAMES for p in call.resolved)


#: per workspace root: orchestrator's own Python environment inside it (computed once per process)
_OWN: dict[str, tuple[str, ...]] = {}


def own_python_pattern(root: str, path: str) -> str | None:
    """The pattern naming orchestrator's own Python environment (a project ``.venv`` it is installed in) when
    ``path`` falls under it, is it, or contains it, or None.

    A ``.pth`` file or a module written into that environment runs inside every later hook call, outside any
    sandbox (redteam2): with a scope of ``**`` the Write tool could drop one. The orchestrator *package* of an
    editable install is left out on purpose: it is the project's own source when orchestrator governs its own
    development (the sandbox never grants it; a file tool may edit it like any source in scope)."""
    dirs = _OWN.get(root)
    if dirs is None:
        from orchestrator.core.own_python import own_python

        dirs = _OWN[root] = own_python(root, package=False)
    for d in dirs:
        if path == d or path.startswith(d + "/") or d.startswith(path + "/") or path == ".":
            return f"orchestrator's own Python: {d}/**"
    return None


def check(ctx: Context) -> Verdict | None:
    call = ctx.call
    hook_dirs = githooks.hook_dirs(ctx.root) if call.resolved and _may_touch_hooks(call) else ()
    for path in call.resolved:
        pattern = (protected_by(path) or (hooks_pattern(path, hook_dirs) if hook_dirs else None)
                   or own_python_pattern(ctx.root, path))
        if pattern is not None:
            return Verdict.deny(
                "governance-file", NAME,
                f"{path} is a governance file; agents may not change it",
                path=path, pattern=pattern,
                hint="intents, policy, hooks and the ledger are changed by people only; "
                     "use record_lesson to add to AGENTS.md",
            )
    # removing one name of a hard-linked file changes nothing else: delete tools and commands that only delete
    if call.kind is not Kind.DELETE and not (call.shell is not None and not call.shell.writes):
        for path in call.resolved:
            if path in call.replaced:
                continue  # `mv new x` / `ln -sf new x` unlink x's old name; they write nothing through it
            st = ctx.target_stat(path)
            # `ln .orchestration/active_intents.yaml src/x.yaml`, then a write to src/x.yaml: every check above
            # is about paths, and this path is in scope; the content it changes is not only this path's
            if st is not None and st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
                return Verdict.deny(
                    "hard-linked-file", NAME,
                    f"{path} has {st.st_nlink} hard links: writing it would also change the file under its other "
                    "names, which no check here can see (one may be a governance file or outside your scope)",
                    path=path, links=st.st_nlink,
                    hint="write a fresh file instead (copy the content, remove this name, write the copy), "
                         "or ask a person",
                )
    return None
