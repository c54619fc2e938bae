"""The answers of ``orch trace`` (filters, ``show``, ``blame`` events, ``stats``) served from the ledger index.

Each function gives exactly what its scanning twin in :mod:`.query` / :mod:`.blame` gives (a test compares them on
varied and generated ledgers): SQL selects the *plain* lines whose indexed fields match, every served line is re-read
from the ledger (sha256 checked, :class:`~.index.IndexMismatch` otherwise) and passed through the scan's own
pre-filter and predicate again; *odd* lines and the lines after the indexed offset are decided by the scan's code.
:class:`Unsupported` means "this question is not for the index" (e.g. text SQLite cannot store): scan instead.
"""

from __future__ import annotations

import fnmatch
import heapq
import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterator

from orchestrator.core.errors import OrchestratorError, UsageError
from . import query
from .blame import close_names, record_events, renames_of
from .index import IndexMismatch, LedgerIndex, _utf8_ok
from .read import loads_record

__all__ = ["Unsupported", "select", "iter_all", "find_records", "stats", "file_events", "IndexMismatch", "open_index",
           "served", "matches"]

Pred = Callable[[dict], bool]
_ROW = "line, off, len, sha"


class Unsupported(Exception):
    """The index cannot answer this exactly: the caller scans."""


def open_index(path: Path, *, enabled: bool = True) -> LedgerIndex | None:
    """The ledger's index (fresh, sealed) or None: scan instead (disabled, small ledger, no key, no run dir)."""
    if not enabled:
        return None
    try:
        return LedgerIndex.open(path)
    except (OSError, sqlite3.Error):
        return None


def served(path: Path, use: Callable[[LedgerIndex], Any], *, enabled: bool = True) -> Any:
    """``use(index)`` when the index can answer, else None: the caller scans (an answer never depends on it)."""
    idx = open_index(path, enabled=enabled)
    if idx is None:
        return None
    with idx:
        try:
            return use(idx)
        except (IndexMismatch, Unsupported, sqlite3.Error):
            return None


def matches(path: Path, filters: query.Filters, root: Path, pre: list[bytes], pred: Pred, *,
            enabled: bool = True) -> Iterator[tuple[int, dict]]:
    """Every match in ledger order: from the index when it can serve, else the scan. A disagreement found after
    the first match was yielded is an error (never two answers mixed in one output)."""
    idx = open_index(path, enabled=enabled)
    if idx is not None:
        with idx:
            emitted = 0
            try:
                for item in iter_all(idx, filters, root, pre, pred):
                    emitted += 1
                    yield item
                return
            except (IndexMismatch, Unsupported, sqlite3.Error):
                if emitted:
                    raise OrchestratorError("the ledger changed while it was read; run the command again") from None
    yield from query.iter_matching(path, pre, pred)


