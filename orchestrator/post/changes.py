"""What a shell command actually changed: a stat snapshot before it runs, a compare after.

The shell analyzer names the files a command *says* it writes; a test run, a build, a script or a git hook writes
files nobody named. So for every governed shell command that the pipeline lets run (or puts to a person), ``pre``
takes a :func:`snapshot` of the directories the command could write, and ``post`` (:func:`changed`) finds every
file created, modified or deleted since. :mod:`orchestrator.post.trace` turns those into ledger records with exact
line ranges and reports the ones outside the intent's scope.

**Which directories** (:func:`scan_roots`): the command's own targets plus the intent's ``owned_scope`` reduced to
literal directory prefixes (:func:`orchestrator.core.globs.static_roots`), plus the policy's ``sandbox.writable`` when
the command runs in the sandbox (``call.sandboxed``: the kernel then refuses everything else). A command the
analyzer cannot bound — ``unknown`` or unresolved targets, a git command that rewrites the tree
(``checkout``, ``stash pop``…), no sandbox — may write anywhere: the whole workspace is scanned. Always skipped:
``.git/`` (git's own bookkeeping, except ``.git/config`` and ``.git/hooks/``, which are scanned in a whole-tree
scan: writing them is governance tampering), ``.orchestration/run/`` and the ledger (orchestrator's own writes),
and dependency trees and caches (:data:`SKIP_DIRS`: ``.venv``, ``node_modules``, ``__pycache__``...).

**How a change is seen**: by ``(mtime_ns, ctime_ns, size, inode)`` of every regular file and symlink under the
roots. The whole tree of a git repository is not walked: the git index already is a stat snapshot of every clean
tracked file, so the snapshot holds only what ``git status`` reports as modified, deleted or untracked (plus
``.git/config`` and hooks), and the compare runs ``git status`` again (``mode: git``; about 3x cheaper than
walking 100,000 files; ignored files are then not seen). ``ctime`` cannot be set back by a program (``utime`` sets it to now), so a rewrite that restores the mtime
is still seen. One hole remains: a file rewritten within the same filesystem clock tick as its previous change,
to the same size. Files changed within :data:`RACY_NS` of the snapshot are therefore also hashed, like git's
"racily clean" entries, and compared by content.

**Before-content for exact ranges**: the pre-image :func:`orchestrator.post.preimage.capture` took of the analyzer's
named targets;
else, for a tracked file whose snapshot signature matches the git index entry (clean before the command), the
index blob (:func:`git_before`, one ``git ls-files --debug`` and one ``git cat-file --batch`` for all such files);
else none: the record attributes the whole file and says why.

Not seen: a change made by another process while the command ran is attributed to the command (both ran in the
same window; only the sandbox can tell them apart); a scan stops after :data:`MAX_FILES` files and says so.
Costs: docs/performance.md ("What a shell command changed").
"""

from __future__ import annotations

import os
import stat
import time
from typing import Any

from orchestrator.core import fsutil

__all__ = ["MAX_FILES", "RACY_NS", "SKIP_DIRS", "scan_roots", "snapshot", "changed", "git_before"]

#: a scan stops after this many entries (the snapshot says it is truncated; changes beyond it go unseen)
MAX_FILES = 300_000
#: files changed this close to the snapshot are hashed too (a coarse filesystem clock may not move in between)
RACY_NS = 100_000_000
#: bigger files are not hashed for the racy check (their signature is compared only)
_RACY_MAX_BYTES = 4 * 1024 * 1024
#: directory names never descended into: git's own objects/refs/index, and dependency trees and caches that tools
#: rewrite as a matter of course (environment state, not work products; the sandbox lists them as writable).
#: A command that names a path inside one still has it scanned (it is a root).
SKIP_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
                       ".ruff_cache", ".tox", ".nox"})


def _ledger_rel(gov: Any) -> str:
    try:
        return os.path.relpath(str(gov.workspace.ledger_file), str(gov.workspace.root)).replace(os.sep, "/")
    except (AttributeError, ValueError):
        return ".orchestration/agent_trace.jsonl"


