from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import workspace
from orchestrator.engine.pipeline import Governor

INTENTS = """\
active_intents:
  - id: "INT-1"
    name: "Work on src"
    status: "IN_PROGRESS"
    owned_scope: ["src/**", "build/**"]
  - id: "INT-2"
    name: "Later"
    status: "PENDING"
    owned_scope: ["docs/**"]
"""


@pytest.fixture(autouse=True)
def _no_channel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # the stories below rely on the policy's default channel (agent-ask)
    monkeypatch.delenv("ORCH_APPROVAL_CHANNEL", raising=False)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("generated\n", encoding="utf-8")
    (root / "README.md").write_text("# repo\n", encoding="utf-8")
    workspace.init(root)
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS, encoding="utf-8")
    return root


@pytest.fixture
def gov(ws: Path) -> Governor:
    return Governor(ws)
