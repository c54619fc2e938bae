"""Queries over the ledger: filters, record lookup, summaries, stats and export (``orch trace`` without the CLI).

Every query streams ``.orchestration/agent_trace.jsonl`` line by line (memory does not grow with the ledger):
filters are first applied as byte pre-filters on the raw line, and only candidate lines are JSON-parsed.
Not imported by the writer (the post-hook): see :mod:`orchestrator.ledger`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from orchestrator.core.errors import OrchestratorError, UsageError
from .format import NS
from .read import DuplicateKeyError, iter_lines, loads_record

__all__ = ["Filters", "parse_since", "build_filter", "iter_matching", "find_records", "find_record", "summary", "stats",
           "new_stats", "add_stats", "decide",
           "export_record", "ns_of", "rel_to_root"]


@dataclass(frozen=True)
class Filters:
    """What ``orch trace`` (list, export, stats) selects records by; every field is optional."""

    intent: str | None = None
    session: str | None = None
    tool: str | None = None
    cls: str | None = None
    file: str | None = None
    out_of_scope: bool = False
    since: str | None = None

    @classmethod
    def of(cls, obj: Any) -> Filters:
        """The filters set as attributes of ``obj`` (e.g. an argparse namespace); absent ones stay unset."""
        values: dict[str, Any] = {f.name: getattr(obj, f.name, f.default) for f in fields(cls)}
        return cls(**values)

    def resolved(self, now: datetime | None = None) -> Filters:
        """The same filters with ``since`` made absolute (one clock reading for the scan and the index)."""
        return replace(self, since=parse_since(self.since, now)) if self.since else self


def parse_since(text: str, now: datetime | None = None) -> str:
    """``30m``/``2h``/``7d``/``1w`` ago, or an ISO date/datetime (UTC if naive) -> our timestamp format."""
    now = now or datetime.now(timezone.utc)
    m = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        delta = {"s": timedelta(seconds=n), "m": timedelta(minutes=n), "h": timedelta(hours=n),
                 "d": timedelta(days=n), "w": timedelta(weeks=n)}[unit]
        dt = now - delta
    else:
        try:
            dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--since: cannot parse {text!r} (use 2h, 3d or 2026-01-31T10:00)") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
    return _norm_ts(dt)


def _norm_ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _record_ts(ts: str) -> str:
    if len(ts) == 27 and ts.endswith("Z"):
        return ts
    try:
        return _norm_ts(datetime.fromisoformat(ts.replace("Z", "+00:00")))
    except ValueError:
        return ts


def _jbytes(value: str) -> bytes:
    """How a string value appears inside a ledger line (json, ensure_ascii), quotes included."""
    return json.dumps(value).encode("ascii")


def ns_of(rec: dict) -> dict:
    """Orchestrator's metadata of a record (``metadata["dev.orchestrator"]``), ``{}`` if absent or malformed."""
    md = rec.get("metadata")
    ns = md.get(NS) if isinstance(md, dict) else None
    return ns if isinstance(ns, dict) else {}


def rel_to_root(root: Path, p: str) -> str:
    """``p`` (relative to the cwd, or absolute) as a workspace-relative POSIX path."""
    full = Path(p)
    if not full.is_absolute():
        full = Path.cwd() / full
    try:
        return os.path.relpath(os.path.normpath(full), root).replace(os.sep, "/")
    except ValueError:
        return p


def _file_check(root: Path, fpath: str, pre: list[bytes]) -> Callable[[dict], bool]:
    """``--file``: a path, a directory (its files) or a glob, relative to the cwd."""
    rel = rel_to_root(root, fpath)
    globby = any(c in rel for c in "*?[")
    if not globby:
        pre.append(_jbytes(rel)[1:-1])

    def _fmatch(r: dict) -> bool:
        for f in r.get("files") or ():
            p = f.get("path", "") if isinstance(f, dict) else ""
            if (fnmatch.fnmatchcase(p, rel) if globby else (p == rel or p.startswith(rel.rstrip("/") + "/"))):
                return True
        return False
    return _fmatch


