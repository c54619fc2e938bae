"""End to end with the REAL Kilo CLI (npm ``@kilocode/cli``, pinned) against a scripted fake OpenAI Chat Completions
API.

Kilo is an opencode fork: ``orch install kilo`` writes opencode's plugin to ``.kilo/plugin/orchestrator.js`` (Kilo
reads no ``.opencode/plugin/``) and the MCP server to ``kilo.json``. Kilo's user config, data, cache and state live in
a throw-away HOME (``XDG_*``), offline (``KILO_DISABLE_MODELS_FETCH``, ``KILO_DISABLE_AUTOUPDATE``,
``npm_config_offline``); its provider is ``@ai-sdk/openai-compatible`` (bundled) on 127.0.0.1.

One ``kilo run --auto`` session (approval channel ``deny``, as in CI) shows: a write before any intent is refused;
the intent is selected through the MCP tool ``orchestrator_select_active_intent``; in-scope ``write`` / ``edit`` /
``bash`` (in ``workdir`` src) land and are recorded; a shell redirect to README.md, an edit of README.md, an edit of
``.orchestration/active_intents.yaml`` and of the plugin itself, ``rm -rf`` of a tree, a ``python3 -c`` write outside
the scope and a ``workdir`` outside the scope are all stopped on disk; ``background_process`` starts its command in
the Landlock sandbox; a ``task`` subagent's write is governed by the root session's intent; ``orch trace verify``
passes. Then the opencode → Kilo pair: a repository installed only for opencode (``orch install opencode``) holds
against Kilo, because the install writes Kilo's plugin too; without it, ``orch doctor`` says Kilo would run
ungoverned — and it does. Last, ``kilo --pure`` loads no project plugin (why install and doctor warn).
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.state import keys
from orchestrator.adapters.managed import KILO_PLUGIN, OPENCODE_PLUGIN
from orchestrator.sandbox import landlock
from tests.e2e.claude_cli import CLI_TIMINGS
from tests.e2e.fake_llm import FakeChat, ccall
from tests.e2e.orch_support import NEW, REPO_ROOT, Scenario, doctor, finding, orch, ranges_by_path
from tests.e2e.test_opencode import bash, commit, make_repo

MODEL = "scripted-1"
PROVIDER = "fake"
#: a python3 -c write outside the scope, as the model would type it
PY_WRITE = "python3 -c \"open('README.md', 'w').write('py\\n')\""
#: started by background_process (in src/): writes in scope, then tries README.md — a script the analyzer cannot read,
#: so only the kernel can refuse that write
BG_SCRIPT = ("open('bg.txt', 'w').write('bg\\n')\ntry:\n    open('../README.md', 'w').write('hijack\\n')\n"
             "except OSError as exc:\n    open('bg.err', 'w').write(str(exc))\nopen('bg.done', 'w').write('done\\n')\n")
BG_COMMAND = "python3 bgwrite.py"
#: the agent waits (bounded) for the background process to finish before the run ends
BG_WAIT = "for i in $(seq 300); do [ -f src/bg.done ] && break; sleep 0.1; done; cat src/bg.done"


def kilo_env(home: Path, root: Path, **extra: str) -> dict[str, str]:
    """A throw-away HOME and XDG dirs for Kilo, offline, with this checkout importable by the launcher."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENCODE", "KILO", "XDG_", "ORCH_SANDBOX", "npm_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
               npm_config_offline="true", KILO_DISABLE_MODELS_FETCH="1", KILO_DISABLE_AUTOUPDATE="1",
               # Kilo, like opencode, takes its project directory from $PWD, not from its working directory
               PWD=str(root), PYTHONPATH=str(REPO_ROOT), ORCH_APPROVAL_CHANNEL="deny", ORCH_DAEMON_IDLE="60",
               # the ledger's signing key: the one `orch init` trusted in the repository (not one in the fake HOME)
               ORCH_KEY_DIR=str(keys.key_dir()),
               NO_COLOR="1", **extra)
    return env