def scan_roots(gov: Any, call: Any, intent: Any, policy: Any) -> list[str]:
    """Workspace-relative directories (or files) to scan for ``call``; ``[""]`` is the whole workspace."""
    from orchestrator.core.globs import static_roots

    sh = getattr(call, "shell", None)
    sandboxed = bool(getattr(call, "sandboxed", False))
    # duck-typed: an analysis without these fields (a host's own) counts as bounded by its named targets
    unbounded = sh is None or getattr(sh, "kind", "mutating") == "unknown" or bool(getattr(sh, "unresolved", False)) \
        or any(e.write_index < 0 for e in getattr(sh, "entries", ()) or ()) \
        or "runs-code" in (getattr(sh, "risks", ()) or ())
    if sandboxed and intent is None:
        # the sandbox's read plan (no intent, or a read-only command): the kernel grants no workspace write at all,
        # so only what the command names could change — and it names nothing there (the gatekeeper's condition)
        return _minimal(list(getattr(call, "resolved", None) or ()))
    if unbounded and not sandboxed:
        return [""]
    roots: list[str] = []
    for r in getattr(call, "resolved", None) or ():
        roots.append(r)
    scope = list(getattr(intent, "owned_scope", ()) or ()) if intent is not None else []
    if unbounded or sandboxed:
        # the command may write anywhere the kernel (or, without a sandbox, nothing) lets it: the scope, and
        # the places policy makes writable for every sandboxed command
        roots.extend(static_roots(scope) if scope else [""])
        sandbox = getattr(policy, "sandbox", None)
        writable = getattr(sandbox, "writable", None) if sandbox is not None else None
        for w in writable or ():
            if isinstance(w, str) and not os.path.isabs(w) and not w.startswith(("~", "..")):
                roots.extend(static_roots([w]))
    return _minimal(roots)


def _minimal(roots: list[str]) -> list[str]:
    clean = sorted({"" if r in (".", "") else r.strip("/") for r in roots})
    if "" in clean:
        return [""]
    kept: list[str] = []
    for r in clean:
        if not any(r == k or r.startswith(k + "/") for k in kept):
            kept.append(r)
    return kept


def _fs_now(gov: Any) -> int:
    """The filesystem's own clock (a file's ctime), which may lag ``time.time_ns()`` by a tick."""
    try:
        run = str(gov.workspace.run_dir)
        os.makedirs(run, exist_ok=True)
        marker = os.path.join(run, ".scan-clock")
        with open(marker, "ab"):
            pass
        os.utime(marker)
        return os.stat(marker).st_ctime_ns
    except OSError:
        return time.time_ns()


def _sig(st: os.stat_result) -> str:
    # one string, not a list: a 100k-entry snapshot dumps and loads as JSON several times faster
    return f"{st.st_mtime_ns} {st.st_ctime_ns} {st.st_size} {st.st_ino}"


def _walk(root: str, rels: list[str], skip: frozenset[str], whole: bool) -> tuple[dict[str, str], bool]:
    """(rel path -> "mtime_ns ctime_ns size ino") of the files and links under ``rels``; truncated?"""
    out: dict[str, str] = {}
    stack: list[tuple[str, str]] = []
    for rel in rels:
        full = os.path.join(root, rel) if rel else root
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            stack.append((full, rel))
        else:
            out[rel] = _sig(st)
    if whole:
        # governance files inside .git: a whole-tree scan reports a command that wrote them
        gd = os.path.join(root, ".git")
        for name in ("config", "config.worktree"):
            try:
                st = os.lstat(os.path.join(gd, name))
                out[".git/" + name] = _sig(st)
            except OSError:
                pass
        if os.path.isdir(os.path.join(gd, "hooks")):
            stack.append((os.path.join(gd, "hooks"), ".git/hooks"))
    truncated = False
    while stack:
        full, rel = stack.pop()
        try:
            it = os.scandir(full)
        except OSError:
            continue
        with it:
            for e in it:
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        if r in skip or e.name in SKIP_DIRS:
                            continue
                        stack.append((e.path, r))
                        continue
                    if r in skip:
                        continue
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                out[r] = _sig(st)
                if len(out) >= MAX_FILES:
                    return out, True
    return out, truncated


