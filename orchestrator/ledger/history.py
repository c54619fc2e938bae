"""``orch trace verify --history``: every committed version of the ledger extends the previous one (docs/ledger.md
§4a), checked through git (:mod:`orchestrator.vcs.cli`, the one git helper; plumbing only).

For each commit that changed the ledger (``git rev-list --parents`` limited to the ledger's path, so parents are
the previous versions of the file) and for each of its parents:

- one parent: the parent's complete lines are a byte prefix of the commit's version (a torn last line of the parent
  may be gone: ``orch trace repair`` moved it to the quarantine);
- a merge: each parent's complete lines appear in the commit's version in the same order (the union merge driver
  keeps both sides' appends, ours first).

Finally the version at ``HEAD`` must be extended by the working file in the same way. Each version is read once
with ``git cat-file --batch``; only the versions later commits still need are kept in memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.vcs.cli import cat_blobs, git


@dataclass
class HistoryResult:
    """Outcome of :func:`check`."""

    ok: bool = True
    versions: int = 0
    merges: int = 0
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-friendly form."""
        return {"ok": self.ok, "versions": self.versions, "merges": self.merges, "problems": self.problems}

    def fail(self, message: str) -> None:
        """Record a problem."""
        self.ok = False
        if len(self.problems) < 50:
            self.problems.append(message)


def _complete(data: bytes) -> bytes:
    """The complete lines of a version (a torn last line dropped)."""
    nl = data.rfind(b"\n")
    return data[:nl + 1] if nl >= 0 else b""


def _extends(old: bytes, new: bytes, merge: bool) -> int | None:
    """None if ``new`` extends ``old`` (prefix; for a merge, an ordered subsequence of lines), else the 1-based
    line of ``old`` that is missing or changed in ``new``."""
    old = _complete(old)
    if new.startswith(old):
        return None
    old_lines = old.splitlines(keepends=True)
    if not merge:
        new_lines = new.splitlines(keepends=True)
        for i, line in enumerate(old_lines):
            if i >= len(new_lines) or new_lines[i] != line:
                return i + 1
        return len(old_lines)  # pragma: no cover - startswith would have held
    it = iter(new.splitlines(keepends=True))
    for i, line in enumerate(old_lines):
        if not any(line == x for x in it):
            return i + 1
    return None


def check(root: str | os.PathLike[str], ledger: str | os.PathLike[str]) -> HistoryResult:
    """Check the committed history of ``ledger`` (in the git repository containing ``root``)."""
    res = HistoryResult()
    try:
        top_p = git(root, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        res.fail("git is not installed: the history cannot be checked")
        return res
    if top_p.returncode != 0:
        res.fail("not a git repository: there is no committed history to check")
        return res
    top = top_p.stdout.decode("utf-8", "surrogateescape").strip()
    rel = os.path.relpath(os.path.realpath(os.fspath(ledger)), os.path.realpath(top))
    revs = git(top, "rev-list", "--reverse", "--topo-order", "--parents", "HEAD", "--", rel)
    if revs.returncode != 0:
        res.fail("no commit yet (unborn HEAD): nothing to check")
        return res
    rows = [ln.split() for ln in revs.stdout.decode("ascii", "replace").splitlines() if ln.strip()]

    def blobs(commits: list[str]) -> dict[str, bytes]:
        found = cat_blobs(top, [f"{c}:{rel}" for c in commits])
        return {c: found.get(f"{c}:{rel}") or b"" for c in commits}

    last_use: dict[str, int] = {}
    for i, row in enumerate(rows):
        for parent in row[1:]:
            last_use[parent] = i
    content: dict[str, bytes] = {}
    batch = 256
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        want = [r[0] for r in chunk] + [p for r in chunk for p in r[1:] if p not in content]
        content.update(blobs(list(dict.fromkeys(want))))
        for j, row in enumerate(chunk, start):
            commit, parents = row[0], row[1:]
            res.versions += 1
            res.merges += len(parents) > 1
            for parent in parents:
                bad = _extends(content.get(parent, b""), content[commit], len(parents) > 1)
                if bad is not None:
                    res.fail(f"commit {commit[:12]}: the ledger is not an append-only extension of {parent[:12]}'s "
                             f"(line {bad} of that version is missing or changed)")
            for parent in parents:
                if last_use.get(parent) == j:
                    content.pop(parent, None)
            if commit not in last_use:
                content.pop(commit, None)
    head = blobs(["HEAD"])["HEAD"]
    try:
        work = Path(ledger).read_bytes()
    except FileNotFoundError:
        work = b""
    merging = git(top, "rev-parse", "-q", "--verify", "MERGE_HEAD").returncode == 0
    bad = _extends(head, work, merging)
    if bad is not None:
        res.fail(f"the working ledger is not an append-only extension of HEAD's (line {bad} of HEAD's version is "
                 "missing or changed)")
    return res


__all__ = ["HistoryResult", "check"]
