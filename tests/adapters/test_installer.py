"""orch install / uninstall: merge into the user's settings, idempotent, remove only what was added."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.adapters import installer


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def _commands(settings: dict) -> list[str]:
    out = []
    for groups in settings.get("hooks", {}).values():
        for group in groups:
            for hook in group.get("hooks", [group]):
                out.append(hook["command"])
    return out


def test_install_claude_code_writes_hooks_and_mcp(tmp_path: Path) -> None:
    written = installer.install("claude-code", tmp_path)
    assert written == [tmp_path / installer.LAUNCHER, tmp_path / ".claude/settings.json", tmp_path / ".mcp.json"]
    settings = _read(tmp_path / ".claude/settings.json")
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                      "PostToolUseFailure", "Stop"}
    pre = settings["hooks"]["PreToolUse"][0]
    assert pre["matcher"] == "*"
    hook = pre["hooks"][0]
    assert hook["type"] == "command" and hook["timeout"] >= 600
    # the shared files name only the committed launcher: no machine path
    for text in ((tmp_path / ".claude/settings.json").read_text(), (tmp_path / ".mcp.json").read_text()):
        assert sys.executable not in text and str(installer.package_parent()) not in text
    assert hook["command"].startswith('"${CLAUDE_PROJECT_DIR:-') and "/.orchestration/bin/orch-hook claude-code" \
        in hook["command"]
    launcher = tmp_path / installer.LAUNCHER
    assert launcher.stat().st_mode & 0o111
    remembered = (tmp_path / installer.REMEMBERED).read_text().splitlines()
    assert remembered == [sys.executable, str(installer.package_parent() / "orchestrator" / "hookclient.py")]
    server = _read(tmp_path / ".mcp.json")["mcpServers"]["orchestrator"]
    assert server["command"] == "sh" and server["args"][1].endswith('/.orchestration/bin/orch-hook" mcp')
    assert server["env"]["ORCH_MCP_HOOKED"] == "1"


def test_local_scope_writes_machine_paths_to_settings_local(tmp_path: Path) -> None:
    installer.install("claude-code", tmp_path)
    written = installer.install("claude-code", tmp_path, scope="local")
    assert tmp_path / ".claude/settings.local.json" in written
    assert not (tmp_path / ".claude/settings.json").exists()  # our hooks moved: they were all it held
    local = _read(tmp_path / ".claude/settings.local.json")
    argv = shlex.split(local["hooks"]["PreToolUse"][0]["hooks"][0]["command"], comments=True)
    assert argv[0] == sys.executable and argv[1] == "-S"
    assert argv[2].endswith("orchestrator/hookclient.py") and Path(argv[2]).is_file()
    assert argv[3:] == ["claude-code"]
    assert sys.executable not in (tmp_path / ".mcp.json").read_text()
    with pytest.raises(Exception, match="no machine-local settings"):
        installer.install("codex", tmp_path, scope="local")
    installer.uninstall("claude-code", tmp_path)
    assert not (tmp_path / ".claude").exists()


def test_install_merges_with_user_settings_and_is_idempotent(tmp_path: Path) -> None:
    user_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PreToolUse": [user_hook]}}))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))

    installer.install("claude-code", tmp_path)
    first = (tmp_path / ".claude/settings.json").read_text()
    assert installer.install("claude-code", tmp_path) == []  # idempotent: nothing to write the second time
    assert (tmp_path / ".claude/settings.json").read_text() == first

    settings = json.loads(first)
    assert settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert settings["hooks"]["PreToolUse"][0] == user_hook
    assert len(settings["hooks"]["PreToolUse"]) == 2
    assert sum(c.endswith(installer.MARK) for c in _commands(settings)) == 6
    assert set(_read(tmp_path / ".mcp.json")["mcpServers"]) == {"other", "orchestrator"}

    changed = installer.uninstall("claude-code", tmp_path)
    assert set(changed) == {tmp_path / ".claude/settings.json", tmp_path / ".mcp.json", tmp_path / installer.LAUNCHER}
    assert _read(tmp_path / ".claude/settings.json") == {"permissions": {"allow": ["Bash(ls:*)"]},
                                                         "hooks": {"PreToolUse": [user_hook]}}
    assert _read(tmp_path / ".mcp.json") == {"mcpServers": {"other": {"command": "x"}}}


def test_uninstall_deletes_files_it_alone_filled(tmp_path: Path) -> None:
    installer.install("claude-code", tmp_path)
    installer.uninstall("claude-code", tmp_path)
    assert not (tmp_path / ".claude").exists()
    assert not (tmp_path / ".mcp.json").exists()
    assert installer.uninstall("claude-code", tmp_path) == []


def test_uninstall_keeps_user_hook_in_a_shared_group(tmp_path: Path) -> None:
    installer.install("claude-code", tmp_path)
    path = tmp_path / ".claude/settings.json"
    data = _read(path)
    data["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "notify-send done"})
    path.write_text(json.dumps(data))
    installer.uninstall("claude-code", tmp_path)
    assert _read(path) == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}


@pytest.mark.parametrize("agent,hooks_file,events", [
    ("codex", ".codex/hooks.json", {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}),
    ("gemini", ".gemini/settings.json", {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool"}),
    ("cursor", ".cursor/hooks.json", {"sessionStart", "preToolUse", "beforeShellExecution", "beforeMCPExecution",
                                      "beforeReadFile", "afterFileEdit", "postToolUse"}),
])
def test_install_other_agents_round_trip(tmp_path: Path, agent: str, hooks_file: str, events: set) -> None:
    installer.install(agent, tmp_path)
    data = _read(tmp_path / hooks_file)
    assert set(data["hooks"]) == events
    assert all(c.endswith(installer.MARK) and f"/.orchestration/bin/orch-hook {agent} " in c for c in _commands(data))
    if agent == "cursor":
        assert data["version"] == 1
        assert _read(tmp_path / ".cursor/mcp.json")["mcpServers"]["orchestrator"]["args"][1].endswith(" mcp")
    if agent == "gemini":
        assert data["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] == installer.PRE_TIMEOUT_S * 1000
        assert "orchestrator" in data["mcpServers"]
    installer.uninstall(agent, tmp_path)
    assert not (tmp_path / hooks_file).exists()


def test_hook_command_runs_through_a_shell(tmp_path: Path) -> None:
    """The marker is a shell comment: the command must still run (here: bad input is blocked with exit 2)."""
    command = installer.hook_command("claude-code")
    proc = subprocess.run(command, shell=True, input="not json", capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 2
    assert "malformed" in proc.stderr or "workspace" in proc.stderr


def test_no_daemon_variant_uses_the_same_fail_closed_client(tmp_path: Path) -> None:
    command = installer.hook_command("codex", fast=False)
    assert command.startswith("ORCH_NO_DAEMON=1 ") and "hookclient.py codex" in command
    proc = subprocess.run(command, shell=True, input="{", capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2


def test_uninstall_removes_the_launcher_with_the_last_agent_that_names_it(tmp_path: Path) -> None:
    installer.install("claude-code", tmp_path)
    installer.install("gemini", tmp_path)
    launcher = tmp_path / installer.LAUNCHER
    installer.uninstall("claude-code", tmp_path)
    assert launcher.exists()  # gemini still uses it
    assert launcher in installer.uninstall("gemini", tmp_path)
    assert not launcher.exists() and not launcher.parent.exists()
