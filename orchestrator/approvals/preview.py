"""Previews: a bounded unified diff of what a Write/Edit/Delete would do, shown to the person deciding."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from orchestrator.core.models import Kind

if TYPE_CHECKING:
    from orchestrator.core.models import ToolCall

#: bounds of a diff preview: a person reads it in a terminal, and the request file stays small
PREVIEW_MAX_LINES = 120
PREVIEW_MAX_CHARS = 12_000
PREVIEW_MAX_FILE = 512 * 1024


def preview(root: str | os.PathLike[str], call: ToolCall) -> str | None:
    """A bounded unified diff of what a Write/Edit/Delete would do, or None if not applicable."""
    inp = call.input or {}
    if not call.resolved:
        return None
    rel = call.resolved[0]
    full = os.path.join(os.fspath(root), rel)
    content = inp.get("content")
    has_edit = isinstance(inp.get("old_string"), str) and isinstance(inp.get("new_string"), str)
    edits = inp.get("edits") if isinstance(inp.get("edits"), list) else None
    if not (isinstance(content, str) or has_edit or edits or call.kind is Kind.DELETE):
        return None
    try:
        size = os.path.getsize(full)
    except OSError:
        size = -1
    if size > PREVIEW_MAX_FILE:
        return f"(no preview: {rel} is {size} bytes)"
    from orchestrator.core.fsutil import read_regular

    # never a plain open: a FIFO put where the file was would hang the hook that asks (fsutil.open_regular)
    data = read_regular(full, PREVIEW_MAX_FILE)
    old = data.decode("utf-8", "replace") if data is not None else ""
    if isinstance(content, str):
        new = content
    elif call.kind is Kind.DELETE and not (has_edit or edits):
        new = ""
    else:
        new = old
        steps = edits if edits else [inp]
        for step in steps:
            if not isinstance(step, dict):
                continue
            a, b = step.get("old_string"), step.get("new_string")
            if isinstance(a, str) and isinstance(b, str):
                new = new.replace(a, b) if step.get("replace_all") else new.replace(a, b, 1)
    import difflib  # only for previews: keep it off the import of this module

    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{rel}", f"b/{rel}", lineterm=""))
    return bound(lines) if lines else "(no change)"


def bound(lines: list[str]) -> str:
    """Join at most :data:`PREVIEW_MAX_LINES` lines / :data:`PREVIEW_MAX_CHARS` characters."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= PREVIEW_MAX_LINES or size + len(line) > PREVIEW_MAX_CHARS:
            kept.append(f"... ({len(lines) - len(kept)} more lines)")
            break
        kept.append(line[:400])
        size += len(line) + 1
    return "\n".join(kept)


__all__ = ["PREVIEW_MAX_CHARS", "PREVIEW_MAX_FILE", "PREVIEW_MAX_LINES", "bound", "preview"]
