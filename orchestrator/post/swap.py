"""Symlink swap: the post-hook checks that what a file tool changed is what its pre-hook allowed.

The pre-hook judges the resolved target of every path (``paths.resolve``: symlinks followed) and the capture keeps
that list (``allowed``). Between the pre-hook's answer and the host's own write, a process the agent started earlier
can replace an allowed file (or a directory above it) by a symlink to another file, e.g. ``README.md``; the host's
write then follows the link. The post-hook resolves the same paths again: a target that resolves elsewhere now was
*swapped*. Then:

- the file the path now leads to is reported as an out-of-scope change (flags ``out_of_scope`` and ``swapped`` in
  the record, the hook's structured warning ``symlink-swap``), whatever the intent's scope says about it. It is
  never written: the post-hook cannot tell whether the host wrote through the link or the link came after the
  write, and the only pre-image it could put back there is one the agent controls (issue 28, finding 1: the
  tool's ``originalFile`` is the content the file held, which the agent may have written itself; a ``create``
  would have meant deleting the link's target). A person restores it (``git checkout``, the record says which);
- the allowed path gets its pre-image back from the engine's *own* capture (taken by the pre-hook), in place of
  the swapped-in link (or the link is removed, if the capture says there was no file), through
  :mod:`orchestrator.core.beneath`: no link is followed at any component, and nothing is written when a directory above
  is a link now, or when the path is a governance path or outside the call's scope (``may_write``). The agent is
  told to redo its write.

The window that remains: a swap that is undone again before the post-hook runs leaves no trace in the paths (the
record then still shows the content the write left, if any, at the allowed path); and the restore races with any
process that keeps writing the file. See security.md.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from typing import Any

from orchestrator.core import beneath

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


#: why an allowed path was not put back (the record's ``swapped[].allowed_refused``)
REFUSED_LINK = "a directory above it is a link now"
REFUSED_SCOPE = "outside the scope or a governance path"
REFUSED_UNKNOWN = "its content before is unknown (no text in the capture)"
UNCHANGED = "a regular file is there again"


def restore(root: str, swaps: dict[str, str | None], allowed_before: dict[str, dict | None],
            may_write: Callable[[str], bool]) -> dict[str, str]:
    """Put back each allowed path a swapped-in link replaced, from the engine's own capture ``allowed_before``;
    never the path the link led to. Returns ``{allowed path: "restored" or why not}`` for every allowed path a swap
    names (None: the pairing is unknown, nothing is touched)."""
    outcome: dict[str, str] = {}
    for allowed in swaps.values():
        if allowed is None or allowed in outcome:
            continue
        snap = allowed_before.get(allowed)
        if snap is None:
            outcome[allowed] = REFUSED_UNKNOWN
        elif not may_write(allowed):
            outcome[allowed] = REFUSED_SCOPE
        else:
            outcome[allowed] = _put_back(root, allowed, snap)
    return outcome


def _put_back(root: str, rel: str, snap: dict) -> str:
    try:
        st = beneath.lstat(root, rel)
        if st is not None and stat.S_ISREG(st.st_mode):
            return UNCHANGED  # a regular file is in place again (the swap was undone): nothing to put back
        if st is not None and stat.S_ISDIR(st.st_mode):
            return REFUSED_LINK
        if not snap.get("exists"):
            beneath.unlink(root, rel)  # there was no file: the swapped-in link goes
            return "restored"
        text = snap.get("text")
        if not isinstance(text, str):
            return REFUSED_UNKNOWN
        beneath.replace(root, rel, text.encode("utf-8", "surrogateescape"))
    except beneath.Refused:
        return REFUSED_LINK
    except OSError as exc:
        return f"cannot write it ({exc.strerror or exc})"
    return "restored"


def warning(record: dict, ns: dict) -> dict:
    """The hook's structured warning for a record of a write through a swapped link (same shape as a denial)."""
    swaps = ns.get("swapped") or []
    written = [s["written"] for s in swaps]
    allowed = [s["allowed"] for s in swaps if s.get("allowed")]
    restored = [s["allowed"] for s in swaps if s.get("allowed_restored")]
    refused = [f"{s['allowed']} ({s['allowed_refused']})" for s in swaps if s.get("allowed_refused")]
    return {"type": "symlink-swap", "hook": "trace",
            "message": f"the write to {', '.join(allowed) or 'the allowed file'} may have landed in "
                       f"{', '.join(written)}: a symlink was swapped in after the check; "
                       f"{', '.join(written)} {'was' if len(written) == 1 else 'were'} left as found (the post-hook "
                       "never writes where a link leads)" +
                       (f"; the link at {', '.join(restored)} was replaced by its content before the call"
                        if restored else "") +
                       (f"; not put back: {', '.join(refused)}" if refused else ""),
            "paths": written, "allowed": allowed, "restored": restored, "intent": ns.get("intent_id"),
            "record": record.get("id"),
            "hint": "something replaced the file by a link while your call ran (a background process you started?): "
                    "stop it; a person checks the files named in paths (e.g. `git diff`), then redo your write; "
                    "the change is recorded as out of scope"}
