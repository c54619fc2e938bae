"""Secret files the repository *tracks* (issue 21, remaining gaps: secrets committed to git).

The kernel denies reading a secret *file*, but a committed secret also lives in ``.git/objects``, and ``git grep X
HEAD``, ``git log -p`` or ``git show`` print it from the object store — the kernel cannot tell that object from any
other. So when the repository tracks a file that matches the secret patterns (in the index or in ``HEAD``'s tree),
the commands that print or copy object contents ask a person (:mod:`orchestrator.pre.secrets`; the analyzer tags
them ``object-read``: :mod:`orchestrator.shell.rules.git`).

Cost: only a command tagged ``object-read`` asks for the list, never any other call. The list is memoised under a
key made of the stat keys of the worktree's ``index``, ``HEAD``, the ref ``HEAD`` names and ``packed-refs``, plus the
matcher: in the process (the daemon, the reference loop) and in ``.orchestration/run/tracked-secrets.json`` (one
small file read per call of a new hook process). Only a changed key runs git (``git ls-files`` and ``git ls-tree``;
docs/performance.md has the figures). A key younger than :data:`orchestrator.core.fsutil.RACY_NS` is not trusted (a
same-size rewrite within a coarse clock tick would keep it), as everywhere else.

What is not covered (docs/security.md): a secret that is only in older commits (deleted since: ``git log -p --all``
still prints it — ``orch doctor`` lists those), and scripts that unpack ``.git/objects`` themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from orchestrator.core.fsutil import RACY_NS, SMALL_FILE, atomic_write_json, read_regular, stat_key

MEMO_NAME = "tracked-secrets.json"
#: in-process memo: root -> (key, paths)
_MEMO: dict[str, tuple[list[Any], list[str]]] = {}


def _key(gitdir: str, common: str, matcher: Any) -> list[Any] | None:
    """The memo key, or None when one of its files changed less than RACY_NS ago (recompute, do not store)."""
    import time

    data = read_regular(os.path.join(gitdir, "HEAD"), SMALL_FILE)  # never blocks on a FIFO (fsutil)
    if data is None:
        return ["no-head"]
    head = data.decode("utf-8", "replace").strip()
    files = [os.path.join(gitdir, "index"), os.path.join(gitdir, "HEAD"), os.path.join(common, "packed-refs")]
    if head.startswith("ref:"):
        files.append(os.path.join(common, head[4:].strip()))
    key: list[Any] = [head, repr(matcher)]
    now = time.time_ns()
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            key.append(None)
            continue
        if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
            return None
        key.append(list(stat_key(st)))
    return key


def _git_paths(root: str) -> list[str] | None:
    """Paths in the index and in HEAD's tree (None when git fails: the caller asks rather than guess)."""
    from orchestrator.vcs.cli import NO_FSMONITOR

    out: set[str] = set()
    for argv in (["git", *NO_FSMONITOR, "ls-files", "-z", "--cached"],
                 ["git", *NO_FSMONITOR, "ls-tree", "-r", "-z", "--name-only", "HEAD"]):
        try:
            proc = subprocess.run(argv, cwd=root, capture_output=True, timeout=30,
                                  env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode != 0:
            if "ls-tree" in argv:
                continue  # no commit yet (an unborn HEAD): the index is all there is
            return None
        out.update(p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
    return sorted(out)


def tracked(root: str, matcher: Any) -> list[str] | None:
    """The tracked paths of the repository at ``root`` that ``matcher`` calls secret ([] when none, or when
    ``root`` is no git worktree top); None when git could not be asked (the caller fails closed)."""
    from orchestrator.vcs.worktrees import git_dirs

    dirs = git_dirs(root)
    if dirs is None:
        return []
    key = _key(dirs[0], dirs[1], matcher)
    if key is not None:
        hit = _MEMO.get(root)
        if hit is not None and hit[0] == key:
            return hit[1]
        memo_file = os.path.join(root, ".orchestration", "run", MEMO_NAME)
        try:
            with open(memo_file, encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("key") == key and isinstance(data.get("paths"), list):
                _MEMO[root] = (key, data["paths"])
                return list(data["paths"])
        except (OSError, ValueError, AttributeError):
            pass
    paths = _git_paths(root)
    if paths is None:
        return None
    found = [p for p in paths if matcher.match(p, root) is not None]
    if key is not None:
        _MEMO[root] = (key, found)
        run_dir = os.path.join(root, ".orchestration", "run")
        if os.path.isdir(run_dir):
            try:
                from pathlib import Path

                atomic_write_json(Path(run_dir) / MEMO_NAME, {"key": key, "paths": found})
            except OSError:
                pass  # a read-only run dir: the in-process memo still holds
    return found


__all__ = ["MEMO_NAME", "tracked"]
