"""Where the runtime state shared by every git worktree of one repository lives, read with the stdlib only.

Agents run in parallel in linked worktrees (``git worktree add``); a person reviews them all from one place. So the
approval broker's files (requests, decisions, grants, audit) and the write leases of every worktree of one repository
live in one place: the **main worktree's** ``.orchestration/run/`` (``<common dir>/..``, when the repository has a
governed main worktree), else a directory of this user's state (``$XDG_STATE_HOME/orchestrator/shared/<hash of the
common dir>``, for a bare repository or a ``--separate-git-dir`` layout). Each worktree keeps its own ledger
(``.orchestration/agent_trace.jsonl``, merged by the union driver), its own intents checkout, and its own
``.orchestration/run/`` for what is local to one checkout (session files, pre-images, config cache, the daemon's
socket).

The common directory is found the way git finds it, without running git (a hook process must not pay for a
``git`` subprocess or GitPython; GUIDE §4): ``<root>/.git`` is either the git directory itself (the main worktree)
or a file ``gitdir: <path>`` (a linked worktree, or a submodule), and a linked worktree's git directory holds a
``commondir`` file naming the common directory, relative to itself.

Only a workspace whose root *is* a worktree's top (``.git`` right there) shares: a governed sub-directory of a
repository, and any non-git workspace, keep everything in ``.orchestration/run/``.

Why there, and not under the common git dir (where it was until issue 21's last round): a command that runs git runs
in the kernel sandbox with the git dir *writable* for its whole run (``orchestrator/sandbox/gitdir.py``), so a script
started next to a ``git commit`` could answer another session's pending approval or delete its lease
(``tests/sandbox/test_broker_state.py``). The main worktree's ``.orchestration/`` is a governance path that no
sandbox plan ever grants and no tool may write (selfguard), from the main worktree as from a linked one (for which
it lies outside the workspace); a user state directory is granted by no plan either. A worktree's own
``.orchestration/run/approvals`` (from before worktree-wide approvals) is moved over once. State in the old git-dir
place (``<common dir>/orchestration/approvals``) is *not* carried over: a git-mode command can write there while it
runs, so a grant or decision found there may be forged (the guardian removes a planted ``grants.json`` only after
the command, and a move made meanwhile would launder it into the trusted place). Pending requests and remembered
grants from before the upgrade are asked again.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core.fsutil import SMALL_FILE, read_regular

#: the directory under the common git dir that held the shared runtime state before issue 21 (never read since:
#: a git-mode command can write there)
SHARED_NAME = "orchestration"


@dataclass(frozen=True)
class Worktree:
    """One checkout of a repository: where it is, which branch it has checked out, and whether it is the main one."""

    path: str
    branch: str | None  #: short branch name; None when detached or unreadable
    head: str | None  #: the commit id when detached
    main: bool
    gitdir: str

    @property
    def name(self) -> str:
        return os.path.basename(self.path.rstrip("/")) or self.path

    def label(self) -> str:
        """``name (branch)`` for lists: which worktree asked."""
        what = self.branch or (f"detached {self.head[:8]}" if self.head else "?")
        return f"{self.name} ({what})"


def _read(path: str) -> str | None:
    # a git-mode command may swap a FIFO in for HEAD or gitdir while it runs: never a plain, blocking open
    data = read_regular(path, SMALL_FILE)
    return None if data is None else data.decode("utf-8", "replace").strip()


def git_dirs(root: str | os.PathLike[str]) -> tuple[str, str] | None:
    """``(git dir, common dir)`` of the worktree whose top is ``root``, or None if ``root`` is no worktree top."""
    root = os.fspath(root)
    dotgit = os.path.join(root, ".git")
    if os.path.isdir(dotgit):
        gitdir = dotgit
    else:
        text = _read(dotgit)
        if text is None or not text.startswith("gitdir:"):
            return None
        gitdir = os.path.normpath(os.path.join(root, text[len("gitdir:"):].strip()))
        if not os.path.isdir(gitdir):
            return None
    common = _read(os.path.join(gitdir, "commondir"))
    commondir = os.path.normpath(os.path.join(gitdir, common)) if common else gitdir
    if not os.path.isdir(commondir):
        return None
    return os.path.realpath(gitdir), os.path.realpath(commondir)


def _head(gitdir: str) -> tuple[str | None, str | None]:
    text = _read(os.path.join(gitdir, "HEAD")) or ""
    if text.startswith("ref:"):
        ref = text[4:].strip()
        return (ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref), None
    return None, (text or None)


def worktree_of(root: str | os.PathLike[str]) -> Worktree | None:
    """The worktree whose top is ``root`` (None for a non-git workspace or a governed sub-directory)."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    gitdir, common = dirs
    branch, head = _head(gitdir)
    return Worktree(os.path.realpath(os.fspath(root)), branch, head, gitdir == common, gitdir)


