"""``orch install kilo`` / ``uninstall``, the opencode → Kilo pair (``orch install opencode`` writes Kilo's plugin
too: Kilo reads opencode.json), and the doctor check of the Kilo install."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from orchestrator.adapters import installer, kilo_setup, opencode_setup
from orchestrator.adapters.managed import KILO_PLUGIN, OPENCODE_PLUGIN
from orchestrator.cli import main
from orchestrator.core.governance import protected_by


def _findings(ws: Path, **env: str) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for f in kilo_setup.check_kilo(SimpleNamespace(root=ws), env={**os.environ, **env}):
        out.setdefault(f.check, []).append((f.status, f.message))
    return out


def test_install_writes_the_plugin_launcher_and_kilo_json_without_machine_paths(ws: Path, capsys) -> None:
    assert main(["install", "kilo", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "kilo --pure" in said and "KILO_PURE" in said and "orchestrator_select_active_intent" in said
    plugin = ws / KILO_PLUGIN
    assert plugin.read_text() == kilo_setup.plugin_text() != opencode_setup.plugin_text()
    assert plugin.stat().st_mode & 0o777 == 0o644 and os.access(ws / installer.LAUNCHER, os.X_OK)
    config = json.loads((ws / "kilo.json").read_text())
    assert config["$schema"] == "https://app.kilo.ai/config.json"
    assert config["mcp"]["orchestrator"] == opencode_setup.mcp_entry()
    for committed in (plugin.read_text(), (ws / "kilo.json").read_text()):
        assert str(ws) not in committed and "/home/" not in committed and "/usr/" not in committed
    # opencode reads neither kilo.json nor .kilo/: nothing of opencode's is written (no MCP server without a guard)
    assert not (ws / "opencode.json").exists() and not (ws / ".opencode").exists()
    assert kilo_setup.install(ws) == []  # idempotent
    kilo_setup.uninstall(ws)
    assert not (ws / "kilo.json").exists() and not (ws / ".kilo").exists() and not (ws / installer.LAUNCHER).exists()


def test_install_opencode_covers_kilo_which_reads_opencode_json(ws: Path, capsys) -> None:
    assert main(["install", "opencode", "-C", str(ws)]) == 0
    assert KILO_PLUGIN in capsys.readouterr().out
    assert (ws / KILO_PLUGIN).read_text() == kilo_setup.plugin_text() and not (ws / "kilo.json").exists()
    found = _findings(ws)
    assert found["kilo.plugin"][0][0] == "ok" and found["kilo.hook"][0][0] == "ok", found
    assert found["kilo.mcp"][0][0] == "ok" and "opencode.json" in found["kilo.mcp"][0][1]
    # without the MCP server there is nothing Kilo would read: no companion plugin either
    opencode_setup.uninstall(ws)
    assert not (ws / KILO_PLUGIN).exists()
    opencode_setup.install(ws, mcp=False)
    assert (ws / OPENCODE_PLUGIN).exists() and not (ws / KILO_PLUGIN).exists()


def test_each_uninstall_keeps_the_kilo_plugin_while_a_file_kilo_reads_names_our_server(ws: Path) -> None:
    opencode_setup.install(ws)
    kilo_setup.install(ws)
    kilo_setup.uninstall(ws)  # kilo.json's server goes; opencode.json still gives Kilo our server
    assert not (ws / "kilo.json").exists() and (ws / KILO_PLUGIN).exists()
    kilo_setup.install(ws)
    opencode_setup.uninstall(ws)  # opencode's files go; kilo.json still names our server
    assert not (ws / OPENCODE_PLUGIN).exists() and (ws / KILO_PLUGIN).exists() and (ws / installer.LAUNCHER).exists()
    kilo_setup.uninstall(ws)
    assert not (ws / ".kilo").exists() and not (ws / installer.LAUNCHER).exists()


def test_uninstall_keeps_the_users_kilo_config_and_plugins(ws: Path) -> None:
    mine = {"$schema": "https://app.kilo.ai/config.json", "model": "x/y", "mcp": {"other": {"type": "remote",
                                                                                            "url": "http://h"}}}
    (ws / "kilo.json").write_text(json.dumps(mine))
    (ws / ".kilo" / "plugin").mkdir(parents=True)
    (ws / ".kilo" / "plugin" / "mine.js").write_text("export const Mine = async () => ({})\n")
    kilo_setup.install(ws)
    assert set(json.loads((ws / "kilo.json").read_text())["mcp"]) == {"other", "orchestrator"}
    kilo_setup.uninstall(ws)
    assert json.loads((ws / "kilo.json").read_text()) == mine
    assert (ws / ".kilo" / "plugin" / "mine.js").exists() and not (ws / KILO_PLUGIN).exists()


def test_doctor_says_when_kilo_would_run_ungoverned(ws: Path) -> None:
    assert _findings(ws) == {}  # nothing installed: nothing to say
    kilo_setup.install(ws)
    found = _findings(ws)
    assert [found[c][0][0] for c in ("kilo.plugin", "kilo.hook", "kilo.mcp")] == ["ok", "ok", "ok"], found
    for name in ("KILO_PURE", "KILO_DISABLE_PROJECT_CONFIG"):
        said = _findings(ws, **{name: "1"})["kilo.plugin"]
        assert [s for s, _m in said] == ["ok", "fail"] and name in said[1][1]
    (ws / KILO_PLUGIN).write_text(kilo_setup.plugin_text() + "// edited\n")
    assert _findings(ws)["kilo.plugin"][0][0] == "warn"
    (ws / KILO_PLUGIN).unlink()
    [(status, message)] = _findings(ws)["kilo.plugin"]
    assert status == "fail" and "UNGOVERNED" in message and "kilo.json" in message
    # the state before issue 30: a repository installed for opencode only, without Kilo's plugin
    kilo_setup.uninstall(ws)
    opencode_setup.install(ws)  # the opencode adapter's files only: `orch install opencode` adds Kilo's (readers)
    [(status, message)] = _findings(ws)["kilo.plugin"]
    assert status == "fail" and "UNGOVERNED" in message and "opencode.json" in message


def test_kilo_files_are_governance_files() -> None:
    for path in (KILO_PLUGIN, ".kilo/kilo.json", ".kilo/agent/x.md", ".kilocode/plugin/x.js", "kilo.json",
                 "kilo.jsonc", ".kilo"):
        assert protected_by(path) is not None, path
    # Kilo reads them from every directory between where it starts and the project root
    assert protected_by("src/kilo.json") == "**/kilo.json"
    assert protected_by("src/.kilo/plugin/x.js") == "**/.kilo/**"
    assert protected_by("src/.kilocode/plugins/x.js") == "**/.kilocode/**"
    assert protected_by("src/kilo.py") is None and protected_by("src/.kilos/x") is None
