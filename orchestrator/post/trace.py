"""Post-hook: turn a governed mutation into one ledger record (changed ranges, class, chain).

Interface used (duck-typed, so this module does not import the pipeline):

``gov``
    ``gov.workspace.root`` (Path), ``gov.workspace.ledger_file`` (Path), ``gov.workspace.run_dir`` (Path);
    optional fsync setting, first found of: ``gov.settings.ledger_fsync``, ``gov.settings["ledger_fsync"]``,
    ``gov.policy.ledger_fsync`` (default True).
``call`` (a ``models.ToolCall``)
    ``tool``, ``kind``, ``resolved`` (workspace-relative POSIX paths), ``shell`` (``ShellAnalysis`` with ``writes``
    / ``deletes`` relative to ``call.cwd``), ``cwd``, ``tool_use_id``, ``session_id``, ``agent``, ``agent_id``,
    ``intent_id`` (the effective intent), ``mutation_class`` (declared, may be None), ``model_id``. Missing
    attributes are treated as None. :func:`capture` sets ``call.capture_key`` when ``tool_use_id`` is None (if the
    object accepts new attributes; otherwise the key is remembered per object id in this process). A
    ``capture_key`` set beforehand by an adapter names the pre-image (pre and post compute the same one).
``result``
    dict or None. For Claude Code it is ``tool_response``: ``originalFile`` (pre-image text, None for a create),
    ``structuredPatch``, ``type`` ("create"/"update").

Pre-image sources, in order: Claude Code's ``originalFile`` (single-file tools), the snapshot taken by
:func:`capture` (memory, then ``run_dir/preimages/<key>.json``), and otherwise ``structuredPatch`` (ranges only) or,
with nothing at all, the whole current file as one range with evidence "no pre-image".

Never stored in the ledger: file contents. Never recorded twice: the ledger append is skipped when a record with the
same ``tool_use_id`` (else ``call_id``, the capture key) is among the last 64 KiB of the ledger (checked under the
ledger lock), and calls that changed
nothing produce no record.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
from pathlib import Path
from typing import Any

from .. import diffing


class _LazyClassify:
    """``classify`` (ast, pickle, tree-sitter) is only needed by record(); keep it off capture()'s import path."""

    def __getattr__(self, name: str) -> Any:
        from .. import classify
        return getattr(classify, name)


_cls = _LazyClassify()

__all__ = ["capture", "record", "build_record", "warning", "TOOL_NAME", "MAX_TEXT_BYTES", "MAX_DIR_FILES"]