def build_filter(filters: Filters, root: Path) -> tuple[list[bytes], Callable[[dict], bool]]:
    """Byte pre-filters (all must occur in the raw line) and an exact predicate on the parsed record."""
    pre: list[bytes] = []
    checks: list[Callable[[dict], bool]] = []
    intent, session, tool = filters.intent, filters.session, filters.tool
    if intent:
        pre.append(b'"intent_id":' + _jbytes(intent))
        checks.append(lambda r: ns_of(r).get("intent_id") == intent)
    if session:
        # a prefix is enough (`--session 1a2b` for 1a2b3c4d-…), as the table shows only the first characters
        pre.append(b'"session_id":' + _jbytes(session)[:-1])
        checks.append(lambda r: str(ns_of(r).get("session_id") or "").startswith(session))
    if tool:
        checks.append(lambda r: str(ns_of(r).get("tool_name", "")).lower() == tool.lower())
    if filters.cls:
        from orchestrator.classify.mutation import normalise_declared
        want = normalise_declared(filters.cls)
        if want is None:
            raise UsageError(f"--class: expected refactor or evolution, got {filters.cls!r}")
        pre.append(b'"mutation_class":' + _jbytes(want))
        checks.append(lambda r: ns_of(r).get("mutation_class") == want)
    if filters.file:
        checks.append(_file_check(root, filters.file, pre))
    if filters.out_of_scope:
        # changes a shell command made outside its intent's scope (post/trace.py: the scan of what changed)
        pre.append(b'"out_of_scope":')
        checks.append(lambda r: bool(ns_of(r).get("out_of_scope")))
    if filters.since:
        floor = parse_since(filters.since)
        checks.append(lambda r: _record_ts(str(r.get("timestamp", ""))) >= floor)
    return pre, (lambda r: all(c(r) for c in checks))


def iter_matching(path: Path, pre: list[bytes], pred: Callable[[dict], bool]) -> Iterator[tuple[int, dict]]:
    """Stream ``(line number, record)`` for records passing the filters."""
    if not path.exists():
        return
    yield from decide(iter_lines(path), pre, pred)


def decide(lines: Iterable[tuple[int, bytes]], pre: list[bytes],
           pred: Callable[[dict], bool]) -> Iterator[tuple[int, dict]]:
    """The filters' test on raw ``(line number, bytes)``: every byte pre-filter occurs, the line is a JSON object
    without duplicated keys, ``pred`` holds. The scan and the index (``ledger.lookup``, for the lines it re-checks)
    both decide with it."""
    loads = loads_record  # a duplicated key makes the record invalid: never shown with either value
    for n, line in lines:
        if pre and not all(p in line for p in pre):
            continue
        try:
            rec = loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and pred(rec):
            yield n, rec


def find_records(path: Path, key: str, *,
                 lines: Iterable[tuple[int, bytes]] | None = None) -> list[tuple[int, dict]]:
    """The record ``key`` names: a line number (``L123``) or an id prefix of at least 4 characters.

    Returns at most two matches (two mean the prefix is ambiguous); raises :class:`UsageError` for a too short key.
    ``lines``: the candidate ``(line number, bytes)`` in ledger order (the index's), instead of every line.
    """
    m = re.fullmatch(r"[Ll#](\d+)", key)
    found: list[tuple[int, dict]] = []
    if lines is None:
        lines = iter_lines(path) if path.exists() else ()
    if m:
        want = int(m.group(1))
        for n, line in lines:
            if n == want:
                found.append((n, _parse_shown(n, line)))
                break
        return found
    if len(key) < 4:
        raise UsageError("show: give at least 4 characters of the record id")
    needle = b'"id":"' + key.encode("ascii", "replace")
    for n, line in lines:
        if needle not in line:
            continue
        try:
            r = loads_record(line)
        except DuplicateKeyError:
            r = _parse_shown(n, line)  # raises: the id is there, the record is invalid
        except ValueError:
            continue
        if isinstance(r, dict) and str(r.get("id", "")).startswith(key):
            found.append((n, r))
            if len(found) > 1:
                break
    return found


def _parse_shown(n: int, line: bytes) -> dict:
    """A record to display; a duplicated key is an error, never a record shown with its first or last value."""
    try:
        r = loads_record(line)
    except DuplicateKeyError as e:
        raise OrchestratorError(f"line {n}: {e}: the record is invalid (tampered?) and is not shown; "
                                "`orch trace verify` reports it") from None
    except ValueError as e:
        raise OrchestratorError(f"line {n}: not a valid record ({e})") from None
    if not isinstance(r, dict):
        raise OrchestratorError(f"line {n}: not a record (a JSON object)")
    return r


