"""Shared fixtures: real workspaces in tmp dirs (real files, real git where needed)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from orchestrator.config import workspace
from orchestrator.engine.pipeline import Governor
from tests.browser_support import browser, person  # noqa: F401 - Chromium for the console's tests (one per module)

# The ledger signing key and the local anchors live outside every workspace (orchestrator/state/keys.py): the tests use
# a throw-away config and state directory, never the user's, inherited by every hook subprocess they start.
_KEYHOME = tempfile.mkdtemp(prefix="orch-test-home-")
os.environ.pop("ORCH_KEY_DIR", None)
os.environ["XDG_CONFIG_HOME"] = os.path.join(_KEYHOME, "config")
os.environ["XDG_STATE_HOME"] = os.path.join(_KEYHOME, "state")
# the egress proxy (orchestrator/egress/paths.py) lives in the runtime dir when there is one: the tests' proxy must
# be their own (under the state dir above), and it exits soon after the last test that used it
os.environ.pop("XDG_RUNTIME_DIR", None)
os.environ["ORCH_EGRESS_IDLE"] = "60"

INTENTS = textwrap.dedent(
    """\
    # test intents
    active_intents:
      - id: INT-001
        name: Build the API
        status: IN_PROGRESS
        owned_scope: ["src/**", "tests/*.py"]
        constraints: ["keep it small"]
        acceptance_criteria: ["tests pass"]
        created_at: 2026-01-01
        related_specs: [spec.md]
      - id: INT-002
        name: Docs
        status: PENDING
        owned_scope: ["docs/**"]
      - id: INT-003
        name: Docs now
        status: in_progress
        owned_scope: ["docs/**", "README.md"]
    """
)


def make_workspace(root: Path, intents: str = INTENTS, *, git: bool = False) -> Path:
    """A real governed workspace at ``root`` with the test intents."""
    root.mkdir(parents=True, exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    workspace.init(root)
    (root / ".orchestration" / "active_intents.yaml").write_text(intents, encoding="utf-8")
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "app.py").write_text("x = 1\nprint(x)\n", encoding="utf-8")
    (root / "docs").mkdir(exist_ok=True)
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "repo")


@pytest.fixture
def gov(ws: Path) -> Governor:
    return Governor(ws, approval_channel="deny")