def _succ(prefix: str) -> str | None:
    """The smallest string above every string starting with ``prefix`` (None: no bound), skipping surrogates."""
    while prefix:
        c = ord(prefix[-1]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000
        if c <= 0x10FFFF:
            return prefix[:-1] + chr(c)
        prefix = prefix[:-1]
    return None


def _prefix(col: str, prefix: str, conds: list[str], params: list[Any]) -> None:
    conds.append(f"{col} >= ?")
    params.append(prefix)
    up = _succ(prefix)
    if up is not None:
        conds.append(f"{col} < ?")
        params.append(up)


def _where(idx: LedgerIndex, filters: query.Filters, root: Path) -> tuple[str, list[Any]]:
    """The SQL condition selecting the plain rows the scan's filters select (``filters`` already resolved)."""
    # only plain rows have values in the filter columns (and path rows): any condition implies kind = 0
    conds, params = [], []  # type: tuple[list[str], list[Any]]
    values = [filters.intent, filters.session, filters.tool, filters.cls, filters.file, filters.since]
    if not _utf8_ok(*values):
        raise Unsupported("a filter SQLite cannot store")
    if filters.intent:
        conds.append("intent = ?")
        params.append(filters.intent)
    if filters.session:
        _prefix("session", filters.session, conds, params)
    if filters.tool:
        conds.append("tool = ?")
        params.append(filters.tool.lower())
    if filters.cls:
        from orchestrator.classify.mutation import normalise_declared
        conds.append("cls = ?")
        params.append(normalise_declared(filters.cls))
    if filters.file:
        conds.append(_file_cond(idx, root, filters.file, params))
    if filters.out_of_scope:
        conds.append("oos = 1")
    if filters.since:
        conds.append("ts >= ?")
        params.append(filters.since)
    return " AND ".join(conds or ["kind = 0"]), params


def _file_cond(idx: LedgerIndex, root: Path, fpath: str, params: list[Any]) -> str:
    rel = query.rel_to_root(root, fpath)
    if not _utf8_ok(rel):
        raise Unsupported("path")
    if any(c in rel for c in "*?["):
        paths = [p for (p,) in idx.conn.execute("SELECT DISTINCT path FROM path") if fnmatch.fnmatchcase(p, rel)]
        idx.conn.execute("CREATE TEMP TABLE IF NOT EXISTS want(path TEXT PRIMARY KEY)")
        idx.conn.execute("DELETE FROM want")
        idx.conn.executemany("INSERT OR IGNORE INTO want VALUES (?)", [(p,) for p in paths])
        return "line IN (SELECT line FROM path WHERE path IN (SELECT path FROM want))"
    sub = ["path = ?"]
    params.append(rel)
    sub_params: list[Any] = []
    _prefix("path", rel.rstrip("/") + "/", sub, sub_params)
    params.extend(sub_params)
    return f"line IN (SELECT line FROM path WHERE {sub[0]} OR ({' AND '.join(sub[1:])}))"


def _served(idx: LedgerIndex, rows: list, pre: list[bytes], pred: Pred) -> Iterator[tuple[int, dict]]:
    """Re-read plain rows and check that the scan selects each of them too."""
    for n, raw in idx.read(rows):
        got = next(query.decide(((n, raw),), pre, pred), None)
        if got is None:
            idx.discard()
            raise IndexMismatch(f"ledger line {n} does not match what the index says")
        yield got


def _extra(idx: LedgerIndex, pre: list[bytes], pred: Pred) -> list[tuple[int, dict]]:
    """Matches among the odd rows and the lines after the indexed offset."""
    odd = list(query.decide(idx.read(idx.odd_rows()), pre, pred))
    return odd + list(query.decide(idx.tail(), pre, pred))


def select(idx: LedgerIndex, filters: query.Filters, root: Path, pre: list[bytes], pred: Pred,
           limit: int | None) -> tuple[int, list[tuple[int, dict]]]:
    """``(number of matches, the last ``limit`` matches (all if None/0) in ledger order)``."""
    where, params = _where(idx, filters, root)
    total = idx.conn.execute(f"SELECT COUNT(*) FROM rec WHERE {where}", params).fetchone()[0]
    extra = _extra(idx, pre, pred)
    if limit:
        rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE {where} ORDER BY line DESC LIMIT ?",
                                params + [limit]).fetchall()
        rows.reverse()
    else:
        rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE {where} ORDER BY line", params).fetchall()
    found = sorted(list(_served(idx, rows, pre, pred)) + extra, key=lambda x: x[0])
    return total + len(extra), found[-limit:] if limit else found


def iter_all(idx: LedgerIndex, filters: query.Filters, root: Path, pre: list[bytes],
             pred: Pred) -> Iterator[tuple[int, dict]]:
    """Every match in ledger order, streamed (memory bounded by the row list, not the records)."""
    where, params = _where(idx, filters, root)
    extra = _extra(idx, pre, pred)
    rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE {where} ORDER BY line", params).fetchall()
    yield from heapq.merge(_served(idx, rows, pre, pred), extra, key=lambda x: x[0])


def find_records(idx: LedgerIndex, key: str) -> list[tuple[int, dict]]:
    """:func:`.query.find_records` from the index: the scan's own code over the candidate lines only (the line
    asked for; or the plain lines whose id starts with ``key``, the odd lines and the tail, in ledger order)."""
    m = re.fullmatch(r"[Ll#](\d+)", key)
    if m:
        want = int(m.group(1))
        rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE line = ?", (want,)).fetchall()
        lines: list[tuple[int, bytes]] = list(idx.read(rows)) if want <= idx.lines else list(idx.tail())
        return query.find_records(idx.ledger, key, lines=lines)
    if len(key) < 4:
        raise UsageError("show: give at least 4 characters of the record id")
    rows = []
    if _utf8_ok(key):
        conds: list[str] = []
        params: list[Any] = []
        _prefix("id", key, conds, params)
        rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE {' AND '.join(conds)} ORDER BY line LIMIT 2",
                                params).fetchall()
    served = list(idx.read(rows))
    if len(served) != len([r for r in query.find_records(idx.ledger, key, lines=served)]):
        idx.discard()
        raise IndexMismatch("a served line does not match what the index says")
    loose = list(idx.read(idx.odd_rows())) + list(idx.tail())
    return query.find_records(idx.ledger, key, lines=sorted(served + loose, key=lambda x: x[0]))