def worktrees(root: str | os.PathLike[str]) -> list[Worktree]:
    """Every worktree of the repository ``root`` belongs to (main first), from git's own registry
    (``<common>/worktrees/*/gitdir``); ``[]`` for a non-git workspace. Worktrees whose directory is gone are
    skipped (``git worktree prune`` forgets them)."""
    dirs = git_dirs(root)
    if dirs is None:
        return []
    _gitdir, common = dirs
    out: list[Worktree] = []
    if os.path.basename(common) == ".git":
        main = os.path.dirname(common)
        if os.path.isdir(main):
            branch, head = _head(common)
            out.append(Worktree(main, branch, head, True, common))
    registry = os.path.join(common, "worktrees")
    try:
        names = sorted(os.listdir(registry))
    except OSError:
        names = []
    for name in names:
        wt_gitdir = os.path.join(registry, name)
        pointer = _read(os.path.join(wt_gitdir, "gitdir"))
        if not pointer:
            continue
        path = os.path.dirname(os.path.normpath(os.path.join(wt_gitdir, pointer)))
        if not os.path.isdir(path):
            continue
        branch, head = _head(wt_gitdir)
        out.append(Worktree(os.path.realpath(path), branch, head, False, os.path.realpath(wt_gitdir)))
    return out


def shared_run_dir(root: str | os.PathLike[str]) -> Path:
    """The runtime directory shared by every worktree of ``root``'s repository (the main worktree's
    ``.orchestration/run``, else :func:`state_dir`), or ``<root>/.orchestration/run`` where there is nothing to share
    (not a git worktree top).

    The first call for a worktree whose broker state is still in its own ``.orchestration/run/approvals`` (from
    before worktree-wide approvals: governance, so trusted) moves that directory over, so pending requests and
    grants survive; the older git-dir place is never read (see the module doc). Costs a few ``stat`` calls, no git
    process.
    """
    local = Path(root) / ".orchestration" / "run"
    dirs = git_dirs(root)
    if dirs is None:
        return local
    common = dirs[1]
    main = os.path.dirname(common) if os.path.basename(common) == ".git" else None
    if main is not None and os.path.isdir(os.path.join(main, ".orchestration")):
        shared = Path(main) / ".orchestration" / "run"
    else:
        shared = state_dir(common)
    if shared != local:
        _migrate(local / "approvals", shared / "approvals", os.path.realpath(os.fspath(root)))
    return shared


def state_dir(common: str) -> Path:
    """The shared state of a repository without a governed main worktree: under this user's state directory
    (``$XDG_STATE_HOME``, else ``~/.local/state``), named by the hash of its common git dir."""
    import hashlib

    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".local" / "state"
    return base / "orchestrator" / "shared" / hashlib.sha256(common.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _migrate(legacy: Path, target: Path, worktree: str) -> None:
    """Move a pre-worktree broker directory to the shared place, once (the rename is atomic; a second process
    racing us loses it harmlessly). Grants made there are bound to the worktree they were made in."""
    if target.exists() or legacy.is_symlink() or not legacy.is_dir():
        return  # (a link would be moved as a link: the trusted place would point wherever it points)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(legacy, target)
    except OSError:
        return  # another process moved it first, or another filesystem: the old state is simply not carried over
    grants = target / "grants.json"
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(grants.read_bytes())
        if isinstance(data, dict) and isinstance(data.get("grants"), list):
            for grant in data["grants"]:
                if isinstance(grant, dict) and not grant.get("worktree"):
                    grant["worktree"] = worktree
            from orchestrator.core.fsutil import atomic_write_json

            atomic_write_json(grants, data)


def governed(root: str | os.PathLike[str]) -> list[tuple[str, Worktree | None]]:
    """``(workspace root, worktree)`` of every governed checkout of ``root``'s repository (those holding
    ``.orchestration/``), ``root`` first; just ``[(root, None)]`` for a workspace that shares nothing."""
    here = os.path.realpath(os.fspath(root))
    trees = worktrees(here)
    if not trees:
        return [(here, None)]
    out: list[tuple[str, Worktree | None]] = [(wt.path, wt) for wt in trees if wt.path == here]
    if not out:
        out = [(here, worktree_of(here))]
    out += [(wt.path, wt) for wt in trees if wt.path != here and os.path.isdir(os.path.join(wt.path, ".orchestration"))]
    return out


def sessions(root: str | os.PathLike[str]) -> list[tuple[str, Worktree | None, str, dict]]:
    """``(workspace root, worktree, session id, state)`` of the sessions of every governed worktree, most recently
    seen first. Session files stay in each worktree's ``.orchestration/run/sessions/`` (the hot path watches them
    there); this is the one list a reviewer reads."""
    from orchestrator.state.sessions import SessionStore

    out = []
    for path, wt in governed(root):
        for sid, state in SessionStore(Path(path) / ".orchestration" / "run").list():
            out.append((path, wt, sid, state))
    out.sort(key=lambda item: item[3].get("last_seen") or 0, reverse=True)
    return out


__all__ = ["SHARED_NAME", "Worktree", "git_dirs", "governed", "sessions", "shared_run_dir", "state_dir", "worktree_of",
           "worktrees"]
