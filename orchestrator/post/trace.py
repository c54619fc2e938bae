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
    a ``models.ToolResult`` or None: what the tool's run told, translated out of the agent's response by its adapter
    (``created``/``original``: the one target's pre-image; ``hunks``: the tool's own diff of it).

Pre-image sources, in order: the tool's own (``result.created`` / ``result.original``, single-target calls), the
snapshot taken by :func:`capture` (:mod:`orchestrator.post.preimage`, which the pre-hook imports alone; re-exported
here for older callers; memory, then ``run_dir/preimages/<key>.json``), and otherwise the tool's
``result.hunks`` (ranges only) or, with nothing at all, the whole current file as one range with evidence
"no pre-image".

Never stored in the ledger: file contents. Never recorded twice: the ledger append is skipped when a record with the
same ``tool_use_id`` (else ``call_id``, the capture key) is among the last 64 KiB of the ledger (checked under the
ledger lock), and calls that changed
nothing produce no record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.core import diffing
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.models import ToolResult
from . import preimage, revert, swap
from .preimage import MAX_DIR_FILES, MAX_TEXT_BYTES, capture


class _LazyClassify:
    """``classify`` (ast, pickle, tree-sitter) is only needed by record(); keep it off capture()'s import path."""

    def __getattr__(self, name: str) -> Any:
        from orchestrator.classify import mutation as classify
        return getattr(classify, name)


_cls = _LazyClassify()

__all__ = ["capture", "record", "build_record", "warning", "Unpaired", "TOOL_NAME", "MAX_TEXT_BYTES",
           "MAX_DIR_FILES"]

TOOL_NAME = "orchestrator"
#: Hunks are stored (for blame's line tracking) up to this many per file.
MAX_HUNKS = 200
#: Per-line hashes (blame/audit metadata) are stored for at most this many written (and removed) lines per file.
MAX_LINE_HASHES = 4000
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


# -------------------------------------------------------------------------------------------------- record

def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _file_change(path: str, before: dict | None, after: dict, tool_hunks: list | None) -> dict | None:
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
        if tool_hunks is not None:
            nl = diffing.split_lines(new_text)
            ranges = diffing.ranges_from_hunks(nl, tool_hunks)
            ch.update(op="modify", ranges=ranges, added=sum(h.new_lines for h in tool_hunks),
                      removed=sum(h.old_lines for h in tool_hunks))
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

    from orchestrator import ledger
    from orchestrator.vcs import revision as vcs

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
        for flag in ("binary", "large", "unnamed", "out_of_scope", "governance", "swapped"):
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
        ns["call_id"] = preimage.key_of(call)  # dedupe key for calls without a tool_use_id
    ns["files"] = meta_files
    rec["metadata"] = {ledger.NS: ns}
    return rec


def _annotate(ns: dict, snap: dict | None, call: Any, unpaired: bool) -> None:
    """What the record says about how the call got through: unpaired, and who approved it."""
    if unpaired:
        ns["unpaired"] = True  # no pre-hook could be matched with this call (the agent's post names no id)
    approval = (snap or {}).get("approval") or _get(call, "approval")
    if isinstance(approval, dict) and approval:
        ns["approval"] = approval  # which person (passkey approver) or grant let the call through