def find_record(path: Path, key: str, *, found: list[tuple[int, dict]] | None = None) -> tuple[int, dict]:
    """The one record ``key`` names (see :func:`find_records`); an :class:`OrchestratorError` if none or several.

    ``found``: the matches when the caller has them already (from the index: ``ledger.lookup.find_records``).
    """
    if found is None:
        found = find_records(path, key)
    if not found:
        raise OrchestratorError(f"no record {key!r}")
    if len(found) > 1:
        raise UsageError(f"record id prefix {key!r} is ambiguous; give more characters")
    return found[0]


def summary(n: int, r: dict) -> dict:
    """The fields of record ``r`` (ledger line ``n``) that a listing shows."""
    ns = ns_of(r)
    files = []
    for f in r.get("files") or ():
        rngs = [(x.get("start_line"), x.get("end_line")) for c in f.get("conversations", ())
                for x in c.get("ranges", ())]
        files.append({"path": f.get("path"), "ranges": rngs})
    return {"line": n, "id": r.get("id"), "timestamp": r.get("timestamp"), "intent_id": ns.get("intent_id"),
            "mutation_class": ns.get("mutation_class"), "class_mismatch": ns.get("class_mismatch"),
            "tool": ns.get("tool_name"), "agent": ns.get("agent"), "session_id": ns.get("session_id"),
            "files": files, "ops": [m.get("op") for m in ns.get("files", ()) if isinstance(m, dict)],
            "outside": [m.get("path") for m in ns.get("files", ()) if isinstance(m, dict) and m.get("out_of_scope")],
            "approver": approver_of(ns)}


def approver_of(ns: dict) -> str | None:
    """Who approved the call a record's metadata describes (``approval.by``: a passkey approver's name, ``tui``,
    ``cli``), or None when no person was asked."""
    approval = ns.get("approval")
    by = approval.get("by") if isinstance(approval, dict) else None
    return str(by) if by else None


def export_record(rec: dict, *, pure: bool) -> dict:
    """A spec record for export: chain and signature fields removed (they only make sense on the original line:
    the signature covers the line's exact bytes and its place in the chain); ``pure`` drops orchestrator's
    metadata entirely."""
    out = {k: v for k, v in rec.items() if k != "metadata"}
    md = rec.get("metadata")
    if isinstance(md, dict) and not pure:
        md2 = {k: v for k, v in md.items() if k != NS}
        ns = md.get(NS)
        if isinstance(ns, dict):
            md2[NS] = {k: v for k, v in ns.items() if k not in ("chain", "merge_parents", "sig")}
        out["metadata"] = md2
    elif isinstance(md, dict) and pure:
        rest = {k: v for k, v in md.items() if k != NS}
        if rest:
            out["metadata"] = rest
    return out


def new_stats() -> dict:
    """An empty :func:`stats` result (see :func:`add_stats`)."""
    return {"records": 0, "class_mismatches": 0, "per_intent": {}, "per_tool": {}, "per_agent": {}}


def add_stats(st: dict, r: dict) -> None:
    """Count record ``r`` into ``st`` (dicts keep the order in which their keys first occur)."""
    ns = ns_of(r)
    st["records"] += 1
    key = str(ns.get("intent_id") or "(none)")
    d = st["per_intent"].setdefault(key, {"records": 0, "AST_REFACTOR": 0, "INTENT_EVOLUTION": 0,
                                          "lines_added": 0, "lines_removed": 0, "files": 0})
    d["records"] += 1
    cls = ns.get("mutation_class")
    if cls in d:
        d[cls] += 1
    for m in ns.get("files") or ():
        if isinstance(m, dict):
            d["files"] += 1
            d["lines_added"] += int(m.get("added") or 0)
            d["lines_removed"] += int(m.get("removed") or 0)
    if ns.get("class_mismatch"):
        st["class_mismatches"] += 1
    t = str(ns.get("tool_name") or "?")
    st["per_tool"][t] = st["per_tool"].get(t, 0) + 1
    a = str(ns.get("agent") or "?")
    st["per_agent"][a] = st["per_agent"].get(a, 0) + 1


def stats(path: Path, pre: list[bytes], pred: Callable[[dict], bool]) -> dict:
    """Counts per intent and class (and per tool/agent); streamed."""
    st = new_stats()
    for _, r in iter_matching(path, pre, pred):
        add_stats(st, r)
    return st