def run_kilo(kilo_bin: Path, root: Path, home: Path, api: FakeChat, *extra: str, **env: str
             ) -> subprocess.CompletedProcess:
    """``kilo run --auto go`` in ``root``, its one provider the fake API."""
    config = home / ".config" / "kilo"
    config.mkdir(parents=True, exist_ok=True)
    (config / "kilo.json").write_text(json.dumps({
        "$schema": "https://app.kilo.ai/config.json",
        "provider": {PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                "options": {"baseURL": f"{api.base_url}/v1", "apiKey": "dummy"},
                                "models": {MODEL: {"name": "Scripted", "tool_call": True}}}},
        "model": f"{PROVIDER}/{MODEL}"}))
    start = time.perf_counter()
    try:
        return subprocess.run([str(kilo_bin), "run", "--auto", *extra, "go"], cwd=root,
                              env=kilo_env(home, root, **env), capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
    finally:
        CLI_TIMINGS.append(("kilo run " + " ".join(extra), time.perf_counter() - start))


def unsafe_turns(prefix: str, plugin: str) -> list[Any]:
    """The six calls that must never land out of scope (after the intent is selected), plus the governance edits."""
    return [
        bash(f"{prefix}_shell_out", "echo h > README.md"),
        [ccall(f"{prefix}_edit_out", "edit", {"filePath": "README.md", "oldString": "readme", "newString": "hijack"})],
        [ccall(f"{prefix}_edit_intents", "edit", {"filePath": ".orchestration/active_intents.yaml",
                                                   "oldString": "src/**", "newString": "**"})],
        [ccall(f"{prefix}_governance", "edit", {"filePath": plugin, "oldString": "throw", "newString": "return"})],
        bash(f"{prefix}_rm", "rm -rf docs"),
        bash(f"{prefix}_py", PY_WRITE),
        bash(f"{prefix}_workdir_out", "echo q > notes.txt", "docs"),
    ]


def assert_nothing_unsafe_landed(root: Path, plugin: str) -> None:
    """The files the unsafe calls aimed at, untouched."""
    assert (root / "README.md").read_text() == "readme\n"
    assert "src/**" in (root / ".orchestration" / "active_intents.yaml").read_text()
    assert "throw" in (root / plugin).read_text()
    assert (root / "docs" / "guide.md").read_text() == "guide\n"
    assert not (root / "docs" / "notes.txt").exists()


@pytest.fixture(scope="module")
def scenario(kilo_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("kilo")
    root, home = base / "repo", base / "home"
    make_repo(root)
    install_out = orch(root, "install", "kilo").stdout
    commit(root)
    # the pinned kilo on PATH (doctor's kilo.version)
    findings = doctor(root, env={"PATH": f"{kilo_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    script: list[Any] = [
        [ccall("k_write_no_intent", "write", {"filePath": "src/new.py", "content": NEW})],
        [ccall("k_select", "orchestrator_select_active_intent", {"intent_id": "INT-1"})],
        [ccall("k_write", "write", {"filePath": "src/new.py", "content": NEW})],
        [ccall("k_read", "read", {"filePath": "src/app.py"})],
        [ccall("k_edit", "edit", {"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 2\ny = 3"})],
        bash("k_shell", "echo z > other.py", "src"),
        *unsafe_turns("k", KILO_PLUGIN),
        [ccall("k_w_bg", "write", {"filePath": "src/bgwrite.py", "content": BG_SCRIPT})],
        [ccall("k_bg", "background_process", {"action": "start", "command": BG_COMMAND, "description": "bg",
                                               "workdir": "src"})],
        bash("k_bg_wait", BG_WAIT),
        [ccall("k_task", "task", {"description": "write sub", "prompt": "write src/sub.py",
                                  "subagent_type": "general"})],
        [ccall("k_sub", "write", {"filePath": "src/sub.py", "content": "s = 1\n"})],  # the subagent's turn
        "child done",
        "K done",
    ]
    api = FakeChat(script)
    try:
        with api:
            proc = run_kilo(kilo_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Scenario(root, proc, api, api.outputs(), install_out, findings)


def test_install_and_doctor(scenario: Scenario) -> None:
    assert "kilo --pure" in scenario.install_out
    for check in ("kilo.plugin", "kilo.hook", "kilo.mcp", "kilo.version", "install.launcher"):
        assert finding(scenario.doctor, check)["status"] == "ok", scenario.doctor
    assert not (scenario.root / ".opencode").exists() and not (scenario.root / "opencode.json").exists()


def test_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 20, scenario.proc.stdout[-3000:]
    assert "K done" in scenario.proc.stdout
    first = scenario.api.main_requests[0]
    system = " ".join(m["content"] for m in first["messages"] if m.get("role") == "system")
    assert "governed by orchestrator" in system and "orchestrator_select_active_intent" in system
    assert ".kilo/" in system


def test_write_before_intent_is_refused_and_the_intent_selected_through_mcp(scenario: Scenario) -> None:
    from orchestrator.engine.pipeline import Governor

    assert "[orchestrator:intent-required]" in scenario.outputs["k_write_no_intent"]
    assert 'intent_context id="INT-1"' in scenario.outputs["k_select"], scenario.outputs["k_select"]
    sessions = {rec["metadata"]["dev.orchestrator"]["session_id"] for rec in scenario.ledger()}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("ses_")
    assert Governor(scenario.root).sessions.get(next(iter(sessions))).get("intent_id") == "INT-1"


def test_in_scope_write_edit_and_shell_land(scenario: Scenario) -> None:
    for call in ("k_write", "k_read", "k_edit", "k_shell"):
        assert "orchestrator:" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\n"


def test_unsafe_calls_are_stopped_on_disk(scenario: Scenario) -> None:
    out = scenario.outputs
    assert "[orchestrator:scope-violation]" in out["k_shell_out"]
    assert "[orchestrator:scope-violation]" in out["k_edit_out"]
    assert "[orchestrator:governance-file]" in out["k_edit_intents"]
    assert "[orchestrator:governance-file]" in out["k_governance"]
    assert "[orchestrator:" in out["k_rm"]
    assert "[orchestrator:scope-violation]" in out["k_workdir_out"] and "docs/notes.txt" in out["k_workdir_out"]
    if landlock.abi() >= 1:  # the analyzer cannot read python's string: the kernel refuses the write
        assert "[orchestrator:" in out["k_py"] or "Permission denied" in out["k_py"], out["k_py"]
    assert_nothing_unsafe_landed(scenario.root, KILO_PLUGIN)


def test_background_process_runs_in_the_sandbox(scenario: Scenario) -> None:
    """``background_process start``: its command is rewritten into the Landlock sandbox like ``bash``'s (in its
    ``workdir``): the in-scope write lands, the write to README.md fails in the kernel."""
    if landlock.abi() < 1:
        pytest.skip("no Landlock on this kernel: the command would be refused, not sandboxed")
    assert "orchestrator:" not in scenario.outputs["k_bg"], scenario.outputs["k_bg"]
    assert "done" in scenario.outputs["k_bg_wait"], scenario.outputs["k_bg_wait"]
    assert (scenario.root / "src" / "bg.txt").read_text() == "bg\n"
    assert "Permission denied" in (scenario.root / "src" / "bg.err").read_text()
    assert (scenario.root / "README.md").read_text() == "readme\n"


def test_ledger_records_the_calls_and_trace_verify_passes(scenario: Scenario) -> None:
    ranges = ranges_by_path(scenario.ledger(), agent="kilo", model=f"{PROVIDER}/{MODEL}")
    assert ranges["src/new.py"] == [(1, 2)] and ranges["src/app.py"] == [(1, 2)]
    assert ranges["src/other.py"] == [(1, 1)] and ranges["src/sub.py"] == [(1, 1)]
    assert not any(path.startswith(("README", "docs/", ".orchestration/", ".kilo/")) for path in ranges), ranges
    text = (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()
    assert "--orch-sandbox" not in text and "landlock.py" not in text  # the command as the model asked for it
    # the daemon signed with the key of Kilo's (throw-away) HOME, which `orch init` trusted (ORCH_KEY_DIR)
    verify = orch(scenario.root, "trace", "verify", check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_task_subagent_is_governed_by_the_root_sessions_intent(scenario: Scenario) -> None:
    assert "orchestrator:" not in scenario.outputs["k_sub"]
    [rec] = [r for r in scenario.ledger() if r["files"][0]["path"] == "src/sub.py"]
    meta = rec["metadata"]["dev.orchestrator"]
    assert meta["agent_id"] and meta["agent_id"] != meta["session_id"]


def _unsafe_session(kilo_bin: Path, root: Path, home: Path, *extra: str) -> tuple[FakeChat, dict[str, str]]:
    api = FakeChat([[ccall("p_select", "orchestrator_select_active_intent", {"intent_id": "INT-1"})],
                    *unsafe_turns("p", OPENCODE_PLUGIN), "P done"])
    try:
        with api:
            proc = run_kilo(kilo_bin, root, home, api, *extra)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return api, api.outputs()


def test_a_repository_installed_for_opencode_holds_against_kilo(kilo_bin: Path,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """The opencode → Kilo pair: Kilo reads opencode.json (our MCP server) but not .opencode/plugin/. ``orch install
    opencode`` writes Kilo's plugin too, so Kilo's unsafe calls are stopped, and ``orch doctor`` says Kilo is
    governed; without that plugin doctor says Kilo would run ungoverned, and it does."""
    base = tmp_path_factory.mktemp("kilo-opencode")
    root = base / "repo"
    make_repo(root)
    said = orch(root, "install", "opencode").stdout
    assert KILO_PLUGIN in said and not (root / "kilo.json").exists()
    commit(root)
    findings = doctor(root)
    assert finding(findings, "kilo.plugin")["status"] == "ok" and finding(findings, "kilo.hook")["status"] == "ok"
    api, out = _unsafe_session(kilo_bin, root, base / "home")
    assert 'intent_context id="INT-1"' in out["p_select"]  # Kilo got our MCP server from opencode.json
    for call in ("p_shell_out", "p_edit_out", "p_edit_intents", "p_governance", "p_rm", "p_workdir_out"):
        assert "[orchestrator:" in out[call], (call, out[call])
    assert_nothing_unsafe_landed(root, OPENCODE_PLUGIN)

    # the state before this issue: opencode's files only
    (root / KILO_PLUGIN).unlink()
    findings = doctor(root)
    found = finding(findings, "kilo.plugin")
    assert found["status"] == "fail" and "UNGOVERNED" in found["message"] and "opencode.json" in found["message"]
    api, out = _unsafe_session(kilo_bin, root, base / "home2")
    assert 'intent_context id="INT-1"' in out["p_select"]
    assert not any("[orchestrator:" in text for text in out.values())
    assert (root / "README.md").read_text() != "readme\n" and not (root / "docs" / "guide.md").exists()


def test_pure_mode_loads_no_project_plugin(kilo_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Why install and doctor warn: ``kilo run --pure`` skips the project's plugins, so nothing is governed."""
    base = tmp_path_factory.mktemp("kilo-pure")
    root = base / "repo"
    make_repo(root)
    orch(root, "install", "kilo")
    api = FakeChat([[ccall("w", "write", {"filePath": "README.md", "content": "pure\n"})], "done"])
    with api:
        proc = run_kilo(kilo_bin, root, base / "home", api, "--pure")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (root / "README.md").read_text() == "pure\n"  # out of scope, no intent: written all the same
    findings = doctor(root, env={"KILO_PURE": "1"})
    said = [(f["status"], f["message"]) for f in findings if f["check"] == "kilo.plugin"]
    assert said[0][0] == "ok" and said[1][0] == "fail" and "KILO_PURE" in said[1][1], said
