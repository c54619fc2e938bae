"""Gemini setup: the folder-trust check of `orch doctor` and the install notes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.config import workspace
from orchestrator.adapters import installer
from orchestrator.commands.doctor import run_checks
from orchestrator.config.workspace import Workspace


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Path]:
    root = tmp_path / "repo"
    root.mkdir()
    workspace.init(root)
    installer.install("gemini", root)
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    monkeypatch.delenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", raising=False)
    return Workspace(root), home / ".gemini"


def _trust(ws: Workspace) -> str:
    return next(f.status for f in run_checks(ws) if f.check == "gemini.trust")


def test_folder_trust_levels(setup: tuple[Workspace, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, gdir = setup
    assert _trust(ws) == "warn"  # not listed: Gemini asks, or refuses headless
    rules = gdir / "trustedFolders.json"
    rules.write_text(json.dumps({str(ws.root): "TRUST_FOLDER"}))
    assert _trust(ws) == "ok"
    rules.write_text(json.dumps({str(ws.root / "x"): "TRUST_PARENT"}))
    assert _trust(ws) == "ok"
    rules.write_text(json.dumps({str(ws.root.parent): "TRUST_FOLDER", str(ws.root): "DO_NOT_TRUST"}))
    assert _trust(ws) == "fail"  # the most specific rule wins
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert _trust(ws) == "ok"


def test_folder_trust_disabled_in_user_settings(setup: tuple[Workspace, Path]) -> None:
    ws, gdir = setup
    (gdir / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert _trust(ws) == "ok"


def test_notes_warn_about_skip_trust(tmp_path: Path) -> None:
    text = "\n".join(installer.notes("gemini", tmp_path))
    assert "TRUSTED folder" in text and "--skip-trust" in text and "GEMINI_CLI_TRUST_WORKSPACE" in text


def test_gemini_mcp_entry_is_hooked_and_has_no_pythonpath(tmp_path: Path) -> None:
    entry = installer.mcp_server_entry("gemini")
    assert entry["env"] == {"ORCH_MCP_HOOKED": "1"}  # Gemini refuses PYTHONPATH; the BeforeTool hook records
