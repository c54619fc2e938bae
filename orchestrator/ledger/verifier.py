"""Verifying the chain and schema of the ledger (:func:`verify`) and repairing a torn tail (:func:`repair`).

The rules are in the :mod:`orchestrator.ledger` package docstring.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from .format import (_HASHVAL_LEN, _MP_KEY, _O_END, _O_HASH, _O_MID, _O_PREV, _T_END, _T_HEAD, _T_MID, TAIL_LEN,
                     _merge_parents, _split_tail, quarantine_path)
from .read import _open_lines, loads_record
from .schema import _canonical, _strict_validator, check_record
from .write import _quarantine_locked, locked

#: at most this many signature problems are listed one by one (all are counted)
MAX_LISTED = 50

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
    #: signatures (docs/ledger.md §4a): counts, and the problems (``{"line", "kind", "key", "message"}``)
    signatures: str = "checked"
    signed: int = 0
    legacy: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-friendly form."""
        return {"ok": self.ok, "records": self.records, "bad_line": self.bad_line, "reason": self.reason,
                "torn": self.torn, "forks": self.forks, "heads": self.heads, "schema": self.schema, "notes": self.notes,
                "signatures": self.signatures, "signed": self.signed, "legacy": self.legacy, "counts": self.counts,
                "problems": self.problems, "hints": self.hints}

    def problem(self, line: int | None, kind: str, message: str, key: str = "") -> None:
        """Add a problem: the result is not ok; the first problem is the reason when nothing else failed first."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(self.problems) < MAX_LISTED:
            self.problems.append({"line": line, "kind": kind, "key": key, "message": message})
        if self.ok:
            self.ok, self.bad_line, self.reason = False, line, message


class _SigTally:
    """Per-line signature results of one chunk of the file (picklable: it travels back from worker processes)."""

    def __init__(self, trusted: dict[str, bytes], ledger_id: str, first_chunk: bool) -> None:
        from .signing import Checker
        self._checker: Checker | None = Checker(trusted)
        self._ledger_id = ledger_id
        self._first_chunk = first_chunk
        self.signed = 0
        self.first_signed: int | None = None
        self.unsigned: list[list[int]] = []  # runs [first, last] of chunk-local line indexes
        self.bad: list[tuple[int, str, str]] = []  # (index, kind, key id), capped
        self.bad_counts: dict[str, int] = {}

    def see(self, i: int, line: bytes) -> None:
        from .format import GENESIS
        assert self._checker is not None
        expected = GENESIS if (self._first_chunk and i == 0) else self._ledger_id
        why = self._checker.check(line, expected)
        if why is None:
            self.signed += 1
            if self.first_signed is None:
                self.first_signed = i
            return
        kind, kid = why
        if kind == "unsigned":
            if self.unsigned and self.unsigned[-1][1] == i - 1:
                self.unsigned[-1][1] = i
            elif len(self.unsigned) < 10 * MAX_LISTED:
                self.unsigned.append([i, i])
            return
        if self.first_signed is None:
            self.first_signed = i  # a signature block, even a bad one, ends the legacy prefix
        self.bad_counts[kind] = self.bad_counts.get(kind, 0) + 1
        if len(self.bad) < MAX_LISTED:
            self.bad.append((i, kind, kid))

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_checker"} | {"_checker": None}


def _check_lines(path: str, start: int, end: int | None, schema: bool, strict: bool,
                 trust: tuple[dict[str, bytes], str] | None = None
                 ) -> tuple[int, int | None, str | None, bool, _SigTally | None]:
    """Per-line checks that need no context (tail layout, own hash, JSON, schema, signature) on bytes [start, end).

    Returns ``(lines checked, 0-based index of the first bad line or None, reason, torn, signature tally)``;
    ``trust`` = ``(trusted keys, ledger identity)`` turns the signature check on. Runs in worker processes for big
    ledgers, so it only takes picklable arguments.
    """
    import gc
    validator = _strict_validator() if strict else None
    tally = _SigTally(trust[0], trust[1], start == 0) if trust is not None else None
    loads = loads_record
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
                    return count, count, "torn last line (incomplete write); run `orch trace repair`", True, tally
                line = raw[:-1]
                if not line:
                    return count, count, "empty line", False, tally
                parts = _split_tail(line)
                if parts is None:
                    return count, count, "not a chained orchestrator record (chain tail missing or malformed)", \
                        False, tally
                hh = sha(memoryview(line)[:-cut])
                hh.update(te)
                if hh.hexdigest().encode("ascii") != parts[1]:
                    return count, count, "record content does not match its hash (edited)", False, tally
                if schema and (validator is not None or canonical(line) is None):
                    why = _parsed_problem(line, loads, check, validator)
                    if why:
                        return count, count, why, False, tally
                if tally is not None:
                    tally.see(count, line)
                count += 1
    finally:
        if gc_was:
            gc.enable()
    return count, None, None, False, tally


def _parsed_problem(line: bytes, loads, check, validator) -> str | None:
    """What is wrong with a line the fast path did not accept: JSON (duplicate keys included), schema, jsonschema."""
    try:
        obj = loads(line)
    except ValueError as e:
        return f"not valid JSON: {e}"
    why = check(obj)
    if why:
        return f"schema: {why}"
    if validator is not None:
        errs = sorted(validator.iter_errors(obj), key=lambda e: list(e.path))
        if errs:
            where = "/".join(map(str, errs[0].path))
            return f"jsonschema: {errs[0].message} at /{where}"
    return None


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
#: ... and this when signatures are checked (about 3,000 records)
SIGNED_PARALLEL_MIN_BYTES = 4 * 1024 * 1024


def verify(path: str | os.PathLike[str], *, strict: bool = False, schema: bool = True,
           workers: int | None = None, signatures: bool = True, anchor: Path | None = None) -> VerifyResult:
    """Verify chain, schema and signatures of the ledger; reports the first bad line (rules: the package docstring
    and docs/ledger.md §4a).

    ``schema=False`` checks the chain only (no JSON parsing, no signatures); ``strict=True`` adds full jsonschema
    validation. ``signatures`` checks every line's Ed25519 signature against the trusted keys next to the ledger
    (``trusted_keys``): lines before the first signed one are *legacy* (counted, accepted); an unsigned line after
    it, a bad signature, an unknown key or another ledger's record is a problem. ``anchor``: this machine's local
    anchor file (:mod:`~orchestrator.ledger.anchor`); the record it names must still be in the file.
    The context-free per-line checks run in ``workers`` processes for big ledgers (default: one per CPU up to 4
    when the file is over 32 MiB); the links between lines are checked here.
    """
    p = os.fspath(path)
    res = VerifyResult(ok=True)
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        res.notes.append("ledger does not exist" if not os.path.exists(p) else "ledger is empty")
        _check_anchor(res, p, anchor, None)
        return res
    if strict:
        res.schema = "jsonschema+structural" if _strict_validator() is not None else \
            "structural (jsonschema not installed)"
    elif not schema:
        res.schema = "none (chain only)"
    signatures = signatures and (schema or strict)
    trust = _trust(res, p) if signatures else None
    if not signatures:
        res.signatures = "not checked"
    if workers is None:
        # an Ed25519 check (~120 µs) outweighs everything else per line: signed ledgers go parallel much sooner
        floor = SIGNED_PARALLEL_MIN_BYTES if trust is not None else PARALLEL_MIN_BYTES
        workers = min(os.cpu_count() or 1, 4) if os.path.getsize(p) >= floor else 1
    pool = futures = None
    if workers > 1:
        import concurrent.futures
        import multiprocessing
        pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        futures = [pool.submit(_check_lines, p, a, b, schema or strict, strict, trust)
                   for a, b in _chunks(p, workers)]
    try:
        link_bad, link_reason, n_lines, forks, heads = _check_links(p)
        if futures is None:
            results = [_check_lines(p, 0, None, schema or strict, strict, trust)]
        else:
            results = [f.result() for f in futures]
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    res.forks, res.heads = forks, heads
    # First bad line over both kinds of checks (a line's own problem wins over a link problem on the same line).
    base = 0
    line_bad: tuple[int, str, bool] | None = None
    for count, bad, why, torn, _ in results:
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
    if trust is not None:
        _merge_tallies(res, results)
    _check_anchor(res, p, anchor, n_lines)
    return res


def _trust(res: VerifyResult, p: str) -> tuple[dict[str, bytes], str]:
    """The trusted keys next to the ledger and the ledger's identity (its first line's hash)."""
    from orchestrator.state.keys import TRUSTED_NAME, load_trusted
    from .signing import ledger_identity

    found = load_trusted(os.path.dirname(os.path.abspath(p)))
    if found is None:
        res.notes.append(f"no {TRUSTED_NAME} file next to the ledger: no signature can be trusted")
        trusted: dict[str, bytes] = {}
    else:
        trusted, bad = found
        res.notes.extend(bad)
    with open(p, "rb") as f:
        first = f.readline().rstrip(b"\n")
    return trusted, ledger_identity(first)


_KIND_MESSAGES = {
    "unsigned": "unsigned record after signed history (written without a key, or forged)",
    "malformed": "signature block malformed or misplaced",
    "unknown-key": "signed by a key that is not trusted (not in trusted_keys)",
    "bad-signature": "signature does not match the record (forged or altered)",
    "other-ledger": "record signed for another ledger (replayed from another repository or ledger)",
}


def _merge_tallies(res: VerifyResult, results: list) -> None:
    """Combine the chunks' signature tallies into counts and problems (line numbers made global)."""
    base = 0
    first_signed: int | None = None
    runs: list[list[int]] = []
    bad: list[tuple[int, str, str]] = []
    for count, bad_idx, _, _, tally in results:
        if tally is not None:
            res.signed += tally.signed
            if tally.first_signed is not None and first_signed is None:
                first_signed = base + tally.first_signed
            runs.extend([base + a, base + b] for a, b in tally.unsigned)
            bad.extend((base + i, k, kid) for i, k, kid in tally.bad)
            for k, c in tally.bad_counts.items():
                res.counts[k] = res.counts.get(k, 0) + c
        if bad_idx is not None:
            break
        base += count
    listed = dict(res.counts)
    res.counts.clear()
    for a, b in runs:
        if first_signed is None or b < first_signed:
            res.legacy += b - a + 1
            continue
        for i in range(max(a, first_signed), b + 1):
            res.problem(i + 1, "unsigned", _KIND_MESSAGES["unsigned"])
        res.legacy += max(0, min(b, first_signed - 1) - a + 1)
    for i, kind, kid in sorted(bad):
        res.problem(i + 1, kind, _KIND_MESSAGES[kind] + (f" (key {kid})" if kid else ""), kid)
    for k, c in listed.items():  # problems beyond the listed ones still count
        res.counts[k] = max(res.counts.get(k, 0), c)
    if res.legacy:
        res.notes.append(f"{res.legacy} unsigned legacy record(s) (written before the first signed one)")
    if res.counts.get("unknown-key"):
        res.hints.append("to trust a teammate's key: they run `orch key show`; you run `orch key trust '<their "
                         "line>'` and commit .orchestration/trusted_keys (`orch key list` shows who is trusted)")


