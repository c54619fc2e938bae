"""Fixtures for the sandbox tests: a governed git workspace, and running a call the way an agent host would."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock
from orchestrator.engine.tools import to_call
from tests.conftest import make_workspace

needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")

INTENTS = textwrap.dedent(
    """\
    active_intents:
      - id: INT-001
        name: Build the API
        status: IN_PROGRESS
        owned_scope: ["src/**", "tests/**", "build/**", "Makefile"]
      - id: INT-ALL
        name: Everything
        status: IN_PROGRESS
        owned_scope: ["**"]
    """
)

#: a policy without /tmp: "outside the scope" then really means nowhere else (the workspace lives in /tmp)
STRICT_POLICY = "version: 1\nsandbox:\n  writable: ['{tmp}', .pytest_cache]\n"


@pytest.fixture
def sws(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path / "repo", INTENTS, git=True)
    (ws / ".orchestration" / "policy.yaml").write_text(STRICT_POLICY)
    (ws / "outside").mkdir()
    (ws / "outside" / "keep.txt").write_text("keep\n")
    return ws


class Host:
    """Runs shell commands like an agent host that supports sandboxing (Claude Code): pre, run what it says, post."""

    def __init__(self, ws: Path, intent: str = "INT-001", channel: str = "deny") -> None:
        self.ws = ws
        self.gov = Governor(ws, approval_channel=channel)
        self.gov.select_intent(intent, "s")

    def pre(self, command: str, **kw: Any) -> Any:
        return self.gov.pre(to_call("Bash", {"command": command}, session_id="s", agent="claude-code",
                                    cwd=str(self.ws)), **kw)

    def run(self, command: str, *, sandbox: bool = True, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        verdict = self.pre(command, sandbox=sandbox)
        assert verdict.allowed, verdict
        actual = verdict.command or command
        proc = subprocess.run(["/bin/bash", "-c", actual], cwd=self.ws, capture_output=True, text=True, timeout=120,
                              env={**os.environ, **(env or {})})
        proc.verdict = verdict  # type: ignore[attr-defined]
        return proc
