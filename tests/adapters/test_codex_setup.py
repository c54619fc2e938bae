"""Codex setup: MCP server block in .codex/config.toml, hook trust entries, and the doctor check.

The trust hashes are checked here against digests the real Codex 0.169.0 reported for the same hooks (its
app-server ``hooks/list`` ``currentHash``); tests/e2e/test_codex_cli.py proves them with the real binary.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.adapters import codex_setup, installer
from orchestrator.commands.doctor import run_checks
from orchestrator.core.errors import ConfigError
from orchestrator.config.workspace import Workspace

needs_tomllib = pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")


def test_hook_hash_matches_what_codex_computes() -> None:
    # Codex 0.169.0's currentHash for these hooks (hooks/list), command "/tmp/wt15-x/hooklog.sh"
    cmd = {"type": "command", "command": "/tmp/wt15-x/hooklog.sh"}
    assert codex_setup.hook_hash("PreToolUse", None, {**cmd, "timeout": 600}) == \
        "sha256:d66e07e9e447d7c96400ac843c1f0e369bee1a381bb53443db836ea7f651179f"
    assert codex_setup.hook_hash("SessionStart", "startup|resume|clear", cmd) == \
        "sha256:4f9f040314e3aecfcdf5114576d1fd395e2302c8b6c9905b73327e883a986eab"
    assert codex_setup.hook_hash("Stop", None, cmd) == \
        "sha256:73c2f4844a1d1e5ce4d8c22c0bd3b8c14ceb129e632f8d7ce34b0c1624a39541"


def test_install_writes_mcp_block_and_uninstall_removes_it(tmp_path: Path) -> None:
    written = installer.install("codex", tmp_path)
    config = tmp_path / ".codex/config.toml"
    assert written == [tmp_path / installer.LAUNCHER, tmp_path / ".codex/hooks.json", config]
    text = config.read_text()
    assert "[mcp_servers.orchestrator]" in text and 'ORCH_MCP_HOOKED = "1"' in text
    assert installer.install("codex", tmp_path) == []  # idempotent
    config.write_text('model = "o3"\n' + config.read_text())  # the user's own settings are kept
    installer.install("codex", tmp_path)
    assert config.read_text().count("[mcp_servers.orchestrator]") == 1
    installer.uninstall("codex", tmp_path)
    assert config.read_text() == 'model = "o3"\n'
    config.unlink()
    installer.install("codex", tmp_path)
    installer.uninstall("codex", tmp_path)
    assert not (tmp_path / ".codex").exists()


def test_a_users_own_orchestrator_server_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    mine = '[mcp_servers.orchestrator]\ncommand = "my-orch"\n'
    (tmp_path / ".codex/config.toml").write_text(mine)
    installer.install("codex", tmp_path)
    assert (tmp_path / ".codex/config.toml").read_text() == mine


def _ws(tmp_path: Path) -> Workspace:
    from orchestrator.config import workspace

    root = tmp_path / "repo"
    root.mkdir()
    workspace.init(root)
    installer.install("codex", root)
    return Workspace(root)


@needs_tomllib
def test_doctor_fails_until_trusted_then_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    [trust] = [f for f in run_checks(ws) if f.check == "codex.trust"]
    assert trust.status == "fail" and "project" in trust.message and "not trusted" in trust.message
    codex_setup.write_trust(ws.root)
    findings = {f.check: f for f in run_checks(ws)}
    assert findings["codex.trust"].status == "ok", findings["codex.trust"]
    assert findings["codex.mcp"].status == "ok"
    # a re-install with another interpreter leaves the (shared, launcher) commands alone: still trusted
    installer.install("codex", ws.root, python="/other/python")
    assert [f.status for f in run_checks(ws) if f.check == "codex.trust"] == ["ok"]
    # a re-install that changes the hook commands (here: --no-daemon): the old hashes no longer match
    installer.install("codex", ws.root, fast=False)
    [trust] = [f for f in run_checks(ws) if f.check == "codex.trust"]
    assert trust.status == "fail" and "changed since they were trusted" in trust.message
    codex_setup.write_trust(ws.root)  # replaces its own block
    assert [f.status for f in run_checks(ws) if f.check == "codex.trust"] == ["ok"]
    assert (home / "config.toml").read_text().count("trust_level") == 1
    changed = installer.uninstall("codex", ws.root)
    assert home / "config.toml" in changed and "orchestrator trust" not in (home / "config.toml").read_text()


@needs_tomllib
def test_write_trust_keeps_a_trusted_project_table_and_refuses_conflicts(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    config = home / "config.toml"
    config.write_text(f'model = "o3"\n\n[projects."{ws.root}"]\ntrust_level = "trusted"\n')
    codex_setup.write_trust(ws.root)
    assert config.read_text().count(f'[projects."{ws.root}"]') == 1
    assert [f.status for f in run_checks(ws) if f.check == "codex.trust"] == ["ok"]
    config.write_text(f'[projects."{ws.root}"]\ntrust_level = "untrusted"\n')
    with pytest.raises(ConfigError):
        codex_setup.write_trust(ws.root)


@needs_tomllib
def test_disabled_hooks_feature_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    codex_setup.write_trust(ws.root)
    config = home / "config.toml"
    config.write_text("[features]\nhooks = false\n\n" + config.read_text())
    [trust] = [f for f in run_checks(ws) if f.check == "codex.trust"]
    assert trust.status == "fail" and "feature is disabled" in trust.message


def test_no_codex_install_no_finding(tmp_path: Path) -> None:
    from orchestrator.config import workspace

    workspace.init(tmp_path)
    assert not [f for f in run_checks(Workspace(tmp_path)) if f.check.startswith("codex.")]
