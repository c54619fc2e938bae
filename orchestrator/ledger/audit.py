"""``orch trace audit``: working-tree changes since ``HEAD`` that no ledger record explains (ungoverned edits).

Plumbing only, so that no user git setting changes what we read (docs/ledger.md §5): ``git diff-index -z
--no-renames HEAD`` (raw, NUL-separated: names with spaces, quotes, backslashes, tabs, newlines or any UTF-8 come
through verbatim; no patch text, so ``diff.noprefix``, ``diff.mnemonicPrefix``, ``color.ui``, ``diff.external`` and
textconv play no part), ``git ls-files -z --others --exclude-standard --full-name`` for new files and ``git cat-file
--batch`` for the ``HEAD`` blobs. The line diff is ours (:mod:`orchestrator.core.diffing`), on lines compared without
their ``\\r``; line endings are then compared as git would store them: where git's own eol conversion is on for a
path (``git check-attr text eol``, ``core.autocrlf``) CRLF counts as LF, elsewhere a changed line ending is a
change (issue 22 item 6).

Per file, exact at line level:

- **unchanged content** (a stat-only or mode-only difference, or the CRLF conversion git itself applies to that
  path) is not reported; binaries compare by exact content (their hash), never modulo line endings;
- **whole file**: a chain of records for the path (or renamed into it) whose first ``before`` is the ``HEAD``
  content (or which starts with a create / rename when the path is new) and whose last ``after`` is today's content
  explains the file at once — this covers binaries, empty files and a governed ``mv``;
- **added or changed lines** are explained when blame (:mod:`orchestrator.blame`) attributes them to a record; a
  line whose only change is its line ending is a changed line (listed under ``eol`` too);
- **removed lines** are explained by the records' ``removed_hashes`` (per-line hashes of what each call removed),
  as a multiset; records written before those hashes existed explain removals in the files they touched at ``HEAD``;
- **deleted files** are explained when the path's last record deleted it or renamed it away;
- **binary files** (NUL in the first 8000 bytes) without a whole-file explanation are reported as such;
- a file the ledger says a call wrote at the current ``HEAD`` but that is gone (and not in ``HEAD``) is reported
  as deleted.

:func:`audited` is the single file filter: what orchestrator itself writes is not an agent's work.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from orchestrator.core.diffing import decode, diff_hunks, is_binary, line_hash, split_lines
from orchestrator.core.errors import OrchestratorError
from .read import iter_lines, loads_record
from .blame import BlameError, attribute, record_events

__all__ = ["audit", "audited", "AuditError", "AUDIT_SKIP"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: Files written by orchestrator itself (lessons via `orch lesson` / record_lesson), not by agent tool calls.
AUDIT_SKIP = frozenset({
    "AGENTS.md",            # lessons, written by `orch lesson` / record_lesson
    ".gitattributes",       # the ledger's merge=union line, written by `orch init`
    # agent hook and MCP configurations, written by `orch install` (agents cannot write them: self-guarded)
    ".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".codex/hooks.json", ".codex/config.toml",
    ".gemini/settings.json", ".cursor/hooks.json", ".cursor/mcp.json", ".github/hooks/orchestrator.json",
    ".github/mcp.json", ".opencode/plugin/orchestrator.js", "opencode.json", ".kilo/plugin/orchestrator.js",
    "kilo.json", ".pi/extensions/orchestrator.js", ".pi/mcp.json",
})


class AuditError(OrchestratorError):
    """git is missing or failed (one-line message)."""


def audited(rel: str) -> bool:
    """Is ``rel`` (workspace-relative POSIX path) an agent work product the audit checks?

    The one place that decides what the audit ignores: orchestrator's own state (``.orchestration/**``) and the
    files it writes itself (:data:`AUDIT_SKIP`).
    """
    if rel == ".orchestration" or rel.startswith(".orchestration/"):
        return False
    return rel not in AUDIT_SKIP


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    from orchestrator.vcs.cli import git

    try:
        p = git(cwd, *args, stdin=stdin)
    except FileNotFoundError:
        raise AuditError("audit needs git on PATH") from None
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip() or "failed"
        raise AuditError(f"git {args[0]}: {msg}")
    return p.stdout


def _blobs(cwd: Path, shas: list[str]) -> dict[str, bytes]:
    from orchestrator.vcs.cli import cat_blobs

    try:
        found = cat_blobs(cwd, shas)
    except FileNotFoundError:
        raise AuditError("audit needs git on PATH") from None
    return {k: v for k, v in found.items() if v is not None}


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _variants(data: bytes) -> set[str]:
    """Hashes the checked-out form of a HEAD blob may have (as is, or with LF -> CRLF by ``core.autocrlf``)."""
    out = {_sha(data)}
    if b"\n" in data and b"\r\n" not in data:
        out.add(_sha(data.replace(b"\n", b"\r\n")))
    return out


def _eol_converted(root: Path, top: Path, paths: list[str]) -> set[str]:
    """The (top-relative) paths whose CRLF git turns into LF when it stores them: ``text`` / ``text=auto`` / an
    ``eol`` attribute, or no ``text`` attribute and ``core.autocrlf`` true or input (git's own rules, read through
    ``git check-attr`` and ``git config``; the file's binary-ness is decided by the caller)."""
    if not paths:
        return set()
    from orchestrator.vcs.cli import git

    try:
        autocrlf = git(root, "config", "--get", "core.autocrlf").stdout.decode().strip().lower()
    except FileNotFoundError:
        return set()
    raw = _git(top, "check-attr", "-z", "--stdin", "text", "eol",
               stdin=b"".join(os.fsencode(p) + b"\0" for p in paths))
    attrs: dict[str, dict[str, str]] = {}
    parts = raw.split(b"\0")
    for k in range(0, len(parts) - 2, 3):
        attrs.setdefault(os.fsdecode(parts[k]), {})[parts[k + 1].decode()] = parts[k + 2].decode()
    out = set()
    for p in paths:
        a = attrs.get(p, {})
        text, eol = a.get("text", "unspecified"), a.get("eol", "unspecified")
        if text == "unset":
            continue
        if text in ("set", "auto") or eol in ("crlf", "lf") or (text == "unspecified" and autocrlf in ("true", "input")):
            out.add(p)
    return out


def _load(path: Path) -> tuple[dict[str, list], dict[str, list[str]]]:
    """One pass over the ledger: {path: [(info, meta, ranges), ...]} and {path: [renamed-from paths]}."""
    by_path: dict[str, list] = {}
    renamed_from: dict[str, list[str]] = {}
    if not path.exists():
        return by_path, renamed_from
    for n, line in iter_lines(path):
        try:
            r = loads_record(line)  # a record with a duplicated key explains nothing
        except ValueError:
            continue
        if not isinstance(r, dict):
            continue
        for ev in record_events(n, r):
            by_path.setdefault(ev[0]["path"], []).append(ev)
            m = ev[1]
            if m.get("op") == "rename" and isinstance(m.get("from"), str):
                renamed_from.setdefault(ev[0]["path"], []).append(m["from"])
    return by_path, renamed_from


def _chain_explains(events: list, old_shas: set[str] | None, new_sha: str | None) -> bool:
    """Does a contiguous chain of records take the HEAD content (``old_shas``; None: absent) to ``new_sha``?"""
    if not events or new_sha is None:
        return False
    # walk back from the newest record while each record's before is the previous record's after
    i = len(events) - 1
    if events[i][1].get("after") != new_sha:
        return False
    while i >= 0:
        m = events[i][1]
        op = m.get("op")
        before = m.get("before")
        if op == "create" and old_shas is None:
            return True
        if op == "rename":
            return True  # the source's content is checked by the caller (its deletion must be explained too)
        if before is not None and old_shas is not None and before in old_shas:
            return True
        if i == 0 or events[i - 1][1].get("after") != before or before is None:
            return False
        i -= 1
    return False


def _events_for(rel: str, by_path: dict, renamed_from: dict) -> list:
    names = {rel}
    todo = [rel]
    while todo:
        for src in renamed_from.get(todo.pop(), ()):
            if src not in names:
                names.add(src)
                todo.append(src)
    evs = [e for n in names for e in by_path.get(n, ())]
    evs.sort(key=lambda e: e[0]["line"])
    return evs


def _spans(nums: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in nums:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def audit(root: Path, ledger_path: Path) -> dict:
    """``{"head": sha | None, "ungoverned": [finding, ...]}``; a finding is ``{"path", "kind", "ranges"}`` plus
    ``"removed"`` (``HEAD`` line spans) for removed lines. Kinds: ``lines``, ``lines-removed``, ``deleted``,
    ``binary``, ``file`` (a new or changed file with no line to point at, e.g. empty)."""
    root = Path(root)
    top = Path(os.fsdecode(_git(root, "rev-parse", "--show-toplevel").rstrip(b"\n")))
    try:
        head: str | None = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}").decode().strip() or None
    except AuditError:
        head = None
    raw = _git(root, "diff-index", "-z", "--no-renames", "--ignore-submodules", head or EMPTY_TREE, "--", ".")
    changed: dict[str, str | None] = {}  # top-relative path -> HEAD blob sha (None: not in HEAD)
    parts = raw.split(b"\0")
    i = 0
    while i + 1 < len(parts):
        meta, p = parts[i], parts[i + 1]
        i += 2
        if not meta.startswith(b":"):
            continue
        fields = meta[1:].split()
        mode_old, sha_old = fields[0], fields[2].decode()
        changed[os.fsdecode(p)] = None if mode_old == b"000000" or set(sha_old) == {"0"} else sha_old
    for p in _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", ".").split(b"\0"):
        if p:
            changed.setdefault(os.fsdecode(p), None)
    blobs = _blobs(root, sorted({s for s in changed.values() if s}))
    converted = _eol_converted(root, top, sorted(changed))
    by_path, renamed_from = _load(ledger_path)
    findings: list[dict] = []
    seen: set[str] = set()
    renamed_to: dict[str, list[str]] = {}  # source path -> the `after` hashes of the renames away from it
    for evs in by_path.values():
        for _info, m, _r in evs:
            if m.get("op") == "rename" and isinstance(m.get("from"), str) and m.get("after"):
                renamed_to.setdefault(m["from"], []).append(m["after"])
    for top_rel, blob in sorted(changed.items()):
        rel = os.path.relpath(top / top_rel, root).replace(os.sep, "/")
        if rel.startswith("../") or not audited(rel):
            continue
        seen.add(rel)
        full = root / rel
        old = blobs.get(blob) if blob else None
        try:
            new: bytes | None = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
        except (OSError, IsADirectoryError):
            new = None
        f = _check_file(rel, old, new, _events_for(rel, by_path, renamed_from), by_path.get(rel, []),
                        renamed_to.get(rel, []), head, top_rel in converted)
        if f is not None:
            findings.append(f)
    # files a call wrote at this HEAD that are gone without a record (and were never committed)
    for rel, evs in sorted(by_path.items()):
        if rel in seen or not audited(rel) or (root / rel).exists() or os.path.lexists(root / rel):
            continue
        last = evs[-1]
        if last[1].get("op") in ("create", "modify", "rename") and head and last[0].get("revision") == head:
            findings.append({"path": rel, "kind": "deleted", "ranges": []})
    return {"head": head, "ungoverned": findings}


def _check_file(rel: str, old: bytes | None, new: bytes | None, events: list, own: list, renamed_away: list[str],
                head: str | None, conv: bool = False) -> dict | None:
    """The finding for one changed path, or None when the ledger explains it (rules: module docstring)."""
    if new is None:  # deleted since HEAD
        if old is None:
            return None
        last = own[-1][1] if own else None
        if last is not None and last.get("op") == "delete":
            return None
        head_shas = _variants(old)
        for after in renamed_away:  # moved away by a governed rename of the HEAD content (or of a governed edit)
            if after in head_shas or _chain_explains(own, head_shas, after):
                return None
        return {"path": rel, "kind": "deleted", "ranges": []}
    old_shas = _variants(old) if old is not None else None
    new_sha = _sha(new)
    binary = is_binary(new) or (old is not None and is_binary(old))
    # what git would commit from today's file: with an eol conversion on (attributes, core.autocrlf) CRLF -> LF
    convert = conv and not binary and old is not None and b"\r\n" not in old
    cleaned = new.replace(b"\r\n", b"\n") if convert else new
    if old is not None and cleaned == old:
        return None  # mode/stat-only, or the checkout's own eol conversion: binaries compare by exact content
    if _chain_explains(events, old_shas, new_sha):
        return None
    if binary:
        return {"path": rel, "kind": "binary", "ranges": []}
    a = split_lines(decode(old)) if old is not None else []
    b = split_lines(decode(new))
    sa = [x.rstrip("\n").rstrip("\r") for x in a]
    if not b and not a:
        return {"path": rel, "kind": "file", "ranges": []}  # a new empty file that no record created
    try:
        res = attribute(events, b, new_sha, rel)
    except BlameError:
        res = {"runs": []}
    owned: set[int] = set()
    for run in res["runs"]:
        if run["record"] is not None:
            owned.update(range(run["start_line"], run["end_line"] + 1))
    # Diff HEAD against the lines no record explains: what is left over was added (or removed) by hand. Taking the
    # attributed lines out first makes the result independent of how two diffs place a hunk among equal lines.
    unowned = [(ln, x.rstrip("\n").rstrip("\r")) for ln, x in enumerate(b, 1) if ln not in owned]
    hunks = diff_hunks(sa, [x for _, x in unowned])
    bad = [unowned[j - 1][0] for h in hunks for j in range(h.new_start, h.new_start + h.new_lines)]
    # removed lines: the records' removed_hashes as a multiset
    pool: dict[str, int] = {}
    legacy = False
    for info, m, _r in events:
        for x in m.get("removed_hashes") or ():
            pool[x] = pool.get(x, 0) + 1
        if m.get("removed") and "removed_hashes" not in m and head and info.get("revision") == head:
            legacy = True
    gone: list[int] = []
    for h in hunks:
        for ln in range(h.old_start, h.old_start + h.old_lines):
            k = line_hash(a[ln - 1])
            if pool.get(k):
                pool[k] -= 1
            elif not legacy:
                gone.append(ln)
    eol = _eol_changed(a, b, unowned, hunks, convert)
    bad = sorted(set(bad) | set(eol))
    if not bad and not gone:
        return None
    f = {"path": rel, "kind": "lines" if bad else "lines-removed", "ranges": _spans(bad)}
    if gone:
        f["removed"] = _spans(gone)
    if eol:
        f["eol"] = _spans(eol)
    return f


def _terminator(line: str, convert: bool) -> str:
    """A line's terminator as git would commit it (``\\r\\n`` becomes ``\\n`` when the eol conversion is on)."""
    if line.endswith("\r\n"):
        return "\n" if convert else "\r\n"
    return "\n" if line.endswith("\n") else ""


def _eol_changed(a: list[str], b: list[str], unowned: list[tuple[int, str]], hunks: list, convert: bool
                 ) -> list[int]:
    """Today's lines (numbers) no record explains whose text equals their ``HEAD`` line but whose line ending
    differs (the diff compares lines without ``\\r``): a line-ending-only change is a change like any other."""
    out: list[int] = []
    i = j = 1  # 1-based positions in a (HEAD) and in unowned
    bounds = [(h.old_start - 1 if h.old_lines else h.old_start, h.old_lines, h.new_lines) for h in hunks]
    bounds.append((len(a), 0, 0))
    for equal_to, old_n, new_n in bounds:
        for k in range(max(0, equal_to - (i - 1))):
            ln = unowned[j - 1 + k][0] if j - 1 + k < len(unowned) else None
            if ln is not None and _terminator(a[i - 1 + k], False) != _terminator(b[ln - 1], convert):
                out.append(ln)
        step = max(0, equal_to - (i - 1))
        i, j = i + step + old_n, j + step + new_n
    return out
