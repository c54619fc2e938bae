"""``orch install pi`` / ``uninstall``, pi's project trust (``--trust``, as pi 1.6.0 reads ``trust.json``) and the
doctor check of the pi install."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from orchestrator.adapters import installer, pi_setup
from orchestrator.adapters.managed import PI_EXTENSION
from orchestrator.cli import main
from orchestrator.core.errors import ConfigError, UsageError
from orchestrator.core.governance import protected_by


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away HOME (pi's agent dir is ``~/.pi/agent``)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return path


def _findings(ws: Path) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for f in pi_setup.check_pi(SimpleNamespace(root=ws)):
        out.setdefault(f.check, []).append((f.status, f.message))
    return out


def test_install_writes_the_extension_launcher_and_mcp_server_without_machine_paths(ws: Path, home: Path,
                                                                                     capsys) -> None:
    assert main(["install", "pi", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "TRUSTED" in said and "SILENTLY" in said and "orch install pi --trust" in said and "--no-extensions" in said
    extension = ws / PI_EXTENSION
    text = extension.read_text()
    assert text == pi_setup.extension_text() and 'const AGENT = "pi"' in text and "@orch-include" not in text
    assert extension.stat().st_mode & 0o777 == 0o644 and os.access(ws / installer.LAUNCHER, os.X_OK)
    server = json.loads((ws / pi_setup.MCP_FILE).read_text())["mcpServers"]["orchestrator"]
    assert server["exposure"] == "direct" and server["env"] == {"ORCH_MCP_HOOKED": "1"}
    assert server["command"] == "sh" and any(installer.LAUNCHER in a for a in server["args"])
    for committed in (text, (ws / pi_setup.MCP_FILE).read_text()):
        assert str(ws) not in committed and "/home/" not in committed and "/usr/" not in committed
    assert not (home / ".pi").exists()  # no trust without --trust
    assert pi_setup.install(ws) == []  # idempotent


def test_install_trust_writes_pis_trust_store_and_uninstall_leaves_it(ws: Path, home: Path, capsys) -> None:
    store = home / ".pi" / "agent" / "trust.json"
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"/elsewhere": False}))
    assert main(["install", "pi", "--trust", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert f"trusted the project in {store}" in said and "SILENTLY" not in said
    assert json.loads(store.read_text()) == {"/elsewhere": False, os.path.realpath(ws): True}
    assert store.read_text().endswith("}\n") and not Path(f"{store}.lock").exists()
    pi_setup.uninstall(ws)
    assert not (ws / ".pi").exists() and not (ws / installer.LAUNCHER).exists()
    assert json.loads(store.read_text())[os.path.realpath(ws)] is True  # trusting is the person's decision


def test_uninstall_keeps_the_users_pi_files(ws: Path, home: Path) -> None:
    (ws / ".pi" / "extensions").mkdir(parents=True)
    (ws / ".pi" / "extensions" / "mine.ts").write_text("export default function () {}\n")
    mine = {"mcpServers": {"docs": {"url": "https://example.com/mcp"}}}
    (ws / pi_setup.MCP_FILE).write_text(json.dumps(mine))
    pi_setup.install(ws)
    assert set(json.loads((ws / pi_setup.MCP_FILE).read_text())["mcpServers"]) == {"docs", "orchestrator"}
    changed = pi_setup.uninstall(ws)
    assert ws / PI_EXTENSION in changed and json.loads((ws / pi_setup.MCP_FILE).read_text()) == mine
    assert (ws / ".pi" / "extensions" / "mine.ts").exists() and pi_setup.uninstall(ws) == []


def test_local_scope_is_refused(ws: Path) -> None:
    with pytest.raises(UsageError):
        pi_setup.install(ws, scope="local")


def test_project_trust_follows_pis_rules(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = home / ".pi" / "agent"
    assert pi_setup.project_trust(ws)[0] is None  # nothing said: pi asks, or -p skips
    agent.mkdir(parents=True)
    (agent / "trust.json").write_text(json.dumps({str(ws.parent): True}))
    trusted, why = pi_setup.project_trust(ws)
    assert trusted is True and str(ws.parent) in why  # a parent's decision applies
    (agent / "trust.json").write_text(json.dumps({str(ws.parent): True, str(ws): False}))
    assert pi_setup.project_trust(ws)[0] is False  # the nearest decision wins
    (agent / "trust.json").write_text(json.dumps({str(ws): None}))
    (agent / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    assert pi_setup.project_trust(ws)[0] is True  # null is no decision: the default applies
    (agent / "settings.json").write_text(json.dumps({"defaultProjectTrust": "never"}))
    assert pi_setup.project_trust(ws)[0] is False
    other = home / "elsewhere"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(other))
    assert pi_setup.project_trust(ws)[0] is None and pi_setup.agent_dir() == other
    assert pi_setup.write_trust(ws) == other / "trust.json"
    assert pi_setup.project_trust(ws)[0] is True


def test_write_trust_refuses_a_store_pi_would_not_read(ws: Path, home: Path) -> None:
    store = home / ".pi" / "agent" / "trust.json"
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"/x": "yes"}))
    with pytest.raises(ConfigError):
        pi_setup.write_trust(ws)
    assert json.loads(store.read_text()) == {"/x": "yes"}


def test_doctor_says_whether_the_extension_will_load(ws: Path, home: Path) -> None:
    assert _findings(ws) == {}  # nothing installed: nothing to say
    pi_setup.install(ws)
    found = _findings(ws)
    assert [found[c][0][0] for c in ("pi.extension", "pi.trust", "pi.hook", "pi.mcp")] == ["ok", "warn", "ok", "ok"]
    assert "SILENTLY" in found["pi.trust"][0][1]
    pi_setup.write_trust(ws)
    assert _findings(ws)["pi.trust"][0][0] == "ok"
    store = home / ".pi" / "agent" / "trust.json"
    store.write_text(json.dumps({os.path.realpath(ws): False}))
    assert _findings(ws)["pi.trust"][0][0] == "fail"
    (ws / PI_EXTENSION).write_text(pi_setup.extension_text() + "// edited\n")
    assert _findings(ws)["pi.extension"][0][0] == "warn"
    (ws / installer.LAUNCHER).unlink()
    assert _findings(ws)["pi.hook"][0][0] == "fail"
    (ws / PI_EXTENSION).unlink()
    [(status, message)] = _findings(ws)["pi.extension"]
    assert status == "fail" and "UNGOVERNED" in message  # .pi/mcp.json still names our server


def test_pi_files_are_governance_files() -> None:
    for path in (PI_EXTENSION, ".pi/mcp.json", ".pi/settings.json", ".pi/SYSTEM.md", ".pi"):
        assert protected_by(path) == ".pi/**", path
    # pi loads .pi/ from the directory it is started in: `cd src && pi` would load src/.pi/extensions/
    assert protected_by("src/.pi/extensions/x.js") == "**/.pi/**"
    assert protected_by("src/pi.py") is None and protected_by(".pip/x") is None