def stats(idx: LedgerIndex, filters: query.Filters, root: Path, pre: list[bytes], pred: Pred) -> dict:
    """:func:`.query.stats` from the index: SQL sums for the plain rows, the scan's code for the others."""
    where, params = _where(idx, filters, root)
    groups: list[tuple[int, str, str, list[int]]] = []  # (first line, table, key, counts)
    # one pass over the selected rows, grouped by all three keys (few groups); split per table here
    q = (f"SELECT s_intent, s_tool, s_agent, MIN(line), COUNT(*), SUM(s_cls = 'AST_REFACTOR'), "
         f"SUM(s_cls = 'INTENT_EVOLUTION'), SUM(added), SUM(removed), SUM(nfiles), SUM(mismatch) FROM rec "
         f"WHERE {where} GROUP BY s_intent, s_tool, s_agent")
    mismatches = 0
    for k_intent, k_tool, k_agent, first, *counts in idx.conn.execute(q, params):
        counts = [int(c or 0) for c in counts]
        mismatches += counts.pop()
        groups.append((first, "per_intent", k_intent, counts))
        groups.append((first, "per_tool", k_tool, counts[:1]))
        groups.append((first, "per_agent", k_agent, counts[:1]))
    for n, r in _extra(idx, pre, pred):
        one = query.new_stats()
        query.add_stats(one, r)
        mismatches += one["class_mismatches"]
        for table in ("per_intent", "per_tool", "per_agent"):
            for k, v in one[table].items():
                groups.append((n, table, k, [v["records"], v["AST_REFACTOR"], v["INTENT_EVOLUTION"],
                                             v["lines_added"], v["lines_removed"], v["files"]]
                               if table == "per_intent" else [v]))
    return _fold(groups, mismatches)


def _fold(groups: list[tuple[int, str, str, list[int]]], mismatches: int) -> dict:
    """Merge per-key partial counts, keys in the order of their first record (as the scan's dicts are)."""
    st = query.new_stats()
    st["class_mismatches"] = mismatches
    names = ("records", "AST_REFACTOR", "INTENT_EVOLUTION", "lines_added", "lines_removed", "files")
    for _, table, k, counts in sorted(groups, key=lambda g: g[0]):
        if table == "per_intent":
            d = st[table].setdefault(k, dict.fromkeys(names, 0))
            for name, c in zip(names, counts):
                d[name] += c
            st["records"] += counts[0]
        else:
            st[table][k] = st[table].get(k, 0) + counts[0]
    return st


def file_events(idx: LedgerIndex, rel: str) -> list:
    """:func:`.blame.file_events` of ``rel`` and the names renamed into it, from the index."""
    if not _utf8_ok(rel):
        raise Unsupported("path")
    renames: list[tuple[Any, Any]] = list(idx.conn.execute(
        "SELECT src, dst FROM ren ORDER BY line"))
    loose = list(idx.read(idx.odd_rows())) + list(idx.tail())
    for n, raw in loose:
        if b'"from":' in raw:
            for _, r in query.decide(((n, raw),), [], lambda r: True):
                renames.extend(renames_of(r))
    names = close_names(rel, renames)
    if not all(isinstance(x, str) and _utf8_ok(x) for x in names):
        raise Unsupported("names")
    marks = ",".join("?" * len(names))
    rows = idx.conn.execute(f"SELECT {_ROW} FROM rec WHERE line IN "
                            f"(SELECT line FROM path WHERE path IN ({marks})) ORDER BY line", list(names)).fetchall()
    needles = [json.dumps(x).encode("ascii")[1:-1] for x in names]
    events: list[tuple[int, list]] = []
    for n, raw in idx.read(rows):
        rec = loads_record(raw)
        if not isinstance(rec, dict):  # a plain row is a JSON object: the ledger changed under the index
            idx.discard()
            raise IndexMismatch(f"ledger line {n} is not what the index says")
        events.append((n, record_events(n, rec, names)))
    for n, raw in loose:
        if any(x in raw for x in needles):
            for _, r in query.decide(((n, raw),), [], lambda r: True):
                events.append((n, record_events(n, r, names)))
    return [e for _, evs in sorted(events, key=lambda x: x[0]) for e in evs]
