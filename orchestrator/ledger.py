"""The trace ledger: an append-only, hash-chained JSONL file (``.orchestration/agent_trace.jsonl``).

Each line is one Agent Trace 0.1.0 record (see ``orchestrator/data/agent-trace.schema.json``); orchestrator's own
fields live under ``metadata["dev.orchestrator"]`` and the chain under ``metadata["dev.orchestrator"]["chain"]``.

Writing (:func:`append`)
    open with ``O_APPEND``, take an exclusive ``fcntl.flock``, read the last line's hash, build the line, **one**
    ``os.write`` of the whole line, ``fdatasync`` (default; ``fsync=False`` to skip), close (releases the lock).
    If the file does not end with ``"\\n"`` (a writer died mid-write) the torn tail is first moved to the quarantine
    file ``<ledger>.quarantine`` (appended, fsynced, then the ledger is truncated to the last complete line) so a new
    record is never glued onto a fragment. Nothing is ever deleted.

Line layout and hashes
    The line is ``json.dumps(record, separators=(",", ":"), ensure_ascii=True)`` with insertion order kept and
    ``metadata`` last, ``"dev.orchestrator"`` last in it and ``chain`` last in that, so every line ends with the
    fixed-size tail ``"chain":{"prev":"sha256:<64 hex>","hash":"sha256:<64 hex>"}}}}``.
    ``hash`` = sha256 of the exact line bytes with the hash *value* (``sha256:<hex>``) replaced by the empty string
    (i.e. of the line as it was before the hash was filled in). It covers every byte of the line, ``prev`` included.
    ``prev`` = the ``hash`` of the line that was last in the file when this record was appended, or
    :data:`GENESIS` for the first record.

Chain rule (what :func:`verify` accepts), designed so that a ``git merge`` with the union merge driver of two
branches that both appended records verifies, while edits, deletions and reorderings are still detected:
    1. every line is complete (ends with ``"\\n"``), has the fixed tail, and its ``hash`` matches its bytes
       (an edited byte anywhere in the line fails here, at that line);
    2. its ``prev`` is :data:`GENESIS` or the hash of an **earlier** line of the file — normally the line just
       before; after a union merge the first record of the "theirs" block points back to the common ancestor
       record, which is earlier in the file (a fork). A deleted record leaves its successor pointing at a hash that
       does not exist; swapping two lines makes the first of them point at a *later* line: both fail, at the line
       where the chain breaks;
    3. every hash in its optional ``merge_parents`` list also refers to an earlier line. The first record written
       after a merge lists there every other dangling head of the chain (the newest record of the "ours" block,
       which nothing else points to), so deleting that record is detected as well: it joins the merge back into
       one chain, like a merge commit;
    4. no hash appears twice (a duplicated/replayed line fails);
    5. the record passes the schema check (below).
    Known limits, inherent to any unsigned hash chain: removing the newest records (those no later record points
    to yet, e.g. right after a merge before anything else is appended) or rewriting a record together with every
    record after it (recomputing all hashes) is not detectable from the file alone; the git history of the
    versioned ledger is the anchor for that.
    Memory stays bounded: a first pass collects only the *non-linear* links (prev != previous line's hash, i.e. one
    per merge or per tampering) and the hashes of records carrying them; the second pass keeps just those.

Schema check
    :func:`check_record` is a hand-written structural check of everything the JSON schema requires (required keys,
    types, enums, integer minimums, version pattern, uuid shape, timestamp shape) plus orchestrator's metadata fields.
    Lines in the writer's canonical layout are checked by an equivalent compiled regex instead (``_canonical()``, no
    JSON parsing); other lines are parsed and go through :func:`check_record`.
    ``verify(strict=True)`` additionally runs full ``jsonschema`` (a dev extra) with format checking on every line;
    if jsonschema is not importable, strict falls back to the structural check and says so in the result.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

__all__ = [
    "NS",
    "SPEC_VERSION",
    "GENESIS",
    "GITATTRIBUTES_LINE",
    "LedgerError",
    "VerifyResult",
    "RepairResult",
    "append",
    "make_line",
    "line_hash",
    "iter_lines",
    "iter_records",
    "check_record",
    "verify",
    "repair",
    "quarantine_path",
    "scan_tips",
    "tips_path",
    "schema_path",
]

NS = "dev.orchestrator"
SPEC_VERSION = "0.1.0"
GENESIS = "sha256:" + "0" * 64
#: The line ``orch init`` writes to ``.gitattributes`` so ``git merge`` unions concurrent appends.
GITATTRIBUTES_LINE = ".orchestration/agent_trace.jsonl merge=union"

# Fixed-size tail of every line (see module docstring).
_T_HEAD = b'"chain":{"prev":"sha256:'
_T_MID = b'","hash":"sha256:'
_T_END = b'"}}}}'
_HEXLEN = 64
TAIL_LEN = len(_T_HEAD) + _HEXLEN + len(_T_MID) + _HEXLEN + len(_T_END)
_O_PREV = len(_T_HEAD)
_O_MID = _O_PREV + _HEXLEN
_O_HASH = _O_MID + len(_T_MID)
_O_END = _O_HASH + _HEXLEN
_HASHVAL_LEN = len("sha256:") + _HEXLEN  # what is blanked for hashing
_HEX_RE = re.compile(rb"[0-9a-f]{64}")


class LedgerError(Exception):
    """The ledger could not be written or read as expected."""


def schema_path() -> Path:
    """Path of the bundled Agent Trace JSON schema (the package does not depend on ../shared at runtime)."""
    return Path(__file__).resolve().parent / "data" / "agent-trace.schema.json"


def quarantine_path(ledger: str | os.PathLike[str]) -> Path:
    """Where torn tails are moved: ``<ledger>.quarantine`` next to the ledger."""
    return Path(os.fspath(ledger) + ".quarantine")


# --------------------------------------------------------------------------------------------------- line format

def _ordered(record: dict, prev: str, parents: list[str] | None = None) -> dict:
    """Copy of ``record`` with metadata/NS/chain moved last and the chain set to ``prev`` + empty hash."""
    rec = {k: v for k, v in record.items() if k != "metadata"}
    md_in = record.get("metadata") or {}
    md = {k: v for k, v in md_in.items() if k != NS}
    ns = {k: v for k, v in (md_in.get(NS) or {}).items() if k not in ("chain", "merge_parents")}
    if parents:
        ns["merge_parents"] = list(parents)
    ns["chain"] = {"prev": prev, "hash": ""}
    md[NS] = ns
    rec["metadata"] = md
    return rec


def make_line(record: dict, prev: str = GENESIS, parents: list[str] | None = None) -> tuple[bytes, dict]:
    """Serialise ``record`` chained after ``prev`` (and merge ``parents``); returns ``(line, record with chain)``."""
    rec = _ordered(record, prev, parents)
    blank = json.dumps(rec, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    if not blank.endswith(b'"hash":""}}}}'):
        raise LedgerError("record layout broken: metadata must be the last key")  # pragma: no cover
    h = "sha256:" + hashlib.sha256(blank).hexdigest()
    line = blank[:-len(_T_END)] + h.encode("ascii") + _T_END
    rec["metadata"][NS]["chain"]["hash"] = h
    return line, rec


def _split_tail(line: bytes) -> tuple[bytes, bytes] | None:
    """``(prev_hex, hash_hex)`` from a line (no newline) if it has the fixed tail, else None."""
    t = line[-TAIL_LEN:]
    if (len(t) != TAIL_LEN or t[:_O_PREV] != _T_HEAD or t[_O_MID:_O_HASH] != _T_MID or t[_O_END:] != _T_END):
        return None
    return t[_O_PREV:_O_MID], t[_O_HASH:_O_END]


def line_hash(line: bytes) -> str:
    """Recompute a line's chain hash from its bytes (newline excluded): sha256 with the hash value blanked."""
    blank = line[:-(len(_T_END) + _HASHVAL_LEN)] + _T_END
    return "sha256:" + hashlib.sha256(blank).hexdigest()


