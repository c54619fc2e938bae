"""Activity at a glance: records and decisions over time per intent and per agent, refusal hot spots, approvals
waiting — the summary behind the TUI's Activity view and ``orch trace stats`` (docs/tui.md, "Activity").

Sources, all local and read-only:
  * **records**: the ledger, through its index when it has one (:mod:`orchestrator.ledger.lookup`), else a scan —
    the same records either way; counted per hour in the window, per intent and per agent;
  * **decisions**: :func:`decision_events` — the telemetry spool's decision events when the workspace has any (every
    decision, allows included: ``orchestrator.telemetry.spool.read_events``), else the refusal log
    (``.orchestration/run/refusals.jsonl``: denials and asks only). One function, so the source is one choice;
  * **approvals waiting**: the approval broker's pending requests (every worktree of the repository).

The window (``since``, default 7 days) ends with the current hour and is cut into at most :data:`MAX_BUCKETS`
buckets of whole hours; counting by the hour (``YYYY-MM-DDTHH`` of a record's timestamp) is what the index can do
in SQL and what the scan does in Python, so both give the same numbers. Never imports Textual or rich.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from orchestrator.ledger import query
from orchestrator.config.workspace import Workspace

__all__ = ["Activity", "collect", "decision_events", "render", "spark", "bar", "MAX_BUCKETS"]

MAX_BUCKETS = 24
_SPARK = "▁▂▃▄▅▆▇█"


@dataclass
class Activity:
    """One summary; ``buckets`` are the ISO start times of the columns of every series."""

    start: str
    bucket_hours: int
    buckets: list[str]
    records_per_intent: dict[str, list[int]] = field(default_factory=dict)
    records_per_agent: dict[str, list[int]] = field(default_factory=dict)
    decision_source: str = "none"
    decisions_per_agent: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    decisions_per_intent: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    hot_hooks: list[tuple[str, int]] = field(default_factory=list)
    hot_types: list[tuple[str, int]] = field(default_factory=list)
    hot_paths: list[tuple[str, int]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``orch trace stats --json``, key ``activity``)."""
        return {"start": self.start, "bucket_hours": self.bucket_hours, "buckets": self.buckets,
                "records": {"per_intent": self.records_per_intent, "per_agent": self.records_per_agent},
                "decisions": {"source": self.decision_source, "per_agent": self.decisions_per_agent,
                              "per_intent": self.decisions_per_intent},
                "hot_spots": {"hooks": self.hot_hooks, "types": self.hot_types, "paths": self.hot_paths},
                "approvals_waiting": self.approvals}


# ------------------------------------------------------------------------------------------------------ window

