"""Stale-file check: optimistic locking by content hash.

A write is refused when the file changed since this session last read or wrote it (its read-stamp),
or when the call names an ``expected_hash`` that no longer matches. Two agents editing one file
therefore cannot silently overwrite each other's work.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from orchestrator.core.fsutil import file_hash
from orchestrator.core.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "stale"


def check(ctx: Context) -> Verdict | None:
    if not ctx.policy.stale_check:
        return None
    call = ctx.call
    reads = ctx.session.get("reads") or {}
    # the caller's own expected_hash applies only when the call names a single file
    declared = call.expected_hash if len(call.resolved) == 1 else None
    if not reads and not declared:
        return None  # nothing was read in this session and nothing is claimed: nothing can be stale
    root = ctx.root
    for path in call.resolved:
        claims = [h for h in (declared, reads.get(path)) if h]
        if not claims:
            continue
        actual = file_hash(os.path.join(root, path))
        for expected in claims:
            if actual != expected:
                gone = actual is None
                return Verdict.deny(
                    "stale-file", NAME,
                    f"{path} was {'deleted' if gone else 'changed'} since this session last read it",
                    path=path, expected_hash=expected, actual_hash=actual,
                    hint="re-read the file to see the other change, then redo your edit on the current content",
                )
    return None
