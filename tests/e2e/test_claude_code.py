"""End to end with the REAL Claude Code CLI (pinned) against the scripted fake Anthropic API.

In a tmp git repo after ``orch init`` and ``orch install claude-code`` (real commands, this interpreter), one long
scripted session A shows: a Write before any intent is denied; after ``mcp__orchestrator__select_active_intent``,
an in-scope Write and Edit succeed; an out-of-scope Write and a write to ``.orchestration/`` are denied; ``rm -rf``
through Bash is not run without approval (channel ``deny`` in A; ``agent-ask`` in B, whose "ask" Claude Code cannot put
to anyone in print mode). Midway, session A's script runs a second real CLI session B that edits a file A has read;
A's next Edit of it is then refused as stale. Two CLI launches in all, both served by one daemon.

The assertions read the files on disk, the ledger and the tool_results the CLI sent back to the (fake) model.
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

from tests.e2e.claude_cli import CliRun, make_runner
from tests.e2e.fake_anthropic import MODEL, FakeAnthropic, ToolUse
from tests.e2e.orch_support import app_repo

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"
INTENTS = """\
active_intents:
  - id: INT-1
    name: app work
    status: IN_PROGRESS
    owned_scope: ["src/**"]
    constraints: ["keep print(x) working"]
    acceptance_criteria: ["app.py defines y"]
"""
APP = "x = 1\nprint(x)\n"


def orch(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


@dataclass
class Scenario:
    root: Path
    a: CliRun
    b: CliRun
    api_a: FakeAnthropic
    api_b: FakeAnthropic
    results: dict[str, dict]
    b_results: dict[str, dict]
    daemon_was_up: bool

    def ledger(self) -> list[dict[str, Any]]:
        text = (self.root / ".orchestration" / "agent_trace.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scenario(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("e2e")
    root = app_repo(base, APP, INTENTS)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    run = make_runner(claude_bin, base / "home")
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": "deny", "ORCH_DAEMON_IDLE": "60"}
    extra = ("--mcp-config", ".mcp.json")
    app, new, readme = str(root / "src/app.py"), str(root / "src/new.py"), str(root / "README.md")

    # Session B: another agent edits src/app.py while A holds a read-stamp on it.
    api_b = FakeAnthropic([
        [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="b_select")],
        [ToolUse("Read", {"file_path": app}, id="b_read")],
        [ToolUse("Edit", {"file_path": app, "old_string": "print(x)", "new_string": "print(x, y)"}, id="b_edit")],
        [ToolUse("Bash", {"command": "rm -rf src", "description": "clean"}, id="b_rm")],
        "B done",
    ])
    # B hands approvals to Claude Code's own prompt ("ask"); in print mode nobody can answer, so it is refused.
    env_b = {**env, "ORCH_APPROVAL_CHANNEL": "agent-ask"}
    b_runs: list[CliRun] = []

    def run_session_b(_request: dict) -> list[ToolUse]:
        with api_b:
            b_runs.append(run(root, api_b.base_url, *extra, env=env_b, tools=TOOLS))
        return [ToolUse("Edit", {"file_path": app, "old_string": "x = 2", "new_string": "x = 3"}, id="a_stale_edit")]

    api_a = FakeAnthropic([
        [ToolUse("Write", {"file_path": new, "content": "def f():\n    return 1\n"}, id="a_write_no_intent")],
        [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="a_select")],
        [ToolUse("Write", {"file_path": new, "content": "def f():\n    return 1\n"}, id="a_write")],
        [ToolUse("Read", {"file_path": app}, id="a_read")],
        [ToolUse("Edit", {"file_path": app, "old_string": "x = 1", "new_string": "x = 2\ny = 3"}, id="a_edit")],
        # two tool calls in one message: Claude Code runs their hooks concurrently (two clients, one daemon)
        [ToolUse("Write", {"file_path": readme, "content": "hijack\n"}, id="a_write_out_of_scope"),
         ToolUse("Write", {"file_path": str(root / "src/other.py"), "content": "z = 0\n"}, id="a_write_parallel")],
        [ToolUse("Write", {"file_path": str(root / ".orchestration/active_intents.yaml"), "content": "x"},
                 id="a_write_governance")],
        [ToolUse("Bash", {"command": "rm -rf src", "description": "clean"}, id="a_rm")],
        run_session_b,
        "A done",
    ])
    try:
        with api_a:
            a = run(root, api_a.base_url, *extra, env=env, tools=TOOLS)
        from orchestrator.daemon import server as daemon

        daemon_was_up = daemon.is_alive(daemon.socket_path(root))
    finally:
        subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                       env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), capture_output=True, timeout=30)
    assert a.returncode == 0, a.stderr
    assert b_runs and b_runs[0].returncode == 0, b_runs and b_runs[0].stderr
    return Scenario(root, a, b_runs[0], api_a, api_b, api_a.tool_results(), api_b.tool_results(), daemon_was_up)


def test_sessions_ran_their_whole_scripts(scenario: Scenario) -> None:
    assert scenario.a.result["result"] == "A done"
    assert scenario.b.result["result"] == "B done"
    assert scenario.api_a.turns_used == 10 and scenario.api_b.turns_used == 5


def test_installed_hooks_used_the_daemon(scenario: Scenario) -> None:
    """The first hook call (SessionStart) found no daemon, answered in-process and started one for the rest."""
    assert scenario.daemon_was_up


def test_session_context_reaches_the_model(scenario: Scenario) -> None:
    """SessionStart/UserPromptSubmit additionalContext (mandate + IN_PROGRESS intents) is in the model's input."""
    first = json.dumps(scenario.api_a.main_requests[0])
    assert "governed by orchestrator" in first and "INT-1: app work" in first


