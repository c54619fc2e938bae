"""Symlink swap: the post-hook checks that what a file tool changed is what its pre-hook allowed.

The pre-hook judges the resolved target of every path (``paths.resolve``: symlinks followed) and the capture keeps
that list (``allowed``). Between the pre-hook's answer and the host's own write, a process the agent started earlier
can replace an allowed file (or a directory above it) by a symlink to another file, e.g. ``README.md``; the host's
write then follows the link. The post-hook resolves the same paths again: a target that resolves elsewhere now was
*swapped*. Then:

- the file actually written is reported as an out-of-scope change (flags ``out_of_scope`` and ``swapped`` in the
  record, the hook's structured warning ``symlink-swap``), whatever the intent's scope says about it;
- where its pre-image is known (the tool's own: Claude Code's ``originalFile``, or ``created``; or a capture of the
  same path), it is restored, and so is the allowed path: the link is replaced by the file it held before (or
  removed, if there was none). The agent is told to redo its write.

The window that remains: a swap that is undone again before the post-hook runs leaves no trace in the paths (the
record then still shows the content the write left, if any, at the allowed path); a write through a swapped link
whose pre-image is not known (a tool that does not report one, a file over the capture's size limit) is reported
but not restored; and the restore itself races with any process that keeps writing the file. See security.md.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Any

__all__ = ["detect", "restore", "warning"]


def detect(snap: dict | None, call: Any) -> dict[str, str | None]:
    """``{written path: allowed path it replaced (None: unknown)}`` for the paths of a file-tool ``call`` (already
    prepared again in the post-hook) that resolve elsewhere than they did in the pre-hook; empty when nothing moved
    or nothing is known (a shell command: its own change scan reports what it changed)."""
    if not snap or getattr(call, "shell", None) is not None:
        return {}
    allowed = snap.get("allowed")
    if not isinstance(allowed, list):
        return {}
    now = list(getattr(call, "resolved", None) or ())
    written = [p for p in now if p not in allowed]
    if not written:
        return {}
    gone = [p for p in allowed if p not in now]
    if len(written) == 1 and len(gone) == 1:
        return {written[0]: gone[0]}
    return {p: None for p in written}


def _write_back(full: str, text: str) -> bool:
    """Put ``text`` back into the regular file (or missing name) at ``full``, never through a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        st = None
    except OSError:
        return False
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            os.unlink(full)  # the swapped-in link (or whatever replaced the file): the file it held comes back
        fd = os.open(full, flags, 0o644)
        try:
            os.write(fd, text.encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def _remove(full: str) -> bool:
    try:
        os.unlink(full)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def restore(root: str, swaps: dict[str, str | None], written_before: dict[str, dict | None],
            allowed_before: dict[str, dict | None]) -> list[str]:
    """Undo what a write through swapped links did, where the pre-images are known; returns the restored paths.

    ``written_before``: the pre-image of each written path (``{"exists": False}``: the write created it; None or
    no text: unknown, not restored). ``allowed_before``: the capture of each allowed path it replaced."""
    restored: list[str] = []
    for written, allowed in swaps.items():
        before = written_before.get(written)
        full = os.path.join(root, written)
        if before is not None and not before.get("exists"):
            if _remove(full):
                restored.append(written)
        elif before is not None and isinstance(before.get("text"), str):
            current = _sha(full)
            if current != before.get("sha256") and _write_back(full, before["text"]):
                restored.append(written)
        if allowed is None:
            continue
        snap = allowed_before.get(allowed)
        target = os.path.join(root, allowed)
        if snap is not None and not snap.get("exists"):
            if os.path.islink(target) and _remove(target):
                restored.append(allowed)
        elif snap is not None and isinstance(snap.get("text"), str) and _write_back(target, snap["text"]):
            restored.append(allowed)
    return restored


def _sha(full: str) -> str | None:
    try:
        with open(full, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def warning(record: dict, ns: dict) -> dict:
    """The hook's structured warning for a record of a write through a swapped link (same shape as a denial)."""
    swaps = ns.get("swapped") or []
    written = [s["written"] for s in swaps]
    restored = [s["written"] for s in swaps if s.get("restored")] + \
        [s["allowed"] for s in swaps if s.get("allowed_restored")]
    allowed = [s["allowed"] for s in swaps if s.get("allowed")]
    lost = [s["written"] for s in swaps if not s.get("restored")]
    return {"type": "symlink-swap", "hook": "trace",
            "message": f"the write to {', '.join(allowed) or 'the allowed file'} landed in {', '.join(written)}: a "
                       "symlink was swapped in after the check" +
                       (f"; restored {', '.join(restored)}" if restored else "") +
                       (f"; {', '.join(lost)} could not be restored (its content before is unknown)" if lost else ""),
            "paths": written, "allowed": allowed, "restored": restored, "intent": ns.get("intent_id"),
            "record": record.get("id"),
            "hint": "something replaced the file by a link while your call ran (a background process you started?): "
                    "stop it, check the file, then redo your write; the change is recorded as out of scope"}
