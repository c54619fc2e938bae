"""`orch trace` with the ledger index: every verb prints exactly what it prints with `--no-index` (the scan),
on a ledger written by the real post-hook in a real git repository; a ledger changed behind the index falls back."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from orchestrator.ledger import index
from tests.commands.test_trace import WS, run
from tests.commands.test_trace import ws as ws  # noqa: F401 — the fixture

#: one clock for both runs of `stats` (its activity columns end with the current hour)
NOW = datetime.now(timezone.utc).isoformat()
VERBS = [["--intent", "INT-A"], ["--intent", "INT-A", "--jsonl"], ["--json"], ["--limit", "2"],
         ["--file", "src", "--json"], ["--file", "src/*.py", "--jsonl"], ["--session", "s", "--json"],
         ["--tool", "write", "--jsonl"], ["--class", "refactor", "--json"], ["stats", "--json", "--now", NOW], ["stats", "--now", NOW],
         ["show", "L2", "--json"], ["show", "L9"], ["blame", "src/a.py"], ["blame", "src/a.py:2", "--json"],
         ["export", "--format", "agent-trace", "--intent", "INT-B"]]


@pytest.fixture(autouse=True)
def small_ledgers_indexed(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setattr(index, "MIN_BYTES", 0)
    monkeypatch.setenv("COLUMNS", "150")


def edits(ws: WS) -> None:
    ws.edit("src/a.py", "def a():\n    return 1\n", intent="INT-A")
    ws.edit("src/b.py", "def b():\n    return 2\n", intent="INT-B", tool="Write", session="s2")
    ws.edit("src/a.py", "def a():\n    # comment\n    return 1\n", intent="INT-A")
    ws.edit("docs/n.md", "# notes\n", intent="INT-B", session="s3")


def same_as_scan(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    scanned = run(capsys, *argv, "--no-index")
    served = run(capsys, *argv)
    assert served == scanned, argv
    return served[1]


def test_every_verb_prints_what_the_scan_prints(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    edits(ws)
    for argv in VERBS:
        same_as_scan(capsys, argv)
    db = index.index_path(ws.ledger)
    assert db.exists() and Path(str(db) + ".seal").exists()
    ws.edit("src/b.py", "def b():\n    return 3\n", intent="INT-A")  # appended: indexed by the next query
    for argv in VERBS:
        same_as_scan(capsys, argv)
    rc, out, _ = run(capsys, "index", "--json")
    info = json.loads(out)
    assert rc == 0 and info["lines"] == 5 and info["rebuilt"] is False and info["odd"] == 0


def test_stats_prints_the_activity_summary(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    edits(ws)
    rc, out, _ = run(capsys, "stats", "--json", "--since", "2h")
    act = json.loads(out)["activity"]
    assert rc == 0 and act["bucket_hours"] == 1 and len(act["buckets"]) == 3
    assert {k: sum(v) for k, v in act["records"]["per_intent"].items()} == {"INT-A": 2, "INT-B": 2}
    assert act["approvals_waiting"] == [] and act["decisions"]["source"].startswith(("refusal", "telemetry"))
    rc, out, _ = run(capsys, "stats", "--since", "2h")
    assert "Records per intent" in out and "Records per agent" in out and "Approvals waiting: none" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("INT-A") and "█" in line)
    assert row.split()[-1] == "2"


def test_a_line_changed_behind_the_index_falls_back_to_the_scan(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    edits(ws)
    assert run(capsys, "index")[0] == 0
    data = ws.ledger.read_bytes()
    at = data.index(b'"intent_id":"INT-A"')
    with open(ws.ledger, "r+b") as f:  # same inode, same length: the freshness check cannot see it...
        f.seek(at)
        f.write(b'"intent_id":"INT-C"')
    ws.edit("src/c.py", "c = 1\n", intent="INT-C")  # ...because the ledger also grew
    out = same_as_scan(capsys, ["--intent", "INT-A", "--jsonl"])  # the changed line is served: sha256 mismatch
    assert len(out.splitlines()) == 1
    rc, out, _ = run(capsys, "index", "--json")
    assert json.loads(out)["rebuilt"] is True  # the discarded index was rebuilt by the next open
    assert len(same_as_scan(capsys, ["--intent", "INT-C", "--jsonl"]).splitlines()) == 2
