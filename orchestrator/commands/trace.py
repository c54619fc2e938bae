"""``orch trace``: list, show, verify, repair, blame, export, stats and audit the trace ledger.

Every verb streams ``.orchestration/agent_trace.jsonl`` line by line (memory does not grow with the ledger):
filters are first applied as byte pre-filters on the raw line, and only candidate lines are JSON-parsed.

    orch trace [-C DIR] [--intent ID] [--file PATH] [--session ID] [--class refactor|evolution] [--tool NAME]
               [--since 2h|3d|2026-01-31[T10:00]] [--limit N] [--json | --jsonl]
    orch trace list   (same as above)
    orch trace show ID            (uuid or unique prefix; or a line number as L123)
    orch trace verify [--strict | --chain-only] [--json]          exit 1 + first bad line on failure
    orch trace repair                                             quarantine a torn last line
    orch trace blame FILE[:LINE] [--json]
    orch trace export --format agent-trace [--pure] [-o FILE] [filters]
    orch trace stats [--json] [filters]
    orch trace audit [--json]                                     exit 1 if ungoverned changes exist
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import sys
from collections import deque
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import ledger

NS = ledger.NS
__all__ = ["register", "run", "main", "blame", "audit", "stats"]


class TraceError(Exception):
    """An expected failure of an ``orch trace`` verb (exit 1, one line)."""


# --------------------------------------------------------------------------------------------------- plumbing

def _out(text: str = "") -> None:
    try:
        from ..output import out  # type: ignore[import-not-found]
    except ImportError:
        print(text)
    else:
        out(text)


def _err(text: str) -> None:
    try:
        from ..output import err  # type: ignore[import-not-found]
    except ImportError:
        print(text, file=sys.stderr)
    else:
        err(text)


def _json(obj: Any) -> None:
    _out(json.dumps(obj, indent=2, ensure_ascii=False))


def _ledger_path(args: argparse.Namespace) -> tuple[Path, Path]:
    from ..workspace import find_root

    given = getattr(args, "workspace", None) or getattr(args, "root", None)
    try:
        root = find_root(given or os.getcwd())
    except Exception as exc:  # the engine's WorkspaceError: report it as this command's one-line error
        raise TraceError(str(exc) or "no .orchestration/ directory here or above (run `orch init`)") from None
    return root, root / ".orchestration" / "agent_trace.jsonl"


# ---------------------------------------------------------------------------------------------------- filters

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
            raise TraceError(f"--since: cannot parse {text!r} (use 2h, 3d or 2026-01-31T10:00)") from None
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


def _ns(rec: dict) -> dict:
    md = rec.get("metadata")
    ns = md.get(NS) if isinstance(md, dict) else None
    return ns if isinstance(ns, dict) else {}


def _rel_to_root(root: Path, p: str) -> str:
    full = Path(p)
    if not full.is_absolute():
        full = Path.cwd() / full
    try:
        return os.path.relpath(os.path.normpath(full), root).replace(os.sep, "/")
    except ValueError:
        return p


def build_filter(args: argparse.Namespace, root: Path) -> tuple[list[bytes], Callable[[dict], bool]]:
    """Byte pre-filters (all must occur in the raw line) and an exact predicate on the parsed record."""
    pre: list[bytes] = []
    checks: list[Callable[[dict], bool]] = []
    intent = getattr(args, "intent", None)
    if intent:
        pre.append(b'"intent_id":' + _jbytes(intent))
        checks.append(lambda r: _ns(r).get("intent_id") == intent)
    session = getattr(args, "session", None)
    if session:
        # a prefix is enough (`--session 1a2b` for 1a2b3c4d-…), as the table shows only the first characters
        pre.append(b'"session_id":' + _jbytes(session)[:-1])
        checks.append(lambda r: str(_ns(r).get("session_id") or "").startswith(session))
    tool = getattr(args, "tool", None)
    if tool:
        checks.append(lambda r: str(_ns(r).get("tool_name", "")).lower() == tool.lower())
    cls = getattr(args, "cls", None)
    if cls:
        from ..classify import normalise_declared
        want = normalise_declared(cls)
        if want is None:
            raise TraceError(f"--class: expected refactor or evolution, got {cls!r}")
        pre.append(b'"mutation_class":' + _jbytes(want))
        checks.append(lambda r: _ns(r).get("mutation_class") == want)
    fpath = getattr(args, "file", None)
    if fpath:
        rel = _rel_to_root(root, fpath)
        globby = any(c in rel for c in "*?[")
        if not globby:
            pre.append(_jbytes(rel)[1:-1])

        def _fmatch(r: dict, rel: str = rel, globby: bool = globby) -> bool:
            for f in r.get("files") or ():
                p = f.get("path", "") if isinstance(f, dict) else ""
                if (fnmatch.fnmatchcase(p, rel) if globby else (p == rel or p.startswith(rel.rstrip("/") + "/"))):
                    return True
            return False
        checks.append(_fmatch)
    if getattr(args, "out_of_scope", False):
        # changes a shell command made outside its intent's scope (post/trace.py: the scan of what changed)
        pre.append(b'"out_of_scope":')
        checks.append(lambda r: bool(_ns(r).get("out_of_scope")))
    since = getattr(args, "since", None)
    if since:
        floor = parse_since(since)
        checks.append(lambda r: _record_ts(str(r.get("timestamp", ""))) >= floor)
    return pre, (lambda r: all(c(r) for c in checks))


def iter_matching(path: Path, pre: list[bytes], pred: Callable[[dict], bool]) -> Iterator[tuple[int, dict]]:
    """Stream ``(line number, record)`` for records passing the filters."""
    if not path.exists():
        return
    loads = json.loads
    for n, line in ledger.iter_lines(path):
        if pre and not all(p in line for p in pre):
            continue
        try:
            rec = loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and pred(rec):
            yield n, rec


# ------------------------------------------------------------------------------------------------------ verbs

def _summary(n: int, r: dict) -> dict:
    ns = _ns(r)
    files = []
    for f in r.get("files") or ():
        rngs = [(x.get("start_line"), x.get("end_line")) for c in f.get("conversations", ())
                for x in c.get("ranges", ())]
        files.append({"path": f.get("path"), "ranges": rngs})
    return {"line": n, "id": r.get("id"), "timestamp": r.get("timestamp"), "intent_id": ns.get("intent_id"),
            "mutation_class": ns.get("mutation_class"), "class_mismatch": ns.get("class_mismatch"),
            "tool": ns.get("tool_name"), "agent": ns.get("agent"), "session_id": ns.get("session_id"),
            "files": files, "ops": [m.get("op") for m in ns.get("files", ()) if isinstance(m, dict)],
            "outside": [m.get("path") for m in ns.get("files", ()) if isinstance(m, dict) and m.get("out_of_scope")]}


def _short(session_id: str | None) -> str:
    """Session ids are often UUIDs: the first 8 characters tell them apart in a table."""
    if not session_id:
        return "-"
    return session_id if len(session_id) <= 12 else session_id[:8] + "…"


def _fmt_ranges(rngs: list) -> str:
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in rngs[:4]]
    return ",".join(parts) + ("…" if len(rngs) > 4 else "")


def cmd_list(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    pre, pred = build_filter(args, root)
    limit = args.limit
    if args.jsonl or args.json:
        it = iter_matching(path, pre, pred)
        if limit:  # the most recent N, bounded memory
            it = iter(deque(it, maxlen=limit))
        if args.jsonl:
            w = sys.stdout.write
            for _, r in it:
                w(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            w = sys.stdout.write
            w("[")
            first = True
            for _, r in it:
                w(("\n" if first else ",\n") + json.dumps(r, ensure_ascii=False))
                first = False
            w("\n]\n")
        return 0
    total = 0
    recent: deque = deque(maxlen=limit or None)
    for n, r in iter_matching(path, pre, pred):
        total += 1
        recent.append(_summary(n, r))
    _table(recent, total, path)
    return 0


#: below this many columns the table is unreadable: records are printed in a compact two-line layout instead
COMPACT_BELOW = 110


def _width() -> int:
    """The output width: the terminal's, or $COLUMNS when piped (default 120 when piped without it)."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit():
        return shutil.get_terminal_size((120, 24)).columns
    return 120


