"""No governed repository open to another CLI (issue 30): which CLI reads which of orchestrator's files, what
``orch doctor`` reports, and how ``orch install`` covers the CLIs that would read what it writes."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from orchestrator.adapters import installer, readers
from orchestrator.adapters.managed import PLUGINS
from orchestrator.cli import main


def statuses(ws: Path) -> dict[str, tuple[str, str]]:
    return {f.check: (f.status, f.message) for f in readers.check_exposure(SimpleNamespace(root=ws))}


def test_every_installable_agent_has_a_guard_and_a_label() -> None:
    for agent in installer.AGENTS:
        assert readers.GUARDS[agent] and readers.LABELS[agent], agent
    for agent, plugin in PLUGINS.items():
        assert plugin in readers.GUARDS[agent]
    for spec in installer.SPECS.values():  # every file an install writes is in the table, read by its own agent
        assert spec.agent in readers.READERS.get(spec.mcp_file or spec.hooks_file, (spec.agent,))
        assert spec.hooks_file in readers.GUARDS[spec.agent]


def test_claude_codes_mcp_file_exposes_qwen_code_until_it_is_guarded(ws: Path) -> None:
    installer.install("claude-code", ws)  # the library call: no covering
    assert readers.exposed(ws) == [readers.Exposure("qwen-code", ".mcp.json", "the orchestrator MCP server")]
    found = statuses(ws)
    assert found["exposure.qwen-code"][0] == "fail" and ".mcp.json" in found["exposure.qwen-code"][1]
    installer.install("qwen-code", ws, mcp=False)
    assert readers.exposed(ws) == []
    assert statuses(ws)["exposure"][0] == "ok"


def test_orch_install_claude_code_covers_qwen_code_and_says_so(ws: Path, capsys) -> None:
    assert main(["install", "claude-code", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "also installed qwen-code" in said and ".mcp.json" in said
    settings = json.loads((ws / ".qwen" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"] and "mcpServers" not in settings  # it reads ours from .mcp.json
    assert readers.exposed(ws) == []
    assert main(["install", "claude-code", "-C", str(ws)]) == 0  # idempotent: nothing more to cover
    assert "also installed" not in capsys.readouterr().out


def test_a_cli_orchestrator_cannot_install_is_reported_by_install_and_doctor(
        ws: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(readers.READERS, "opencode.json", ("opencode", "some-fork"))
    assert main(["install", "opencode", "-C", str(ws)]) == 0
    assert "WARNING: some-fork reads opencode.json" in capsys.readouterr().out
    status, message = statuses(ws)["exposure.some-fork"]
    assert status == "fail" and "opencode.json" in message


def test_our_marks_not_the_file_names_make_a_file_ours(ws: Path) -> None:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))
    assert readers.exposed(ws) == []
    assert "exposure" not in statuses(ws)  # nothing of orchestrator's here: nothing to say


def test_doctor_lists_the_clis_that_would_run_ungoverned_here(ws: Path) -> None:
    installer.install("claude-code", ws)
    installer.install("qwen-code", ws, mcp=False)
    status, message = statuses(ws)["exposure.others"]
    assert status == "info" and "Cline" in message and "opencode" in message and "Qwen Code" not in message


def test_kilo_reads_opencodes_mcp_server(ws: Path) -> None:
    """Kilo CLI reads opencode.json but not .opencode/plugin/: a repository with opencode's files alone is open to
    it (doctor fails), and ``orch install opencode`` writes Kilo's plugin too."""
    from orchestrator.adapters import opencode_setup

    opencode_setup.install(ws)  # opencode's files alone: what an older orchestrator's install left
    assert not (ws / PLUGINS["kilo"]).exists()
    status, message = statuses(ws)["exposure.kilo"]
    assert status == "fail" and "opencode.json" in message
    assert main(["install", "opencode", "-C", str(ws)]) == 0
    assert (ws / PLUGINS["kilo"]).exists() and readers.exposed(ws) == []