# ----------------------------------------------------------------------------------------------------- writing

def _last_line(fd: int, size: int) -> bytes:
    """The last complete line of the file (without its newline); reads backwards in chunks."""
    end = size - 1  # the final newline
    buf = b""
    pos = end
    while pos > 0:
        step = min(8192, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        nl = buf.rfind(b"\n")
        if nl >= 0:
            return buf[nl + 1:]
    return buf


def _prev_of(fd: int, size: int) -> str:
    if size == 0:
        return GENESIS
    tail = os.pread(fd, TAIL_LEN + 1, max(0, size - TAIL_LEN - 1))
    parts = _split_tail(tail[:-1])
    if parts is not None and _HEX_RE.fullmatch(parts[1]):
        return "sha256:" + parts[1].decode("ascii")
    # Not one of our lines (hand-edited / foreign): chain to the hash of its raw bytes; verify flags that line.
    return "sha256:" + hashlib.sha256(_last_line(fd, size)).hexdigest()


def _quarantine_locked(fd: int, ledger: str | os.PathLike[str], size: int) -> int:
    """Move bytes after the last newline to the quarantine file, then truncate. Caller holds the lock."""
    pos = size
    frag = b""
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        chunk = os.pread(fd, step, pos)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            frag = chunk[nl + 1:] + frag
            pos += nl + 1
            break
        frag = chunk + frag
    if not frag:
        return 0
    qfd = os.open(quarantine_path(ledger), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        data = frag + b"\n"
        if os.write(qfd, data) != len(data):
            raise LedgerError("short write to quarantine file")
        os.fsync(qfd)  # the fragment must be safe before we cut it from the ledger
    finally:
        os.close(qfd)
    os.ftruncate(fd, pos)
    return len(frag)


_MP_KEY = b'"merge_parents":['
_MP_RE = re.compile(rb'"merge_parents":\[((?:"sha256:[0-9a-f]{64}",?)*)\]')


def _merge_parents(line: bytes) -> list[bytes]:
    """Hex digests listed in a line's ``merge_parents`` (fast path: most lines have none)."""
    if _MP_KEY not in line:
        return []
    m = _MP_RE.search(line)
    return re.findall(rb"sha256:([0-9a-f]{64})", m.group(1)) if m else [b"<malformed>"]


def tips_path(ledger: str | os.PathLike[str]) -> Path:
    """Fallback cache of the chain's heads when the filesystem has no user xattrs:
    ``<ledger dir>/run/<ledger name>.tips`` (runtime state, gitignored)."""
    p = Path(os.fspath(ledger))
    return p.parent / "run" / (p.name + ".tips")


_XATTR = "user.orchestrator.heads"


def scan_tips(path: str | os.PathLike[str]) -> set[bytes]:
    """Hashes (hex) of records nothing points to yet: normally one; more after a union merge."""
    tips: set[bytes] = set()
    for _, line in iter_lines(path):
        parts = _split_tail(line.rstrip(b"\n"))
        if parts is None:
            continue
        tips.discard(parts[0])
        for mp in _merge_parents(line):
            tips.discard(mp)
        tips.add(parts[1])
    return tips


def _load_tips(fd: int, ledger: str, size: int, last: str) -> set[bytes] | None:
    """Cached heads, valid only if recorded for exactly this size and last hash; None = rescan."""
    try:
        raw = os.getxattr(fd, _XATTR)
    except OSError:
        try:
            with open(tips_path(ledger), "rb") as f:
                raw = f.read()
        except OSError:
            return None
    head, _, rest = raw.decode("ascii", "replace").partition("\n")
    if head.strip() != f"{size} {last}":
        return None  # the ledger changed behind the writers' back (git merge/checkout rewrote it): rescan
    return {t.encode("ascii") for t in rest.split()}


def _save_tips(fd: int, ledger: str, size: int, last: str, tips: set[bytes]) -> None:
    """Cache the heads as an xattr of the ledger file itself: no extra file to open or truncate per append, and
    git (which rewrites the file on merge/checkout) drops it, which forces the rescan that is needed then."""
    data = (f"{size} {last}\n" + "".join(t.decode("ascii") + "\n" for t in sorted(tips))).encode("ascii")
    try:
        os.setxattr(fd, _XATTR, data)
        return
    except OSError:
        pass
    try:  # no xattrs here: a side file, overwritten in place (no truncation: that forces a flush on ext4)
        tp = tips_path(ledger)
        tp.parent.mkdir(parents=True, exist_ok=True)
        tfd = os.open(tp, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            old = os.fstat(tfd).st_size
            os.pwrite(tfd, data.ljust(old, b" "), 0)
        finally:
            os.close(tfd)
    except OSError:
        pass  # only a cache: the next writer rescans


def append(path: str | os.PathLike[str], record: dict, *, fsync: bool = True,
           dedupe_key: str | None = None) -> dict | None:
    """Append ``record`` to the ledger at ``path`` (created if missing); returns the record with its chain fields.

    Safe across threads and processes (``flock``); one ``os.write`` per record. If the chain has other dangling
    heads than the last line (after a union merge), they are listed in ``merge_parents`` so that they become
    referenced too (see the module docstring); the heads are cached in an xattr of the ledger (else in
    :func:`tips_path`), validated against the ledger size and last hash, and rescanned (once, O(n)) when the file
    was changed by something else (git).
    ``dedupe_key``: if this exact
    JSON fragment (e.g. ``'"call_id":"toolu_1"'``) occurs in the last 64 KiB of the ledger, nothing is written
    and None is returned (a post-hook delivered twice must not log the same mutation twice).
    """
    p = os.fspath(path)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        fd = os.open(p, flags, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            _quarantine_locked(fd, p, size)
            size = os.fstat(fd).st_size
        if dedupe_key and size:
            window = os.pread(fd, min(size, 65536), max(0, size - 65536))
            if dedupe_key.encode("ascii", "backslashreplace") in window:
                return None
        prev = _prev_of(fd, size)
        tips = _load_tips(fd, p, size, prev) if size else set()
        if tips is None:
            tips = scan_tips(p)
        last_hex = prev[7:].encode("ascii")
        parents = sorted("sha256:" + t.decode("ascii") for t in tips if t != last_hex)
        line, rec = make_line(record, prev, parents)
        data = line + b"\n"
        n = os.write(fd, data)
        if n != len(data):  # pragma: no cover - disk full; leave a torn tail that the next writer quarantines
            raise LedgerError(f"short write to ledger ({n} of {len(data)} bytes)")
        if fsync:
            (getattr(os, "fdatasync", None) or os.fsync)(fd)
        h = rec["metadata"][NS]["chain"]["hash"]
        _save_tips(fd, p, size + n, h, {h[7:].encode("ascii")})
        return rec
    finally:
        os.close(fd)  # also releases the flock


# ----------------------------------------------------------------------------------------------------- reading

def _open_lines(path: str | os.PathLike[str], start: int = 0):
    """A binary file positioned at ``start``; iterating it yields raw lines (C-speed, bounded memory)."""
    f = open(path, "rb", buffering=1 << 20)
    f.seek(start)
    return f


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw line bytes including its newline if any)``; constant memory."""
    with open(path, "rb", buffering=1 << 20) as f:
        for i, line in enumerate(f, 1):
            yield i, line


def iter_records(path: str | os.PathLike[str], *, contains: bytes | None = None,
                 skip_bad: bool = True) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)``; constant memory.

    ``contains``: cheap byte pre-filter applied before JSON parsing (callers re-check the parsed field).
    Lines that are not JSON objects (torn tail, corruption) are skipped, or raise :class:`LedgerError` if
    ``skip_bad`` is False.
    """
    if not os.path.exists(path):
        return
    loads = json.loads
    for i, line in iter_lines(path):
        if contains is not None and contains not in line:
            continue
        try:
            obj = loads(line)
        except ValueError:
            if skip_bad:
                continue
            raise LedgerError(f"line {i}: not valid JSON") from None
        if isinstance(obj, dict):
            yield i, obj
        elif not skip_bad:
            raise LedgerError(f"line {i}: not a JSON object")


# ------------------------------------------------------------------------------------------------ schema check

_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\Z")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)\Z")
_VCS_TYPES = frozenset({"git", "jj", "hg", "svn"})
_CONTRIB_TYPES = frozenset({"human", "ai", "mixed", "unknown"})
_CLASSES = frozenset({"AST_REFACTOR", "INTENT_EVOLUTION"})


def _contrib_err(c: object, where: str) -> str | None:
    if type(c) is not dict:
        return f"{where}: contributor must be an object"
    if c.get("type") not in _CONTRIB_TYPES:
        return f"{where}: contributor.type invalid"
    m = c.get("model_id")
    if m is not None and (type(m) is not str or len(m) > 250):
        return f"{where}: contributor.model_id must be a string of <= 250 chars"
    return None


def check_record(r: object, *, ours: bool = True) -> str | None:
    """Structural schema check; returns None if valid, else a reason. ``ours`` also checks orchestrator metadata."""
    if type(r) is not dict:
        return "record is not a JSON object"
    v = r.get("version")
    if type(v) is not str or not _VERSION_RE.match(v):
        return "version missing or not x.y.z"
    i = r.get("id")
    if type(i) is not str or not _UUID_RE.match(i):
        return "id missing or not a uuid"
    t = r.get("timestamp")
    if type(t) is not str or not _TS_RE.match(t):
        return "timestamp missing or not RFC 3339"
    vcs = r.get("vcs")
    if vcs is not None and (type(vcs) is not dict or vcs.get("type") not in _VCS_TYPES
                            or type(vcs.get("revision")) is not str):
        return "vcs must have type (git/jj/hg/svn) and revision"
    tool = r.get("tool")
    if tool is not None and (type(tool) is not dict or any(type(tool[k]) is not str for k in ("name", "version")
                                                           if k in tool)):
        return "tool must be an object with string name/version"
    files = r.get("files")
    if type(files) is not list:
        return "files missing or not an array"
    for fi, f in enumerate(files):
        if type(f) is not dict or type(f.get("path")) is not str or type(f.get("conversations")) is not list:
            return f"files[{fi}]: needs path (string) and conversations (array)"
        for ci, c in enumerate(f["conversations"]):
            if type(c) is not dict or type(c.get("ranges")) is not list:
                return f"files[{fi}].conversations[{ci}]: needs ranges (array)"
            if "contributor" in c:
                e = _contrib_err(c["contributor"], f"files[{fi}].conversations[{ci}]")
                if e:
                    return e
            if "url" in c and type(c["url"]) is not str:
                return f"files[{fi}].conversations[{ci}]: url must be a string"
            for ri, rg in enumerate(c["ranges"]):
                if type(rg) is not dict:
                    return f"files[{fi}]...ranges[{ri}]: not an object"
                s, e_ = rg.get("start_line"), rg.get("end_line")
                if type(s) is not int or type(e_) is not int or s < 1 or e_ < 1:
                    return f"files[{fi}]...ranges[{ri}]: start_line/end_line must be integers >= 1"
                ch = rg.get("content_hash")
                if ch is not None and type(ch) is not str:
                    return f"files[{fi}]...ranges[{ri}]: content_hash must be a string"
    md = r.get("metadata")
    if md is not None and type(md) is not dict:
        return "metadata must be an object"
    if ours:
        ns = md.get(NS) if md else None
        if type(ns) is not dict:
            return f"metadata.{NS} missing"
        mc = ns.get("mutation_class")
        if mc not in _CLASSES:
            return f"metadata.{NS}.mutation_class must be AST_REFACTOR or INTENT_EVOLUTION"
        if type(ns.get("tool_name")) is not str or type(ns.get("files")) is not list:
            return f"metadata.{NS}: tool_name and files required"
        ch = ns.get("chain")
        if type(ch) is not dict or type(ch.get("prev")) is not str or type(ch.get("hash")) is not str:
            return f"metadata.{NS}.chain missing"
    return None


# Fast structural check for lines in the writer's own canonical layout (key order, compact separators, ASCII).
# A line this regex accepts is valid JSON and satisfies everything check_record() checks; any other line (another
# layout, extra fields, escapes in model_id) goes through json.loads + check_record(). ~5 µs instead of ~20 µs.
_S = rb'"[^"\\\x00-\x1f\x80-\xff]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f\x80-\xff]*)*"'  # JSON str
_SN = rb"(?:" + _S + rb"|null)"
_N = rb"(?:0|[1-9][0-9]*)"
_P = rb"[1-9][0-9]*"
_H = rb'"sha256:[0-9a-f]{64}"'
_RANGE = rb'\{"start_line":' + _P + rb',"end_line":' + _P + rb'(?:,"content_hash":' + _S + rb")?\}"
_CONV = (rb'\{"contributor":\{"type":"(?:human|ai|mixed|unknown)"'
         rb'(?:,"model_id":"[^"\\\x00-\x1f\x80-\xff]{0,250}")?\},'
         rb'"ranges":\[(?:' + _RANGE + rb"(?:," + _RANGE + rb")*)?\]\}")
_FILE = rb'\{"path":' + _S + rb',"conversations":\[(?:' + _CONV + rb"(?:," + _CONV + rb")*)?\]\}"
_CLS_RX = rb'"(?:AST_REFACTOR|INTENT_EVOLUTION)"'
_LH = rb'"[0-9a-f]{10}"'
_LHN = rb"(?:" + _LH + rb"|null)"
_LHS = rb"\[(?:" + _LH + rb"(?:," + _LH + rb")*)?\]"
_CTX = rb"\[" + _LHN + rb"," + _LHN + rb"\]"
_HUNK = rb"\[" + _N + rb"," + _N + rb"," + _N + rb"," + _N + rb"\]"
_META = (rb'\{"path":' + _S + rb',"op":"(?:create|modify|delete|rename)","added":' + _N + rb',"removed":' + _N
         + rb'(?:,"mutation_class":' + _CLS_RX + rb',"evidence":' + _S + rb")?(?:,\"from\":" + _S
         + rb')?(?:,"binary":true)?(?:,"large":true)?(?:,"before":' + _H + rb')?(?:,"after":' + _H
         + rb')?(?:,"lines":' + _N + rb')?(?:,"hunks":\[(?:' + _HUNK + rb"(?:," + _HUNK + rb")*)?\])?"
         + rb'(?:,"line_hashes":\[(?:' + _LHS + rb"(?:," + _LHS + rb")*)?\])?"
         + rb'(?:,"context":\[(?:' + _CTX + rb"(?:," + _CTX + rb")*)?\])?"
         + rb'(?:,"removed_hashes":' + _LHS + rb")?\}")
_NSRX = (rb'"dev\.orchestrator":\{"intent_id":' + _SN + rb',"mutation_class":' + _CLS_RX
         + rb',"declared_class":' + _SN + rb',"class_mismatch":(?:true|false),"evidence":' + _S
         + rb',"session_id":' + _SN + rb',"agent":' + _SN + rb',"agent_id":' + _SN + rb',"tool_name":' + _S
         + rb',"tool_use_id":' + _SN + rb'(?:,"call_id":' + _SN + rb")?"
         + rb',"files":\[(?:' + _META + rb"(?:," + _META + rb")*)?\]"
         + rb'(?:,"merge_parents":\[' + _H + rb"(?:," + _H + rb")*\])?"
         + rb',"chain":\{"prev":' + _H + rb',"hash":' + _H + rb"\}\}")
_CANONICAL_SRC = (
    rb'\{"version":"[0-9]+\.[0-9]+\.[0-9]+",'
    rb'"id":"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",'
    rb'"timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})",'
    rb'(?:"vcs":\{"type":"(?:git|jj|hg|svn)","revision":' + _S + rb"\},)?"
    rb'"tool":\{"name":' + _S + rb',"version":' + _S + rb"\},"
    rb'"files":\[(?:' + _FILE + rb"(?:," + _FILE + rb")*)?\],"
    rb'"metadata":\{' + _NSRX + rb"\}\}")
_canonical_rx: re.Pattern[bytes] | None = None


def _canonical() -> re.Pattern[bytes]:
    """The compiled fast-path regex (compiled on first use: ~10 ms, kept off the hook's import path)."""
    global _canonical_rx
    if _canonical_rx is None:
        _canonical_rx = re.compile(_CANONICAL_SRC)
    return _canonical_rx


def _strict_validator():
    try:
        import jsonschema  # dev extra: full validation only where installed
    except ImportError:
        return None
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


# ------------------------------------------------------------------------------------------------------ verify

@dataclass
class VerifyResult:
    """Outcome of :func:`verify`. ``bad_line`` is the 1-based number of the first bad line (None when ok)."""

    ok: bool
    records: int = 0
    bad_line: int | None = None
    reason: str | None = None
    torn: bool = False
    forks: int = 0
    heads: int = 0
    schema: str = "structural"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-friendly form."""
        return {"ok": self.ok, "records": self.records, "bad_line": self.bad_line, "reason": self.reason,
                "torn": self.torn, "forks": self.forks, "heads": self.heads, "schema": self.schema, "notes": self.notes}


def _check_lines(path: str, start: int, end: int | None, schema: bool, strict: bool
                 ) -> tuple[int, int | None, str | None, bool]:
    """Per-line checks that need no context (tail layout, own hash, JSON, schema) on bytes [start, end).

    Returns ``(lines checked, 0-based index of the first bad line or None, reason, torn)``. Runs in worker
    processes for big ledgers, so it only takes picklable arguments.
    """
    import gc
    validator = _strict_validator() if strict else None
    loads = json.loads
    sha = hashlib.sha256
    cut = len(_T_END) + _HASHVAL_LEN
    te = _T_END
    check = check_record
    canonical = _canonical().fullmatch
    count = 0
    gc_was = gc.isenabled()
    gc.disable()  # parsed records are acyclic and dropped at once: the cyclic GC would only cost time
    try:
        with _open_lines(path, start) as f:
            pos = start
            for raw in f:
                if end is not None and pos >= end:
                    break
                pos += len(raw)
                if raw[-1:] != b"\n":
                    return count, count, "torn last line (incomplete write); run `orch trace repair`", True
                line = raw[:-1]
                if not line:
                    return count, count, "empty line", False
                parts = _split_tail(line)
                if parts is None:
                    return count, count, "not a chained orchestrator record (chain tail missing or malformed)", \
                        False
                hh = sha(memoryview(line)[:-cut])
                hh.update(te)
                if hh.hexdigest().encode("ascii") != parts[1]:
                    return count, count, "record content does not match its hash (edited)", False
                if schema and (validator is not None or canonical(line) is None):
                    try:
                        obj = loads(line)
                    except ValueError as e:
                        return count, count, f"not valid JSON: {e}", False
                    why = check(obj)
                    if why:
                        return count, count, f"schema: {why}", False
                    if validator is not None:
                        errs = sorted(validator.iter_errors(obj), key=lambda e: list(e.path))
                        if errs:
                            where = "/".join(map(str, errs[0].path))
                            return count, count, f"jsonschema: {errs[0].message} at /{where}", False
                count += 1
    finally:
        if gc_was:
            gc.enable()
    return count, None, None, False


def _chunks(path: str, n: int) -> list[tuple[int, int | None]]:
    """Split the file into ``n`` byte ranges that start at line starts."""
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as f:
        for k in range(1, n):
            f.seek(max(size * k // n, bounds[-1]))
            if f.tell() > 0:
                f.readline()  # move to the next line start
            pos = f.tell()
            if pos > bounds[-1] and pos < size:
                bounds.append(pos)
    return [(b, bounds[i + 1] if i + 1 < len(bounds) else None) for i, b in enumerate(bounds)]


#: Ledgers bigger than this are verified with worker processes (one per CPU, at most 4).
PARALLEL_MIN_BYTES = 32 * 1024 * 1024


def verify(path: str | os.PathLike[str], *, strict: bool = False, schema: bool = True,
           workers: int | None = None) -> VerifyResult:
    """Verify chain and schema of the ledger; reports the first bad line (see the module docstring for rules).

    ``schema=False`` checks the chain only (no JSON parsing); ``strict=True`` adds full jsonschema validation.
    The context-free per-line checks (own hash, JSON, schema) run in ``workers`` processes for big ledgers
    (default: one per CPU up to 4 when the file is over 32 MiB); the links between lines are checked here.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        return VerifyResult(ok=True, notes=["ledger does not exist"])
    res = VerifyResult(ok=True)
    if strict:
        res.schema = "jsonschema+structural" if _strict_validator() is not None else \
            "structural (jsonschema not installed)"
    elif not schema:
        res.schema = "none (chain only)"
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if os.path.getsize(p) >= PARALLEL_MIN_BYTES else 1
    pool = futures = None
    if workers > 1:
        import concurrent.futures
        import multiprocessing
        pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        futures = [pool.submit(_check_lines, p, a, b, schema or strict, strict) for a, b in _chunks(p, workers)]
    try:
        link_bad, link_reason, n_lines, forks, heads = _check_links(p)
        if futures is None:
            results = [_check_lines(p, 0, None, schema or strict, strict)]
        else:
            results = [f.result() for f in futures]
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    res.forks, res.heads = forks, heads
    # First bad line over both kinds of checks (a line's own problem wins over a link problem on the same line).
    base = 0
    line_bad: tuple[int, str, bool] | None = None
    for count, bad, why, torn in results:
        if bad is not None:
            line_bad = (base + bad + 1, str(why), torn)
            break
        base += count
    if line_bad is not None and (link_bad is None or line_bad[0] <= link_bad):
        res.ok, res.bad_line, res.reason, res.torn = False, line_bad[0], line_bad[1], line_bad[2]
        res.records = line_bad[0] - 1
    elif link_bad is not None:
        res.ok, res.bad_line, res.reason = False, link_bad, link_reason
        res.records = link_bad - 1
    else:
        res.records = n_lines
    return res


def _check_links(p: str) -> tuple[int | None, str | None, int, int, int]:
    """The chain links (prev / merge_parents / duplicates) in two streaming passes with bounded memory.

    Returns ``(first bad line, reason, lines, forks, heads)``. Lines whose tail is malformed are skipped here
    (:func:`_check_lines` reports them).
    """
    zero = b"0" * 64
    th, tm, te = _T_HEAD, _T_MID, _T_END
    L, oP, oM, oH, oE = TAIL_LEN, _O_PREV, _O_MID, _O_HASH, _O_END
    mpk = _MP_KEY
    # Pass 1: only the non-linear links (forks from merges, or tampering) and their records' hashes.
    nonlinear: set[bytes] = set()
    heads: set[bytes] = set()
    last: bytes | None = None
    ten = te + b"\n"
    n = 0
    with _open_lines(p) as f:
        for line in f:
            n += 1
            b0 = len(line) - L - 1
            if b0 < 0 or not (line.endswith(ten) and line.startswith(th, b0) and line.startswith(tm, b0 + oM)):
                last = None
                continue
            prev = line[b0 + oP:b0 + oM]
            h = line[b0 + oH:b0 + oE]
            if prev != last and prev != zero:
                nonlinear.add(prev)
                nonlinear.add(h)  # a record with a non-linear link may be a duplicate: track its hash too
            if mpk in line:
                for mp in _merge_parents(line):
                    nonlinear.add(mp)
                    heads.discard(mp)
            heads.discard(prev)
            heads.add(h)
            last = h
    n_heads = len(heads)
    del heads
    if not nonlinear:
        # Every record pointed at the line just before it (or was a genesis): nothing can be missing,
        # reordered or duplicated, so the second pass is not needed (the common case without merges).
        return None, None, n, 0, n_heads
    # Pass 2: every link must point to an earlier line.
    seen: set[bytes] = set()
    last = None
    forks = 0
    n = 0
    with _open_lines(p) as f:
        for line in f:
            n += 1
            b0 = len(line) - L - 1
            if b0 < 0 or not (line.endswith(ten) and line.startswith(th, b0) and line.startswith(tm, b0 + oM)):
                last = None
                continue
            prev = line[b0 + oP:b0 + oM]
            h = line[b0 + oH:b0 + oE]
            if prev == last or prev == zero:
                pass
            elif prev in seen:
                forks += 1
            else:
                return (n, "prev hash does not refer to an earlier record (a record was deleted or lines "
                        "reordered)", n, forks, n_heads)
            if mpk in line:
                for mp in _merge_parents(line):
                    if mp not in seen:
                        return (n, "merge parent does not refer to an earlier record (a record was deleted or "
                                "moved)", n, forks, n_heads)
            if h in nonlinear:
                if h in seen:
                    return n, "duplicate record (same hash appears twice)", n, forks, n_heads
                seen.add(h)
            last = h
    return None, None, n, forks, n_heads


# ------------------------------------------------------------------------------------------------------ repair

@dataclass
class RepairResult:
    """What :func:`repair` did."""

    quarantined_bytes: int
    quarantine: Path | None


def repair(path: str | os.PathLike[str]) -> RepairResult:
    """Move a torn last line (no trailing newline) to ``<ledger>.quarantine``; never deletes data.

    Only the torn tail is handled; a bad line in the middle is reported by :func:`verify` and left for a human.
    """
    p = os.fspath(path)
    if not os.path.exists(p):
        return RepairResult(0, None)
    fd = os.open(p, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return RepairResult(0, None)
        n = _quarantine_locked(fd, p, size)
        os.fsync(fd)
        return RepairResult(n, quarantine_path(p))
    finally:
        os.close(fd)
