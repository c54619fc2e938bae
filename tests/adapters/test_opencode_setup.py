"""``orch install opencode`` / ``uninstall`` and the doctor check of the opencode install."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from orchestrator.adapters import installer, opencode_setup
from orchestrator.adapters.managed import OPENCODE_PLUGIN
from orchestrator.cli import main
from orchestrator.core.errors import UsageError
from orchestrator.core.governance import protected_by


def test_install_writes_the_plugin_launcher_and_mcp_server_without_machine_paths(ws: Path, capsys) -> None:
    assert main(["install", "opencode", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "opencode --pure" in said and "orchestrator_select_active_intent" in said
    plugin = ws / OPENCODE_PLUGIN
    assert plugin.read_text() == opencode_setup.plugin_text()
    assert plugin.stat().st_mode & 0o777 == 0o644
    assert os.access(ws / installer.LAUNCHER, os.X_OK)
    config = json.loads((ws / "opencode.json").read_text())
    server = config["mcp"]["orchestrator"]
    assert server["type"] == "local" and server["environment"] == {"ORCH_MCP_HOOKED": "1"}
    assert any(installer.LAUNCHER in part for part in server["command"])
    for committed in (plugin.read_text(), (ws / "opencode.json").read_text()):
        assert str(ws) not in committed and "/home/" not in committed and "/usr/" not in committed
    # idempotent
    assert opencode_setup.install(ws) == []


def test_install_keeps_the_users_config_and_uninstall_removes_only_ours(ws: Path) -> None:
    mine = {"$schema": opencode_setup.SCHEMA, "model": "x/y", "mcp": {"other": {"type": "remote", "url": "http://h"}}}
    (ws / "opencode.json").write_text(json.dumps(mine))
    (ws / ".opencode" / "plugin").mkdir(parents=True)
    (ws / ".opencode" / "plugin" / "mine.js").write_text("export const Mine = async () => ({})\n")
    opencode_setup.install(ws)
    config = json.loads((ws / "opencode.json").read_text())
    assert config["model"] == "x/y" and set(config["mcp"]) == {"other", "orchestrator"}
    changed = opencode_setup.uninstall(ws)
    assert ws / OPENCODE_PLUGIN in changed and ws / installer.LAUNCHER in changed
    assert json.loads((ws / "opencode.json").read_text()) == mine
    assert (ws / ".opencode" / "plugin" / "mine.js").exists() and not (ws / OPENCODE_PLUGIN).exists()
    assert opencode_setup.uninstall(ws) == []


def test_uninstall_of_a_fresh_install_leaves_nothing(ws: Path) -> None:
    opencode_setup.install(ws)
    opencode_setup.uninstall(ws)
    assert not (ws / "opencode.json").exists() and not (ws / ".opencode").exists()
    assert not (ws / installer.LAUNCHER).exists()


def test_the_launcher_stays_while_another_agent_names_it(ws: Path) -> None:
    opencode_setup.install(ws)
    installer.install("claude-code", ws)
    installer.uninstall("claude-code", ws)
    assert (ws / installer.LAUNCHER).exists()  # the opencode plugin still calls it
    opencode_setup.uninstall(ws)
    assert not (ws / installer.LAUNCHER).exists()


def test_local_scope_and_no_daemon_are_refused(ws: Path) -> None:
    with pytest.raises(UsageError):
        opencode_setup.install(ws, scope="local")
    assert main(["install", "opencode", "--no-daemon", "-C", str(ws)]) != 0
    assert not (ws / OPENCODE_PLUGIN).exists()


def test_opencode_files_are_governance_files() -> None:
    for path in (".opencode/plugin/orchestrator.js", ".opencode/tool/x.ts", ".opencode/opencode.jsonc",
                 "opencode.json", "opencode.jsonc", ".opencode"):
        assert protected_by(path) is not None, path
    # opencode reads opencode.json(c) and .opencode/ in every directory from where it starts up to the git top, so a
    # nested one is governance too (issue 21's remaining gaps)
    assert protected_by("src/opencode.json") == "**/opencode.json"
    assert protected_by("src/.opencode/plugin/x.js") == "**/.opencode/**"
    assert protected_by("src/opencode.md") is None


def _findings(ws: Path, **env: str) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for f in opencode_setup.check_opencode(SimpleNamespace(root=ws), env={**os.environ, **env}):
        out.setdefault(f.check, []).append((f.status, f.message))
    return out


def test_doctor_probes_the_launcher_and_the_mcp_server(ws: Path) -> None:
    assert _findings(ws) == {}  # nothing installed: nothing to say
    opencode_setup.install(ws)
    found = _findings(ws)
    assert found["opencode.plugin"][0][0] == "ok"
    assert found["opencode.hook"][0][0] == "ok", found
    assert found["opencode.mcp"][0][0] == "ok", found
    assert [s for s, _m in _findings(ws, OPENCODE_PURE="1")["opencode.plugin"]] == ["ok", "fail"]
    (ws / OPENCODE_PLUGIN).write_text(opencode_setup.plugin_text() + "// edited\n")
    assert _findings(ws)["opencode.plugin"][0][0] == "warn"
    (ws / installer.LAUNCHER).unlink()
    assert _findings(ws)["opencode.hook"][0][0] == "fail"
    (ws / OPENCODE_PLUGIN).unlink()
    assert _findings(ws)["opencode.plugin"][0][0] == "fail"  # opencode.json still names our server
