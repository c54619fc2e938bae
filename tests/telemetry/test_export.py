"""OTLP export with the real SDK exporters to a real OTLP/HTTP receiver on 127.0.0.1 (decoded with the official
opentelemetry-proto messages): every spooled event arrives once with the documented attributes, protobuf and JSON,
the resource per the semantic conventions, metrics, the ledger backfill, drops in doctor and status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.config import policy
from orchestrator.core.models import ToolResult
from orchestrator.engine.pipeline import Governor
from orchestrator.telemetry import export, spool
from orchestrator.telemetry.config import settings
from orchestrator.engine.tools import to_call
from tests.telemetry.otlp_receiver import Receiver

REPO = Path(__file__).resolve().parents[2]


def _session(ws: Path, policy: str = "telemetry:\n  enabled: true\napproval:\n  channel: deny\n") -> list[dict]:
    """A governed session in-process: a read, an allowed write (recorded), a scope violation, an approval denial."""
    (ws / ".orchestration" / "policy.yaml").write_text(policy)
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    gov.pre(to_call("Read", {"file_path": "src/app.py"}, session_id="s1", agent="claude-code"))
    write = to_call("Write", {"file_path": "src/a.py", "content": "a = 1\n"}, session_id="s1", agent="claude-code",
                    tool_use_id="toolu_1")
    gov.pre(write)
    (ws / "src" / "a.py").write_text("a = 1\n")
    gov.post(write, ToolResult())
    gov.pre(to_call("Write", {"file_path": "docs/x.md"}, session_id="s1", agent="claude-code"))
    gov.pre(to_call("Bash", {"command": "rm -rf src"}, session_id="s1", agent="claude-code"))
    return list(spool.read_events(ws / ".orchestration" / "run"))


def _ship(ws: Path, env: dict[str, str]) -> export.ShipResult:
    cfg = settings(policy.load(ws / ".orchestration" / "policy.yaml"), env).enabled_copy()
    exporter = export.Exporter(ws, cfg)
    try:
        result = export.ship(ws / ".orchestration" / "run", exporter)
        assert exporter.flush_metrics(force=True)
    finally:
        exporter.shutdown()
    return result


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_each_event_arrives_once_with_the_documented_attributes(ws: Path, protocol: str) -> None:
    events = _session(ws)
    assert len(events) == 5
    with Receiver() as rx:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
               "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test,team=core"}
        result = _ship(ws, env)
        assert result.sent == 5 and not result.failed
        logs = rx.logs()
        metrics = rx.metrics()
    assert {log["content_type"] for log in logs} == {"application/json" if protocol == "http/json"
                                                     else "application/x-protobuf"}
    by_uid = {log["attributes"]["log.record.uid"]: log for log in logs}
    assert len(logs) == len(by_uid) == 5 and set(by_uid) == {e["id"] for e in events}
    for ev in events:
        log = by_uid[ev["id"]]
        assert log["event_name"] == f"orchestrator.{ev['event']}" and log["scope"] == "orchestrator.core.governance"
        assert log["time_unix_nano"] == int(ev["ts"] * 1e9)
        for key, attr in export.ATTRIBUTES.items():
            if key in ev:
                assert log["attributes"][attr] == ev[key], (key, attr)
    deny = next(log for log in logs if log["attributes"].get("orchestrator.decision.type") == "scope-violation")
    assert deny["severity"] == "WARN" and deny["attributes"]["orchestrator.hook"] == "scope"
    assert deny["attributes"]["orchestrator.agent.name"] == "claude-code" and deny["attributes"]["session.id"] == "s1"
    assert "orchestrator.command" not in next(
        log["attributes"] for log in logs if log["attributes"].get("orchestrator.decision.type") == "approval-denied")
    record = next(log for log in logs if log["event_name"] == "orchestrator.record")
    ledger = [json.loads(x) for x in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    assert record["attributes"]["orchestrator.record.id"] == ledger[0]["id"]
    assert record["attributes"]["orchestrator.record.hash"] == ledger[0]["metadata"]["dev.orchestrator"]["chain"]["hash"]
    assert record["attributes"]["orchestrator.files"] == ["src/a.py"]
    resource = logs[0]["resource"]
    assert resource["service.name"] == "orchestrator" and resource["telemetry.sdk.name"] == "opentelemetry"
    assert resource["deployment.environment.name"] == "test" and resource["team"] == "core"
    assert resource["orchestrator.worktree.path"] == str(ws.resolve()) and resource["host.name"]
    # metrics: cumulative counters and histograms
    decisions = metrics["orchestrator.decisions"]
    assert sum(p.as_int for p in decisions) == 4
    assert {dict((kv.key, kv.value.string_value) for kv in p.attributes)["orchestrator.decision"]
            for p in decisions} == {"allow", "deny"}
    assert sum(p.count for p in metrics["orchestrator.hook.duration"]) == 4
    assert sum(p.as_int for p in metrics["orchestrator.records"]) == 1
    assert sum(p.count for p in metrics["orchestrator.approval.wait"]) == 1
    # everything was shipped: a second pass sends nothing
    with Receiver() as rx2:
        assert _ship(ws, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": rx2.endpoint}).sent == 0


def test_service_name_and_commands_by_policy(ws: Path) -> None:
    _session(ws, "telemetry:\n  enabled: true\n  include_commands: true\n  service_name: gov\n"
                 "approval:\n  channel: deny\n")
    with Receiver() as rx:
        _ship(ws, {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint})
        logs = rx.logs()
    assert logs[0]["resource"]["service.name"] == "gov"
    assert any(log["attributes"].get("orchestrator.command") == "rm -rf src" for log in logs)
    with Receiver() as rx:
        (ws / ".orchestration" / "run" / "telemetry" / "state.json").unlink()  # ship it all again
        _ship(ws, {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "OTEL_SERVICE_NAME": "from-env"})
        assert rx.logs()[0]["resource"]["service.name"] == "from-env"


def test_a_refused_batch_stays_in_the_spool(ws: Path) -> None:
    _session(ws)
    rx = Receiver()
    rx.down()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "OTEL_EXPORTER_OTLP_TIMEOUT": "1"}
    assert _ship(ws, env).failed
    assert spool.pending_bytes(spool.directory(ws / ".orchestration" / "run")) > 0
    rx.up()
    try:
        assert _ship(ws, env).sent == 5
        assert len(rx.logs()) == 5
    finally:
        rx.close()


def _orch(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=root, env=full, capture_output=True,
                          text=True, timeout=120)


def test_trace_export_otlp_backfills_with_record_ids(ws: Path) -> None:
    _session(ws, "approval:\n  channel: deny\n")  # live telemetry off: nothing spooled, the ledger has a record
    gov = Governor(ws)
    call = to_call("Write", {"file_path": "src/b.py", "content": "b = 2\n"}, session_id="s1", tool_use_id="toolu_2")
    assert gov.pre(call).allowed
    (ws / "src" / "b.py").write_text("b = 2\n")
    gov.post(call, ToolResult())
    ids = [json.loads(x)["id"] for x in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    assert len(ids) == 2
    with Receiver() as rx:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint}
        for _ in range(2):
            proc = _orch(ws, "trace", "export", "--otlp", env=env)
            assert proc.returncode == 0 and "exported 2 record(s) over OTLP (http/protobuf)" in proc.stderr
        uids = [log["attributes"]["log.record.uid"] for log in rx.logs()]
    assert uids == ids + ids  # sent twice, the same ids: a backend deduplicating on log.record.uid keeps two


def test_flush_command_and_dropped_counts_in_doctor_and_status(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text(
        "telemetry:\n  enabled: true\n  spool_max_bytes: 65536\napproval:\n  channel: deny\n")
    gov = Governor(ws)
    run = ws / ".orchestration" / "run"
    n = 0
    while spool.dropped(run) < 3:
        gov.pre(to_call("Read", {"file_path": "src/app.py"}, session_id="s1"))
        n += 1
    kept = len(list(spool.read_events(run)))
    assert kept == n - 3
    doctor = _orch(ws, "doctor")
    assert "3 event(s) dropped" in doctor.stdout
    status = _orch(ws, "status", "--json")
    assert json.loads(status.stdout)["worktrees"][0]["telemetry"] == {
        "enabled": True, "pending_bytes": spool.pending_bytes(spool.directory(run)), "dropped": 3}
    assert "3 event(s) dropped" in _orch(ws, "status").stdout
    with Receiver() as rx:
        proc = _orch(ws, "telemetry", "flush", env={"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint})
        assert proc.returncode == 0, proc.stderr
        assert f"shipped {kept} event(s)" in proc.stdout
        assert len(rx.logs()) == kept
        # flush exports the metrics before it returns
        assert sum(p.as_int for p in rx.metrics()["orchestrator.telemetry.dropped"]) == 3
    status = json.loads(_orch(ws, "telemetry", "status", "--json").stdout)
    assert status["pending_bytes"] == 0 and status["sent_total"] == kept and status["dropped"] == 3