def test_write_before_intent_is_denied(scenario: Scenario) -> None:
    res = scenario.results["a_write_no_intent"]
    assert res["is_error"] and "intent-required" in res["content"]
    assert "a_write_no_intent" in scenario.a.denied_ids


def test_selection_returns_intent_context(scenario: Scenario) -> None:
    res = scenario.results["a_select"]
    assert not res["is_error"], res
    assert '<intent_context id="INT-1"' in res["content"] and "src/**" in res["content"]


def test_in_scope_write_and_edit_land_on_disk(scenario: Scenario) -> None:
    assert not scenario.results["a_write"]["is_error"]
    assert not scenario.results["a_edit"]["is_error"]
    assert (scenario.root / "src/new.py").read_text() == "def f():\n    return 1\n"
    assert not scenario.results["a_write_parallel"]["is_error"]  # allowed next to a denied sibling call
    assert (scenario.root / "src/other.py").read_text() == "z = 0\n"


def test_out_of_scope_and_governance_writes_are_denied(scenario: Scenario) -> None:
    res = scenario.results["a_write_out_of_scope"]
    assert res["is_error"] and "scope-violation" in res["content"]
    assert not (scenario.root / "README.md").exists()
    res = scenario.results["a_write_governance"]
    assert res["is_error"] and "selfguard" in res["content"]
    assert "IN_PROGRESS" in (scenario.root / ".orchestration/active_intents.yaml").read_text()
    assert {"a_write_out_of_scope", "a_write_governance", "a_rm"} <= scenario.a.denied_ids


def test_rm_rf_is_not_run_without_approval(scenario: Scenario) -> None:
    res = scenario.results["a_rm"]  # channel "deny"
    assert res["is_error"] and "approval-denied" in res["content"]
    res = scenario.b_results["b_rm"]  # channel "agent-ask": Claude Code's prompt, refused in print mode
    assert res["is_error"] and "approval-required" in res["content"]
    assert "b_rm" in scenario.b.denied_ids
    assert (scenario.root / "src/app.py").exists() and (scenario.root / "src/new.py").exists()


def test_second_session_edit_makes_first_sessions_edit_stale(scenario: Scenario) -> None:
    assert not scenario.b_results["b_edit"]["is_error"], scenario.b_results["b_edit"]
    res = scenario.results["a_stale_edit"]
    assert res["is_error"] and "stale-file" in res["content"], res
    # B's edit is on disk, A's stale edit is not
    assert (scenario.root / "src/app.py").read_text() == "x = 2\ny = 3\nprint(x, y)\n"
    assert scenario.a.result["session_id"] != scenario.b.result["session_id"]


