"""What an intent amounted to: records, files, lines, commits, approvals, refusals, lessons (``orch intents show``,
``orch intents done``, the TUI's and the page's intent views).

Computed on demand from what orchestrator already keeps, all read-only:

* **records, files, lines, sessions, agents**: the ledger records whose ``intent_id`` is the intent (streamed with
  the same byte pre-filter ``orch trace --intent`` uses); lines are the added/removed counts each record holds per
  file, so they add up to what the agents changed under this intent, not to a diff of the tree;
* **commits**: the commits that carry the intent's records — git's pickaxe (``git log -S``) on the ledger file for
  the record's ``"intent_id":"<id>"`` bytes: a commit that added (or dropped) such lines. The ledger is committed
  with the code it describes, so these are the commits that brought the intent's work in;
* **approvals**: the broker's resolved requests for the intent (every worktree's, ``run/approvals/resolved/``),
  plus the proposal that created it (``proposal`` key);
* **refusals**: the refusal log's entries naming the intent, by type;
* **lessons**: AGENTS.md's lessons tagged with the intent.

Nothing here is on a hook's path; git runs only through :mod:`orchestrator.vcs.cli`.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: at most this many items of each list are kept (a summary, not a report)
LIMIT = 50


@dataclass
class Summary:
    """One intent's summary (``intent`` holds its fields; ``archived`` when it came from the archive)."""

    intent: dict[str, Any]
    archived: bool = False
    records: int = 0
    first: str | None = None
    last: str | None = None
    files: dict[str, dict[str, int]] = field(default_factory=dict)
    lines_added: int = 0
    lines_removed: int = 0
    sessions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    commits: list[dict[str, str]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)
    lessons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_intent(ws: Any, intent_id: str) -> tuple[dict[str, Any], bool] | None:
    """The intent's fields as the file holds them (active first, then the archive) and whether it is archived."""
    from orchestrator.config.intentstore import IntentStore

    docs = IntentStore(ws).read()
    for archived, doc in ((False, docs.active), (True, docs.archive)):
        for raw in doc.intents():
            if str(raw.get("id")) == intent_id:
                return json.loads(json.dumps(raw, default=str)), archived
    return None


def summarize(ws: Any, intent_id: str, *, git: bool = True) -> Summary:
    """The summary of ``intent_id`` (raises :class:`~orchestrator.core.errors.UsageError` when there is no such intent)."""
    from orchestrator.core.errors import UsageError

    found = find_intent(ws, intent_id)
    if found is None:
        raise UsageError(f"no intent {intent_id!r}", hint="`orch intents --all` lists active and archived intents")
    summary = Summary(intent=found[0], archived=found[1])
    _ledger(ws, intent_id, summary)
    if git:
        _commits(ws, intent_id, summary)
    _approvals(ws, intent_id, summary)
    _refusals(ws, intent_id, summary)
    from orchestrator.post import lessons

    summary.lessons = lessons.of_intent(ws.agents_md, intent_id)[-LIMIT:]
    return summary


def _ledger(ws: Any, intent_id: str, summary: Summary) -> None:
    from orchestrator.ledger import query

    pre, pred = query.build_filter(query.Filters(intent=intent_id), Path(ws.root))
    sessions: Counter[str] = Counter()
    agents: Counter[str] = Counter()
    for _, rec in query.iter_matching(Path(ws.ledger_file), pre, pred):
        ns = query.ns_of(rec)
        summary.records += 1
        ts = str(rec.get("timestamp") or "")
        summary.first = summary.first or ts
        summary.last = ts
        sessions[str(ns.get("session_id") or "?")] += 1
        agents[str(ns.get("agent") or "?")] += 1
        for entry in ns.get("files") or ():
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            added, removed = int(entry.get("added") or 0), int(entry.get("removed") or 0)
            counts = summary.files.setdefault(entry["path"], {"records": 0, "added": 0, "removed": 0})
            counts["records"] += 1
            counts["added"] += added
            counts["removed"] += removed
            summary.lines_added += added
            summary.lines_removed += removed
    summary.sessions = [s for s, _ in sessions.most_common(LIMIT)]
    summary.agents = [a for a, _ in agents.most_common(LIMIT)]


