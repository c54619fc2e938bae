"""The CLI skeleton: error boundary, init, intents, check, lesson — run as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from orchestrator import cli

ROOT = Path(__file__).resolve().parents[2]


def orch(*args: str, cwd: Path, stdin: str | None = None,
         timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """A real ``orch`` process; ``timeout`` (seconds) fails the test with TimeoutExpired if it takes longer."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ORCH_APPROVAL_CHANNEL", None)
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env, timeout=timeout)


def test_expected_error_exits_1_with_one_line(tmp_path: Path) -> None:
    r = orch("intents", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.startswith("orch: error: no .orchestration/ found")
    assert "Traceback" not in r.stderr


def test_bug_exits_3(monkeypatch, capsys, ws: Path) -> None:  # type: ignore[no-untyped-def]
    from orchestrator.commands import intents

    monkeypatch.setattr(intents, "run", lambda args: 1 / 0)
    monkeypatch.chdir(ws)
    assert cli.main(["intents"]) == 3
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_init_then_intents_and_check(tmp_path: Path) -> None:
    assert orch("init", str(tmp_path), cwd=tmp_path).returncode == 0
    again = orch("init", cwd=tmp_path)
    assert "nothing changed" in again.stdout
    listing = orch("intents", "--json", cwd=tmp_path)
    assert json.loads(listing.stdout)[0]["id"] == "INT-001"
    denied = orch("check", "--tool", "Write", "--path", "docs/a.md", "--json", cwd=tmp_path)
    assert denied.returncode == 2 and json.loads(denied.stdout)["error"]["type"] == "intent-required"
    assert orch("intent", "select", "INT-001", "--session", "cli", cwd=tmp_path).returncode == 0
    call = {"tool": "Write", "input": {"file_path": "docs/a.md"}, "session_id": "cli"}
    ok = orch("check", "--json", cwd=tmp_path / "", stdin=json.dumps(call))
    assert ok.returncode == 0 and json.loads(ok.stdout)["decision"] == "allow"
    bad = orch("check", cwd=tmp_path, stdin="{nope")
    assert bad.returncode == 1 and "not JSON" in bad.stderr


def test_intents_reports_malformed_file(tmp_path: Path) -> None:
    orch("init", cwd=tmp_path)
    (tmp_path / ".orchestration" / "active_intents.yaml").write_text("active_intents:\n  - id: A\n    name: a\n    status: WAT\n")
    r = orch("intents", cwd=tmp_path)
    assert r.returncode == 1 and "active_intents.yaml:2: intent 'A'" in r.stderr and "unknown status" in r.stderr


def test_lesson_add(tmp_path: Path) -> None:
    orch("init", cwd=tmp_path)
    assert "recorded" in orch("lesson", "add", "Keep diffs small", "--intent", "INT-001", cwd=tmp_path).stdout
    assert "already present" in orch("lesson", "add", "Keep diffs small", cwd=tmp_path).stdout
    assert "[INT-001] Keep diffs small" in (tmp_path / "AGENTS.md").read_text()


def test_help_lists_commands(tmp_path: Path) -> None:
    r = orch("--help", cwd=tmp_path)
    assert r.returncode == 0 and "init" in r.stdout and "check" in r.stdout


def test_hook_command_never_exits_1_or_3(monkeypatch, capsys, ws: Path) -> None:  # type: ignore[no-untyped-def]
    """Claude Code treats exit 1 as allow: even a bug in `orch hook` must block (exit 2)."""
    from orchestrator.commands import hook

    monkeypatch.setattr(hook, "run", lambda args: 1 / 0)
    monkeypatch.chdir(ws)
    assert cli.main(["hook", "claude-code"]) == 2
    assert "blocked" in capsys.readouterr().err
