"""``orch doctor``: findings per check, exit 1 on a failing one, a broken check reported not raised."""

from __future__ import annotations

import json
import subprocess

from orchestrator.cli import main
from orchestrator.commands.doctor import run_checks
from orchestrator.config.workspace import Workspace
from orchestrator.config.workspace import init as init_workspace


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


# --- install, hooks and MCP checks (orchestrator/adapters/checks.py), and docs/troubleshooting.md -------------

from pathlib import Path  # noqa: E402

from orchestrator.adapters import installer  # noqa: E402
from orchestrator.commands.doctor import DOC  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _findings(root: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in run_checks(Workspace(root)):
        out.setdefault(f.check, []).append(f)
    return out


def test_doctor_runs_the_installed_hook_and_mcp_server(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    init_workspace(tmp_path)
    installer.install("claude-code", tmp_path)
    found = _findings(tmp_path)
    assert [f.status for f in found["hooks.claude-code"]] == ["ok"]
    assert [f.status for f in found["mcp"]] == ["ok"]
    assert found["install.launcher"][0].status == "warn"  # written, not committed yet
    subprocess.run(["git", "add", installer.LAUNCHER], cwd=tmp_path, check=True)
    assert _findings(tmp_path)["install.launcher"][0].status == "ok"


def test_doctor_names_a_machine_path_that_does_not_exist(tmp_path):
    init_workspace(tmp_path)
    installer.install("claude-code", tmp_path, scope="local", python="/opt/gone/venv/bin/python")
    hooks = _findings(tmp_path)["hooks.claude-code"]
    missing = [f for f in hooks if "does not exist on this machine" in f.message]
    assert missing and missing[0].status == "fail" and "orch install claude-code" in missing[0].fix
    assert any(f.status == "fail" and "does not govern" in f.message for f in hooks)  # and running it fails


def test_doctor_reports_a_missing_launcher(tmp_path):
    init_workspace(tmp_path)
    installer.install("claude-code", tmp_path)
    (tmp_path / installer.LAUNCHER).unlink()
    found = _findings(tmp_path)
    assert found["install.launcher"][0].status == "fail"
    assert found["hooks.claude-code"][0].status == "fail"


def test_no_hooks_is_a_warning(tmp_path):
    init_workspace(tmp_path)
    assert _findings(tmp_path)["hooks"][0].status == "warn"


def test_troubleshooting_has_a_section_for_every_finding_of_these_checks(tmp_path):
    """docs/troubleshooting.md stays consistent with what doctor reports (one section per check id prefix)."""
    text = (REPO / DOC).read_text(encoding="utf-8")
    sections = {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}
    ids = {"config.intents", "config.policy", "config.intentignore", "install.launcher", "hooks", "hooks.codex", "mcp",
           "secrets"}
    for check in ids:
        assert check.split(".")[0] in sections, check
    # and the fixes doctor prints are the ones the page gives
    for phrase in ("ORCH_PYTHON", "git add .orchestration/bin/orch-hook", "orch install <agent>", "orch validate"):
        assert phrase in text


def test_doctor_warns_about_committed_secrets(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    init_workspace(tmp_path)
    assert _findings(tmp_path)["secrets"][0].status == "ok"
    (tmp_path / ".env").write_text("API_KEY=x\n")
    (tmp_path / ".env.example").write_text("API_KEY=\n")
    subprocess.run(["git", "add", "-f", ".env", ".env.example"], cwd=tmp_path, check=True)
    [finding] = _findings(tmp_path)["secrets"]
    assert finding.status == "warn" and ".env" in finding.message and ".env.example" not in finding.message
    assert "git rm --cached" in finding.fix
    (tmp_path / ".orchestration" / "policy.yaml").write_text("secrets:\n  enabled: false\n")
    assert "read protection is off" in _findings(tmp_path)["secrets"][0].message
