"""Pre-images: what a mutating call's targets held before it ran, for the trace's post-hook to diff against.

:func:`capture` runs in the pre-hook (``Governor.pre``, after an allowed mutating call): it snapshots each target
(text, hash, size; a shell command's targets expanded from its analysis, globs and directories) in memory and,
when pre and post may run in different processes, under ``run_dir/preimages/<key>.json``. The post-hook
(:func:`orchestrator.post.trace.record`) finds it again by the call's key (:func:`key_of`), loads it
(:func:`load_capture`) and removes it (:func:`cleanup`); pre-images whose post never came are swept after
:data:`PREIMAGE_TTL_SECONDS`. The duck-typed ``gov`` / ``call`` interface is the one described in
:mod:`orchestrator.post.trace`. Cheap to import: the pre-hook path imports this module, not the classifier.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
from pathlib import Path
from typing import Any

from orchestrator.core import diffing, fsutil

__all__ = ["MAX_DIR_FILES", "MAX_TEXT_BYTES", "PREIMAGE_TTL_SECONDS", "capture", "cleanup", "keep", "key_of",
           "load_capture", "snap_file", "targets"]

#: Files bigger than this are snapshotted by hash only (ranges then cover the whole new file).
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: A directory target (``rm -r dir``, ``cp -r a dir``) is expanded to at most this many files.
MAX_DIR_FILES = 500

_MEM: dict[str, dict] = {}  # key -> snapshot, for in-process pre/post (no disk read on the hot path)
_KEYS: dict[int, str] = {}
# capture keys for calls without a tool_use_id: one random prefix per process (not uuid: that import and
# its `platform` cost a cold hook ~3 ms), then a counter
_KEY_PREFIX = os.urandom(8).hex()
_KEY_COUNTER = itertools.count(1)


def _new_key_prefix() -> None:
    global _KEY_PREFIX
    _KEY_PREFIX = os.urandom(8).hex()  # a forked child must not reuse its parent's keys


os.register_at_fork(after_in_child=_new_key_prefix)  # id(call) -> key, for call objects that refuse new attributes (slots)


# ------------------------------------------------------------------------------------------------- targets

def _rel(root: Path, base: str, p: str) -> str | None:
    """Workspace-relative POSIX path of ``p`` (relative to ``base``), or None if outside or governance state."""
    full = os.path.normpath(os.path.join(base, p))
    r = os.path.relpath(full, root)
    if r == "." or r.startswith("..") or os.path.isabs(r):
        return None
    r = r.replace(os.sep, "/")
    if r == ".orchestration" or r.startswith(".orchestration/"):
        return None  # the ledger and run state are not agent work products
    return r


def targets(gov: Any, call: Any) -> list[str]:
    root = Path(gov.workspace.root)
    out: dict[str, None] = {}
    for p in getattr(call, "resolved", None) or ():
        r = _rel(root, str(root), p)
        if r:
            out[r] = None
    sh = getattr(call, "shell", None)
    if sh is not None:
        base = getattr(call, "cwd", None) or str(root)
        for p in tuple(getattr(sh, "writes", None) or ()) + tuple(getattr(sh, "deletes", None) or ()):
            if any(c in p for c in "$`"):
                continue  # a variable or substitution we cannot resolve: nothing to snapshot
            p = os.path.expanduser(p)
            if any(c in p for c in "*?["):
                # `rm -rf build/*`: expand like the shell would (no dotfiles) — before the command runs in
                # capture(), and again afterwards in record() for files the command created.
                import glob
                for hit in sorted(glob.glob(os.path.join(base, p)))[:MAX_DIR_FILES]:
                    r = _rel(root, base, hit)
                    if r:
                        out[r] = None
                continue
            r = _rel(root, base, p)
            if r:
                out[r] = None
    return _expand_dirs(root, list(out))


def _expand_dirs(root: Path, rels: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for r in rels:
        full = root / r
        if full.is_dir() and not full.is_symlink():
            n = 0
            for dirpath, dirnames, filenames in os.walk(full):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                for fn in filenames:
                    rr = _rel(root, dirpath, fn)
                    if rr:
                        out[rr] = None
                        n += 1
                if n >= MAX_DIR_FILES:
                    break
        else:
            out[r] = None
    return list(out)


# ------------------------------------------------------------------------------------------------ snapshots

_ABSENT: dict[str, Any] = {"exists": False}  # shared: snapshots are only read (and JSON-dumped), never changed


def snap_file(full: Path | str, st: Any = None) -> dict:
    """The pre-image of one file; ``st`` is its ``lstat`` if the caller just took it (False: known absent)."""
    if st is False:
        return {"exists": False}
    if st is None:
        try:
            st = os.lstat(full)  # one syscall answers exists / symlink / regular file
        except OSError:
            return {"exists": False}
    if not stat.S_ISREG(st.st_mode):
        return {"exists": True, "kind": "other"}
    # never a plain open: a FIFO swapped in since the lstat would hang the hook (fsutil.open_regular), and a file
    # larger than the text kept is hashed in chunks, never read whole (a sparse 20 GB file in scope)
    fd = fsutil.open_regular(full)
    if fd is None:
        return {"exists": True, "kind": "other"} if os.path.lexists(full) else {"exists": False}
    try:
        digest, size, data = fsutil.hash_fd(fd, MAX_TEXT_BYTES + 1)
    except OSError:
        return {"exists": False}
    finally:
        os.close(fd)
    snap: dict[str, Any] = {"exists": True, "sha256": digest, "size": size}
    if diffing.is_binary(data):
        snap["binary"] = True
    elif size <= MAX_TEXT_BYTES:
        snap["text"] = diffing.decode(data)
    return snap


def _known_stat(known: dict[str, Any], rel: str) -> Any:
    """``snap_file``'s ``st`` for ``rel``: a stat result, False (known absent) or None (look)."""
    st = known.get(rel)
    if st is None:
        return False if rel in known else None
    return st if isinstance(st, os.stat_result) else None