def record(gov: Any, call: Any, result: ToolResult | None = None) -> dict | None:
    """Compute the call's changes, classify them and append one record; returns it (None if nothing changed)."""
    from .. import ledger  # here, not at module level: the pre-hook's capture() must stay cheap to import

    if result is not None and not isinstance(result, ToolResult):
        # an agent's own response (a dict) is translated by its adapter, never read here
        raise TypeError(f"trace.record takes an orchestrator.core.models.ToolResult, not {type(result).__name__}")
    key = preimage.key_of(call)
    snap = preimage.load_capture(gov, key)
    unpaired = _check_pairing(snap, call, key)
    root = Path(gov.workspace.root)
    targets = list((snap or {}).get("files", {}).keys())
    for t in preimage.targets(gov, call):
        if t not in targets:
            targets.append(t)
    scan = (snap or {}).get("scan")
    found, scanned = _scan_changes(gov, scan, targets) if scan is not None else ({}, None)
    targets.extend(p for p in found if p not in targets)
    swaps = swap.detect(snap, call)
    if swaps:
        # the write followed a link swapped in after the pre-hook: the allowed paths are judged by what they hold
        # now (restored below), the tool's pre-image belongs to the file it really wrote
        targets = [t for t in targets if t not in swaps.values()]
        _release_too(call, [p for p in swaps.values() if p])
    single = len(targets) == 1
    changes: list[dict] = []
    for path in targets:
        before = (snap or {}).get("files", {}).get(path) if path not in found else found[path]
        if path in swaps:
            # where a swapped-in link led: what the file held before is not known to the engine (the tool's own
            # pre-image names the content the agent may have put there: never trusted for it)
            before = None
        elif single and result is not None and result.pre_image_known:
            # the tool told us the pre-image: trust it over a (possibly missing) capture
            orig = result.original
            if result.created or orig is None:
                before = before if (before and before.get("exists")) else {"exists": False}
            else:
                before = {"exists": True, "text": orig,
                          "sha256": hashlib.sha256(orig.encode("utf-8", "surrogateescape")).hexdigest()}
        after = preimage.snap_file(root / path)
        ch = _file_change(path, before, after, result.hunks if single and result is not None else None)
        if ch is not None:
            changes.append(ch)
    changes = _detect_renames(changes)
    put_back = swap.restore(str(root), swaps, (snap or {}).get("files", {}), _may_write(gov, call)) if swaps else {}
    try:
        if not changes:
            return None
        outside = _mark_scope(gov, call, changes, found)
        for c in changes:
            if c["path"] in swaps:
                c["out_of_scope"] = c["swapped"] = True
                outside = sorted({*outside, c["path"]})
        rec = build_record(gov, call, changes)
        ns = rec["metadata"][_ns_key()]
        _annotate(ns, snap, call, unpaired)
        if scanned is not None:
            ns["scan"] = scanned
        if outside:
            # reported, never undone: the ledger says what happened; the hook's answer warns (see warning())
            ns["out_of_scope"] = outside
            # ...except a governance file the command created inside the scope (Landlock cannot refuse a name):
            # removed, so nothing planted outlives the command (post/revert.py)
            removed = revert.remove(str(root), revert.created_governance(changes))
            if removed:
                ns["removed"] = removed
        if swaps:
            # ...except a write through a swapped link: undone where its pre-image is known (post/swap.py)
            ns["swapped"] = [_swapped(w, a, put_back) for w, a in swaps.items()]
        tuid = _get(call, "tool_use_id")
        dedupe = f'"tool_use_id":{json.dumps(str(tuid))}' if tuid else (f'"call_id":{json.dumps(key)}' if key
                                                                        else None)
        signer, anchor = _signing(gov)
        return ledger.append(gov.workspace.ledger_file, rec, fsync=_fsync_setting(gov), dedupe_key=dedupe,
                             signer=signer, anchor=anchor)
    finally:
        preimage.cleanup(gov, call, key)


class Unpaired(OrchestratorError):
    """A mutating post-hook event that no pre-hook of the same session allowed: nothing is recorded, restored or
    stamped for it (issue 28: a forged PostToolUse must not become a record signed with the machine's key)."""

    type = "post-unpaired"


