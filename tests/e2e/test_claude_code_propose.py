"""End to end with the REAL Claude Code CLI (pinned): an agent whose task fits no intent calls
``mcp__orchestrator__propose_intent``; a person decides while the CLI waits.

Accepted (edited: the person adds a glob), the next in-scope write lands under the new intent and is recorded with
it; rejected, the model reads the person's reason and writes nothing. The person decides through the CLI
(``orch intents accept`` / ``reject``), from a thread of this test, once the proposal is in the broker — what
``orch tui`` and the web console write too. Runs: two ``claude -p`` sessions, one daemon.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.approvals import Broker
from orchestrator.config.workspace import Workspace
from tests.e2e.claude_cli import CliRun, make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.e2e.orch_support import REPO_ROOT, app_repo, orch
from tests.waiting import wait_until

TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"
PROPOSE = "mcp__orchestrator__propose_intent"
GUIDE = "# Guide\n\nHow to run the app.\n"


@dataclass
class Run:
    cli: CliRun
    results: dict[str, dict]
    decided: dict[str, Any]


def _person(root: Path, verb: list[str], decided: dict[str, Any]) -> threading.Thread:
    """A person at the machine: waits for the proposal to reach the broker, then decides it with the CLI."""
    broker = Broker(Workspace.at(root).shared_run_dir)

    def decide() -> None:
        request = wait_until(lambda: [r for r in broker.pending() if getattr(r, "proposal", None)],
                             what="the agent's proposal in the broker", timeout=120)[0]
        decided["request"] = request
        decided["proc"] = orch(root, "intents", verb[0], request.id, *verb[1:], check=False)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def scenario(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("e2e-propose")
    root = app_repo(base)
    run = make_runner(claude_bin, base / "home")
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_TIMEOUT": "150", "ORCH_DAEMON_IDLE": "60"}
    extra = ("--mcp-config", ".mcp.json")
    guide = str(root / "docs" / "guide.md")
    proposal = {"name": "Write the user guide", "owned_scope": ["docs/**"],
                "constraints": ["no code changes"], "why": "the task is documentation; INT-1 owns only src/**"}
    runs: dict[str, Run] = {}
    try:
        for case, verb in (("accept", ["accept", "--add-scope", "README.md"]),
                           ("reject", ["reject", "--reason", "docs are frozen until the release"])):
            api = FakeAnthropic([
                [ToolUse("Write", {"file_path": guide, "content": GUIDE}, id="write_first")],
                [ToolUse(PROPOSE, proposal, id="propose")],
                [ToolUse("Write", {"file_path": guide, "content": GUIDE}, id="write_after")]
                if case == "accept" else "understood: nothing written",
                "done",
            ])
            decided: dict[str, Any] = {}
            person = _person(root, verb, decided)
            with api:
                cli = run(root, api.base_url, *extra, env=env, tools=TOOLS, timeout=300)
            person.join(timeout=60)
            assert cli.returncode == 0, cli.stderr
            runs[case] = Run(cli, api.tool_results(), decided)
            if case == "accept":
                (root / "docs" / "guide.md").unlink(missing_ok=True)  # the rejected run must not find it there
                subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
                subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                                "-qm", "the guide"], check=True)
    finally:
        subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--stop", "-C", str(root)],
                       env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30)
    return {"root": root, "runs": runs}


def _intents(root: Path) -> dict[str, dict]:
    data = yaml.safe_load((root / ".orchestration" / "active_intents.yaml").read_text())
    return {i["id"]: i for i in data["active_intents"]}


def test_the_first_write_fits_no_intent_and_is_refused(scenario: dict[str, Any]) -> None:
    for run in scenario["runs"].values():
        res = run.results["write_first"]
        assert res["is_error"] and "intent-required" in res["content"], res


def test_accepted_the_intent_is_in_progress_selected_and_its_write_is_recorded(scenario: dict[str, Any]) -> None:
    run, root = scenario["runs"]["accept"], scenario["root"]
    assert run.decided["proc"].returncode == 0, run.decided["proc"].stderr
    res = run.results["propose"]
    assert not res["is_error"], res
    assert "intent INT-2 is IN_PROGRESS and selected for this session" in res["content"]
    assert '<intent_context id="INT-2"' in res["content"] and "README.md" in res["content"]
    new = _intents(root)["INT-2"]
    assert new["status"] == "IN_PROGRESS" and new["owned_scope"] == ["docs/**", "README.md"]
    assert new["proposal"] == run.decided["request"].id and new["accepted_by"] == "cli"
    assert "claude-code" in new["proposed_by"]
    assert not run.results["write_after"]["is_error"], run.results["write_after"]
    ledger = [json.loads(x) for x in (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    guide = [r for r in ledger if r["files"][0]["path"] == "docs/guide.md"]
    assert guide and guide[-1]["metadata"]["dev.orchestrator"]["intent_id"] == "INT-2"
    summary = json.loads(orch(root, "intents", "show", "INT-2", "--json").stdout)
    assert summary["records"] == 1 and "docs/guide.md" in summary["files"]
    assert len(summary["commits"]) == 1 and summary["commits"][0]["subject"] == "the guide"


def test_rejected_the_model_reads_the_reason_and_nothing_is_written(scenario: dict[str, Any]) -> None:
    run, root = scenario["runs"]["reject"], scenario["root"]
    assert run.decided["proc"].returncode == 0, run.decided["proc"].stderr
    res = run.results["propose"]
    assert res["is_error"] and "proposal-rejected" in res["content"]
    assert "docs are frozen until the release" in res["content"]
    assert "propose" in run.cli.denied_ids
    assert set(_intents(root)) == {"INT-1", "INT-2"}  # no third intent
    assert not (root / "docs" / "guide.md").exists()
    assert run.cli.result["result"] == "understood: nothing written"
