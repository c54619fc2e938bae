"""redteam3: the intent summary's ``git log -S`` (the console, the TUI, ``orch intents show``) runs no textconv.

The pickaxe compares the diffs of each commit, through the textconv driver the path's attributes name. While a
git-mode command runs, ``.git/config`` and ``.git/info/attributes`` are its (the guardian restores them only after
it): a driver it set there ran in the person's process, outside the sandbox, when they looked at an intent.
Real git repository, real git; the planted driver writes a file when it runs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.config.workspace import Workspace
from orchestrator.views import intentsummary
from tests.conftest import make_workspace

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def test_the_summary_runs_no_textconv_driver_of_the_git_dir(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo", git=True)
    ledger = root / ".orchestration" / "agent_trace.jsonl"
    ledger.write_text('{"intent_id":"INT-001"}\n')
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "first"], cwd=root, check=True)
    pwned = tmp_path / "PWNED"
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("*.jsonl diff=tidy\n")
    subprocess.run(["git", "config", "diff.tidy.textconv", f"touch {pwned}; cat"], cwd=root, check=True)
    summary = intentsummary.summarize(Workspace(root), "INT-001")
    assert not pwned.exists(), "the summary's git ran a textconv driver"
    assert len(summary.commits) == 1, summary
