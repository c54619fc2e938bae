"""Shared fixtures for adapter tests: a real governed workspace in a tmp git repo, and documented payloads."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from orchestrator.config import workspace

FIXTURES = Path(__file__).parent / "fixtures"
DOC_ROOT = "/home/dev/project"

INTENTS = """\
active_intents:
  - id: INT-1
    name: app work
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-2
    name: later
    status: PENDING
    owned_scope: ["docs/**"]
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git repo with ``orch init`` done, two intents and ``src/app.py``."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    workspace.init(root)
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\nprint(x)\n")
    return root.resolve()


@pytest.fixture
def payload(ws: Path) -> Callable[..., dict[str, Any]]:
    """``payload(agent, name, **overrides)``: a documented payload with its paths moved into the workspace."""

    def load(agent: str, name: str, **overrides: Any) -> dict[str, Any]:
        text = (FIXTURES / agent / f"{name}.json").read_text().replace(DOC_ROOT, str(ws))
        data = json.loads(text)
        data.update(overrides)
        return data

    return load
