"""``orch install qwen-code`` (``--trust``), ``uninstall`` and the doctor checks of the Qwen Code install: the hooks
really run through the launcher, every failure of theirs blocks, and what would let Qwen Code run ungoverned (trust,
``disableAllHooks``, a hook that fails open) is reported."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from orchestrator.adapters import checks, installer, qwen_setup
from orchestrator.cli import main
from orchestrator.core.governance import protected_by
from orchestrator.config.workspace import Workspace


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("QWEN_HOME", "QWEN_CODE_TRUSTED_FOLDERS_PATH", "QWEN_CODE_SYSTEM_SETTINGS_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", str(tmp_path / "no-system-settings.json"))
    return home


def findings(ws: Path, **env: str) -> dict[str, tuple[str, str]]:
    full = {**os.environ, "PATH": "/nonexistent", **env}
    return {f.check: (f.status, f.message) for f in qwen_setup.check_qwen(Workspace(ws), full)}


def test_install_writes_hooks_and_mcp_server_through_the_launcher(ws: Path, home: Path, capsys) -> None:
    assert main(["install", "qwen-code", "-C", str(ws)]) == 0
    said = capsys.readouterr().out
    assert "--trust" in said and "PermissionRequest" in said
    settings = json.loads((ws / ".qwen" / "settings.json").read_text())
    hooks = settings["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
                          "PostToolUseFailure"}
    [pre] = hooks["PreToolUse"]
    assert pre["matcher"] == "*" and pre["hooks"][0]["timeout"] == 660
    assert "$QWEN_PROJECT_DIR" in pre["hooks"][0]["command"].replace("${QWEN_PROJECT_DIR:-", "$QWEN_PROJECT_DIR")
    assert hooks["PermissionRequest"][0]["matcher"] == "run_shell_command"
    server = settings["mcpServers"]["orchestrator"]
    assert installer.LAUNCHER in " ".join(server["args"]) and server["env"] == {"ORCH_MCP_HOOKED": "1"}
    text = (ws / ".qwen" / "settings.json").read_text()
    assert str(ws) not in text and "/home/" not in text and "/usr/" not in text
    assert installer.install("qwen-code", ws) == []  # idempotent
    assert protected_by(".qwen/settings.json") == ".qwen/**"


def test_the_installed_hook_runs_and_refuses_the_probe(ws: Path, home: Path) -> None:
    installer.install("qwen-code", ws)
    [(agent, path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    proc = checks.run_hook_command(commands[0], agent, ws)
    answer = json.loads(proc.stdout)
    assert proc.returncode == 0 and answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "governance-file" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_missing_launcher_blocks_with_exit_2_and_a_text_reason(ws: Path, home: Path) -> None:
    """Qwen Code lets a call run on exit 1, a crash, or exit 2 with nothing (or a JSON object) on stderr."""
    installer.install("qwen-code", ws)
    [(agent, _path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    (ws / installer.LAUNCHER).unlink()
    proc = checks.run_hook_command(commands[0], agent, ws)
    assert proc.returncode == 2 and proc.stderr.strip() and not proc.stderr.lstrip().startswith("{")
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\nkill -9 $$\n")
    (ws / installer.LAUNCHER).chmod(0o755)
    proc = checks.run_hook_command(commands[0], agent, ws)
    assert proc.returncode == 2 and "orchestrator:" in proc.stderr


def test_uninstall_removes_only_ours(ws: Path, home: Path) -> None:
    (ws / ".qwen").mkdir()
    mine = {"model": {"name": "qwen3"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}}
    (ws / ".qwen" / "settings.json").write_text(json.dumps(mine))
    installer.install("qwen-code", ws)
    changed = installer.uninstall("qwen-code", ws)
    assert ws / ".qwen" / "settings.json" in changed
    assert json.loads((ws / ".qwen" / "settings.json").read_text()) == mine
    assert not (ws / installer.LAUNCHER).exists()


def test_trust_is_written_where_asked_and_read_back(ws: Path, home: Path, capsys) -> None:
    assert qwen_setup.folder_trust(ws)[0] is True  # folder trust is off by default
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    trusted, why = qwen_setup.folder_trust(ws)
    assert trusted is None and "does not list it" in why
    assert main(["install", "qwen-code", "--trust", "-C", str(ws)]) == 0
    assert "trustedFolders.json" in capsys.readouterr().out
    rules = json.loads((home / ".qwen" / "trustedFolders.json").read_text())
    assert rules == {str(ws.resolve()): "TRUST_FOLDER"}
    assert qwen_setup.folder_trust(ws)[0] is True
    rules[str(ws.resolve())] = "DO_NOT_TRUST"
    (home / ".qwen" / "trustedFolders.json").write_text(json.dumps(rules))
    assert qwen_setup.folder_trust(ws)[0] is False


def test_doctor_reports_trust_disabled_hooks_fail_open_and_the_sandbox(ws: Path, home: Path) -> None:
    assert findings(ws) == {}  # not installed: nothing to say
    installer.install("qwen-code", ws)
    found = findings(ws)
    assert found["qwen-code.trust"][0] == "ok" and found["qwen-code.failopen"][0] == "ok"
    assert found["qwen-code.sandbox"][0] == "info" and "PermissionRequest" in found["qwen-code.sandbox"][1]
    assert found["qwen-code.version"][0] == "info"  # `qwen` is not on this PATH
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({"disableAllHooks": True, "security": {
        "folderTrust": {"enabled": True}}}))
    found = findings(ws)
    assert found["qwen-code.hooks"][0] == "fail" and found["qwen-code.trust"][0] == "fail"
    settings = json.loads((ws / ".qwen" / "settings.json").read_text())
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 60  # Qwen's default: shorter than a person
    (ws / ".qwen" / "settings.json").write_text(json.dumps(settings))
    assert findings(ws)["qwen-code.failopen"][0] == "fail"


def test_the_version_check_warns_about_an_unverified_qwen(ws: Path, home: Path, tmp_path: Path) -> None:
    installer.install("qwen-code", ws)
    fake = tmp_path / "bin" / "qwen"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 0.30.0\n")
    fake.chmod(0o755)
    status, message = findings(ws, PATH=str(fake.parent))["qwen-code.version"]
    assert status == "warn" and "0.30.0" in message and qwen_setup.VERIFIED in message
    fake.write_text(f"#!/bin/sh\necho {qwen_setup.VERIFIED}\n")
    assert findings(ws, PATH=str(fake.parent))["qwen-code.version"][0] == "ok"


def test_doctor_probes_the_installed_qwen_hook(ws: Path, home: Path) -> None:
    installer.install("qwen-code", ws)
    found = {f.check: f for f in checks.check_hooks(SimpleNamespace(root=ws))}
    assert found["hooks.qwen-code"].status == "ok"


@pytest.mark.parametrize(("dotenv", "started_in"), [(".env", "."), (".qwen/.env", "."), ("src/.env", "src"),
                                                    ("src/.gemini/.env", "src/lib"), (".env", "src/lib")])
def test_an_orch_variable_in_a_project_dotenv_blocks_every_call(ws: Path, home: Path, dotenv: str,
                                                                 started_in: str) -> None:
    """Qwen Code hands a project's .env to its hooks (verified with 0.24.4): ORCH_PYTHON there would make the
    launcher run whatever an agent wrote, outside any sandbox. The launcher refuses to run instead — for every .env
    the CLI would load: it searches from the directory it was started in upwards, so a subdirectory's counts."""
    installer.install("qwen-code", ws)
    [(agent, _path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    evil = ws / "src" / "evil"
    marker = ws / "ran"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    evil.chmod(0o755)
    (ws / dotenv).parent.mkdir(parents=True, exist_ok=True)
    (ws / started_in).mkdir(parents=True, exist_ok=True)
    (ws / dotenv).write_text(f"# set by an agent\n  export ORCH_PYTHON={evil}\n")
    proc = checks.run_hook_command(commands[0], agent, ws, env={**os.environ, "ORCH_PYTHON": str(evil)},
                                   cwd=ws / started_in)
    assert proc.returncode == 2 and "ORCH_PYTHON" in proc.stderr and dotenv in proc.stderr
    assert not marker.exists()
    (ws / dotenv).write_text("DEBUG=1\n")  # other variables are the project's business
    proc = checks.run_hook_command(commands[0], agent, ws, cwd=ws / started_in)
    assert proc.returncode == 0 and "governance-file" in proc.stdout


@pytest.mark.parametrize("content", [
    "PYTHONPATH={lib}\n",  # the interpreter's own search path: a module there shadows the standard library
    "DEBUG=1\rPYTHONPATH={lib}\r",  # dotenv reads a lone CR as a line break; sh's read does not
    "\ufeffPYTHONPATH={lib}\n",  # dotenv's \\s matches a byte order mark (and NBSP); sh's [[:space:]] does not
    "OPENAI_API_KEY=x\r\nexport\u00a0PYTHONPATH={lib}\n",
])
def test_a_dotenv_variable_that_steers_the_hook_blocks_every_call(ws: Path, home: Path, content: str) -> None:
    """Qwen Code 0.24.4 hands every name of a project .env its own deny-list does not cover to the hooks it starts
    (verified: PYTHONPATH, GIT_DIR, XDG_STATE_HOME, LD_LIBRARY_PATH reached a SessionStart hook), and parses it with
    dotenv, which splits lines at a lone CR and skips a byte order mark. PYTHONPATH there ran an agent's
    ``_socket.py`` inside the hook client, outside every sandbox, before any check; a CR or a BOM hid an ORCH_ line
    from the launcher's guard. The launcher reads the file as dotenv does and refuses every name that steers the
    hook, its interpreter or the programs it runs."""
    installer.install("qwen-code", ws)
    [(agent, _path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    lib = ws / "src" / "lib"
    lib.mkdir(parents=True)
    marker = ws / "ran-outside"
    # an agent's module, named after the C module the hook client imports first; it then steps aside unnoticed
    (lib / "_socket.py").write_text(f"import sys\nopen({str(marker)!r}, 'w').close()\n"
                                     f"sys.path.remove({str(lib)!r})\ndel sys.modules['_socket']\nimport _socket\n")
    (ws / ".env").write_text(content.format(lib=lib), encoding="utf-8", newline="")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = checks.run_hook_command(commands[0], agent, ws, env={**env, "PYTHONPATH": str(lib)})
    assert not marker.exists(), "an agent's module ran in the hook process"
    assert proc.returncode == 2 and "PYTHONPATH" in proc.stderr and ".env" in proc.stderr


@pytest.mark.parametrize("line", ["DEBUG=1\rORCH_APPROVAL_CHANNEL=allow\r", "\ufeffORCH_APPROVAL_CHANNEL=allow\n",
                                  "GIT_DIR=/tmp/x\n", "XDG_STATE_HOME=/tmp/x\n", "LD_LIBRARY_PATH=/tmp/x\n",
                                  "OTEL_EXPORTER_OTLP_ENDPOINT=http://x\n", "HTTPS_PROXY=http://x\n"])
def test_the_launcher_reads_a_dotenv_as_the_cli_does(ws: Path, home: Path, line: str) -> None:
    """Each of these names reaches the hook from a project .env (Qwen Code 0.24.4, verified for the first two with
    the real CLI) and steers what orchestrator does outside the sandbox: the approval channel, the git the engine
    runs, where the launcher record and anchors live, the loader, where telemetry goes."""
    installer.install("qwen-code", ws)
    [(agent, _path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    (ws / ".env").write_text(line, encoding="utf-8", newline="")
    proc = checks.run_hook_command(commands[0], agent, ws)
    name = line.lstrip("\ufeff").split("\r")[-2 if "\r" in line else 0].split("=")[0]
    assert proc.returncode == 2 and name in proc.stderr, proc.stderr
    (ws / ".env").write_text("OPENAI_API_KEY=sk-x\nMY_PATH=/x\nexportX=1\n# PYTHONPATH=/commented\n")
    proc = checks.run_hook_command(commands[0], agent, ws)
    assert proc.returncode == 0 and "governance-file" in proc.stdout, proc.stderr


def test_a_dotenv_above_the_project_counts_where_the_project_has_none(ws: Path, home: Path) -> None:
    """Qwen Code and Gemini CLI search upwards and load the first .env they find: a checkout in /tmp without one of
    its own gets /tmp/.env, which every workspace's sandboxed commands may write (default sandbox.writable). One
    the project has itself stops the search: the one above is then not loaded, and not judged."""
    installer.install("qwen-code", ws)
    [(agent, _path, commands)] = [f for f in checks.installed(ws) if f[0] == "qwen-code"]
    above = ws.parent / ".env"
    above.write_text("PYTHONPATH=/tmp/agent\n")
    try:
        proc = checks.run_hook_command(commands[0], agent, ws)
        assert proc.returncode == 2 and "PYTHONPATH" in proc.stderr and str(above) in proc.stderr
        (ws / ".env").write_text("OPENAI_API_KEY=sk-x\n")
        proc = checks.run_hook_command(commands[0], agent, ws)
        assert proc.returncode == 0 and "governance-file" in proc.stdout, proc.stderr
    finally:
        above.unlink()