def _skips(gov: Any) -> frozenset[str]:
    return frozenset({".orchestration/run", _ledger_rel(gov)})


def _hash(path: str) -> str | None:
    digest = fsutil.file_hash(path)  # never blocks on a FIFO swapped in, never reads a file whole
    return digest[7:] if digest else None


def _git_dirty(root: str, skip: frozenset[str]) -> set[str] | None:
    """Paths ``git status`` reports as not clean (modified, deleted, untracked; not ignored), or None (no git)."""
    import subprocess

    from orchestrator.vcs.cli import NO_FSMONITOR

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a status must not rewrite the index (that would be a change of its own)
    try:
        done = subprocess.run(["git", *NO_FSMONITOR, "-C", root, "status", "--porcelain", "-z", "-uall", "--no-renames",
                               "--ignore-submodules=all"], capture_output=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    out: set[str] = set()
    for entry in done.stdout.split(b"\0"):
        if len(entry) < 4:
            continue
        p = entry[3:].decode("utf-8", "surrogateescape")
        if p in skip or any(p.startswith(s + "/") for s in skip) or any(
                part in SKIP_DIRS for part in p.split("/")[:-1]):
            continue
        out.add(p)
    return out


def _lsig(root: str, rel: str) -> str | None:
    try:
        return _sig(os.lstat(os.path.join(root, rel)))
    except OSError:
        return None


def snapshot(gov: Any, roots: list[str], *, git_extras: bool = True) -> dict[str, Any]:
    """The stat snapshot of ``roots`` (JSON-able; stored with the call's pre-images).

    The whole tree of a git repository is snapshotted with git's help (``mode: git``): the index already is a
    stat snapshot of every clean tracked file, so only the files ``git status`` reports as dirty or untracked
    (plus ``.git/config`` and hooks, unless ``git_extras`` is false: a sandboxed command cannot leave them changed)
    are recorded; ignored files are then not seen (docs/performance.md).
    """
    root = str(gov.workspace.root)
    now = _fs_now(gov)
    skips = _skips(gov)
    dirty = _git_dirty(root, skips) if roots == [""] and os.path.isdir(os.path.join(root, ".git")) else None
    if dirty is not None:
        files, truncated = _walk(root, [], skips, git_extras)
        for p in dirty:
            files[p] = _lsig(root, p) or "-"  # "-": a tracked file already deleted before the command
    else:
        files, truncated = _walk(root, roots, skips, roots == [""] and git_extras)
    racy: dict[str, str] = {}
    for rel, sig in files.items():
        if sig == "-":
            continue
        _m, ctime, size, _i = sig.split()
        if int(ctime) >= now - RACY_NS and int(size) <= _RACY_MAX_BYTES:
            full = os.path.join(root, rel)
            if os.path.isfile(full) and not os.path.islink(full):
                h = _hash(full)
                if h:
                    racy[rel] = h
    snap: dict[str, Any] = {"roots": roots, "files": files, "racy": racy}
    if dirty is not None:
        snap["mode"] = "git"
    if not git_extras:
        snap["git_extras"] = False
    if truncated:
        snap["truncated"] = True
    return snap


def changed(gov: Any, snap: dict[str, Any]) -> tuple[list[str], list[str], bool]:
    """``(created or modified, deleted, truncated)`` under the snapshot's roots since it was taken."""
    root = str(gov.workspace.root)
    roots = list(snap.get("roots") or [])
    before: dict[str, str] = snap.get("files") or {}
    racy: dict[str, str] = snap.get("racy") or {}
    extras = snap.get("git_extras", True)
    if snap.get("mode") == "git":
        return _changed_git(gov, root, before, racy, extras)
    after, truncated = _walk(root, roots, _skips(gov), roots == [""] and extras)
    modified = []
    for rel, sig in after.items():
        old = before.get(rel)
        if old != sig:
            modified.append(rel)
        elif rel in racy and _hash(os.path.join(root, rel)) != racy[rel]:
            modified.append(rel)
    deleted = [rel for rel in before if rel not in after]
    return sorted(modified), sorted(deleted), truncated or bool(snap.get("truncated"))


def _changed_git(gov: Any, root: str, before: dict[str, str], racy: dict[str, str], extras: bool = True
                 ) -> tuple[list[str], list[str], bool]:
    """:func:`changed` for a ``mode: git`` snapshot: what is dirty now or was dirty then, compared."""
    skips = _skips(gov)
    dirty = _git_dirty(root, skips)
    direct, _t = _walk(root, [], skips, extras)
    if dirty is None:  # git failed now: only the directly watched files can be compared
        dirty = set()
        truncated = True
    else:
        truncated = False
    modified: list[str] = []
    deleted: list[str] = []
    for p in set(dirty) | set(before) | set(direct):
        now = _lsig(root, p)
        old = before.get(p)  # None: clean and tracked, or absent, when the snapshot was taken
        if now is None:
            if (old is not None and old != "-") or (old is None and p in dirty):
                deleted.append(p)
            continue
        if old is None or old == "-" or old != now:
            modified.append(p)
        elif p in racy and _hash(os.path.join(root, p)) != racy[p]:
            modified.append(p)
    return sorted(modified), sorted(deleted), truncated


def git_before(root: str, paths: list[str], sigs: dict[str, str], trust: frozenset[str] | set[str] = frozenset()
               ) -> dict[str, str | None]:
    """Before-text of the ``paths`` that git tracks and that were clean when the snapshot was taken — their
    snapshot signature equals the index entry's stat data, or they are in ``trust`` (``git status`` said they were
    clean) — path -> the index blob's text (None: binary). Missing: unknown or not tracked."""
    import re
    import subprocess

    wanted = [p for p in paths if (p in sigs or p in trust) and not p.startswith(".git/")]
    if not wanted or not os.path.exists(os.path.join(root, ".git")):
        return {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        from orchestrator.vcs.cli import NO_FSMONITOR

        out = subprocess.run(["git", *NO_FSMONITOR, "-C", root, "ls-files", "--debug", "-s", "-z", "--", *wanted],
                             capture_output=True, timeout=10, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    pattern = re.compile(rb"(\d+) ([0-9a-f]+) 0\t([^\0]*)\0  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n"
                         rb"  dev: \d+\tino: (\d+)\n  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n")
    blobs: dict[str, str] = {}
    for m in pattern.finditer(out):
        path = m.group(3).decode("utf-8", "surrogateescape")
        if not m.group(1).startswith(b"100"):
            continue
        if path in trust:
            blobs[path] = m.group(2).decode()
            continue
        sig = sigs.get(path)
        if sig is None or sig == "-":
            continue
        s_mtime, s_ctime, s_size, s_ino = (int(x) for x in sig.split())
        ctime = int(m.group(4)) * 1_000_000_000 + int(m.group(5))
        mtime = int(m.group(6)) * 1_000_000_000 + int(m.group(7))
        # the file as the snapshot saw it has the stat data git recorded when it last read it: the index blob is
        # its content (the index keeps 32-bit inode and size)
        if (mtime, ctime, int(m.group(9)), int(m.group(8))) == (s_mtime, s_ctime, s_size & 0xFFFFFFFF,
                                                                s_ino & 0xFFFFFFFF):
            blobs[path] = m.group(2).decode()
    if not blobs:
        return {}
    try:
        cat = subprocess.run(["git", "-C", root, "cat-file", "--batch"], capture_output=True, timeout=10, env=env,
                             input="".join(f"{sha}\n" for sha in blobs.values()).encode()).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    texts: dict[str, bytes] = {}
    pos = 0
    while pos < len(cat):
        nl = cat.find(b"\n", pos)
        if nl < 0:
            break
        head = cat[pos:nl].split()
        if len(head) != 3:
            break
        size = int(head[2])
        texts[head[0].decode()] = cat[nl + 1:nl + 1 + size]
        pos = nl + 1 + size + 1
    from orchestrator.core import diffing

    out_text: dict[str, str | None] = {}
    for path, sha in blobs.items():
        data = texts.get(sha)
        if data is not None:
            out_text[path] = None if diffing.is_binary(data) else diffing.decode(data)
    return out_text
