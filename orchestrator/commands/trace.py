"""``orch trace``: list, show, verify, repair, blame, export, stats and audit the trace ledger.

Argparse and rendering only: the queries are :mod:`orchestrator.ledger.query`, :mod:`~orchestrator.ledger.blame`,
:mod:`~orchestrator.ledger.audit` and :func:`orchestrator.ledger.verify` (every verb streams the ledger line by
line); expected errors are :class:`~orchestrator.core.errors.OrchestratorError` subclasses reported by cli.py's boundary.

    orch trace [-C DIR] [--intent ID] [--file PATH] [--session ID] [--class refactor|evolution] [--tool NAME]
               [--since 2h|3d|2026-01-31[T10:00]] [--limit N] [--json | --jsonl]
    orch trace list   (same as above)
    orch trace show ID            (uuid or unique prefix; or a line number as L123)
    orch trace verify [--strict | --chain-only] [--history] [--json]   exit 1 + first bad line on failure
    orch trace anchor [--reset] [--json]                          this machine's local anchor of the ledger
    orch trace repair                                             quarantine a torn last line
    orch trace blame FILE[:LINE] [--json]
    orch trace export [--format agent-trace | --otlp] [--pure] [-o FILE] [filters]   --otlp: docs/telemetry.md
    orch trace stats [--json] [filters]    per intent/tool/agent; activity (default --since 7d), hot spots, approvals
    orch trace audit [--json]                                     exit 1 if ungoverned changes exist
    orch trace index [--rebuild] [--json]                         bring the SQLite index up to date
    (every verb: --no-index scans the ledger instead of using the index; the answers are the same)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import ledger, telemetry
from orchestrator.core.errors import OrchestratorError, UsageError
from ..ledger import query
from orchestrator.core.output import err, out, shown
from . import workspace_of

__all__ = ["register", "run", "main"]


def _json(obj: Any) -> None:
    out(json.dumps(obj, indent=2, ensure_ascii=False))


def _ledger_path(args: argparse.Namespace) -> tuple[Path, Path]:
    """The workspace root (``-C``, else the nearest parent with ``.orchestration/``) and its ledger."""
    ws = workspace_of(args)
    return ws.root, ws.ledger_file


# ------------------------------------------------------------------------------------------------------ verbs

def _short(session_id: str | None) -> str:
    """Session ids are often UUIDs: the first 8 characters tell them apart in a table."""
    if not session_id:
        return "-"
    return session_id if len(session_id) <= 12 else session_id[:8] + "…"


def _fmt_ranges(rngs: list) -> str:
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in rngs[:4]]
    return ",".join(parts) + ("…" if len(rngs) > 4 else "")


# ------------------------------------------------------------------------------------------------------ index

def _indexed(args: argparse.Namespace, path: Path, use: Callable[[Any], Any]) -> Any:
    """``use(index)`` when the index can answer, else None (the caller scans; an answer never depends on it)."""
    from ..ledger import lookup
    return lookup.served(path, use, enabled=not args.no_index)


def _matches(args: argparse.Namespace, path: Path, filters: query.Filters, root: Path, pre: list[bytes],
             pred: Callable[[dict], bool]) -> Iterator[tuple[int, dict]]:
    from ..ledger import lookup
    return lookup.matches(path, filters, root, pre, pred, enabled=not args.no_index)


def _filters(args: argparse.Namespace, root: Path) -> tuple[query.Filters, list[bytes], Callable[[dict], bool]]:
    filters = query.Filters.of(args).resolved()
    pre, pred = query.build_filter(filters, root)
    return filters, pre, pred


def cmd_index(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    import time

    from ..ledger.index import LedgerIndex, index_path
    t0 = time.perf_counter()
    idx = LedgerIndex.open(path, min_bytes=0, rebuild=args.rebuild)
    if idx is None:
        raise OrchestratorError(f"no index for {path}: the ledger does not exist, or the index cannot be written")
    with idx:
        info = {"index": str(index_path(path)), "lines": idx.lines, "bytes": idx.offset, "rebuilt": idx.rebuilt,
                "resynced": idx.resynced, "seconds": round(time.perf_counter() - t0, 3), "odd": len(idx.odd_rows())}
    if getattr(args, "json", False):
        _json(info)
    else:
        state = "rebuilt" if info["rebuilt"] else "resynced" if info["resynced"] is not None else "up to date"
        out(f"{state}: {info['lines']} line(s), {info['bytes']} byte(s) "
            f"indexed in {info['seconds']} s ({info['odd']} re-checked by the scan); {info['index']}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    filters, pre, pred = _filters(args, root)
    limit = args.limit
    if limit:
        from ..ledger import lookup
        served = _indexed(args, path, lambda idx: lookup.select(idx, filters, root, pre, pred, limit))
    else:
        served = None
    if args.jsonl or args.json:
        if served is not None:
            it: Iterator[tuple[int, dict]] = iter(served[1])
        else:
            it = _matches(args, path, filters, root, pre, pred)
            if limit:  # the most recent N, bounded memory
                it = iter(deque(it, maxlen=limit))
        if args.jsonl:
            for _, r in it:
                out(json.dumps(r, ensure_ascii=False))
        else:
            _json_array(json.dumps(r, ensure_ascii=False) for _, r in it)
        return 0
    total = 0
    recent: deque = deque(maxlen=limit or None)
    if served is not None:
        total = served[0]
        recent.extend(query.summary(n, r) for n, r in served[1])
    else:
        for n, r in _matches(args, path, filters, root, pre, pred):
            total += 1
            recent.append(query.summary(n, r))
    _table(recent, total, path)
    return 0


def _json_array(items: Any) -> None:
    """A JSON array streamed one element a line (memory stays bounded): ``[``, elements, ``]``."""
    out("[")
    prev = None
    for item in items:
        if prev is not None:
            out(prev + ",")
        prev = item
    if prev is not None:
        out(prev)
    out("]")


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

    out(f"{path.name}: {len(rows)} of {total} matching record(s)")
    for s in rows:
        cls = {"AST_REFACTOR": "refactor", "INTENT_EVOLUTION": "evolution"}.get(s["mutation_class"] or "", "?")
        if s["class_mismatch"]:
            cls += "(declared≠)"
        when = (s["timestamp"] or "")[:19].replace("T", " ")
        out(f"#{s['line']} {when} {s['intent_id'] or '-'} {cls} {s['tool'] or '-'} "
            f"session {_short(s['session_id'])} id {(s['id'] or '')[:8]}"
            + (f" approved by {s['approver']}" if s.get("approver") else ""))
        files = "; ".join((f"{op if op and op != 'modify' else ''} {f['path']}"
                           + (f":{_fmt_ranges(f['ranges'])}" if f["ranges"] else "")).strip()
                          for f, op in zip(s["files"], s["ops"] + [None] * len(s["files"])))
        for line in textwrap.wrap(files or "-", max(width - 4, 20), break_on_hyphens=False) or ["-"]:
            out(f"    {line}")


def _table(rows: deque, total: int, path: Path) -> None:
    width = _width()
    if width < COMPACT_BELOW:
        _compact(rows, total, path, width)
        return
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"{path.name}: {len(rows)} of {total} matching record(s)", show_lines=False)
    approved = any(s.get("approver") for s in rows)
    for col in ("#", "time (UTC)", "id", "intent", "class", "tool", "session", *(("approved by",) if approved else ())):
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
                  str(s["intent_id"] or "-"), cls, str(s["tool"] or "-"), _short(s["session_id"]),
                  *((s.get("approver") or "-",) if approved else ()), files)
    # piped output (e.g. the demo, or `| less`) gets a readable width instead of rich's 80 columns
    Console(soft_wrap=False, width=None if sys.stdout.isatty() else max(120, width)).print(t)


def cmd_show(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    key = args.id.strip()
    from ..ledger import lookup
    found = _indexed(args, path, lambda idx: lookup.find_records(idx, key))
    n, r = query.find_record(path, key, found=found)
    if not args.json:
        out(f"# line {n}")
    _json(r)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from ..ledger import anchor

    root, path = _ledger_path(args)
    res = ledger.verify(path, strict=args.strict, schema=not args.chain_only,
                        anchor=anchor.for_workspace(root, path))
    hist = None
    if getattr(args, "history", False):
        from ..ledger import history

        hist = history.check(root, path)
    ok = res.ok and (hist is None or hist.ok)
    if args.json:
        d: dict[str, Any] = res.to_dict()
        if hist is not None:
            d["history"] = hist.to_dict()
            d["ok"] = ok
        _json(d)
        return 0 if ok else 1
    if res.ok:
        sig = (f"signatures: {res.signed} signed, {res.legacy} unsigned legacy" if res.signatures == "checked"
               else f"signatures: {res.signatures}")
        out(f"ok: {res.records} record(s), {res.forks} merge fork(s), {res.heads} head(s); schema: {res.schema}; "
            f"{sig}")
    else:
        err(f"{path.name}:{res.bad_line}: {res.reason}" if res.bad_line else f"{path.name}: {res.reason}")
        for pr in res.problems:
            if pr["message"] != res.reason or pr["line"] != res.bad_line:
                err(f"{path.name}:{pr['line']}: {pr['message']}" if pr["line"] else f"{path.name}: {pr['message']}")
        listed = len(res.problems)
        total = sum(res.counts.values())
        if total > listed:
            err(f"… and {total - listed} more problem(s): " + ", ".join(f"{k} {v}" for k, v in res.counts.items()))
    for note in res.notes:
        (out if res.ok else err)(f"note: {note}")
    for hint in dict.fromkeys(res.hints):
        err(f"hint: {hint}")
    if hist is not None:
        if hist.ok:
            out(f"history ok: {hist.versions} committed version(s) of the ledger, each an append-only extension of "
                "the previous" + (f" ({hist.merges} merge(s))" if hist.merges else ""))
        for hp in hist.problems:
            err(f"history: {hp}")
    return 0 if ok else 1


def cmd_anchor(args: argparse.Namespace) -> int:
    from ..ledger import anchor

    root, path = _ledger_path(args)
    where = anchor.for_workspace(root, path)
    a = anchor.reset(where, str(path)) if args.reset else anchor.read(where)
    if args.json:
        _json({"anchor": str(where), "state": a})
    elif a is None:
        out(f"no local anchor for {path.name} on this branch ({where})")
    else:
        out(f"{'re-anchored' if args.reset else 'anchor'}: line {a.get('line')}, record {str(a.get('head'))[7:19]}, "
            f"{a.get('time')} ({where})")
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    _, path = _ledger_path(args)
    rr = ledger.repair(path)
    if rr.quarantined_bytes:
        out(f"moved a torn tail of {rr.quarantined_bytes} byte(s) to {rr.quarantine}")
    else:
        out("nothing to repair (the ledger ends with a complete line)")
    res = ledger.verify(path)
    if not res.ok:
        err(f"still invalid: {path.name}:{res.bad_line}: {res.reason} (only a torn tail is repaired automatically)")
        return 1
    return 0


# ------------------------------------------------------------------------------------------------------ blame

def cmd_blame(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    target, line = args.target, None
    m = re.fullmatch(r"(.+):(\d+)", target)
    if m and not Path(target).exists():
        target, line = m.group(1), int(m.group(2))
    rel = query.rel_to_root(root, target)
    from ..ledger import lookup
    from ..ledger.blame import blame

    res = blame(root, path, rel, events=_indexed(args, path, lambda idx: lookup.file_events(idx, rel)))
    runs = res["runs"]
    if line is not None:
        if not 1 <= line <= res["lines"]:
            raise UsageError(f"blame: {rel} has {res['lines']} line(s)")
        runs = [r for r in runs if r["start_line"] <= line <= r["end_line"]]
    if args.json:
        _json(dict(res, runs=runs))
        return 0
    for r in runs:
        rec = r["record"]
        span = f"{r['start_line']}-{r['end_line']}" if r["end_line"] != r["start_line"] else f"{r['start_line']}"
        if rec is None:
            out(f"{rel}:{span}\t(no record: not produced by a governed call, or changed since)")
            continue
        cls = {"AST_REFACTOR": "refactor", "INTENT_EVOLUTION": "evolution"}.get(rec["mutation_class"] or "", "?")
        if "recorded" in rec:
            moved = f"  (recorded at {rec['recorded'][0]}-{rec['recorded'][1]}"
            moved += f" in {rec['path']})" if rec["path"] != rel else ")"
        else:
            moved = f"  (from {rec['path']})"
        out(f"{rel}:{span}\t{(rec['id'] or '')[:8]}  intent={rec['intent_id'] or '-'}  {cls}  "
            f"{rec['tool'] or '-'}  {rec['agent'] or '-'}  {(rec['timestamp'] or '')[:19]}  L{rec['line']}"
            + (moved if rec["moved"] else ""))
    return 0


# ---------------------------------------------------------------------------------------------- export/stats

def cmd_export(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    filters, pre, pred = _filters(args, root)
    if args.format == "otlp":  # the OTLP backfill: each record's id is its event's id (docs/telemetry.md)
        return telemetry.backfill_command(root, (r for _, r in _matches(args, path, filters, root, pre, pred)))
    fh = open(args.output, "w", encoding="utf-8") if args.output else None
    emit: Callable[[str], Any] = out if fh is None else (lambda text: fh.write(text + "\n"))
    n = 0
    try:
        for _, r in _matches(args, path, filters, root, pre, pred):
            emit(json.dumps(query.export_record(r, pure=args.pure), ensure_ascii=False))
            n += 1
    finally:
        if fh is not None:
            fh.close()
    if args.output:
        err(f"exported {n} record(s) to {args.output}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    filters, pre, pred = _filters(args, root)
    from ..ledger import lookup
    st = _indexed(args, path, lambda idx: lookup.stats(idx, filters, root, pre, pred))
    if st is None:
        st = query.stats(path, pre, pred)
    from datetime import datetime

    from orchestrator.views.activity import collect, render
    now = datetime.fromisoformat(args.now.replace("Z", "+00:00")) if getattr(args, "now", None) else None
    act = collect(workspace_of(args), since=getattr(args, "since", None) or "7d", filters=filters, now=now,
                  use_index=not args.no_index)
    if args.json:
        _json(dict(st, activity=act.to_dict()))
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
    for line in render(act):
        out(line)
    return 0


# ------------------------------------------------------------------------------------------------------ audit

def _spans_text(spans: list) -> str:
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def cmd_audit(args: argparse.Namespace) -> int:
    root, path = _ledger_path(args)
    from ..ledger.audit import audit

    res = audit(root, path)
    if args.json:
        _json(res)
    elif not res["ungoverned"]:
        since = res["head"][:10] if res["head"] else "the empty tree (no commit yet)"  # a fresh `git init`
        out(f"ok: every change since {since} is accounted for by a ledger record")
    else:
        for f in res["ungoverned"]:
            removed = f" (removed without a record: HEAD line(s) {_spans_text(f['removed'])})" \
                if f.get("removed") else ""
            if f.get("eol"):
                removed += f" (line ending changed: {_spans_text(f['eol'])})"
            if f["kind"] == "lines":
                out(f"{shown(f['path'])}: ungoverned line(s) {_spans_text(f['ranges'])}{removed}")
            elif f["kind"] == "lines-removed":
                gone = _spans_text(f.get("removed") or [])
                out(f"{shown(f['path'])}: HEAD line(s) {gone} removed without a record")
            elif f["kind"] == "deleted":
                out(f"{shown(f['path'])}: deleted without a record")
            elif f["kind"] == "binary":
                out(f"{shown(f['path'])}: binary content changed without a record")
            else:
                out(f"{shown(f['path'])}: created or emptied without a record")
    return 1 if res["ungoverned"] else 0


# ---------------------------------------------------------------------------------------------------- parser

# Every option defaults to SUPPRESS: an absent option then sets no attribute, so neither the `trace` parser nor a
# verb parser can overwrite a value (or a same-named global option of the main CLI) parsed at another level;
# run() fills in the defaults.
_SUP: dict[str, Any] = {"default": argparse.SUPPRESS}


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
    vp.add_argument("--history", action="store_true",
                    help="also check through git that every committed version extends the previous one")
    vp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    anp = v.add_parser("anchor", help="show this machine's local anchor of the ledger (--reset: re-anchor)")
    anp.add_argument("--reset", action="store_true",
                     help="anchor at the current last record (after a reviewed reset of the branch)")
    anp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    v.add_parser("repair", help="move a torn last line to <ledger>.quarantine")  # -C added below
    bp = v.add_parser("blame", help="which record/intent produced the current lines of FILE[:LINE]")
    bp.add_argument("target", metavar="FILE[:LINE]")
    bp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    ep = v.add_parser("export", help="export records as Agent Trace JSONL")
    ep.add_argument("--format", default="agent-trace", choices=["agent-trace", "otlp"])
    ep.add_argument("--otlp", dest="format", action="store_const", const="otlp", help="send to the OTLP endpoint")
    ep.add_argument("--pure", action="store_true", help="drop orchestrator metadata (spec fields only)")
    ep.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    _add_filters(ep, sub=True)
    stp = v.add_parser("stats", help="counts per intent and class; activity over time, refusal hot spots, approvals")
    _add_filters(stp, sub=True)
    stp.add_argument("--now", default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # reproducible output (tests)
    stp.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    ip = v.add_parser("index", help="bring the ledger index up to date (or --rebuild it) and say how big it is")
    ip.add_argument("--rebuild", action="store_true", help="build it again from scratch")
    ip.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    ap = v.add_parser("audit", help="working-tree changes since HEAD that no record accounts for")
    ap.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    for verb in v.choices.values():
        _add_workspace(verb)
    return p


def _add_workspace(p: argparse.ArgumentParser) -> None:
    p.add_argument("-C", "--workspace", metavar="DIR", default=argparse.SUPPRESS,
                   help="workspace root (default: nearest parent with .orchestration/)")
    p.add_argument("--no-index", action="store_true", default=argparse.SUPPRESS,
                   help="scan the ledger instead of using its index (answers are the same, only slower)")


_VERBS: dict[str | None, Callable[[argparse.Namespace], int]] = {
    None: cmd_list, "list": cmd_list, "show": cmd_show, "verify": cmd_verify, "anchor": cmd_anchor,
    "repair": cmd_repair,
    "blame": cmd_blame, "export": cmd_export, "stats": cmd_stats, "audit": cmd_audit,
    "index": cmd_index,
}


def run(args: argparse.Namespace) -> int:
    """Run the selected verb; expected failures raise :class:`~orchestrator.core.errors.OrchestratorError` (cli.py)."""
    for name, default in (("json", False), ("jsonl", False), ("limit", None), ("root", None),
                          ("workspace", None), ("no_index", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if args.limit is None and not (args.json or args.jsonl):
        args.limit = 50
    import gc
    gc.disable()  # streaming parses millions of short-lived acyclic dicts: the cyclic GC only costs time here
    if args.workspace is None and args.root is not None:
        args.workspace = args.root  # the hidden --root spelling of -C
    try:
        return _VERBS[getattr(args, "trace_cmd", None)](args)
    except BrokenPipeError:  # `orch trace --jsonl | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    """``python -m orchestrator.commands.trace trace ...``: the same as ``orch trace ...`` (cli.py's boundary)."""
    from ..cli import main as cli_main

    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())
