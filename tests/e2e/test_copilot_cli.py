"""End to end with the REAL GitHub Copilot CLI (npm ``@github/copilot``, pinned) against a scripted fake OpenAI Chat
Completions API (``COPILOT_OFFLINE=true``, a BYOK provider on 127.0.0.1).

The same scenario runs in two repositories: one after ``orch install copilot`` (``.github/hooks/orchestrator.json``
and ``.github/mcp.json``; the folder trusted the way Copilot's trust prompt saves it, in ``~/.copilot/config.json``,
with ``orch doctor`` saying so before and after), one where only ``orch install claude-code`` ran (Copilot runs
``.claude/settings.json`` hooks Claude-shaped and ``.mcp.json``; ``--trust-folder``). In one ``copilot -p`` session
each, with the approval channel ``deny``: a ``create`` before any intent is refused; the MCP tool
``orchestrator-select_active_intent`` selects the intent for Copilot's session id; in-scope create/edit/bash land
and are recorded with exact line ranges, the session and the model; out-of-scope shell and edit, governance edits
(``.orchestration/``, ``.github/hooks/``) and an ``rm -rf`` are refused; a script the model wrote in scope runs
unasked in the Landlock sandbox (preToolUse's ``modifiedArgs`` replaced the command) and its write to README.md
fails in the kernel, while the ledger records the original command. Then: with both installs, Copilot runs both
files and each call is still judged and recorded once; and untrusted, Copilot silently runs without any hook (why
``orch install``/``orch doctor`` talk about trust).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.sandbox import landlock
from tests.e2e.copilot_cli import CopilotRun
from tests.e2e.fake_llm import CHAT_MODEL, FakeChat, ccall
from tests.e2e.orch_support import APP, INTENTS, NEW, REPO_ROOT, orch

README = "# Project\n"
#: run sandboxed: the write inside the scope lands, the one to README.md (outside it) is refused by the kernel
SCRIPT = "printf 'g\\n' > src/gen_out.txt\nprintf 'hijacked\\n' > README.md\necho script-done\n"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def make_repo(root: Path, *installs: str, home: Path) -> str:
    """A git repo with orchestrator initialised and installed for ``installs``; returns the install output."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "README.md").write_text(README)
    orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    said = "".join(orch(root, "install", agent, env={"HOME": str(home)}).stdout for agent in installs)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    return said


def trust(home: Path, root: Path) -> None:
    """What Copilot's "trust this folder" prompt saves (a JSON file with comment lines)."""
    config = home / ".copilot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("// User settings belong in settings.json.\n// This file is managed automatically.\n"
                      + json.dumps({"trustedFolders": [str(root)]}, indent=2) + "\n")


def governed_run(run_copilot, root: Path, api: FakeChat, *, trusted: bool, channel: str = "deny") -> CopilotRun:
    """``copilot -p`` in ``root``; the orchestrator daemon it started is stopped afterwards."""
    try:
        return run_copilot(root, api.base_url, trust=not trusted, env={
            "PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": channel, "ORCH_DAEMON_IDLE": "60"})
    finally:
        subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                       env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), capture_output=True, timeout=30)


def script_for(root: Path) -> list:
    def p(rel: str) -> str:
        return str(root / rel)

    def bash(call_id: str, command: str) -> list[dict]:
        return [ccall(call_id, "bash", {"command": command, "description": call_id})]

    return [
        [ccall("c_write_no_intent", "create", {"path": p("src/new.py"), "file_text": NEW})],
        [ccall("c_select", "orchestrator-select_active_intent", {"intent_id": "INT-1"})],
        [ccall("c_write", "create", {"path": p("src/new.py"), "file_text": NEW})],
        [ccall("c_view", "view", {"path": p("src/app.py")})],
        [ccall("c_edit", "edit", {"path": p("src/app.py"), "old_str": "x = 1", "new_str": "x = 2\ny = 3"})],
        bash("c_shell", "echo z > src/other.py"),
        bash("c_append1", "echo w >> src/other.py"),
        bash("c_append2", "echo w >> src/other.py"),
        bash("c_shell_out", "echo h > README.md"),
        [ccall("c_edit_out", "edit", {"path": p("README.md"), "old_str": "Project", "new_str": "Hijacked"})],
        [ccall("c_gov", "edit", {"path": p(".orchestration/active_intents.yaml"), "old_str": "IN_PROGRESS",
                                 "new_str": "COMPLETED"})],
        [ccall("c_gov_hooks", "create", {"path": p(".github/hooks/zz.json"), "file_text": "{}"})],
        bash("c_rm", "rm -rf src"),
        [ccall("c_w_script", "create", {"path": p("src/evil.sh"), "file_text": SCRIPT})],
        bash("c_script", "sh src/evil.sh"),
        "C done",
    ]