def test_ledger_records_the_mutations_with_ranges_and_intent(scenario: Scenario) -> None:
    records = scenario.ledger()
    if not records:
        from orchestrator.post import trace

        if "Interim" in (trace.__doc__ or ""):
            pytest.skip("the ledger (issue 3) is not merged into this branch yet")
    by_file: dict[str, list[dict]] = {}
    for rec in records:
        meta = next(v for k, v in rec["metadata"].items() if "orchestrator" in k)
        for f in rec["files"]:
            by_file.setdefault(f["path"], []).append({"meta": meta, "file": f})
    assert set(by_file) == {"src/new.py", "src/app.py", "src/other.py"}
    sessions = {scenario.a.result["session_id"], scenario.b.result["session_id"]}
    for entries in by_file.values():
        for entry in entries:
            assert entry["meta"]["intent_id"] == "INT-1"
            assert entry["meta"]["session_id"] in sessions
            assert entry["meta"]["agent"] == "claude-code"
            # from the transcript (the payload names no model); Agent Trace puts it in the contributor
            models = {c["contributor"].get("model_id") for c in entry["file"]["conversations"]}
            assert models == {MODEL} or entry["meta"].get("model_id") == MODEL
    new_ranges = [r for e in by_file["src/new.py"] for c in e["file"]["conversations"] for r in c["ranges"]]
    assert [(r["start_line"], r["end_line"]) for r in new_ranges] == [(1, 2)]
    app_ranges = [(r["start_line"], r["end_line"])
                  for e in by_file["src/app.py"] for c in e["file"]["conversations"] for r in c["ranges"]]
    assert (1, 2) in app_ranges  # A's edit: "x = 2\ny = 3" on lines 1-2
    assert (3, 3) in app_ranges  # B's edit: "print(x, y)" on line 3
    assert len(by_file["src/app.py"]) == 2  # A's stale edit left no record


FORGER = """\
import sys
from pathlib import Path
from orchestrator import ledger
path = Path(sys.argv[1])
last = ledger.iter_records(path)
rec = dict(list(last)[-1][1])
rec["metadata"]["dev.orchestrator"]["intent_id"] = "EVIL"
signer = None
if sys.argv[2] == "own-key":
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from orchestrator.state import keys
    from orchestrator.ledger.signing import Signer
    k = Ed25519PrivateKey.generate()
    signer = Signer(k, keys.key_id(keys.raw_public(k)))
ledger.append(path, rec, signer=signer)  # the real writer: correctly chained
"""


def _verify(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", "trace", "verify"], cwd=root, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))


def test_ledger_is_signed_by_the_daemon_and_anchored(scenario: Scenario) -> None:
    sigs = [rec["metadata"]["dev.orchestrator"].get("sig") for rec in scenario.ledger()]
    assert sigs and all(s and s["alg"] == "ed25519" for s in sigs)
    proc = _verify(scenario.root)
    assert proc.returncode == 0, proc.stderr
    assert f"signatures: {len(sigs)} signed, 0 unsigned legacy" in proc.stdout
    assert "no local anchor" not in proc.stdout  # the daemon anchored what it appended
    assert (scenario.root / ".orchestration" / "trusted_keys").read_text().count("ed25519 ") == 1


@pytest.mark.parametrize("how", ["no-key", "own-key"])
def test_forged_record_appended_by_a_script_is_reported(scenario: Scenario, tmp_path: Path, how: str) -> None:
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(scenario.root, copy, symlinks=True, ignore=shutil.ignore_patterns("run"))
    assert _verify(copy).returncode == 0
    script = tmp_path / "forge.py"
    script.write_text(FORGER)
    ledger_file = copy / ".orchestration" / "agent_trace.jsonl"
    subprocess.run([sys.executable, str(script), str(ledger_file), how], check=True, timeout=60,
                   env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    proc = _verify(copy)
    assert proc.returncode == 1
    n = len(ledger_file.read_bytes().splitlines())
    want = "unsigned record after signed history" if how == "no-key" else "signed by a key that is not trusted"
    assert f"agent_trace.jsonl:{n}: {want}" in proc.stderr, proc.stderr
