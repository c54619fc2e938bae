"""End to end with the REAL Cline CLI (npm ``cline``, pinned) against a scripted fake OpenAI Chat Completions API,
offline, in a throw-away HOME.

In a tmp git repo after ``orch init`` and ``orch install cline`` (real commands, this interpreter, the throw-away
HOME: the MCP server goes to its ``~/.cline/data/settings/cline_mcp_settings.json``): the committed plugin
``.cline/plugins/orchestrator.js`` and the launcher. One ``cline --auto-approve true`` session (approval channel
``deny``, as in CI) shows: a write before any intent is skipped with the reason; the intent is selected through the
MCP tool ``orchestrator__select_active_intent`` (the plugin's beforeTool records it for the Cline session); in-scope
``editor`` writes and edits and a shell write land and are recorded with exact ranges, the session and the model;
a shell redirect to README.md, an edit of README.md, an edit of ``.orchestration/active_intents.yaml``, ``rm -rf`` of
a tree, a ``python3 -c`` write outside the scope (run in the kernel sandbox through the plugin's ``input``: it fails
there) and escapes through the shell's working directory are all stopped on disk; a ``run_commands`` list with one
refused entry runs none of them; a ``spawn_agent`` subagent's write is governed by the session's intent and
attributed; ``orch trace verify`` passes. A ``gpt`` model's session shows ``apply_patch`` governed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters import installer
from orchestrator.daemon import server as daemon
from orchestrator.sandbox import landlock
from tests.e2e.cli_proc import run_cli
from tests.e2e.fake_llm import FakeChat, ccall
from tests.e2e.orch_support import NEW, REPO_ROOT, Scenario, doctor, finding, ledger, orch, ranges_by_path, target_repo
from tests.waiting import wait_until

MODEL = "scripted-1"
PY_WRITE = "python3 -c \"open('README.md', 'w').write('hijack')\""


def cline_env(home: Path, **extra: str) -> dict[str, str]:
    # (XDG_* kept: orchestrator's signing key stays the test session's, so `orch trace verify` trusts it)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLINE", "ORCH_SANDBOX", "npm_"))}
    # CLINE_PLUGIN_IMPORT_TIMEOUT_MS: Cline runs the session WITHOUT any plugin when its plugin host does not start
    # within 4 s (the default), which a loaded CI machine reaches (seen: "plugin loading failed; continuing without
    # plugins"): the setting docs/adapters.md tells every Cline user to make
    env.update(HOME=str(home), CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1",
               CLINE_PLUGIN_IMPORT_TIMEOUT_MS="60000",
               PYTHONPATH=str(REPO_ROOT), ORCH_APPROVAL_CHANNEL="deny", ORCH_DAEMON_IDLE="60", NO_COLOR="1", **extra)
    return env


def run_cline(cline_bin: Path, root: Path, home: Path, api: FakeChat, model: str = MODEL) -> subprocess.CompletedProcess:
    """``cline auth`` then one auto-approved session. ``--retries 20``: Cline ends a run after a few consecutive
    failed tool calls (3 refusals in a row did it in 3.0.65, shown as "aborted by another client")."""
    env = cline_env(home)
    auth = run_cli([str(cline_bin), "auth", "-p", "openai-compatible", "-k", "dummy", "-m", model, "-b",
                    f"{api.base_url}/v1"], cwd=root, env=env, label="cline auth", timeout=120)
    assert auth.returncode == 0, auth.stderr[-2000:]
    return run_cli([str(cline_bin), "--auto-approve", "true", "--retries", "20", "go ahead"], cwd=root, env=env, label="cline")


def make_repo(root: Path, home: Path) -> str:
    """The governed repository, installed for Cline (its MCP server into the throw-away HOME)."""
    target_repo(root)
    return orch(root, "install", "cline", env={"HOME": str(home)}).stdout


def commands(call_id: str, *entries: str) -> list[dict[str, Any]]:
    return [ccall(call_id, "run_commands", {"commands": list(entries)})]


@pytest.fixture(scope="module")
def scenario(cline_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("cline")
    root, home = base / "repo", base / "home"
    install_out = make_repo(root, home)
    findings = doctor(root, env={"HOME": str(home), "CLINE_PLUGIN_IMPORT_TIMEOUT_MS": "60000"})
    script: list[Any] = [
        [ccall("c_write_no_intent", "editor", {"path": "src/new.py", "new_text": NEW})],
        [ccall("c_select", "orchestrator__select_active_intent", {"intent_id": "INT-1"})],
        [ccall("c_write", "editor", {"path": "src/new.py", "new_text": NEW})],
        [ccall("c_edit", "editor", {"path": "src/app.py", "old_text": "x = 1", "new_text": "x = 2\ny = 3"})],
        commands("c_shell", "echo z > src/other.py"),
        commands("c_shell_out", "echo h > README.md"),
        [ccall("c_edit_out", "editor", {"path": "README.md", "old_text": "readme", "new_text": "hijack"})],
        [ccall("c_governance", "editor", {"path": ".orchestration/active_intents.yaml", "old_text": "IN_PROGRESS",
                                          "new_text": "COMPLETED"})],
        commands("c_rm", "rm -rf docs"),
        commands("c_py", PY_WRITE),
        commands("c_cd_out", "cd docs && echo q > notes.txt"),
        commands("c_cd_escape", "cd .. && echo q > escape.txt"),
        commands("c_list", "echo first > src/first.txt", "echo h > README.md"),
        [ccall("c_spawn", "spawn_agent", {"systemPrompt": "a helper", "task": "write src/sub.py"})],
        [ccall("c_sub", "editor", {"path": "src/sub.py", "new_text": "s = 1\n"})],  # the subagent's turn
        "sub done",
        "C done",
    ]
    api = FakeChat(script)
    serve = start_daemon(root)
    try:
        with api:
            proc = run_cline(cline_bin, root, home, api)
    finally:
        daemon.stop(root)
        serve.wait(timeout=60)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Scenario(root, proc, api, api.outputs(), install_out, findings, home)


def start_daemon(root: Path) -> subprocess.Popen:
    """The workspace daemon, up before Cline starts: Cline gives a plugin hook 3 s, and a cold evaluation through the
    launcher (interpreter start, engine imports) can take longer than that on a loaded 2-core CI machine (the
    plugin then refuses the call; tests/adapters/test_cline_plugin.py covers the launcher path)."""
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "120"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(root)) or proc.poll() is not None,
               what="the daemon to answer on its socket")
    assert proc.poll() is None, "orch serve exited"
    # and warm: the daemon's first evaluation loads and compiles the intents and the policy (what Cline's beforeRun
    # does in a real session), which can take seconds on a loaded machine
    warm = subprocess.run([str(root / installer.LAUNCHER), "cline"], cwd=root, capture_output=True, timeout=120,
                          input=json.dumps({"hook_event_name": "session.context", "sessionID": "warm-up",
                                            "cwd": str(root)}).encode(),
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert warm.returncode == 0, warm.stderr
    return proc


def test_install_and_doctor(scenario: Scenario) -> None:
    assert "3 s" in scenario.install_out and "cline_mcp_settings.json" in scenario.install_out
    for check in ("cline.plugin", "cline.hook", "cline.mcp", "cline.failopen"):
        assert finding(scenario.doctor, check)["status"] == "ok", scenario.doctor
    assert not any(f["check"] == "hooks" for f in scenario.doctor)  # no "no agent hooks installed" warning


def test_the_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 17, scenario.proc.stdout[-3000:]
    first = json.dumps(scenario.api.main_requests[0]["messages"])
    assert "governed by orchestrator" in first and "orchestrator__select_active_intent" in first


def test_write_before_intent_is_skipped_with_the_reason(scenario: Scenario) -> None:
    assert "[orchestrator:intent-required]" in scenario.outputs["c_write_no_intent"]


def test_intent_selected_through_mcp_for_the_cline_session(scenario: Scenario) -> None:
    from orchestrator.engine.pipeline import Governor

    assert "<intent_context id=" in scenario.outputs["c_select"] and "INT-1" in scenario.outputs["c_select"]
    sessions = {rec["metadata"]["dev.orchestrator"]["session_id"] for rec in scenario.ledger()}
    [session] = sessions
    assert Governor(scenario.root).sessions.get(session).get("intent_id") == "INT-1"


def test_in_scope_writes_edits_and_commands_land_and_are_recorded(scenario: Scenario) -> None:
    for call in ("c_write", "c_edit", "c_shell"):
        assert "orchestrator:" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\n"
    ranges = ranges_by_path(scenario.ledger(), agent="cline", model=MODEL)
    assert ranges == {"src/new.py": [(1, 2)], "src/app.py": [(1, 2)], "src/other.py": [(1, 1)],
                      "src/sub.py": [(1, 1)]}, ranges


def test_every_unsafe_call_is_stopped_on_disk(scenario: Scenario) -> None:
    out, root = scenario.outputs, scenario.root
    assert "[orchestrator:scope-violation]" in out["c_shell_out"]
    assert "[orchestrator:scope-violation]" in out["c_edit_out"]
    assert "[orchestrator:governance-file]" in out["c_governance"]
    assert "[orchestrator:" in out["c_rm"]
    if landlock.abi() >= 1:  # run in the kernel sandbox: the write fails there
        assert "Permission denied" in out["c_py"] or "PermissionError" in out["c_py"], out["c_py"]
    else:
        assert "[orchestrator:approval-denied]" in out["c_py"]
    assert "[orchestrator:scope-violation]" in out["c_cd_out"]
    assert "[orchestrator:" in out["c_cd_escape"]
    assert (root / "README.md").read_text() == "readme\n"
    assert "IN_PROGRESS" in (root / ".orchestration" / "active_intents.yaml").read_text()
    assert (root / "docs" / "guide.md").exists() and not (root / "docs" / "notes.txt").exists()
    assert not (root.parent / "escape.txt").exists()


def test_one_refused_entry_of_a_command_list_runs_none(scenario: Scenario) -> None:
    assert "command 2 of 2" in scenario.outputs["c_list"] and "none of the 2 was run" in scenario.outputs["c_list"]
    assert not (scenario.root / "src" / "first.txt").exists()


def test_a_subagent_is_governed_by_the_sessions_intent(scenario: Scenario) -> None:
    assert "orchestrator:" not in scenario.outputs["c_sub"]
    [rec] = [r for r in scenario.ledger() if r["files"][0]["path"] == "src/sub.py"]
    meta = rec["metadata"]["dev.orchestrator"]
    others = {r["metadata"]["dev.orchestrator"]["session_id"] for r in scenario.ledger()}
    assert others == {meta["session_id"]} and meta["agent_id"] and meta["agent_id"].startswith("agent_")


def test_trace_verifies(scenario: Scenario) -> None:
    proc = orch(scenario.root, "trace", "verify", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "orch-sandbox" not in (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()


PATCH_ADD = "*** Begin Patch\n*** Add File: src/p.py\n+p = 1\n+q = 2\n*** End Patch"
PATCH_OUT = "*** Begin Patch\n*** Add File: docs/p.md\n+out\n*** End Patch"


def test_apply_patch_for_gpt_models(cline_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("cline-patch")
    root, home = base / "repo", base / "home"
    make_repo(root, home)
    api = FakeChat([
        [ccall("p_select", "orchestrator__select_active_intent", {"intent_id": "INT-1"})],
        [ccall("p_add", "apply_patch", {"input": PATCH_ADD})],
        [ccall("p_out", "apply_patch", {"input": PATCH_OUT})],
        "P done",
    ])
    serve = start_daemon(root)
    try:
        with api:
            proc = run_cline(cline_bin, root, home, api, model="gpt-4.1")
    finally:
        daemon.stop(root)
        serve.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "apply_patch" in api.offered_tools(api.main_requests[0]) and api.turns_used == 4
    out = api.outputs()
    assert "[orchestrator:scope-violation]" in out["p_out"] and not (root / "docs/p.md").exists()
    assert (root / "src/p.py").read_text().splitlines() == ["p = 1", "q = 2"]
    assert [f["path"] for rec in ledger(root) for f in rec["files"]] == ["src/p.py"]
