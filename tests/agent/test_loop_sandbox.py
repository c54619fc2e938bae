"""The reference loop runs shell commands it cannot vouch for in the Landlock sandbox, without asking anyone."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.agent import AgentLoop
from orchestrator.agent.providers.scripted import ScriptedProvider
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def test_script_runs_unasked_and_cannot_write_outside_the_scope(gov: Governor, ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  writable: ['{tmp}']\n")
    (ws / "src" / "gen.py").write_text("open('src/out.txt', 'w').write('in')\nopen('docs.txt', 'w').write('out')\n")
    script = """
- tool_calls: [{name: select_active_intent, input: {intent_id: INT-1}}]
- tool_calls: [{name: run_command, input: {command: "python3 src/gen.py"}}]
- answer: done
"""
    asked: list = []
    result = AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1", approver=asked.append).run("gen")
    assert asked == []
    run = result.calls[-1]
    assert run.decision == "allow" and run.is_error  # it ran, and failed on the write outside the scope
    assert "Permission denied" in run.content
    assert (ws / "src" / "out.txt").read_text() == "in"
    assert not (ws / "docs.txt").exists()
