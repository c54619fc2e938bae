"""``orch install cline`` / ``uninstall`` and the doctor check of the Cline install: the committed plugin, the
user-level MCP server (Cline reads no project MCP file) that starts only where the plugin is, and what doctor says."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.adapters import cline_setup, installer
from orchestrator.adapters.checks import probe_mcp
from orchestrator.adapters.managed import CLINE_PLUGIN
from orchestrator.cli import main
from orchestrator.core.errors import UsageError
from orchestrator.core.governance import protected_by
from orchestrator.config.workspace import Workspace

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_MCP_SETTINGS_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    return home


def test_install_writes_the_plugin_launcher_and_the_users_mcp_server(ws: Path, home: Path, capsys) -> None:
    assert main(["install", "cline", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "3 s" in said and "orchestrator__select_active_intent" in said
    plugin = ws / CLINE_PLUGIN
    assert plugin.read_text() == cline_setup.plugin_text() and plugin.stat().st_mode & 0o777 == 0o644
    assert str(ws) not in plugin.read_text() and "/home/" not in plugin.read_text()
    assert os.access(ws / installer.LAUNCHER, os.X_OK)
    settings = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    server = json.loads(settings.read_text())["mcpServers"]["orchestrator"]
    assert server["timeout"] == cline_setup.MCP_TIMEOUT_S and server["env"] == {"ORCH_MCP_HOOKED": "1"}
    assert str(ws) not in json.dumps(server)  # one entry for every repository
    assert cline_setup.install(ws) == []  # idempotent
    assert protected_by(CLINE_PLUGIN) == ".cline/**" and protected_by(".clinerules/hooks/PreToolUse")
    with pytest.raises(UsageError):
        cline_setup.install(ws, scope="local")


def test_the_users_mcp_file_follows_clines_variables(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert cline_setup.mcp_settings_path(env) == tmp_path / ".cline/data/settings/cline_mcp_settings.json"
    assert cline_setup.mcp_settings_path({**env, "CLINE_DIR": "/c"}) == Path("/c/data/settings/cline_mcp_settings.json")
    assert cline_setup.mcp_settings_path({**env, "CLINE_DATA_DIR": "/d"}) == Path("/d/settings/cline_mcp_settings.json")
    assert cline_setup.mcp_settings_path({**env, "CLINE_MCP_SETTINGS_PATH": "/m.json"}) == Path("/m.json")


def test_the_mcp_server_starts_only_where_the_plugin_is(ws: Path, home: Path, tmp_path: Path) -> None:
    cline_setup.install(ws)
    server = cline_setup.mcp_entry()
    ok, said = probe_mcp(server, ws)
    assert ok, said
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    ok, said = probe_mcp(server, other)  # a repository not installed for Cline: no handshake without the guard
    assert not ok and "not governed for Cline" in said
    (ws / CLINE_PLUGIN).unlink()
    assert not probe_mcp(server, ws)[0]


def test_uninstall_removes_the_plugin_and_keeps_the_shared_user_entry(ws: Path, home: Path) -> None:
    (ws / ".cline" / "plugins").mkdir(parents=True)
    (ws / ".cline" / "plugins" / "mine.js").write_text("export default {name: 'mine', manifest: {}}\n")
    cline_setup.install(ws)
    changed = cline_setup.uninstall(ws)
    assert ws / CLINE_PLUGIN in changed and ws / installer.LAUNCHER in changed
    assert (ws / ".cline" / "plugins" / "mine.js").exists()
    assert "orchestrator" in json.loads(cline_setup.mcp_settings_path().read_text())["mcpServers"]
    assert cline_setup.uninstall(ws) == []
    (ws / ".cline" / "plugins" / "orchestrator.js").write_text("// my own plugin\n")
    assert cline_setup.uninstall(ws) == []  # not ours: kept


def test_doctor_checks_the_plugin_the_launcher_and_the_mcp_server(ws: Path, home: Path) -> None:
    def found(**extra: str) -> dict[str, tuple[str, str]]:
        env = {**os.environ, "PATH": "/nonexistent", "CLINE_PLUGIN_IMPORT_TIMEOUT_MS": "30000", **extra}
        return {f.check: (f.status, f.message) for f in cline_setup.check_cline(Workspace(ws), env)}

    assert found() == {}
    cline_setup.install(ws)
    result = found()
    for check in ("cline.plugin", "cline.hook", "cline.mcp", "cline.failopen"):
        assert result[check][0] == "ok", result
    assert result["cline.version"][0] == "info"
    # Cline's default: a plugin host slower than 4 s and the session runs without the plugin
    assert found(CLINE_PLUGIN_IMPORT_TIMEOUT_MS="")["cline.failopen"][0] == "warn"
    (ws / CLINE_PLUGIN).write_text((ws / CLINE_PLUGIN).read_text() + "// edited\n")
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\nexit 0\n")  # answers nothing: would allow everything
    cline_setup.mcp_settings_path().write_text("{}")
    result = found()
    assert result["cline.plugin"][0] == "warn" and result["cline.hook"][0] == "fail"
    assert result["cline.mcp"][0] == "warn"