class _Window:
    """The buckets of whole hours ending with the current hour."""

    def __init__(self, since: str, now: datetime) -> None:
        end = now.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        floor = datetime.fromisoformat(query.parse_since(since, now).replace("Z", "+00:00"))
        hours = max(1, math.ceil((end - floor).total_seconds() / 3600))
        self.size = max(1, math.ceil(hours / MAX_BUCKETS))
        self.n = math.ceil(hours / self.size)
        self.start = end - timedelta(hours=self.n * self.size)
        self.floor = query.parse_since(self.start.isoformat())

    def labels(self) -> list[str]:
        return [(self.start + timedelta(hours=i * self.size)).strftime("%Y-%m-%dT%H:%MZ") for i in range(self.n)]

    def of_hour(self, hour: str) -> int | None:
        """The bucket of ``YYYY-MM-DDTHH`` (None: outside the window, or not a time)."""
        try:
            dt = datetime.strptime(hour, "%Y-%m-%dT%H").replace(tzinfo=timezone.utc)
        except (ValueError, TypeError):
            return None
        i = int((dt - self.start).total_seconds() // 3600) // self.size
        return i if 0 <= i < self.n else None

    def of_epoch(self, ts: Any) -> int | None:
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or not math.isfinite(ts):
            return None
        try:
            return self.of_hour(datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H"))
        except (OverflowError, OSError, ValueError):
            return None


def _add(series: dict[str, list[int]], key: str, i: int | None, n: int, count: int = 1) -> None:
    if i is not None:
        series.setdefault(key, [0] * n)[i] += count


# ----------------------------------------------------------------------------------------------------- records

def _hour_rows(path: Path, root: Path, filters: query.Filters, use_index: bool) -> Iterator[tuple[str, str, str, int]]:
    """``(hour, intent key, agent key, count)`` of the records matching ``filters`` (its ``since`` resolved)."""
    pre, pred = query.build_filter(filters, root)
    if use_index:
        rows = _hour_rows_indexed(path, root, filters, pre, pred)
        if rows is not None:
            yield from rows
            return
    for _, r in query.iter_matching(path, pre, pred):
        yield _hour_key(r) + (1,)


def _hour_key(r: dict) -> tuple[str, str, str]:
    ns = query.ns_of(r)
    ts = query._record_ts(str(r.get("timestamp", "")))
    return ts[:13], str(ns.get("intent_id") or "(none)"), str(ns.get("agent") or "?")


def _hour_rows_indexed(path: Path, root: Path, filters: query.Filters, pre: list[bytes],
                       pred: Any) -> list[tuple[str, str, str, int]] | None:
    from orchestrator.ledger import lookup

    def count(idx: Any) -> list[tuple[str, str, str, int]]:
        where, params = lookup._where(idx, filters, root)
        rows = [tuple(r) for r in idx.conn.execute(
            f"SELECT substr(ts, 1, 13), s_intent, s_agent, COUNT(*) FROM rec WHERE {where} GROUP BY 1, 2, 3", params)]
        rows.extend(_hour_key(r) + (1,) for _, r in lookup._extra(idx, pre, pred))
        return rows
    rows: list[tuple[str, str, str, int]] | None = lookup.served(path, count)
    return rows


# --------------------------------------------------------------------------------------------------- decisions

def decision_events(ws: Workspace, since_epoch: float) -> tuple[str, list[dict[str, Any]]]:
    """``(source, decisions)`` since ``since_epoch``: each ``{"ts": epoch, "decision", "type", "hook", "agent",
    "intent", "session", "tool", "paths"}``. The telemetry spool when it holds decisions, else the refusal log."""
    from orchestrator.telemetry.spool import read_events  # stdlib only; holds events when telemetry is on

    spooled = list(read_events(ws.run_dir, since=since_epoch, kinds=("decision",)))
    if spooled:
        return "telemetry spool (every decision)", spooled
    from orchestrator.state import refusals
    out = []
    for e in refusals.read(ws.run_dir):
        try:
            ts = datetime.strptime(str(e.get("ts")), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
        if ts >= since_epoch:
            paths = [e["path"]] if isinstance(e.get("path"), str) else [str(t) for t in e.get("targets") or ()]
            out.append({"ts": ts, "decision": e.get("decision"), "type": e.get("type"), "hook": e.get("hook"),
                        "agent": e.get("agent"), "intent": e.get("intent"), "session": e.get("session_id"),
                        "tool": e.get("tool"), "paths": paths})
    return "refusal log (denials and asks only)", out


def _decisions(act: Activity, win: _Window, ws: Workspace, filters: query.Filters) -> None:
    source, events = decision_events(ws, datetime.fromisoformat(win.floor.replace("Z", "+00:00")).timestamp())
    act.decision_source = source
    hooks: Counter[str] = Counter()
    types: Counter[str] = Counter()
    paths: Counter[str] = Counter()
    for e in events:
        if filters.intent and e.get("intent") != filters.intent:
            continue
        if filters.session and not str(e.get("session") or "").startswith(filters.session):
            continue
        if filters.tool and str(e.get("tool") or "").lower() != filters.tool.lower():
            continue
        i = win.of_epoch(e.get("ts"))
        if i is None:
            continue
        decision = str(e.get("decision") or "?")
        _add(act.decisions_per_agent.setdefault(str(e.get("agent") or "?"), {}), decision, i, win.n)
        _add(act.decisions_per_intent.setdefault(str(e.get("intent") or "(none)"), {}), decision, i, win.n)
        if decision != "allow":
            hooks[str(e.get("hook") or "?")] += 1
            types[str(e.get("type") or "?")] += 1
            for p in e.get("paths") or ():
                paths[str(p)] += 1
    act.hot_hooks, act.hot_types, act.hot_paths = hooks.most_common(5), types.most_common(5), paths.most_common(5)


def _approvals(ws: Workspace, now: float) -> list[dict[str, Any]]:
    from orchestrator.approvals import ApprovalRequest, Broker
    out = []
    for req in Broker(ws.shared_run_dir, clock=lambda: now).pending():
        if isinstance(req, ApprovalRequest):
            out.append({"id": req.id, "risk": req.risk, "summary": req.summary, "agent": req.agent,
                        "intent": req.intent_id, "waiting_seconds": max(0, int(now - req.created))})
        else:
            out.append({"id": req.id, "risk": "corrupt", "summary": "corrupt request file", "agent": None,
                        "intent": None, "waiting_seconds": 0})
    return out


def collect(ws: Workspace, *, since: str = "7d", filters: query.Filters | None = None, now: datetime | None = None,
            use_index: bool = True) -> Activity:
    """The activity of workspace ``ws`` over the window ``since`` (``7d``, ``24h``, an ISO date...)."""
    now = now or datetime.now(timezone.utc)
    win = _Window(since, now)
    act = Activity(start=win.labels()[0], bucket_hours=win.size, buckets=win.labels())
    filters = filters or query.Filters()
    for hour, intent, agent, count in _hour_rows(ws.ledger_file, ws.root, _narrowed(filters, win.floor), use_index):
        i = win.of_hour(hour)
        _add(act.records_per_intent, intent, i, win.n, count)
        _add(act.records_per_agent, agent, i, win.n, count)
    _decisions(act, win, ws, filters)
    act.approvals = _approvals(ws, now.timestamp())
    for series in (act.records_per_intent, act.records_per_agent):
        ordered = sorted(series.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
        series.clear()
        series.update(ordered)
    return act


def _narrowed(filters: query.Filters, floor: str) -> query.Filters:
    """``filters`` with ``since`` no earlier than the window's start."""
    from dataclasses import replace

    since = filters.resolved().since
    return replace(filters, since=max(since, floor) if since else floor)


# ---------------------------------------------------------------------------------------------------- rendering

def spark(values: list[int], top: int) -> str:
    """One character per bucket: ``·`` for none, then ▁..█ relative to ``top``."""
    return "".join("·" if v <= 0 else _SPARK[min(len(_SPARK) - 1, (v * len(_SPARK) - 1) // max(top, 1))]
                   for v in values)


def bar(count: int, top: int, width: int = 20) -> str:
    """A horizontal bar of full blocks, at least one for a non-zero count."""
    return "█" * max(1 if count else 0, round(count * width / max(top, 1)))


def _chart(title: str, series: dict[str, list[int]], label_width: int = 14, rows: int = 8) -> list[str]:
    if not series:
        return [f"{title}: none in the window"]
    top = max(max(v) for v in series.values())
    lines = [title]
    for k, v in list(series.items())[:rows]:
        lines.append(f"  {k[:label_width]:<{label_width}} {spark(v, top)} {sum(v):>6}")
    if len(series) > rows:
        lines.append(f"  … {len(series) - rows} more")
    return lines


def render(act: Activity) -> list[str]:
    """The summary as plain text lines (the TUI's Activity view and ``orch trace stats`` print the same)."""
    lines = [f"Activity since {act.start.replace('T', ' ').rstrip('Z')} UTC: {len(act.buckets)} column(s) of "
             f"{act.bucket_hours} h (· none, ▁..█ busiest)"]
    lines += _chart("Records per intent", act.records_per_intent)
    lines += _chart("Records per agent", act.records_per_agent)
    per_agent = {f"{a} {d}": v for a, ds in act.decisions_per_agent.items() for d, v in sorted(ds.items())}
    lines += _chart(f"Decisions per agent — {act.decision_source}", per_agent, label_width=22)
    for title, items in (("hooks", act.hot_hooks), ("types", act.hot_types), ("paths", act.hot_paths)):
        if not items:
            continue
        top = items[0][1]
        lines.append(f"Refused most — {title}")
        lines += [f"  {k[:30]:<30} {bar(c, top)} {c}" for k, c in items]
    if not act.hot_hooks:
        lines.append("Refused most: nothing refused in the window")
    if act.approvals:
        oldest = max(a["waiting_seconds"] for a in act.approvals)
        lines.append(f"Approvals waiting: {len(act.approvals)} (oldest {_ago(oldest)})")
        lines += [f"  {a['risk']:<16} {_ago(a['waiting_seconds']):>4}  {a['summary'][:60]}" for a in act.approvals[:5]]
    else:
        lines.append("Approvals waiting: none")
    return lines


def _ago(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def dumps(act: Activity) -> str:
    """The JSON form, for tests and tools."""
    return json.dumps(act.to_dict(), ensure_ascii=False)