@dataclass
class Scenario:
    mode: str
    root: Path
    run: CopilotRun
    api: FakeChat
    outputs: dict[str, str]
    install_out: str
    doctor_before: list[dict]
    doctor_after: list[dict]

    def ledger(self) -> list[dict[str, Any]]:
        text = (self.root / ".orchestration" / "agent_trace.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _doctor(root: Path, home: Path) -> list[dict]:
    return json.loads(orch(root, "doctor", "--json", env={"HOME": str(home)}, check=False).stdout)


@pytest.fixture(scope="module", params=["copilot", "claude-code"])
def scenario(request: pytest.FixtureRequest, run_copilot_module, tmp_path_factory: pytest.TempPathFactory
             ) -> Scenario:
    """``copilot``: ``orch install copilot``, trusted through config.json; ``claude-code``: only ``orch install
    claude-code``, trusted with ``--trust-folder``."""
    mode = request.param
    run_copilot, home = run_copilot_module
    root = tmp_path_factory.mktemp(f"copilot-{mode}") / "repo"
    install_out = make_repo(root, mode, home=home)
    doctor_before = _doctor(root, home)
    if mode == "copilot":
        trust(home, root)
    doctor_after = _doctor(root, home)
    with FakeChat(script_for(root)) as api:
        run = governed_run(run_copilot, root, api, trusted=mode == "copilot")
    assert run.returncode == 0, run.stderr[-3000:]
    return Scenario(mode, root, run, api, api.outputs(), install_out, doctor_before, doctor_after)


@pytest.fixture(scope="module")
def run_copilot_module(copilot_bin: Path, tmp_path_factory: pytest.TempPathFactory):
    from tests.e2e.copilot_cli import make_copilot_runner

    home = tmp_path_factory.mktemp("copilot-home")
    return make_copilot_runner(copilot_bin, home), home


def _finding(findings: list[dict], check: str) -> dict:
    return next(f for f in findings if f["check"] == check)


def test_install_and_doctor_speak_about_trust_hooks_and_mcp(scenario: Scenario) -> None:
    if scenario.mode == "claude-code":
        assert _finding(scenario.doctor_after, "copilot.hooks")["status"] == "ok"  # Claude's hooks cover Copilot
        return
    assert "TRUSTED folder" in scenario.install_out and "--trust-folder" in scenario.install_out
    assert json.loads((scenario.root / ".github/hooks/orchestrator.json").read_text())["version"] == 1
    assert _finding(scenario.doctor_before, "copilot.trust")["status"] == "warn"
    assert _finding(scenario.doctor_after, "copilot.trust")["status"] == "ok"
    assert _finding(scenario.doctor_after, "hooks.copilot")["status"] == "ok"  # the hook ran and refused a probe
    mcp = [f for f in scenario.doctor_after if f["check"] == "mcp" and ".github/mcp.json" in f["message"]]
    assert mcp and mcp[0]["status"] == "ok", scenario.doctor_after


def test_session_ran_its_whole_script_with_the_mandate(scenario: Scenario) -> None:
    assert scenario.api.turns_used == 16
    assert any(e.get("type") == "assistant.message" and e["data"].get("content") == "C done"
               for e in scenario.run.events)
    first = json.dumps(scenario.api.main_requests[0])
    assert "orchestrator-select_active_intent" in scenario.api.offered_tools(scenario.api.main_requests[0])
    # sessionStart's additionalContext reaches the model (both files: the Claude-shaped run is answered alike)
    assert "governed by orchestrator" in first and "orchestrator-select_active_intent" in first


def test_write_before_intent_is_refused(scenario: Scenario) -> None:
    out = scenario.outputs["c_write_no_intent"]
    assert out.startswith("Denied by preToolUse hook") and "intent-required" in out, out


def test_intent_selected_through_mcp_for_the_copilot_session(scenario: Scenario) -> None:
    assert 'intent_context id="INT-1"' in scenario.outputs["c_select"], scenario.outputs["c_select"]
    from orchestrator.engine.pipeline import Governor

    assert Governor(scenario.root).sessions.get(scenario.run.session_id).get("intent_id") == "INT-1"


def test_in_scope_create_edit_and_bash_land(scenario: Scenario) -> None:
    for call in ("c_write", "c_edit", "c_shell", "c_append1", "c_append2"):
        assert "Denied" not in scenario.outputs[call], scenario.outputs[call]
    assert (scenario.root / "src/new.py").read_text() == NEW
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x)\n"
    assert (scenario.root / "src/other.py").read_text() == "z\nw\nw\n"


