"""End to end with the REAL Claude Code CLI: every decision and record of a governed session reaches an OTLP
collector once, with the documented attributes (issue 23, item 1).

A print-mode session against the scripted fake Anthropic API, hooks installed by ``orch install claude-code``, the
workspace's policy turning telemetry on and the agent's environment naming the collector (``OTEL_*``, as a team
would set it). The first hook call starts the daemon, which inherits that environment and ships the spool while the
session runs. The collector is the test's OTLP/HTTP receiver on 127.0.0.1, decoding with opentelemetry-proto.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from orchestrator.daemon import server as daemon
from orchestrator.telemetry import export, spool
from tests.e2e.claude_cli import make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.e2e.orch_support import INTENTS, REPO_ROOT, orch
from tests.telemetry.otlp_receiver import Receiver
from tests.waiting import wait_until

TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"


def test_a_governed_session_arrives_at_the_collector_once(claude_bin: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\nprint(x)\n")
    orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    policy = root / ".orchestration" / "policy.yaml"  # orch init's template, telemetry switched on
    assert "telemetry:\n  enabled: false\n" in policy.read_text()
    policy.write_text(policy.read_text().replace("telemetry:\n  enabled: false\n", "telemetry:\n  enabled: true\n"))
    orch(root, "install", "claude-code")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    app, new = str(root / "src/app.py"), str(root / "src/new.py")
    api = FakeAnthropic([
        [ToolUse("Write", {"file_path": new, "content": "def f():\n    return 1\n"}, id="write_no_intent")],
        [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")],
        [ToolUse("Write", {"file_path": new, "content": "def f():\n    return 1\n"}, id="write")],
        [ToolUse("Read", {"file_path": app}, id="read")],
        [ToolUse("Edit", {"file_path": app, "old_string": "x = 1", "new_string": "x = 2"}, id="edit")],
        [ToolUse("Write", {"file_path": str(root / "README.md"), "content": "hijack\n"}, id="out_of_scope")],
        [ToolUse("Bash", {"command": "rm -rf src", "description": "clean"}, id="rm")],
        "done",
    ])
    expected = {"write_no_intent": ("deny", "intent-required"), "write": ("allow", None), "read": ("allow", None),
                "edit": ("allow", None), "out_of_scope": ("deny", "scope-violation"), "rm": ("deny", "approval-denied")}
    with Receiver() as rx:
        # Claude Code removes OTEL_* from its hooks' environment: the ORCH_-prefixed forms get through
        env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": "deny", "ORCH_DAEMON_IDLE": "60",
               "ORCH_OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "ORCH_OTEL_BLRP_SCHEDULE_DELAY": "100",
               "ORCH_OTEL_METRIC_EXPORT_INTERVAL": "1000",
               # set too, to show what Claude Code does with it: a daemon seeing it would ship to a dead port
               "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
        run = make_runner(claude_bin, tmp_path / "home")
        try:
            with api:
                result = run(root, api.base_url, "--mcp-config", ".mcp.json", env=env, tools=TOOLS)
            assert result.returncode == 0, result.stderr
            assert result.result.get("result") == "done"
            events = list(spool.read_events(root / ".orchestration" / "run"))
            ledger = [json.loads(x) for x in (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
            wait_until(lambda: len(rx.logs()) >= len(events), what="every spooled event at the collector")
            wait_until(lambda: "orchestrator.records" in rx.metrics(), what="the record counter")
        finally:
            subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                           env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), capture_output=True, timeout=30)
        assert not daemon.is_alive(daemon.socket_path(root))
        logs = rx.logs()
    # every spooled event arrived, each exactly once (log.record.uid = the event id)
    uids = [log["attributes"]["log.record.uid"] for log in logs]
    assert len(uids) == len(set(uids)) and set(uids) == {e["id"] for e in events}
    by_uid = {log["attributes"]["log.record.uid"]: log for log in logs}
    # each scripted tool call was decided once, as the agent saw it
    decided = {}
    for log in logs:
        attrs = log["attributes"]
        if log["event_name"] == "orchestrator.decision" and attrs.get("orchestrator.tool_use_id") in expected:
            assert attrs["orchestrator.tool_use_id"] not in decided, attrs
            decided[attrs["orchestrator.tool_use_id"]] = (attrs["orchestrator.decision"],
                                                         attrs.get("orchestrator.decision.type"))
            assert attrs["orchestrator.agent.name"] == "claude-code"
            assert attrs["session.id"] == result.result["session_id"]
            assert isinstance(attrs["orchestrator.latency_ms"], float)
    assert decided == expected
    assert by_uid[next(e["id"] for e in events if e.get("tool_use_id") == "rm")]["attributes"][
        "orchestrator.approval.outcome"] == "denied"
    # each ledger record arrived once, under its own id, with its chain hash and intent
    assert len(ledger) == 2
    for rec in ledger:
        attrs = by_uid[rec["id"]]["attributes"]
        meta = rec["metadata"]["dev.orchestrator"]
        assert by_uid[rec["id"]]["event_name"] == "orchestrator.record"
        assert attrs["orchestrator.record.hash"] == meta["chain"]["hash"]
        assert attrs["orchestrator.intent.id"] == "INT-1" and attrs["orchestrator.mutation_class"] == meta["mutation_class"]
        assert attrs["orchestrator.files"] == [f["path"] for f in meta["files"]]
        assert attrs["orchestrator.tool_use_id"] in ("write", "edit")
    # documented attributes only, and the resource names the repository's branch and the worktree
    assert {k for log in logs for k in log["attributes"]} <= set(export.ATTRIBUTES.values())
    resource = logs[0]["resource"]
    assert resource["service.name"] == "orchestrator" and resource["vcs.ref.head.name"] == "main"
    assert resource["orchestrator.worktree.path"] == str(root.resolve())
    assert not any("orchestrator.command" in log["attributes"] for log in logs)  # include_commands is off