def _compact(rows: deque, total: int, path: Path, width: int) -> None:
    """Two lines a record: `#line time intent class tool session`, then the files, wrapped to ``width``."""
    import textwrap

    _out(f"{path.name}: {len(rows)} of {total} matching record(s)")
    for s in rows:
        cls = {"AST_REFACTOR": "refactor", "INTENT_EVOLUTION": "evolution"}.get(s["mutation_class"] or "", "?")
        if s["class_mismatch"]:
            cls += "(declared≠)"
        when = (s["timestamp"] or "")[:19].replace("T", " ")
        _out(f"#{s['line']} {when} {s['intent_id'] or '-'} {cls} {s['tool'] or '-'} "
             f"session {_short(s['session_id'])} id {(s['id'] or '')[:8]}")
        files = "; ".join((f"{op if op and op != 'modify' else ''} {f['path']}"
                           + (f":{_fmt_ranges(f['ranges'])}" if f["ranges"] else "")).strip()
                          for f, op in zip(s["files"], s["ops"] + [None] * len(s["files"])))
        for line in textwrap.wrap(files or "-", max(width - 4, 20), break_on_hyphens=False) or ["-"]:
            _out(f"    {line}")


def _table(rows: deque, total: int, path: Path) -> None:
    width = _width()
    if width < COMPACT_BELOW:
        _compact(rows, total, path, width)
        return
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"{path.name}: {len(rows)} of {total} matching record(s)", show_lines=False)
    for col in ("#", "time (UTC)", "id", "intent", "class", "tool", "session"):
        t.add_column(col, no_wrap=True)
    t.add_column("files (ranges)", overflow="fold")
    for s in rows:
        cls = {"AST_REFACTOR": "refactor", "INTENT_EVOLUTION": "evolution"}.get(s["mutation_class"] or "", "?")
        if s["class_mismatch"]:
            cls += " (declared≠)"
        outside = set(s.get("outside") or ())
        files = "; ".join((f"{op if op and op != 'modify' else ''} {f['path']}"
                           + (f":{_fmt_ranges(f['ranges'])}" if f["ranges"] else "")
                           + (" [OUT OF SCOPE]" if f["path"] in outside else "")).strip()
                          for f, op in zip(s["files"], s["ops"] + [None] * len(s["files"])))
        t.add_row(str(s["line"]), (s["timestamp"] or "")[:19].replace("T", " "), (s["id"] or "")[:8],
                  str(s["intent_id"] or "-"), cls, str(s["tool"] or "-"), _short(s["session_id"]), files)
    # piped output (e.g. the demo, or `| less`) gets a readable width instead of rich's 80 columns
    Console(soft_wrap=False, width=None if sys.stdout.isatty() else max(120, width)).print(t)