def test_refusals_scope_governance_and_rm(scenario: Scenario) -> None:
    assert "scope-violation" in scenario.outputs["c_shell_out"]
    assert "scope-violation" in scenario.outputs["c_edit_out"]
    assert "governance-file" in scenario.outputs["c_gov"]
    assert "governance-file" in scenario.outputs["c_gov_hooks"]
    assert "approval-denied" in scenario.outputs["c_rm"]
    assert (scenario.root / ".orchestration/active_intents.yaml").read_text() == INTENTS
    assert not (scenario.root / ".github/hooks/zz.json").exists()
    assert (scenario.root / "src/app.py").exists()


@needs_landlock
def test_script_runs_sandboxed_unasked_and_the_kernel_keeps_readme(scenario: Scenario) -> None:
    out = scenario.outputs["c_script"]
    assert "Denied" not in out and "approval" not in out, out  # channel deny was not asked
    assert "Permission denied" in out and "script-done" in out, out
    assert (scenario.root / "README.md").read_text() == README
    assert (scenario.root / "src/gen_out.txt").read_text() == "g\n"


def test_ledger_records_exact_ranges_session_model_and_original_commands(scenario: Scenario) -> None:
    text = (scenario.root / ".orchestration" / "agent_trace.jsonl").read_text()
    assert "--orch-sandbox" not in text and "landlock.py" not in text  # nothing of the wrapper
    ranges: dict[str, list[tuple[int, int]]] = {}
    tools: list[str] = []
    models: list[str | None] = []
    for rec in scenario.ledger():
        meta = rec["metadata"]["dev.orchestrator"]
        assert meta["intent_id"] == "INT-1" and meta["agent"] == "copilot"
        assert meta["session_id"] == scenario.run.session_id
        tools.append(meta["tool_name"])
        for f in rec["files"]:
            for conv in f["conversations"]:
                models.append(conv["contributor"].get("model_id"))
                ranges.setdefault(f["path"], []).extend((r["start_line"], r["end_line"]) for r in conv["ranges"])
    # the model comes from Copilot's own session log, which it writes in batches: under load the first records of a
    # session may precede it (no model id then, never a wrong one); the last ones always follow it
    assert set(models) <= {CHAT_MODEL, None} and models[-1] == CHAT_MODEL, models
    # each append paired with its own pre-image (no tool-call id reaches Copilot's hooks): its own line
    assert ranges == {"src/new.py": [(1, 2)], "src/app.py": [(1, 2)], "src/other.py": [(1, 1), (2, 2), (3, 3)],
                      "src/evil.sh": [(1, 3)], "src/gen_out.txt": [(1, 1)]}, ranges
    assert tools == ["create", "edit", "bash", "bash", "bash", "create", "bash"]
    assert not list((scenario.root / ".orchestration" / "run" / "preimages").glob("copilot-*"))  # all paired


