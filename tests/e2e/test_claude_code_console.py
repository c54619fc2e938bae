"""End to end: the REAL Claude Code CLI in print mode (``-p``, the fake Anthropic API), the approval channel
``passkey``, a person deciding in the web console (Debian's Chromium via Playwright, a virtual authenticator).

Run A (the hook waits): ``rm -rf build/cache`` reaches an approval, the person approves in the page, the command runs in
the kernel sandbox and the ledger records it with the approver's name; ``rm -rf src`` is rejected in the page and
the model reads the person's reason. Run B (``approval.headless: defer``): ``rm -rf dist/cache`` ends the run at once
with the call deferred (``deferred_tool_use``); the person approves in the page; ``claude -p --resume`` runs it.
Runs C and D (the intent lifecycle): a session whose task fits no intent calls ``propose_intent``; accepted in the
page, its next write lands under the new intent; rejected in the page, it reads the reason and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from orchestrator.config.workspace import Workspace
from tests.approvals.signed_support import passkey_policy
from tests.browser_support import Authenticated, register
from tests.e2e.claude_cli import CliRun, make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.e2e.orch_support import REPO_ROOT, orch
from tests.waiting import TIMEOUT, wait_until
from tests.web.support import free_port, served

TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"
INTENTS = """\
active_intents:
  - id: INT-1
    name: clean up
    status: IN_PROGRESS
    owned_scope: ["src/**", "build", "build/**", "dist", "dist/**"]