def key_of(call: Any) -> str | None:
    # an adapter may set ``capture_key`` itself to pair a pre with its post when the agent gives no id for the
    # call (Gemini CLI): it then names the pre-image, while ``tool_use_id`` stays the record's dedupe id
    k = getattr(call, "capture_key", None) or getattr(call, "tool_use_id", None) or _KEYS.get(id(call))
    return str(k) if k else None


def _safe(key: str) -> str:
    ok = all(c.isalnum() or c in "-_." for c in key) and 0 < len(key) <= 100 and not key.startswith(".")
    return key if ok else hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def _preimage_path(gov: Any, key: str) -> Path:
    return Path(gov.workspace.run_dir) / "preimages" / f"{_safe(key)}.json"


def capture(gov: Any, call: Any, lstats: dict[str, Any] | None = None, *, intent: Any = None,
            policy: Any = None) -> None:
    """Snapshot the pre-images of the call's targets, in memory and under ``run_dir/preimages/<key>.json``.

    Called by ``Governor.pre`` after an allowed mutating call (and before an ``ask``: a person may say yes), so
    that a separate post-hook process can diff. ``lstats`` are the targets' ``lstat`` results that ``pre`` took
    moments ago while resolving them (None: absent; ``paths.UNKNOWN``: not taken), so a file is not ``lstat``-ed
    twice. A shell command also gets a stat snapshot of the directories it could write (:mod:`.changes`, bounded
    by ``intent``'s scope and ``policy``'s sandbox), so that ``record`` finds what it changed without naming it.
    """
    key = key_of(call)
    if key is None:
        key = f"{_KEY_PREFIX}-{next(_KEY_COUNTER)}"  # unique across processes; no syscall per call
        try:
            setattr(call, "capture_key", key)
        except AttributeError:
            _KEYS[id(call)] = key
    if getattr(call, "shell", None) is None and getattr(call, "resolved", None) is not None:
        # file tools: targets are already canonical workspace-relative files (the pipeline resolved them);
        # skip the directory expansion and path arithmetic that shell targets need
        root_s = gov.root if isinstance(getattr(gov, "root", None), str) else str(gov.workspace.root)
        known = lstats or {}
        files = {}
        for r in call.resolved:
            if r == "." or r == ".orchestration" or r.startswith(".orchestration/"):
                continue
            st = _known_stat(known, r)
            files[r] = _ABSENT if st is False else snap_file(os.path.join(root_s, r), st)
    else:
        root = Path(gov.workspace.root)
        files = {r: snap_file(root / r) for r in targets(gov, call)}
    # whose call this is: the post-hook that finds this capture must name the same session and tool (post/trace.py)
    snap: dict[str, Any] = {"key": key, "files": files, "session": getattr(call, "session_id", None),
                            "tool": getattr(call, "tool", None)}
    if getattr(call, "approval", None):
        snap["approval"] = call.approval  # who approved it, for the record the post-hook writes (maybe elsewhere)
    if getattr(call, "shell", None) is None:
        # what the pre-hook allowed, resolved: the post-hook checks the write landed there (post/swap.py)
        snap["allowed"] = list(getattr(call, "resolved", None) or ())
    else:
        from . import changes

        # a sandboxed command cannot leave .git/config or hooks changed (read-only, or restored by the launcher's
        # git-dir mode): the whole-tree scan skips them, so a restored file is not recorded as the command's change
        snap["scan"] = changes.snapshot(gov, changes.scan_roots(gov, call, intent, policy),
                                        git_extras=not getattr(call, "sandboxed", False))
    _MEM[key] = snap
    if len(_MEM) > 1024:  # a call whose post never comes (denied downstream, crashed tool) must not leak
        # the oldest quarter at once: popping one per call from the front of a dict walks the slots its
        # earlier pops left empty, a cost that grows with every call
        for stale in list(itertools.islice(list(_MEM), 256)):
            _MEM.pop(stale, None)  # another thread (the daemon's) may have taken it meanwhile
    if not getattr(gov, "persist_preimages", True):
        return  # pre and post run in this process: the in-memory snapshot is enough
    from orchestrator.core.fsutil import atomic_write

    # atomic: a concurrent reader (the post-hook process) never sees half a snapshot
    path = _preimage_path(gov, key)
    atomic_write(path, json.dumps(snap, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    if os.urandom(1)[0] < 4:  # about one capture in 64
        _sweep(path.parent)


#: a pre-image whose post never came (a refused `ask`, a failed tool) is removed after this long
PREIMAGE_TTL_SECONDS = 24 * 3600


def _sweep(directory: Path) -> None:
    """Remove pre-images (and change snapshots, which can be large) whose post-hook never came."""
    import time

    limit = time.time() - PREIMAGE_TTL_SECONDS
    try:
        with os.scandir(directory) as it:
            for e in it:
                try:
                    if e.name.endswith(".json") and e.stat(follow_symlinks=False).st_mtime < limit:
                        os.unlink(e.path)
                except OSError:
                    pass
    except OSError:
        pass


def load_capture(gov: Any, key: str | None) -> dict | None:
    if key is None:
        return None
    snap = _MEM.pop(key, None)
    if snap is not None:
        return snap
    try:
        with open(_preimage_path(gov, key), encoding="utf-8", errors="surrogateescape") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def keep(key: str, snap: dict) -> None:
    """Put a loaded capture back (a post-hook that may not use it must not consume it either)."""
    _MEM[key] = snap


def cleanup(gov: Any, call: Any, key: str | None) -> None:
    _KEYS.pop(id(call), None)
    if key is None:
        return
    _MEM.pop(key, None)
    try:
        os.unlink(_preimage_path(gov, key))
    except OSError:
        pass