def _commits(ws: Any, intent_id: str, summary: Summary) -> None:
    from orchestrator.vcs.cli import git

    ledger = os.path.relpath(ws.ledger_file, ws.root)
    needle = '"intent_id":' + json.dumps(intent_id)
    try:
        # --no-textconv: the pickaxe would run a textconv driver a git-mode command set in .git/config meanwhile
        proc = git(ws.root, "log", "--no-textconv", f"--max-count={LIMIT}", "--format=%H%x00%an%x00%aI%x00%s",
                   f"-S{needle}", "--", ledger, timeout=30)
    except (OSError, Exception) as exc:  # noqa: BLE001 — no git, a timeout: the summary says so
        summary.notes.append(f"commits unavailable: {exc}")
        return
    if proc.returncode != 0:
        if b"not a git repository" not in proc.stderr and b"does not have any commits" not in proc.stderr:
            summary.notes.append("commits unavailable: " + proc.stderr.decode(errors="replace").strip()[:200])
        return
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\0")
        if len(parts) == 4:
            summary.commits.append({"sha": parts[0], "author": parts[1], "date": parts[2], "subject": parts[3]})


def _approvals(ws: Any, intent_id: str, summary: Summary) -> None:
    folder = Path(ws.approvals_dir) / "resolved"
    proposal = summary.intent.get("proposal")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            record = json.loads((folder / name).read_bytes())
        except (OSError, ValueError):
            continue
        request = record.get("request") if isinstance(record, dict) else None
        decision = record.get("decision") if isinstance(record, dict) else None
        if not isinstance(request, dict) or not isinstance(decision, dict):
            continue
        created = (record.get("outcome") or {}).get("intent_id") == intent_id if isinstance(
            record.get("outcome"), dict) else False
        if request.get("intent_id") != intent_id and request.get("id") != proposal and not created:
            continue
        summary.approvals.append({
            "id": request.get("id"), "risk": request.get("risk"), "summary": request.get("summary"),
            "decision": decision.get("decision"), "by": decision.get("by"), "reason": decision.get("reason"),
            "scope": decision.get("scope"), "session_id": request.get("session_id"),
            "at": record.get("resolved_at")})
    summary.approvals = summary.approvals[-LIMIT:]


def _refusals(ws: Any, intent_id: str, summary: Summary) -> None:
    from orchestrator.state import refusals

    counts: Counter[str] = Counter()
    for entry in refusals.read(ws.run_dir):
        if entry.get("intent") == intent_id:
            counts[str(entry.get("type") or "?")] += 1
    summary.refusals = dict(counts.most_common())


def render(summary: Summary) -> list[str]:
    """The summary as lines of text (``orch intents show`` / ``done``)."""
    i = summary.intent
    lines = [f"{i.get('id')}  {i.get('status')}  {i.get('name')}" + ("  (archived)" if summary.archived else "")]
    for key in ("owner", "description"):
        if i.get(key):
            lines.append(f"  {key}: {i[key]}")
    for key in ("owned_scope", "constraints", "acceptance_criteria"):
        values = i.get(key) or []
        lines.append(f"  {key}: " + (", ".join(map(str, values)) if values else "-"))
    for key in ("proposed_by", "accepted_by", "created_at", "updated_at", "archived_at"):
        if i.get(key):
            lines.append(f"  {key}: {i[key]}")
    span = f" ({summary.first} .. {summary.last})" if summary.records else ""
    lines.append(f"records: {summary.records}{span}")
    lines.append(f"files: {len(summary.files)}, lines +{summary.lines_added} -{summary.lines_removed}")
    for path, counts in sorted(summary.files.items())[:LIMIT]:
        lines.append(f"  {path}  +{counts['added']} -{counts['removed']}  ({counts['records']} record(s))")
    if summary.sessions:
        lines.append(f"sessions: {', '.join(s[:8] for s in summary.sessions)}  agents: {', '.join(summary.agents)}")
    lines.append(f"commits: {len(summary.commits)}")
    for c in summary.commits:
        lines.append(f"  {c['sha'][:10]}  {c['date'][:10]}  {c['subject']}")
    lines.append(f"approvals: {len(summary.approvals)}")
    for a in summary.approvals:
        who = f" by {a['by']}" if a.get("by") else ""
        why = f" ({a['reason']})" if a.get("reason") else ""
        lines.append(f"  {a['decision']}{who}: {a['risk']}  {a['summary']}{why}")
    lines.append("refusals: " + (", ".join(f"{t}={n}" for t, n in summary.refusals.items()) or "0"))
    lines.append(f"lessons: {len(summary.lessons)}")
    lines.extend(f"  - {t}" for t in summary.lessons)
    lines.extend(f"note: {n}" for n in summary.notes)
    return lines
