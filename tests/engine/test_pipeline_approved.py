"""``Governor.pre(call, approved=True)``: skips only the approval hook (added for the loop's approver)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import workspace
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

INTENTS = """\
active_intents:
  - id: "INT-1"
    name: "build"
    status: "IN_PROGRESS"
    owned_scope: ["build/**"]
"""


@pytest.fixture
def gov(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Governor:
    monkeypatch.delenv("ORCH_APPROVAL_CHANNEL", raising=False)
    (tmp_path / "build").mkdir()
    (tmp_path / "src").mkdir()
    workspace.init(tmp_path)
    (tmp_path / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    g = Governor(tmp_path)
    g.select_intent("INT-1", "s")
    return g


def test_approved_skips_the_approval_hook_only(gov: Governor) -> None:
    call = to_call("run_command", {"command": "rm -rf build/*"}, session_id="s", cwd=gov.root)
    assert gov.pre(call).decision == "ask"
    assert gov.pre(call, approved=True).allowed


def test_approved_does_not_bypass_scope(gov: Governor) -> None:
    call = to_call("run_command", {"command": "rm -rf src/"}, session_id="s", cwd=gov.root)
    verdict = gov.pre(call, approved=True)
    assert verdict.decision == "deny" and verdict.error["type"] == "scope-violation"