def test_both_installs_judge_and_record_each_call_once(run_copilot_module, tmp_path_factory) -> None:
    """After ``orch install claude-code`` and ``orch install copilot``, Copilot runs both hook files for every call;
    the Claude-shaped run steps aside, so a sandboxed command is wrapped once and each change recorded once."""
    run_copilot, home = run_copilot_module
    root = tmp_path_factory.mktemp("copilot-both") / "repo"
    make_repo(root, "claude-code", "copilot", home=home)
    with FakeChat([[ccall("s", "orchestrator-select_active_intent", {"intent_id": "INT-1"})],
                   [ccall("w", "create", {"path": str(root / "src/new.py"), "file_text": NEW})],
                   [ccall("sh", "bash", {"command": "sh -c 'echo q > src/q.txt'", "description": "q"})],
                   "done"]) as api:
        run = governed_run(run_copilot, root, api, trusted=False)
    assert run.returncode == 0, run.stderr[-2000:]
    outputs = api.outputs()
    assert "Denied" not in outputs["w"] + outputs["sh"], outputs
    assert (root / "src/q.txt").read_text() == "q\n"
    recs = [json.loads(line) for line in (root / ".orchestration/agent_trace.jsonl").read_text().splitlines()]
    assert [[f["path"] for f in r["files"]] for r in recs] == [["src/new.py"], ["src/q.txt"]]


def test_untrusted_folder_runs_without_any_hook(run_copilot_module, tmp_path_factory) -> None:
    """Why install and doctor talk about trust: untrusted, ``copilot -p`` ignores the repository's hooks."""
    run_copilot, home = run_copilot_module
    root = tmp_path_factory.mktemp("copilot-untrusted") / "repo"
    make_repo(root, "copilot", home=home)
    with FakeChat([[ccall("w", "create", {"path": str(root / "src/new.py"), "file_text": NEW})], "done"]) as api:
        run = governed_run(run_copilot, root, api, trusted=True)  # "trusted" by config.json, which does not list it
    assert run.returncode == 0, run.stderr[-2000:]
    assert (root / "src/new.py").read_text() == NEW  # written although no intent was selected
    trace = root / ".orchestration" / "agent_trace.jsonl"
    assert not trace.exists() or not trace.read_text().strip()


def test_a_subagent_works_under_the_parent_sessions_intent(run_copilot_module, tmp_path_factory) -> None:
    """A ``task`` subagent's calls reach the hooks with its own id as ``sessionId`` (and ``parentAgentId``): they
    are governed under the parent session's intent and recorded with the subagent as ``agent_id``."""
    run_copilot, home = run_copilot_module
    root = tmp_path_factory.mktemp("copilot-subagent") / "repo"
    make_repo(root, "copilot", home=home)
    with FakeChat([[ccall("s", "orchestrator-select_active_intent", {"intent_id": "INT-1"})],
                   [ccall("t", "task", {"description": "write a file", "prompt": "create src/sub.py", "name": "sub",
                                        "agent_type": "general-purpose", "mode": "sync"})],
                   # the subagent's own requests take the next turns
                   [ccall("sub_w", "create", {"path": str(root / "src/sub.py"), "file_text": NEW})],
                   [ccall("sub_out", "create", {"path": str(root / "docs/x.md"), "file_text": "x\n"})],
                   "sub done", "done"]) as api:
        run = governed_run(run_copilot, root, api, trusted=False)
    assert run.returncode == 0, run.stderr[-2000:]
    outputs = api.outputs()
    assert "Denied" not in outputs["sub_w"] and "scope-violation" in outputs["sub_out"], outputs
    assert (root / "src/sub.py").read_text() == NEW and not (root / "docs").exists()
    (rec,) = [json.loads(line) for line in (root / ".orchestration/agent_trace.jsonl").read_text().splitlines()]
    meta = rec["metadata"]["dev.orchestrator"]
    assert meta["session_id"] == run.session_id and meta["intent_id"] == "INT-1"
    assert meta["agent_id"] and meta["agent_id"] != run.session_id