def _check_anchor(res: VerifyResult, p: str, anchor: Path | None, n_lines: int | None) -> None:
    """The record this machine last appended (the local anchor) must still be in the ledger, at or after its line."""
    if anchor is None:
        return
    from . import anchor as anchors

    a = anchors.read(anchor)
    if a is None:
        res.notes.append("no local anchor (this machine has not appended to this ledger on this branch)")
        return
    if "malformed" in a:
        res.problem(None, "anchor", f"local anchor {anchor} unreadable: {a['malformed']}")
        return
    head, line, when = a["head"], a.get("line"), a.get("time", "?")
    where = f"line {line}, {when}" if line else str(when)
    hint = "if the branch was reset or the ledger restored on purpose, re-anchor with `orch trace anchor --reset`"
    found = _find_hash(p, head) if n_lines else None
    if found is None:
        what = "is missing" if not os.path.exists(p) else ("is empty" if not n_lines else "no longer holds it")
        res.problem(None, "anchor", f"this machine appended record {head[7:19]} ({where}) but the ledger {what}: "
                    "it was truncated, rewritten, emptied or replaced")
        res.hints.append(hint)
    elif isinstance(line, int) and found < line:
        res.problem(found, "anchor", f"the record this machine appended at line {line} is now at line {found}: "
                    "earlier records were removed")
        res.hints.append(hint)


def _find_hash(p: str, head: str) -> int | None:
    """The line number of the record whose chain hash is ``head``."""
    needle = b'"hash":"' + head.encode("ascii", "replace") + _T_END + b"\n"
    with _open_lines(p) as f:
        for n, line in enumerate(f, 1):
            if line.endswith(needle):
                return n
    return None


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
        lock = locked(p)  # the writers' lock (write.lock_path), never a flock on the ledger a command can read
    except BaseException:
        os.close(fd)
        raise
    try:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return RepairResult(0, None)
        n = _quarantine_locked(fd, p, size)
        os.fsync(fd)
        return RepairResult(n, quarantine_path(p))
    finally:
        os.close(lock)
        os.close(fd)
