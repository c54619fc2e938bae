"""``orch doctor``: findings per check, exit 1 on a failing one, a broken check reported not raised."""

from __future__ import annotations

import json
import subprocess

from orchestrator.cli import main
from orchestrator.commands.doctor import run_checks
from orchestrator.workspace import Workspace
from orchestrator.workspace import init as init_workspace


def test_doctor_clean_workspace_is_ok(tmp_path, capsys):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    init_workspace(tmp_path)
    assert main(["doctor", "-C", str(tmp_path), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert {f["check"]: f["status"] for f in findings}["config.policy"] == "ok"


def test_doctor_reports_a_broken_policy_with_a_fix(tmp_path, capsys):
    init_workspace(tmp_path)
    (tmp_path / ".orchestration" / "policy.yaml").write_text("approval: [\n")
    assert main(["doctor", "-C", str(tmp_path)]) == 1
    text = capsys.readouterr().out
    assert "FAIL  config.policy" in text and "fix:" in text


def test_a_check_that_raises_is_a_finding(tmp_path):
    init_workspace(tmp_path)
    findings = run_checks(Workspace(tmp_path), ["orchestrator.commands.doctor:no_such_check"])
    assert findings[0].status == "fail" and "check itself failed" in findings[0].message
