"""The newcomer findings, as real `orch` processes: check never files or waits, explain, validate, refusals, init
from a subdirectory."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from orchestrator.adapters.base import run_hook
from tests.commands.test_cli import orch
from tests.waiting import TIMEOUT


def _ws(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert orch("init", cwd=tmp_path).returncode == 0
    return tmp_path


def test_check_never_files_an_approval_or_waits(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    (root / ".orchestration" / "policy.yaml").write_text("approval:\n  channel: tui\n  timeout_seconds: 300\n")
    (root / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: INT-001\n    name: all\n    status: IN_PROGRESS\n    owned_scope: ['src/**']\n")
    assert orch("intent", "select", "INT-001", "--session", "abc123-session", cwd=root).returncode == 0
    # a filed tui request would wait for the policy's 300 s: far past this deadline, which only a stuck run reaches
    r = orch("check", "--tool", "Bash", "--command", "rm -rf src/old", "--session", "abc123", cwd=root,
             timeout=2 * TIMEOUT)
    assert r.returncode == 2, r.stderr
    assert r.stdout.startswith("ASK  Bash: rm -rf src/old") and "orch tui" in r.stdout and "nothing was filed" in r.stdout
    assert "why:" in r.stdout and "hint:" in r.stdout  # the reason and the command, for a person
    approvals = root / ".orchestration" / "run" / "approvals"
    assert not approvals.exists() or not list(approvals.glob("*.request.json"))
    assert not (root / ".orchestration" / "run" / "refusals.jsonl").exists()  # dry runs leave no trace


def test_explain_shows_the_analysis_and_the_verdict(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    r = orch("explain", "cp .env src/config.txt && kubectl apply -f k8s/", cwd=root)
    assert r.returncode == 2
    for text in ("kind:", "risks:", "secret-read", "outside-world", "writes:   src/config.txt", "copies .env",
                 "DENY", "secret-read (secrets)"):
        assert text in r.stdout, (text, r.stdout)
    data = json.loads(orch("explain", "ls -la", "--json", cwd=root).stdout)
    assert data["analysis"]["kind"] == "read_only" and data["verdict"]["decision"] == "allow"


def test_validate_reports_file_and_line(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    assert orch("validate", cwd=root).returncode == 0
    (root / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: A\n    name: a\n    status: WAT\n")
    r = orch("validate", cwd=root)
    assert r.returncode == 1
    assert ".orchestration/active_intents.yaml:2: error:" in r.stdout and "unknown status" in r.stdout
    assert ".orchestration/policy.yaml: valid" in r.stdout


def test_refusals_are_logged_by_hooks_and_listed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = _ws(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    event = {"hook_event_name": "PreToolUse", "session_id": "5e55-1on-long-id", "tool_name": "Read",
             "cwd": str(root), "tool_input": {"file_path": str(root / ".env")}}
    result = run_hook("claude-code", json.dumps(event).encode())
    assert "secret-read" in result.stdout
    lines = (root / ".orchestration" / "run" / "refusals.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    assert entry["type"] == "secret-read" and entry["session_id"] == "5e55-1on-long-id" and "API" not in lines[-1]
    r = orch("refusals", "--session", "5e55", cwd=root)
    assert r.returncode == 0 and "DENY secret-read (secrets) Read" in r.stdout
    assert json.loads(orch("refusals", "--session", "nope", "--json", cwd=root).stdout) == []


def test_init_from_a_subdirectory_initialises_the_repository_root(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sub = tmp_path / "pkg" / "mod"
    sub.mkdir(parents=True)
    r = orch("init", cwd=sub)
    assert r.returncode == 0 and "initialising the repository root" in r.stdout
    assert (tmp_path / ".orchestration" / "active_intents.yaml").exists()
    assert not (sub / ".orchestration").exists()
    here = orch("init", "--here", cwd=sub)
    assert here.returncode == 0 and (sub / ".orchestration").exists()


def test_explain_judges_as_a_sandboxing_host_unless_told_otherwise(tmp_path: Path) -> None:
    """`pytest` only runs code: a Claude Code hook would run it sandboxed without asking; Codex/Gemini would ask."""
    from orchestrator.sandbox import landlock

    root = _ws(tmp_path)
    (root / ".orchestration" / "active_intents.yaml").write_text(
        "active_intents:\n  - id: INT-001\n    name: all\n    status: IN_PROGRESS\n    owned_scope: ['src/**']\n")
    (root / "src").mkdir()
    unsandboxed = orch("explain", "pytest -q", "--intent", "INT-001", "--no-sandbox", cwd=root)
    assert "ASK" in unsandboxed.stdout and "sandbox:  not used" in unsandboxed.stdout
    sandboxed = orch("explain", "pytest -q", "--intent", "INT-001", cwd=root)
    if landlock.abi() >= 1:
        assert sandboxed.returncode == 0 and "ALLOW" in sandboxed.stdout
        assert "sandbox:  yes" in sandboxed.stdout and str(root / "src") in sandboxed.stdout
    else:  # the fallback says why, and asks as before
        assert "sandbox:  no:" in sandboxed.stdout and "ASK" in sandboxed.stdout
