"""End to end with the REAL opencode (npm ``opencode-ai``, pinned) against a scripted fake OpenAI Chat Completions API.

In a tmp git repo after ``orch init`` and ``orch install opencode`` (real commands, this interpreter): the committed
plugin ``.opencode/plugin/orchestrator.js``, the launcher and the MCP server in ``opencode.json``. opencode's user
config, data, cache and state live in a throw-away HOME (``XDG_*``); its provider is ``@ai-sdk/openai-compatible``
(bundled in the binary: nothing is fetched) with ``options.baseURL`` on 127.0.0.1. opencode also installs
``@opencode-ai/plugin`` into its config dirs in the background, which our plugin does not need:
``npm_config_offline=true`` makes that fail at once instead of reaching the registry (it is logged and ignored).

One ``opencode run`` session (approval channel ``deny``, as in CI) shows: a write before any intent is refused; the
intent is selected through the MCP tool ``orchestrator_select_active_intent`` (the plugin's before hook records it
for opencode's ``sessionID``), and the system prompt carries the mandate; in-scope ``write`` / ``edit`` / ``bash``
(in ``workdir`` src) land and are recorded with exact line ranges, the session and the model; out-of-scope shell and
edit, a governance edit (the plugin itself) and an out-of-scope ``rm -rf`` are refused; a script the model wrote in
scope runs in the Landlock sandbox through ``output.args.command`` and its write outside the scope fails in the
kernel; a ``workdir`` outside the scope is refused; a ``task`` subagent's write, in its own child session, is
governed by the root session's intent. After the first call a daemon answers the plugin over its socket. A session
with a ``gpt-*`` model shows ``apply_patch`` governed and recorded.
A last run shows why ``opencode --pure`` must never be used: it loads no project plugin, so nothing is governed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.sandbox import landlock
from tests.e2e.claude_cli import CLI_TIMINGS
from tests.e2e.fake_llm import FakeChat, ccall
from tests.e2e.orch_support import APP, INTENTS, NEW, REPO_ROOT, orch

#: the model as opencode's config names it; not ``gpt-*`` (opencode would offer apply_patch instead of edit/write)
MODEL = "scripted-1"
PROVIDER = "fake"
EVIL = "open('src/made.txt', 'w').write('made\\n')\nopen('README.md', 'w').write('hijack\\n')\n"


def opencode_env(home: Path, **extra: str) -> dict[str, str]:
    """A throw-away HOME and XDG dirs for opencode, offline, with this checkout importable by the launcher."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_", "ORCH_SANDBOX", "npm_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
               npm_config_offline="true", OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1",
               PYTHONPATH=str(REPO_ROOT), ORCH_APPROVAL_CHANNEL="deny", ORCH_DAEMON_IDLE="60", NO_COLOR="1", **extra)
    return env


def write_user_config(home: Path, api: FakeChat, model: str = MODEL) -> None:
    """opencode's user config: one OpenAI-compatible provider on the fake API, its model the default."""
    config = home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    (config / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                "options": {"baseURL": f"{api.base_url}/v1", "apiKey": "dummy"},
                                "models": {model: {"name": "Scripted", "tool_call": True}}}},
        "model": f"{PROVIDER}/{model}"}))


def run_opencode(opencode_bin: Path, root: Path, home: Path, api: FakeChat, *extra: str, model: str = MODEL
                 ) -> subprocess.CompletedProcess:
    write_user_config(home, api, model)
    start = time.perf_counter()
    try:
        # opencode takes its project directory from $PWD, not from its working directory: without PWD it would
        # work in the directory pytest was started from
        return subprocess.run([str(opencode_bin), "run", *extra, "go"], cwd=root, env=opencode_env(home, PWD=str(root)),
                              capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    finally:
        CLI_TIMINGS.append(("opencode run " + " ".join(extra), time.perf_counter() - start))


def make_repo(root: Path) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n")
    (root / "README.md").write_text("readme\n")
    orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)


def commit(root: Path) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)


def bash(call_id: str, command: str, workdir: str | None = None) -> list[dict[str, Any]]:
    args = {"command": command, "description": call_id}
    if workdir is not None:
        args["workdir"] = workdir
    return [ccall(call_id, "bash", args)]


