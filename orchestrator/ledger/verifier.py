"""Verifying the chain and schema of the ledger (:func:`verify`) and repairing a torn tail (:func:`repair`).

The rules are in the :mod:`orchestrator.ledger` package docstring.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .format import (_HASHVAL_LEN, _MP_KEY, _O_END, _O_HASH, _O_MID, _O_PREV, _T_END, _T_HEAD, _T_MID, TAIL_LEN,
                     _merge_parents, _split_tail, quarantine_path)
from .read import _open_lines
from .schema import _canonical, _strict_validator, check_record
from .write import _quarantine_locked

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