TOOL_NAME = "orchestrator"
#: Files bigger than this are snapshotted by hash only (ranges then cover the whole new file).
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: Hunks are stored (for blame's line tracking) up to this many per file.
MAX_HUNKS = 200
#: Per-line hashes (blame/audit metadata) are stored for at most this many written (and removed) lines per file.
MAX_LINE_HASHES = 4000
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


def _version() -> str:
    from orchestrator._version import __version__

    return __version__


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return getattr(obj, name, default)


def _fsync_setting(gov: Any) -> bool:
    s = _get(gov, "settings")
    if s is not None:
        v = s.get("ledger_fsync") if isinstance(s, dict) else _get(s, "ledger_fsync")
        if v is not None:
            return bool(v)
    p = _get(gov, "policy")
    if p is not None:
        v = p.get("ledger_fsync") if isinstance(p, dict) else _get(p, "ledger_fsync")
        if v is not None:
            return bool(v)
    return True


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


def _targets(gov: Any, call: Any) -> list[str]:
    root = Path(gov.workspace.root)
    out: dict[str, None] = {}
    for p in _get(call, "resolved") or ():
        r = _rel(root, str(root), p)
        if r:
            out[r] = None
    sh = _get(call, "shell")
    if sh is not None:
        base = _get(call, "cwd") or str(root)
        for p in tuple(_get(sh, "writes") or ()) + tuple(_get(sh, "deletes") or ()):
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


def _snap_file(full: Path | str, st: Any = None) -> dict:
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
    try:
        with open(full, "rb") as fh:
            data = fh.read()
    except OSError:
        return {"exists": False}
    snap: dict[str, Any] = {"exists": True, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    if diffing.is_binary(data):
        snap["binary"] = True
    elif len(data) <= MAX_TEXT_BYTES:
        snap["text"] = diffing.decode(data)
    return snap


def _known_stat(known: dict[str, Any], rel: str) -> Any:
    """``_snap_file``'s ``st`` for ``rel``: a stat result, False (known absent) or None (look)."""
    st = known.get(rel)
    if st is None:
        return False if rel in known else None
    return st if isinstance(st, os.stat_result) else None


def _key_of(call: Any) -> str | None:
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
    key = _key_of(call)
    if key is None:
        key = f"{_KEY_PREFIX}-{next(_KEY_COUNTER)}"  # unique across processes; no syscall per call
        try:
            setattr(call, "capture_key", key)
        except AttributeError:
            _KEYS[id(call)] = key
    if _get(call, "shell") is None and _get(call, "resolved") is not None:
        # file tools: targets are already canonical workspace-relative files (the pipeline resolved them);
        # skip the directory expansion and path arithmetic that shell targets need
        root_s = gov.root if isinstance(getattr(gov, "root", None), str) else str(gov.workspace.root)
        known = lstats or {}
        files = {}
        for r in call.resolved:
            if r == "." or r == ".orchestration" or r.startswith(".orchestration/"):
                continue
            st = _known_stat(known, r)
            files[r] = _ABSENT if st is False else _snap_file(os.path.join(root_s, r), st)
    else:
        root = Path(gov.workspace.root)
        files = {r: _snap_file(root / r) for r in _targets(gov, call)}
    snap: dict[str, Any] = {"key": key, "files": files}
    if _get(call, "shell") is not None:
        from . import changes

        snap["scan"] = changes.snapshot(gov, changes.scan_roots(gov, call, intent, policy))
    _MEM[key] = snap
    if len(_MEM) > 1024:  # a call whose post never comes (denied downstream, crashed tool) must not leak
        # the oldest quarter at once: popping one per call from the front of a dict walks the slots its
        # earlier pops left empty, a cost that grows with every call
        for stale in list(itertools.islice(list(_MEM), 256)):
            _MEM.pop(stale, None)  # another thread (the daemon's) may have taken it meanwhile
    if not getattr(gov, "persist_preimages", True):
        return  # pre and post run in this process: the in-memory snapshot is enough
    from ..fsutil import atomic_write

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


def _load_capture(gov: Any, key: str | None) -> dict | None:
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


def _cleanup(gov: Any, call: Any, key: str | None) -> None:
    _KEYS.pop(id(call), None)
    if key is None:
        return
    _MEM.pop(key, None)
    try:
        os.unlink(_preimage_path(gov, key))
    except OSError:
        pass


# -------------------------------------------------------------------------------------------------- record

def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _file_change(path: str, before: dict | None, after: dict, patch: list | None) -> dict | None:
    """Compute one file's change entry (internal shape), or None when unchanged."""
    b_exists = bool(before and before.get("exists"))
    a_exists = bool(after.get("exists"))
    if not b_exists and not a_exists:
        return None
    if before is not None and b_exists and a_exists and before.get("sha256") and \
            before.get("sha256") == after.get("sha256"):
        return None
    ch: dict[str, Any] = {"path": path}
    if not a_exists:
        assert before is not None  # b_exists
        ch.update(op="delete", ranges=[], added=0, removed=_count_lines(before), sha_before=before.get("sha256"))
        ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "file deleted"
        return ch
    ch["sha_after"] = after.get("sha256")
    if b_exists and before is not None and before.get("sha256"):
        ch["sha_before"] = before["sha256"]  # every op: the audit chains records by before/after
    if after.get("binary") or (before or {}).get("binary"):
        ch.update(op="create" if not b_exists else "modify", ranges=[], added=0, removed=0, binary=True)
        ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "binary content changed"
        return ch
    new_text = after.get("text")
    if new_text is None:  # too big to diff: attribute the whole file, by hash of the whole content
        ch.update(op="modify" if b_exists else "create", ranges=[], added=0, removed=0, large=True)
        ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "file too large to diff"
        return ch
    if before is None:  # no pre-image at all
        if patch:
            hunks = diffing.hunks_from_structured_patch(patch)
            nl = diffing.split_lines(new_text)
            ranges = diffing.ranges_from_hunks(nl, hunks)
            ch.update(op="modify", ranges=ranges, added=sum(h.new_lines for h in hunks),
                      removed=sum(h.old_lines for h in hunks))
            ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "no pre-image (ranges from the agent's patch)"
        else:
            ranges = diffing.ranges_for_new_file(new_text)
            ch.update(op="modify", ranges=ranges, added=len(diffing.split_lines(new_text)), removed=0)
            ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "no pre-image: whole file attributed"
        return ch
    ch["lines"] = _nlines(new_text)
    if not b_exists:
        ranges = diffing.ranges_for_new_file(new_text)
        ch.update(op="create", ranges=ranges, added=ranges[0].end_line if ranges else 0, removed=0)
        ch["hunks"] = [[0, 0, 1, ch["lines"]]] if ch["lines"] else []
        _line_metadata(ch, None, new_text, ranges, [])
        ch["class"], ch["evidence"] = _cls.classify(path, None, new_text)
        return ch
    old_text = before.get("text")
    if old_text is None:
        ranges = diffing.ranges_for_new_file(new_text)
        ch.update(op="modify", ranges=ranges, added=len(diffing.split_lines(new_text)), removed=0)
        ch["class"], ch["evidence"] = _cls.INTENT_EVOLUTION, "pre-image too large or binary: whole file attributed"
        return ch
    ranges, hunks = diffing.changed_ranges(old_text, new_text)
    if not hunks:
        return None
    ch.update(op="modify", ranges=ranges, added=sum(h.new_lines for h in hunks),
              removed=sum(h.old_lines for h in hunks), sha_before=before.get("sha256"))
    if len(hunks) <= MAX_HUNKS:
        ch["hunks"] = [[h.old_start, h.old_lines, h.new_start, h.new_lines] for h in hunks]
    _line_metadata(ch, old_text, new_text, ranges, hunks)
    ch["class"], ch["evidence"] = _cls.classify(path, old_text, new_text, hunks)
    return ch


def _line_metadata(ch: dict, old_text: str | None, new_text: str, ranges: list, hunks: list) -> None:
    """Per-line hashes for blame and audit (hashes, never content; docs/ledger.md §1): ``line_hashes`` of each
    written range, ``context`` = the hashes of the lines just before and after each range (its neighbourhood, to
    pick the right copy of a duplicated line), ``removed_hashes`` of the lines the call removed. Omitted when the
    call wrote or removed more than :data:`MAX_LINE_HASHES` lines in this file."""
    written = sum(r.end_line - r.start_line + 1 for r in ranges)
    removed = sum(h.old_lines for h in hunks)
    if written > MAX_LINE_HASHES or removed > MAX_LINE_HASHES:
        return
    lh = diffing.line_hash  # strips "\r"; lines from str.split have no "\n" (C-speed split, no terminators)
    new = new_text.split("\n")
    n_new = len(new) - (1 if new and new[-1] == "" else 0)
    ch["line_hashes"] = [[lh(x) for x in new[r.start_line - 1:r.end_line]] for r in ranges]
    ch["context"] = [[lh(new[r.start_line - 2]) if r.start_line >= 2 else None,
                      lh(new[r.end_line]) if r.end_line < n_new else None] for r in ranges]
    if old_text is not None and removed:
        old = old_text.split("\n")
        ch["removed_hashes"] = [lh(x) for h in hunks for x in old[h.old_start - 1:h.old_start - 1 + h.old_lines]]


def _nlines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _count_lines(snap: dict | None) -> int:
    t = (snap or {}).get("text")
    return len(diffing.split_lines(t)) if t else 0


def _detect_renames(changes: list[dict]) -> list[dict]:
    """A delete + a create of identical content in one call is a rename (``mv``)."""
    deleted = {c["sha_before"]: c for c in changes if c["op"] == "delete" and c.get("sha_before")}
    out: list[dict] = []
    used: set[str] = set()
    for c in changes:
        if c["op"] == "create" and c.get("sha_after") in deleted and c["sha_after"] not in used:
            src = deleted[c["sha_after"]]
            used.add(c["sha_after"])
            c = {k: v for k, v in c.items() if k not in ("line_hashes", "context", "removed_hashes")}
            c.update(op="rename", ranges=[], added=0, removed=0)
            c["from"] = src["path"]
            c["class"], c["evidence"] = _cls.AST_REFACTOR, f"renamed from {src['path']} (content identical)"
        out.append(c)
    return [c for c in out if not (c["op"] == "delete" and c.get("sha_before") in used)]


def build_record(gov: Any, call: Any, changes: list[dict]) -> dict:
    """Assemble the Agent Trace record (without chain fields; :func:`ledger.append` adds them)."""
    import uuid

    from .. import ledger, vcs

    contributor: dict[str, Any] = {"type": "ai"}
    model = _get(call, "model_id")
    if model:
        contributor["model_id"] = str(model)[:250]
    files = [{"path": c["path"],
              "conversations": [{"contributor": contributor, "ranges": [r.to_dict() for r in c["ranges"]]}]}
             for c in changes]
    computed = _cls.combine([c["class"] for c in changes])
    declared_raw = _get(call, "mutation_class")
    declared = _cls.normalise_declared(declared_raw)
    meta_files = []
    for c in changes:
        m = {"path": c["path"], "op": c["op"], "added": c["added"], "removed": c["removed"]}
        if len(changes) > 1:  # per-file class/evidence only when they can differ from the record's
            m["mutation_class"], m["evidence"] = c["class"], c["evidence"]
        if "from" in c:
            m["from"] = c["from"]
        for flag in ("binary", "large", "unnamed", "out_of_scope", "governance"):
            if c.get(flag):
                m[flag] = True
        # Line tracking for blame/audit: file hashes before/after (hashes only, never content), line count and
        # hunks [old_start, old_lines, new_start, new_lines] (git -U0 numbering).
        if c.get("sha_before") and c["op"] != "delete":
            m["before"] = "sha256:" + c["sha_before"]
        if c.get("sha_after"):
            m["after"] = "sha256:" + c["sha_after"]
        if "lines" in c:
            m["lines"] = c["lines"]
        if "hunks" in c:
            m["hunks"] = c["hunks"]
        for k in ("line_hashes", "context", "removed_hashes"):
            if k in c:
                m[k] = c[k]
        meta_files.append(m)
    evidence = "; ".join((f"{c['path']}: " if len(changes) > 1 else "") + c["evidence"]
                         for c in changes if c["class"] == computed)
    rec: dict[str, Any] = {"version": ledger.SPEC_VERSION, "id": str(uuid.uuid4()), "timestamp": _now()}
    rev = vcs.head_revision(gov.workspace.root)
    if rev:
        rec["vcs"] = {"type": "git", "revision": rev}
    rec["tool"] = {"name": TOOL_NAME, "version": _version()}
    rec["files"] = files
    ns = {
        "intent_id": _get(call, "intent_id"),
        "mutation_class": computed,
        "declared_class": declared if declared else (str(declared_raw) if declared_raw else None),
        "class_mismatch": bool(declared_raw) and declared != computed,
        "evidence": evidence[:1000],
        "session_id": _get(call, "session_id"),
        "agent": _get(call, "agent"),
        "agent_id": _get(call, "agent_id"),
        "tool_name": str(_get(call, "tool") or "unknown"),
        "tool_use_id": _get(call, "tool_use_id"),
    }
    if not ns["tool_use_id"]:
        ns["call_id"] = _key_of(call)  # dedupe key for calls without a tool_use_id
    ns["files"] = meta_files
    rec["metadata"] = {ledger.NS: ns}
    return rec


def record(gov: Any, call: Any, result: dict | None = None) -> dict | None:
    """Compute the call's changes, classify them and append one record; returns it (None if nothing changed)."""
    from .. import ledger  # here, not at module level: the pre-hook's capture() must stay cheap to import

    key = _key_of(call)
    snap = _load_capture(gov, key)
    root = Path(gov.workspace.root)
    result = result if isinstance(result, dict) else {}
    targets = list((snap or {}).get("files", {}).keys())
    for t in _targets(gov, call):
        if t not in targets:
            targets.append(t)
    scan = (snap or {}).get("scan")
    found, scanned = _scan_changes(gov, scan, targets) if scan is not None else ({}, None)
    targets.extend(p for p in found if p not in targets)
    single = len(targets) == 1
    changes: list[dict] = []
    for path in targets:
        before = (snap or {}).get("files", {}).get(path) if path not in found else found[path]
        if single and ("originalFile" in result or result.get("type") == "create"):
            # Claude Code told us the pre-image: trust it over a (possibly missing) capture.
            orig = result.get("originalFile")
            if result.get("type") == "create" or orig is None:
                before = before if (before and before.get("exists")) else {"exists": False}
            else:
                before = {"exists": True, "text": orig,
                          "sha256": hashlib.sha256(orig.encode("utf-8", "surrogateescape")).hexdigest()}
        after = _snap_file(root / path)
        patch = result.get("structuredPatch") if single else None
        ch = _file_change(path, before, after, patch)
        if ch is not None:
            changes.append(ch)
    changes = _detect_renames(changes)
    try:
        if not changes:
            return None
        outside = _mark_scope(gov, call, changes, found)
        rec = build_record(gov, call, changes)
        ns = rec["metadata"][_ns_key()]
        if scanned is not None:
            ns["scan"] = scanned
        if outside:
            # reported, never undone: the ledger says what happened; the hook's answer warns (see warning())
            ns["out_of_scope"] = outside
        tuid = _get(call, "tool_use_id")
        dedupe = f'"tool_use_id":{json.dumps(str(tuid))}' if tuid else (f'"call_id":{json.dumps(key)}' if key
                                                                        else None)
        return ledger.append(gov.workspace.ledger_file, rec, fsync=_fsync_setting(gov), dedupe_key=dedupe)
    finally:
        _cleanup(gov, call, key)


# ------------------------------------------------------------------------------------- what a command changed

def _ns_key() -> str:
    from .. import ledger

    return ledger.NS


def _scan_changes(gov: Any, scan: dict, named: list[str]) -> tuple[dict[str, dict | None], dict]:
    """The files the shell command changed without naming them: path -> its before-snapshot (None: unknown,
    the whole file is attributed), and a summary for the record (roots scanned, truncated)."""
    from . import changes

    modified, deleted, truncated = changes.changed(gov, scan)
    known = set(named)
    files = scan.get("files") or {}
    new = [p for p in modified + deleted if p not in known]
    summary: dict[str, Any] = {"roots": [r or "." for r in scan.get("roots") or []][:20]}
    if scan.get("mode"):
        summary["mode"] = scan["mode"]
    if truncated:
        summary["truncated"] = True
    if not new:
        return {}, summary
    root = str(gov.workspace.root)
    # git mode: a path the snapshot does not hold was clean (or did not exist) for git: its index blob, if any
    trust = {p for p in new if p not in files} if scan.get("mode") == "git" else set()
    texts = changes.git_before(root, [p for p in new if p in files or p in trust], files, trust)
    out: dict[str, dict | None] = {}
    for p in new:
        text = texts.get(p)
        if text is not None:
            out[p] = {"exists": True, "text": text,
                      "sha256": hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()}
        elif p in texts:
            out[p] = {"exists": True} if p in deleted else None  # tracked, binary: no ranges anyway
        elif p not in files or files.get(p) == "-":
            out[p] = {"exists": False}  # created by the command: the whole new file is the change
        elif p in deleted:
            out[p] = {"exists": True}  # gone; its content was never read
        else:
            out[p] = None  # changed, but its content before the command is unknown: whole file, said so
    return out, summary


def _mark_scope(gov: Any, call: Any, changes: list[dict], found: dict) -> list[str]:
    """Flag each change the command made outside its intent's scope (or on a governance file); return their
    paths. A change found by the scan (not named by the command) is flagged ``unnamed``."""
    from ..governance import protected_by

    intent = None
    iid = _get(call, "intent_id")
    if iid:
        try:
            intent = gov.intents().get(str(iid))
        except Exception:  # noqa: BLE001 — a broken intents file must not lose the record
            intent = None
    outside: list[str] = []
    for c in changes:
        paths = [c["path"]] + ([c["from"]] if c.get("from") else [])
        if any(p in found for p in paths):
            c["unnamed"] = True
        gov_file = any(protected_by(p) for p in paths)
        out = gov_file or (intent is not None and not all(intent.owns(p) for p in paths))
        if gov_file:
            c["governance"] = True
        if out:
            c["out_of_scope"] = True
            outside.extend(paths)
    return sorted(set(outside))


def warning(record: dict | None) -> dict | None:
    """The structured warning for a record that holds changes outside the intent's scope (for the hook's
    answer), or None. Same shape as a denial: ``type``, ``hook``, ``message``, ``paths``, ``intent``, ``hint``."""
    if not record:
        return None
    ns = (record.get("metadata") or {}).get(_ns_key()) or {}
    paths = ns.get("out_of_scope")
    if not paths:
        return None
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return {"type": "out-of-scope-change", "hook": "trace",
            "message": f"the command changed files outside the scope of intent {ns.get('intent_id')}: {shown}",
            "paths": paths, "intent": ns.get("intent_id"), "record": record.get("id"),
            "hint": "these changes are recorded in the ledger as out of scope; undo them if they were not "
                    "meant (a person reviews them with `orch trace --out-of-scope`), and stay inside the scope"}
