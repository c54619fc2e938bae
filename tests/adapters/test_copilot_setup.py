"""``orch install copilot`` / ``uninstall``, folder trust and ``orch doctor``'s Copilot checks, Copilot's
governance files (self-guard and sandbox)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.adapters import checks, copilot_setup, installer
from orchestrator.core.governance import protected_by
from orchestrator.sandbox import scope_grants
from orchestrator.config.workspace import Workspace


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_install_writes_github_hooks_and_mcp_and_uninstall_removes_them(tmp_path: Path) -> None:
    written = installer.install("copilot", tmp_path)
    hooks_file = tmp_path / ".github/hooks/orchestrator.json"
    assert written == [tmp_path / installer.LAUNCHER, hooks_file, tmp_path / ".github/mcp.json"]
    data = _read(hooks_file)
    assert data["version"] == 1
    assert set(data["hooks"]) == {"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse"}
    entries = [entry for event in data["hooks"].values() for entry in event]
    # one identical portable command per event (the adapter tells the events apart), no machine path
    assert {e["type"] for e in entries} == {"command"} and len({e["bash"] for e in entries}) == 1
    command = entries[0]["bash"]
    assert command.endswith(installer.MARK) and "${COPILOT_PROJECT_DIR:-" in command
    assert f"/{installer.LAUNCHER} copilot " in command and str(tmp_path) not in command
    # a preToolUse that outlives timeoutSec RUNS in Copilot: the hook client's own deadline comes first
    assert data["hooks"]["preToolUse"][0]["timeoutSec"] > installer.PRE_TIMEOUT_S
    server = _read(tmp_path / ".github/mcp.json")["mcpServers"]["orchestrator"]
    assert server["env"] == {"ORCH_MCP_HOOKED": "1"} and server["args"][1].endswith(f"{installer.LAUNCHER}\" mcp")
    assert installer.install("copilot", tmp_path) == []  # idempotent
    installer.install("claude-code", tmp_path)
    changed = installer.uninstall("copilot", tmp_path)
    assert set(changed) == {hooks_file, tmp_path / ".github/mcp.json"}
    assert not (tmp_path / ".github/hooks").exists() and (tmp_path / installer.LAUNCHER).exists()  # claude's
    assert installer.uninstall("claude-code", tmp_path) and not (tmp_path / installer.LAUNCHER).exists()


def test_install_keeps_the_users_own_hooks_in_the_file(tmp_path: Path) -> None:
    installer.install("copilot", tmp_path)
    path = tmp_path / ".github/hooks/orchestrator.json"
    data = _read(path)
    data["hooks"]["sessionEnd"] = [{"type": "command", "bash": "echo bye"}]
    path.write_text(json.dumps(data))
    installer.install("copilot", tmp_path)
    installer.uninstall("copilot", tmp_path)
    assert _read(path) == {"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "echo bye"}]}}


def test_folder_trust_reads_copilots_config_with_comments(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home")}
    assert copilot_setup.folder_trust(root, env)[0] is False
    config = tmp_path / "home" / ".copilot" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text("// This file is managed automatically.\n" + json.dumps({"trustedFolders": [str(root)]}))
    assert copilot_setup.folder_trust(root, env)[0] is True
    assert copilot_setup.folder_trust(root / "sub", env)[0] is True  # a trusted parent
    assert copilot_setup.folder_trust(tmp_path, env)[0] is False  # a child does not trust its parent
    assert copilot_setup.folder_trust(tmp_path, {"COPILOT_ALLOW_ALL": "true", **env})[0] is True
    assert copilot_setup.folder_trust(tmp_path, {"COPILOT_ALLOW_ALL": "1", **env})[0] is False  # only "true"
    assert copilot_setup.folder_trust(tmp_path, {"COPILOT_HOME": str(config.parent)})[0] is False
    assert copilot_setup.folder_trust(root, {"COPILOT_HOME": str(config.parent)})[0] is True


def _findings(root: Path) -> dict[str, tuple[str, str]]:
    return {f.check: (f.status, f.message) for f in copilot_setup.check_copilot(Workspace.at(root))}


def test_doctor_checks_trust_and_disabled_hooks(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("COPILOT_HOME", "COPILOT_ALLOW_ALL"):
        monkeypatch.delenv(var, raising=False)
    assert _findings(ws) == {}  # not installed: nothing to say
    installer.install("claude-code", ws)
    assert _findings(ws)["copilot.hooks"][0] == "ok"  # Copilot runs the Claude Code hooks too
    installer.install("copilot", ws)
    assert _findings(ws)["copilot.trust"][0] == "warn"
    (home / ".copilot").mkdir(parents=True)
    (home / ".copilot" / "config.json").write_text(json.dumps({"trustedFolders": [str(ws)]}))
    found = _findings(ws)
    assert found["copilot.trust"][0] == "ok" and "copilot.hooks" not in found
    (ws / ".github/copilot").mkdir(parents=True)
    (ws / ".github/copilot/settings.json").write_text(json.dumps({"disableAllHooks": True}))
    assert _findings(ws)["copilot.hooks"][0] == "fail"


def test_doctor_runs_the_installed_hook_and_it_refuses_the_probe(ws: Path) -> None:
    installer.install("copilot", ws)
    (found,) = [f for f in checks.check_hooks(Workspace.at(ws)) if f.check == "hooks.copilot"]
    assert found.status == "ok", found
    mcp = [f for f in checks.check_mcp(Workspace.at(ws)) if ".github/mcp.json" in f.message]
    assert mcp and mcp[0].status == "ok", mcp


@pytest.mark.parametrize("path", [".github/hooks/orchestrator.json", ".github/hooks/other.json", ".github/mcp.json",
                                  ".github/copilot/settings.json", ".github/copilot/settings.local.json",
                                  ".github/workflows/copilot-setup-steps.yml"])
def test_copilot_configuration_is_governance(path: str) -> None:
    assert protected_by(path)


def test_ordinary_github_files_are_not_governance_and_the_sandbox_never_grants_copilots(tmp_path: Path) -> None:
    assert protected_by(".github/workflows/ci.yml") is None and protected_by(".github/CODEOWNERS") is None
    for rel in ("workflows", "copilot", "hooks"):
        (tmp_path / ".github" / rel).mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text("on: push\n")
    (tmp_path / ".github/CODEOWNERS").write_text("* @x\n")
    grants, _ = scope_grants(str(tmp_path), [".github/**"])
    rel = sorted(str(Path(g).relative_to(tmp_path)) for g in grants)
    # an intent owning .github/ may change CI files, never create hooks, MCP servers, settings or the setup steps
    assert rel == [".github/CODEOWNERS", ".github/workflows/ci.yml"], rel