def _check_pairing(snap: dict | None, call: Any, key: str | None) -> bool:
    """Whether the post-hook may act on ``call``: its pre-hook's capture names the same session and tool. Raises
    :class:`Unpaired` when not (a capture of another session is left in place for that session's own post). Returns
    True for a post that cannot be paired by design (``call.pairless``: the agent's event carries no id, Cursor's
    ``afterFileEdit``) and found no capture: it is recorded, flagged ``unpaired``."""
    if snap is None:
        if _get(call, "pairless"):
            return True
        raise Unpaired("no pre-hook allowed this call: the post-hook event is not acted on",
                       hint="every mutating call passes the pre-hook first; a post-hook event with an id no pre-hook "
                            "saw (or none at all) is refused", session=_get(call, "session_id"),
                       tool=_get(call, "tool"), tool_use_id=key)
    if snap.get("session", _get(call, "session_id")) != _get(call, "session_id") or \
            snap.get("tool", _get(call, "tool")) != _get(call, "tool"):
        if key is not None:
            preimage.keep(key, snap)
        raise Unpaired(f"the pre-hook of this call id allowed another session's {snap.get('tool')} call",
                       hint="a session's events change that session only", session=_get(call, "session_id"),
                       tool=_get(call, "tool"), tool_use_id=key)
    return False


def _swapped(written: str, allowed: str | None, put_back: dict[str, str]) -> dict[str, Any]:
    """One swap as the record tells it: the written path is never restored (post/swap.py)."""
    entry: dict[str, Any] = {"written": written, "allowed": allowed, "restored": False,
                             "allowed_restored": allowed is not None and put_back.get(allowed) == "restored"}
    outcome = put_back.get(allowed) if allowed is not None else None
    if outcome not in (None, "restored", swap.UNCHANGED):
        entry["allowed_refused"] = outcome
    return entry


def _may_write(gov: Any, call: Any) -> Callable[[str], bool]:
    """Whether the post-hook may put a file back at ``rel``: not a governance path, and inside the call's intent's
    scope (the pre-hook allowed the write there; checked again, lexically, since the restore must not trust it)."""
    from orchestrator.core.governance import protected_by

    intent = None
    iid = _get(call, "intent_id")
    if iid:
        try:
            intent = gov.intents().get(str(iid))
        except Exception:  # noqa: BLE001 — a broken intents file: nothing is owned, nothing is written
            intent = None

    def may(rel: str) -> bool:
        return protected_by(rel) is None and intent is not None and bool(intent.owns(rel))

    return may


def _release_too(call: Any, paths: list[str]) -> None:
    """Have the Governor release the write leases of ``paths`` as well (the allowed targets a swap moved away)."""
    leased = _get(call, "leased")
    if isinstance(leased, list):
        leased.extend(p for p in paths if p not in leased)


def _signing(gov: Any) -> tuple[Any, Any]:
    """This machine's signer and the ledger's local anchor (docs/ledger.md §4a). A key that cannot be loaded or
    created leaves the record unsigned (``verify`` then reports it) rather than losing it. The first signed append
    to a workspace without ``trusted_keys`` creates that file with this machine's public key."""
    from orchestrator.state import keys
    from ..ledger import anchor
    from ..ledger.signing import local_signer

    ledger_file = gov.workspace.ledger_file
    try:
        signer = local_signer()
    except (keys.KeyFileError, OSError, ValueError):
        signer = None
    if signer is not None and not keys.trusted_path(ledger_file.parent).exists():
        try:
            keys.add_trusted(ledger_file.parent, keys.own_public_line())
        except (keys.KeyFileError, OSError):
            pass
    try:
        where = anchor.for_workspace(gov.workspace.root, ledger_file)
    except OSError:
        where = None
    return signer, where


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
    from orchestrator.core.governance import protected_by

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
    if ns.get("swapped"):
        return swap.warning(record, ns)
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    removed = ns.get("removed") or []
    undone = f"; governance files it created were removed: {', '.join(removed[:10])}" if removed else ""
    return {"type": "out-of-scope-change", "hook": "trace",
            "message": f"the command changed files outside the scope of intent {ns.get('intent_id')}: {shown}"
                       f"{undone}",
            "paths": paths, "intent": ns.get("intent_id"), "record": record.get("id"),
            **({"removed": removed} if removed else {}),
            "hint": "these changes are recorded in the ledger as out of scope; undo them if they were not "
                    "meant (a person reviews them with `orch trace --out-of-scope`), and stay inside the scope"}