"""


def request_for(ws: Workspace, command: str | None) -> str:
    """The id of the pending request for ``command`` (None: an intent proposal), once its hook filed it."""
    from orchestrator.approvals import ApprovalRequest, Broker

    def found() -> str | None:
        return next((r.id for r in Broker(ws.shared_run_dir).pending(include_decided=True)
                     if isinstance(r, ApprovalRequest) and r.command == command
                     and (command is not None or r.proposal is not None)), None)

    return wait_until(found, what=f"the approval request for {command!r}")


def item(page: Any, request_id: str) -> Any:
    selector = f"article[data-key='approval:{request_id}']"
    page.wait_for_selector(selector + " button.primary:not([disabled])", timeout=TIMEOUT * 1000)
    return page.locator(selector)


@dataclass
class Scenario:
    root: Path
    a: CliRun
    b: CliRun
    b_resumed: CliRun
    results_a: dict[str, dict]
    results_b: dict[str, dict]
    reason: str
    proposals: dict[str, tuple[CliRun, dict[str, dict]]]

    def ledger(self) -> list[dict[str, Any]]:
        text = (self.root / ".orchestration" / "agent_trace.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def record_of(self, tool_use_id: str) -> dict[str, Any]:
        found = [r for r in self.ledger() if r["metadata"]["dev.orchestrator"].get("tool_use_id") == tool_use_id]
        assert len(found) == 1, [r["metadata"]["dev.orchestrator"].get("tool_use_id") for r in self.ledger()]
        return found[0]["metadata"]["dev.orchestrator"]


def _repo(base: Path, port: int) -> Path:
    root = base / "repo"
    for d in ("src", "build/cache", "dist/cache"):
        (root / d).mkdir(parents=True)
        (root / d / "keep.txt").write_text(d + "\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    orch(root, "init")
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    (root / ".orchestration" / "policy.yaml").write_text(passkey_policy(port))
    orch(root, "install", "claude-code")
    return root


def _in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    return thread, out


@pytest.fixture(scope="module")
def scenario(claude_bin: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("console-e2e")
    port = free_port()
    root = _repo(base, port)
    ws = Workspace.at(root)
    person = Authenticated(browser)
    run = make_runner(claude_bin, base / "home")
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_TIMEOUT": "240", "ORCH_DAEMON_IDLE": "120"}
    extra = ("--mcp-config", ".mcp.json")
    reason = "do not delete the sources: clean only build/"
    select = [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")]
    try:
        register(root, port, person, "alice", timeout=TIMEOUT)
        with served(ws, port):
            page = person.page
            page.goto(f"http://localhost:{port}/")
            # Run A: the hook waits for the person
            api_a = FakeAnthropic([select,
                                   [ToolUse("Bash", {"command": "rm -rf build/cache", "description": "clean"}, id="a_rm")],
                                   [ToolUse("Bash", {"command": "rm -rf src", "description": "x"}, id="a_rm_src")],
                                   "A done"])
            with api_a:
                thread, got = _in_thread(lambda: run(root, api_a.base_url, *extra, env=env, tools=TOOLS,
                                                     timeout=300))
                item(page, request_for(ws, "rm -rf build/cache")).locator("button.primary").click()
                second = item(page, request_for(ws, "rm -rf src"))
                assert "rm -rf src" in second.inner_text()
                second.get_by_role("button", name="Reject…").click()
                second.locator("textarea").fill(reason)
                second.locator("form.reject-form button[type=submit]").click()
                thread.join(300)
            (a,) = got
            # Run B: deferred in print mode, decided in the page, resumed
            (root / ".orchestration" / "policy.yaml").write_text(
                passkey_policy(port, "  headless: defer\n  defer_seconds: 600\n"))
            api_b = FakeAnthropic([select,
                                   [ToolUse("Bash", {"command": "rm -rf dist/cache", "description": "clean"}, id="b_rm")],
                                   "B done"])
            with api_b:
                b = run(root, api_b.base_url, *extra, env=env, tools=TOOLS, timeout=300)
                assert (root / "dist" / "cache").is_dir(), "a deferred call must not run"
                deferred = item(page, request_for(ws, "rm -rf dist/cache"))
                deferred.locator("button.primary").click()
                # nobody waits on a deferred call: the decision stays until the session resumes
                expect(deferred.locator(".result")).to_contain_text("agent picks it up", timeout=TIMEOUT * 1000)
                expect(deferred.locator(".expires")).to_contain_text("waiting for the agent",
                                                                     timeout=TIMEOUT * 1000)
                resumed = run(root, api_b.base_url, *extra, "--resume", b.result["session_id"], env=env,
                              tools=TOOLS, prompt="", timeout=300)
            proposals = {case: _proposal_run(root, ws, page, run, env, case) for case in ("accept", "reject")}
            return Scenario(root, a, b, resumed, api_a.tool_results(), api_b.tool_results(), reason, proposals)
    finally:
        person.close()
        subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                       env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)), capture_output=True, timeout=30)


GUIDE = "# Guide\n"
PROPOSAL = {"name": "Write the user guide", "owned_scope": ["docs/**"], "constraints": ["no code changes"],
            "why": "the task is documentation; INT-1 owns src/, build/ and dist/ only"}


def _proposal_run(root: Path, ws: Workspace, page: Any, run: Any, env: dict[str, str],
                  case: str) -> tuple[CliRun, dict[str, dict]]:
    """A new session proposes an intent; the person accepts it (or rejects it) in the page while the CLI waits."""
    guide = str(root / "docs" / "guide.md")
    api = FakeAnthropic([
        [ToolUse("Write", {"file_path": guide, "content": GUIDE}, id="write_first")],
        [ToolUse("mcp__orchestrator__propose_intent", dict(PROPOSAL), id="propose")],
        [ToolUse("Write", {"file_path": guide, "content": GUIDE}, id="write_after")]
        if case == "accept" else "understood: nothing written",
        "done",
    ])
    with api:
        thread, got = _in_thread(lambda: run(root, api.base_url, "--mcp-config", ".mcp.json", env=env,
                                             tools=TOOLS, timeout=300))
        proposal = item(page, request_for(ws, None))
        assert "New intent: Write the user guide" in proposal.inner_text()
        if case == "accept":
            proposal.get_by_role("button", name="Accept intent").click()
        else:
            proposal.get_by_role("button", name="Reject…").click()
            proposal.locator("textarea").fill("docs are frozen until the release")
            proposal.locator("form.reject-form button[type=submit]").click()
        thread.join(300)
    (cli,) = got
    return cli, api.tool_results()


def test_an_approval_in_the_page_runs_the_command_in_the_sandbox(scenario: Scenario) -> None:
    assert scenario.a.returncode == 0, scenario.a.stderr
    assert scenario.a.result["result"] == "A done"
    assert not scenario.results_a["a_rm"]["is_error"], scenario.results_a["a_rm"]
    assert not (scenario.root / "build" / "cache").exists()
    ns = scenario.record_of("a_rm")
    assert ns["approval"]["by"] == "alice" and ns["approval"]["via"] == "passkey"
    assert ns.get("scan") is not None or ns.get("files"), ns  # recorded from the sandboxed run's changes
    assert "build/cache/keep.txt" in [f["path"] for f in ns["files"]]


def test_a_rejection_in_the_page_reaches_the_model_with_its_reason(scenario: Scenario) -> None:
    res = scenario.results_a["a_rm_src"]
    assert res["is_error"] and scenario.reason in res["content"] and "approval-rejected" in res["content"]
    assert "a_rm_src" in scenario.a.denied_ids
    assert (scenario.root / "src" / "keep.txt").exists()


def test_a_deferred_call_ends_the_run_and_runs_after_the_resume(scenario: Scenario) -> None:
    b = scenario.b.result
    assert b.get("stop_reason") == "tool_deferred", b
    assert b["deferred_tool_use"]["id"] == "b_rm" and b["deferred_tool_use"]["input"]["command"] == "rm -rf dist/cache"
    assert scenario.b_resumed.returncode == 0, scenario.b_resumed.stderr
    assert scenario.b_resumed.result["result"] == "B done"
    assert not scenario.results_b["b_rm"]["is_error"], scenario.results_b["b_rm"]
    assert not (scenario.root / "dist" / "cache").exists()
    assert scenario.record_of("b_rm")["approval"]["by"] == "alice"


def test_orch_trace_shows_who_approved(scenario: Scenario) -> None:
    out = orch(scenario.root, "trace", env={"COLUMNS": "200"}).stdout
    assert "approved by" in out and "alice" in out


def test_a_proposal_accepted_in_the_page_becomes_the_sessions_intent(scenario: Scenario) -> None:
    import yaml

    cli, results = scenario.proposals["accept"]
    assert cli.returncode == 0, cli.stderr
    assert results["write_first"]["is_error"] and "intent-required" in results["write_first"]["content"]
    assert not results["propose"]["is_error"], results["propose"]
    intents = {i["id"]: i for i in yaml.safe_load(
        (scenario.root / ".orchestration" / "active_intents.yaml").read_text())["active_intents"]}
    (new,) = [i for i in intents.values() if i["name"] == "Write the user guide"]
    assert new["status"] == "IN_PROGRESS" and new["accepted_by"] == "alice"
    assert not results["write_after"]["is_error"], results["write_after"]
    assert scenario.record_of("write_after")["intent_id"] == new["id"]


def test_a_proposal_rejected_in_the_page_writes_nothing(scenario: Scenario) -> None:
    cli, results = scenario.proposals["reject"]
    res = results["propose"]
    assert res["is_error"] and "proposal-rejected" in res["content"]
    assert "docs are frozen until the release" in res["content"]
    assert cli.result["result"] == "understood: nothing written"