@dataclass
class Scenario:
    root: Path
    proc: subprocess.CompletedProcess
    api: FakeChat
    outputs: dict[str, str]
    install_out: str
    doctor: list[dict]
    daemon_seen: bool

    def ledger(self) -> list[dict[str, Any]]:
        text = (self.root / ".orchestration" / "agent_trace.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scenario(opencode_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("opencode")
    root, home = base / "repo", base / "home"
    make_repo(root)
    install_out = orch(root, "install", "opencode").stdout
    commit(root)
    doctor = json.loads(orch(root, "doctor", "--json", check=False).stdout)
    seen: list[bool] = []

    def finish(_body: dict) -> str:
        # evaluated when the last request arrives: the first call went through the launcher, which started a daemon
        seen.append(daemon.is_alive(daemon.socket_path(root)))
        return "O done"

    script: list[Any] = [
        [ccall("o_write_no_intent", "write", {"filePath": "src/new.py", "content": NEW})],
        [ccall("o_select", "orchestrator_select_active_intent", {"intent_id": "INT-1"})],
        [ccall("o_write", "write", {"filePath": "src/new.py", "content": NEW})],
        [ccall("o_read", "read", {"filePath": "src/app.py"})],
        [ccall("o_edit", "edit", {"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 2\ny = 3"})],
        bash("o_shell", "echo z > other.py", "src"),
        bash("o_shell_out", "echo h > README.md"),
        [ccall("o_edit_out", "edit", {"filePath": "README.md", "oldString": "readme", "newString": "hijack"})],
        [ccall("o_governance", "edit", {"filePath": ".opencode/plugin/orchestrator.js", "oldString": "throw",
                                        "newString": "return"})],
        bash("o_rm", "rm -rf docs"),
        [ccall("o_w_evil", "write", {"filePath": "src/evil.py", "content": EVIL})],
        bash("o_evil", "python3 src/evil.py"),
        bash("o_workdir_out", "echo q > notes.txt", "docs"),
        [ccall("o_task", "task", {"description": "write sub", "prompt": "write src/sub.py",
                                  "subagent_type": "general"})],
        [ccall("o_sub", "write", {"filePath": "src/sub.py", "content": "s = 1\n"})],  # the subagent's turn
        "child done",
        finish,
    ]
    api = FakeChat(script)
    try:
        with api:
            proc = run_opencode(opencode_bin, root, home, api)
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Scenario(root, proc, api, api.outputs(), install_out, doctor, bool(seen and seen[0]))


def _finding(findings: list[dict], check: str) -> dict:
    return next(f for f in findings if f["check"] == check)


def test_install_and_doctor(scenario: Scenario) -> None:
    assert "opencode --pure" in scenario.install_out
    for check in ("opencode.plugin", "opencode.hook", "opencode.mcp", "install.launcher"):
        assert _finding(scenario.doctor, check)["status"] == "ok", scenario.doctor
    assert not any(f["check"] == "hooks" for f in scenario.doctor)  # no "no agent hooks installed" warning


def test_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 17, scenario.proc.stdout[-2000:]
    assert "O done" in scenario.proc.stdout
    first = scenario.api.main_requests[0]
    system = " ".join(m["content"] for m in first["messages"] if m.get("role") == "system")
    assert "governed by orchestrator" in system and "orchestrator_select_active_intent" in system
    assert "orchestrator_select_active_intent" in scenario.api.offered_tools(first)


def test_write_before_intent_is_refused(scenario: Scenario) -> None:
    assert "[orchestrator:intent-required]" in scenario.outputs["o_write_no_intent"]


def test_intent_selected_through_mcp_for_the_opencode_session(scenario: Scenario) -> None:
    from orchestrator.engine.pipeline import Governor

    assert 'intent_context id="INT-1"' in scenario.outputs["o_select"], scenario.outputs["o_select"]
    sessions = {rec["metadata"]["dev.orchestrator"]["session_id"] for rec in scenario.ledger()}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("ses_")
    assert Governor(scenario.root).sessions.get(next(iter(sessions))).get("intent_id") == "INT-1"
    assert Governor(scenario.root).sessions.get("default").get("intent_id") is None


def test_after_the_first_calls_a_daemon_answers_the_plugin(scenario: Scenario) -> None:
    assert scenario.daemon_seen


def test_in_scope_write_edit_and_shell_in_workdir_land(scenario: Scenario) -> None:
    for call in ("o_write", "o_read", "o_edit", "o_shell", "o_w_evil"):
        assert "orchestrator:" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\n"


def test_refusals_scope_governance_rm_and_workdir(scenario: Scenario) -> None:
    out = scenario.outputs
    assert "[orchestrator:scope-violation]" in out["o_shell_out"]
    assert "[orchestrator:scope-violation]" in out["o_edit_out"]
    assert (scenario.root / "README.md").read_text() == "readme\n"
    assert "[orchestrator:governance-file]" in out["o_governance"]
    assert "throw" in (scenario.root / ".opencode/plugin/orchestrator.js").read_text()
    assert "[orchestrator:" in out["o_rm"] and (scenario.root / "docs/guide.md").exists()
    assert "[orchestrator:scope-violation]" in out["o_workdir_out"] and "docs/notes.txt" in out["o_workdir_out"]
    assert not (scenario.root / "docs/notes.txt").exists()


def test_script_runs_sandboxed_and_the_kernel_keeps_readme(scenario: Scenario) -> None:
    if landlock.abi() < 1:
        assert "not sandboxed" in scenario.outputs["o_evil"]
        return
    out = scenario.outputs["o_evil"]
    assert "[orchestrator:" not in out and "Permission denied" in out and "README.md" in out, out
    assert (scenario.root / "README.md").read_text() == "readme\n"
    assert (scenario.root / "src" / "made.txt").read_text() == "made\n"


def test_ledger_records_exact_ranges_session_and_model(scenario: Scenario) -> None:
    ranges: dict[str, list[tuple[int, int]]] = {}
    ops: dict[str, list[str]] = {}
    tools: list[str] = []
    for rec in scenario.ledger():
        meta = rec["metadata"]["dev.orchestrator"]
        assert meta["intent_id"] == "INT-1" and meta["agent"] == "opencode"
        tools.append(meta["tool_name"])
        for entry in meta["files"]:
            ops.setdefault(entry["path"], []).append(entry["op"])
        for f in rec["files"]:
            for conv in f["conversations"]:
                assert conv["contributor"]["model_id"] == f"{PROVIDER}/{MODEL}"
                ranges.setdefault(f["path"], []).extend((r["start_line"], r["end_line"]) for r in conv["ranges"])
    expected = {"src/new.py": [(1, 2)], "src/app.py": [(1, 2)], "src/other.py": [(1, 1)], "src/evil.py": [(1, 2)],
                "src/sub.py": [(1, 1)]}
    if landlock.abi() >= 1:
        expected["src/made.txt"] = [(1, 1)]
    assert ranges == expected, ranges
    assert ops["src/new.py"] == ["create"]
    text = (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()
    assert "--orch-sandbox" not in text and "landlock.py" not in text  # the command as the model asked for it
    assert not list((scenario.root / ".orchestration" / "run" / "preimages").glob("*.json"))  # all paired


def test_a_task_subagent_is_governed_by_the_root_sessions_intent(scenario: Scenario) -> None:
    """The subagent runs in a child session (no intent of its own): its write is allowed by the root session's intent
    and recorded under the root session, with the child session as ``agent_id``."""
    assert "orchestrator:" not in scenario.outputs["o_sub"] and (scenario.root / "src/sub.py").read_text() == "s = 1\n"
    [rec] = [r for r in scenario.ledger() if r["files"][0]["path"] == "src/sub.py"]
    meta = rec["metadata"]["dev.orchestrator"]
    others = {r["metadata"]["dev.orchestrator"]["session_id"] for r in scenario.ledger()}
    assert others == {meta["session_id"]}
    assert meta["agent_id"] and meta["agent_id"].startswith("ses_") and meta["agent_id"] != meta["session_id"]


def test_pure_mode_loads_no_project_plugin(opencode_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Why install and doctor warn: ``opencode run --pure`` skips the project's plugins, so nothing is governed."""
    base = tmp_path_factory.mktemp("opencode-pure")
    root = base / "repo"
    make_repo(root)
    orch(root, "install", "opencode")
    api = FakeChat([[ccall("w", "write", {"filePath": "README.md", "content": "pure\n"})], "done"])
    with api:
        proc = run_opencode(opencode_bin, root, base / "home", api, "--pure")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (root / "README.md").read_text() == "pure\n"  # out of scope, no intent: written all the same
    assert not (root / ".orchestration" / "agent_trace.jsonl").read_text().strip()
    subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                   env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), capture_output=True, timeout=30)


PATCH_ADD = "*** Begin Patch\n*** Add File: src/p.py\n+p = 1\n+q = 2\n*** End Patch"
PATCH_UPDATE = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x = 1\n+x = 3\n*** End Patch"
PATCH_OUT = "*** Begin Patch\n*** Add File: docs/p.md\n+out\n*** End Patch"


def test_apply_patch_for_gpt_models(opencode_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``gpt-*`` models get ``apply_patch {patchText}`` instead of edit/write: its targets are governed and recorded."""
    base = tmp_path_factory.mktemp("opencode-patch")
    root = base / "repo"
    make_repo(root)
    orch(root, "install", "opencode")
    api = FakeChat([
        [ccall("p_select", "orchestrator_select_active_intent", {"intent_id": "INT-1"})],
        [ccall("p_add", "apply_patch", {"patchText": PATCH_ADD})],
        [ccall("p_update", "apply_patch", {"patchText": PATCH_UPDATE})],
        [ccall("p_out", "apply_patch", {"patchText": PATCH_OUT})],
        "P done",
    ])
    try:
        with api:
            proc = run_opencode(opencode_bin, root, base / "home", api, model="gpt-5-scripted")
    finally:
        daemon.stop(root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "apply_patch" in api.offered_tools(api.main_requests[0]) and api.turns_used == 5
    out = api.outputs()
    assert "[orchestrator:scope-violation]" in out["p_out"] and not (root / "docs/p.md").exists()
    assert (root / "src/p.py").read_text() == "p = 1\nq = 2\n"
    assert (root / "src/app.py").read_text() == "x = 3\nprint(x)\n"
    ranges = {}
    for rec in [json.loads(line) for line in (root / ".orchestration/agent_trace.jsonl").read_text().splitlines()]:
        assert rec["metadata"]["dev.orchestrator"]["tool_name"] == "apply_patch"
        for f in rec["files"]:
            ranges[f["path"]] = [(r["start_line"], r["end_line"]) for c in f["conversations"] for r in c["ranges"]]
    assert ranges == {"src/p.py": [(1, 2)], "src/app.py": [(1, 1)]}, ranges