def cmd_show(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    key = args.id.strip()
    m = re.fullmatch(r"[Ll#](\d+)", key)
    found: list[tuple[int, dict]] = []
    if m:
        want = int(m.group(1))
        for n, line in ledger.iter_lines(path) if path.exists() else ():
            if n == want:
                found.append((n, json.loads(line)))
                break
    else:
        if len(key) < 4:
            raise TraceError("show: give at least 4 characters of the record id")
        needle = b'"id":"' + key.encode("ascii", "replace")
        for n, r in iter_matching(path, [needle], lambda r: str(r.get("id", "")).startswith(key)):
            found.append((n, r))
            if len(found) > 1:
                break
    if not found:
        raise TraceError(f"no record {key!r}")
    if len(found) > 1:
        raise TraceError(f"record id prefix {key!r} is ambiguous; give more characters")
    n, r = found[0]
    if args.json:
        _json(r)
    else:
        _out(f"# line {n}")
        _json(r)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    res = ledger.verify(path, strict=args.strict, schema=not args.chain_only)
    if args.json:
        _json(res.to_dict())
    elif res.ok:
        _out(f"ok: {res.records} record(s), {res.forks} merge fork(s), {res.heads} head(s); schema: {res.schema}")
    else:
        _err(f"{path.name}:{res.bad_line}: {res.reason}")
    return 0 if res.ok else 1


def cmd_repair(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    rr = ledger.repair(path)
    if rr.quarantined_bytes:
        _out(f"moved a torn tail of {rr.quarantined_bytes} byte(s) to {rr.quarantine}")
    else:
        _out("nothing to repair (the ledger ends with a complete line)")
    res = ledger.verify(path)
    if not res.ok:
        _err(f"still invalid: {path.name}:{res.bad_line}: {res.reason} (only a torn tail is repaired automatically)")
        return 1
    return 0


# ------------------------------------------------------------------------------------------------------ blame

def blame(root: Path, path: Path, rel: str) -> dict:
    """Attribute the current lines of ``rel`` to ledger records: :func:`orchestrator.blame.blame`."""
    from ..ledger.blame import BlameError, blame as _blame
    try:
        return _blame(root, path, rel)
    except BlameError as e:
        raise TraceError(str(e)) from None


def cmd_blame(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    target, line = args.target, None
    m = re.fullmatch(r"(.+):(\d+)", target)
    if m and not Path(target).exists():
        target, line = m.group(1), int(m.group(2))
    rel = _rel_to_root(root, target)
    res = blame(root, path, rel)
    runs = res["runs"]
    if line is not None:
        if not 1 <= line <= res["lines"]:
            raise TraceError(f"blame: {rel} has {res['lines']} line(s)")
        runs = [r for r in runs if r["start_line"] <= line <= r["end_line"]]
    if args.json:
        _json(dict(res, runs=runs))
        return 0
    for r in runs:
        rec = r["record"]
        span = f"{r['start_line']}-{r['end_line']}" if r["end_line"] != r["start_line"] else f"{r['start_line']}"
        if rec is None:
            _out(f"{rel}:{span}\t(no record: not produced by a governed call, or changed since)")
            continue
        cls = {"AST_REFACTOR": "refactor", "INTENT_EVOLUTION": "evolution"}.get(rec["mutation_class"] or "", "?")
        if "recorded" in rec:
            moved = f"  (recorded at {rec['recorded'][0]}-{rec['recorded'][1]}"
            moved += f" in {rec['path']})" if rec["path"] != rel else ")"
        else:
            moved = f"  (from {rec['path']})"
        _out(f"{rel}:{span}\t{(rec['id'] or '')[:8]}  intent={rec['intent_id'] or '-'}  {cls}  "
             f"{rec['tool'] or '-'}  {rec['agent'] or '-'}  {(rec['timestamp'] or '')[:19]}  L{rec['line']}"
             + (moved if rec["moved"] else ""))
    return 0


# ---------------------------------------------------------------------------------------------- export/stats

def export_record(rec: dict, *, pure: bool) -> dict:
    """A spec record for export: chain fields removed (they only make sense on the original line); ``pure``
    drops orchestrator's metadata entirely."""
    out = {k: v for k, v in rec.items() if k != "metadata"}
    md = rec.get("metadata")
    if isinstance(md, dict) and not pure:
        md2 = {k: v for k, v in md.items() if k != NS}
        ns = md.get(NS)
        if isinstance(ns, dict):
            md2[NS] = {k: v for k, v in ns.items() if k not in ("chain", "merge_parents")}
        out["metadata"] = md2
    elif isinstance(md, dict) and pure:
        rest = {k: v for k, v in md.items() if k != NS}
        if rest:
            out["metadata"] = rest
    return out


def cmd_export(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    if args.format != "agent-trace":
        raise TraceError(f"export: unknown format {args.format!r} (supported: agent-trace)")
    pre, pred = build_filter(args, root)
    fh = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    n = 0
    try:
        for _, r in iter_matching(path, pre, pred):
            fh.write(json.dumps(export_record(r, pure=args.pure), ensure_ascii=False) + "\n")
            n += 1
    finally:
        if args.output:
            fh.close()
    if args.output:
        _err(f"exported {n} record(s) to {args.output}")
    return 0


def stats(path: Path, pre: list[bytes], pred: Callable[[dict], bool]) -> dict:
    """Counts per intent and class (and per tool/agent); streamed."""
    per_intent: dict[str, dict[str, int]] = {}
    per_tool: dict[str, int] = {}
    per_agent: dict[str, int] = {}
    total = mismatches = 0
    for _, r in iter_matching(path, pre, pred):
        ns = _ns(r)
        total += 1
        key = str(ns.get("intent_id") or "(none)")
        d = per_intent.setdefault(key, {"records": 0, "AST_REFACTOR": 0, "INTENT_EVOLUTION": 0,
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
            mismatches += 1
        t = str(ns.get("tool_name") or "?")
        per_tool[t] = per_tool.get(t, 0) + 1
        a = str(ns.get("agent") or "?")
        per_agent[a] = per_agent.get(a, 0) + 1
    return {"records": total, "class_mismatches": mismatches, "per_intent": per_intent, "per_tool": per_tool,
            "per_agent": per_agent}


def cmd_stats(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    pre, pred = build_filter(args, root)
    st = stats(path, pre, pred)
    if args.json:
        _json(st)
        return 0
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"{st['records']} record(s), {st['class_mismatches']} declared/computed class mismatch(es)")
    for col in ("intent", "records", "refactor", "evolution", "files", "+lines", "-lines"):
        t.add_column(col, justify="right" if col != "intent" else "left")
    for k, d in sorted(st["per_intent"].items()):
        t.add_row(k, str(d["records"]), str(d["AST_REFACTOR"]), str(d["INTENT_EVOLUTION"]), str(d["files"]),
                  str(d["lines_added"]), str(d["lines_removed"]))
    c = Console()
    c.print(t)
    c.print("by tool: " + ", ".join(f"{k}={v}" for k, v in sorted(st["per_tool"].items())))
    c.print("by agent: " + ", ".join(f"{k}={v}" for k, v in sorted(st["per_agent"].items())))
    return 0


# ------------------------------------------------------------------------------------------------------ audit

def audit(root: Path, path: Path) -> dict:
    """Working-tree changes since HEAD that no ledger record explains: :func:`orchestrator.audit.audit`."""
    from ..ledger.audit import AuditError, audit as _audit
    try:
        return _audit(root, path)
    except AuditError as e:
        raise TraceError(str(e)) from None


def _shown(path: str) -> str:
    """A path for one line of text output: control characters (a newline, a tab) escaped; --json keeps it verbatim."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in path)


def _spans_text(spans: list) -> str:
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def cmd_audit(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    res = audit(root, path)
    if args.json:
        _json(res)
    elif not res["ungoverned"]:
        _out(f"ok: every change since {res['head'][:10]} is accounted for by a ledger record")
    else:
        for f in res["ungoverned"]:
            removed = f" (removed without a record: HEAD line(s) {_spans_text(f['removed'])})" \
                if f.get("removed") else ""
            if f["kind"] == "lines":
                _out(f"{_shown(f['path'])}: ungoverned line(s) {_spans_text(f['ranges'])}{removed}")
            elif f["kind"] == "lines-removed":
                gone = _spans_text(f.get("removed") or [])
                _out(f"{_shown(f['path'])}: HEAD line(s) {gone} removed without a record")
            elif f["kind"] == "deleted":
                _out(f"{_shown(f['path'])}: deleted without a record")
            elif f["kind"] == "binary":
                _out(f"{_shown(f['path'])}: binary content changed without a record")
            else:
                _out(f"{_shown(f['path'])}: created or emptied without a record")
    return 1 if res["ungoverned"] else 0


# ---------------------------------------------------------------------------------------------------- parser

# Every option defaults to SUPPRESS: an absent option then sets no attribute, so neither the `trace` parser nor a
# verb parser can overwrite a value (or a same-named global option of the main CLI) parsed at another level;
# run() fills in the defaults.
_SUP = {"default": argparse.SUPPRESS}


def _add_filters(p: argparse.ArgumentParser, *, sub: bool) -> None:
    d = _SUP
    p.add_argument("--intent", metavar="ID", help="only records for this intent id", **d)
    p.add_argument("--file", metavar="PATH", help="only records touching PATH (a directory or a glob works)", **d)
    p.add_argument("--session", metavar="ID", help="only records of this agent session (a prefix of its id works)",
                   **d)
    p.add_argument("--class", dest="cls", metavar="CLASS", help="refactor | evolution", **d)
    p.add_argument("--tool", metavar="NAME", help="only records of this tool (Edit, Write, Bash, ...)", **d)
    p.add_argument("--since", metavar="WHEN", help="2h, 3d, 1w or an ISO date/time (UTC)", **d)
    p.add_argument("--out-of-scope", action="store_true",
                   help="only records of changes outside the intent's scope (found after shell commands)", **d)


def _add_output(p: argparse.ArgumentParser, *, sub: bool) -> None:
    d = _SUP
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="JSON output", **d)
    g.add_argument("--jsonl", action="store_true", help="one JSON record per line", **d)
    p.add_argument("--limit", type=int, metavar="N",
                   help="table: show the N most recent matches (default 50, 0 = all); json: all unless given",
                   **d)


def register(parser: Any) -> argparse.ArgumentParser:
    """Add the ``trace`` options and verbs.

    ``parser`` is either the ``trace`` subcommand's own parser (how ``orchestrator/cli.py`` calls it) or an
    argparse subparsers object, to which a ``trace`` parser is added.
    """
    if hasattr(parser, "add_parser"):
        p = parser.add_parser("trace", help="inspect, verify and export the trace ledger")
    else:
        p = parser
    p.description = __doc__
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    _add_workspace(p)
    p.add_argument("--root", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    _add_filters(p, sub=False)
    _add_output(p, sub=False)
    v = p.add_subparsers(dest="trace_cmd", metavar="VERB")
    p.set_defaults(trace_cmd=None)
    lp = v.add_parser("list", help="list records (default)")
    _add_filters(lp, sub=True)
    _add_output(lp, sub=True)
    sp = v.add_parser("show", help="show one record by id (prefix) or line (L123)")
    sp.add_argument("id")
    sp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    vp = v.add_parser("verify", help="check the hash chain and the schema; exit 1 at the first bad line")
    vp.add_argument("--strict", action="store_true", help="also validate every line with jsonschema (slow)")
    vp.add_argument("--chain-only", action="store_true", help="hash chain only, no JSON/schema check (fastest)")
    vp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    v.add_parser("repair", help="move a torn last line to <ledger>.quarantine")  # -C added below
    bp = v.add_parser("blame", help="which record/intent produced the current lines of FILE[:LINE]")
    bp.add_argument("target", metavar="FILE[:LINE]")
    bp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    ep = v.add_parser("export", help="export records as Agent Trace JSONL")
    ep.add_argument("--format", default="agent-trace", choices=["agent-trace"])
    ep.add_argument("--pure", action="store_true", help="drop orchestrator metadata (spec fields only)")
    ep.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    _add_filters(ep, sub=True)
    stp = v.add_parser("stats", help="counts per intent and class")
    _add_filters(stp, sub=True)
    stp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    ap = v.add_parser("audit", help="working-tree changes since HEAD that no record accounts for")
    ap.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    for verb in v.choices.values():
        _add_workspace(verb)
    return p


def _add_workspace(p: argparse.ArgumentParser) -> None:
    p.add_argument("-C", "--workspace", metavar="DIR", default=argparse.SUPPRESS,
                   help="workspace root (default: nearest parent with .orchestration/)")


_VERBS: dict[str | None, Callable[[argparse.Namespace], int]] = {
    None: cmd_list, "list": cmd_list, "show": cmd_show, "verify": cmd_verify, "repair": cmd_repair,
    "blame": cmd_blame, "export": cmd_export, "stats": cmd_stats, "audit": cmd_audit,
}


def run(args: argparse.Namespace) -> int:
    """Run the selected verb; expected failures print one line and return 1."""
    for name, default in (("json", False), ("jsonl", False), ("limit", None), ("root", None),
                          ("workspace", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if args.limit is None and not (args.json or args.jsonl):
        args.limit = 50
    import gc
    gc.disable()  # streaming parses millions of short-lived acyclic dicts: the cyclic GC only costs time here
    try:
        return _VERBS[getattr(args, "trace_cmd", None)](args)
    except TraceError as e:
        _err(f"orch trace: {e}")
        return 1
    except BrokenPipeError:  # `orch trace --jsonl | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m orchestrator.commands.trace ...``) until the lead's cli.py wires it."""
    parser = argparse.ArgumentParser(prog="orch")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
