"""redteam3: while a git-mode command runs, the engine's own git runs none of what it planted in the git dir.

A command that runs git — or code the analyzer cannot see into: ``python3 src/plant.py`` — has the git dir writable
while it runs; its guardian puts ``.git/config`` back only after it. As found: such a command (here left running,
as an agent's background shell) set a clean filter in ``.git/config`` and matched it with a ``.gitattributes`` in
its scope; the agent's next Bash call — any call whose change scan covers the workspace — ran ``git status`` in the
hook, outside the sandbox, and git ran the filter with the person's full rights (a file written where no sandboxed
command may write). The engine now runs no git while a git-mode command of the repository holds its lock
(:mod:`orchestrator.vcs.gitlock`); the scan walks the workspace instead and still sees every change.

Real hooks on a real workspace, the attacker's command as the hook allowed it (wrapped, through the launcher).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock
from tests.conftest import make_workspace

#: an intent that owns the whole workspace: each sandboxed command's change scan covers all of it (git status)
INTENTS = "active_intents:\n  - id: INT-1\n    name: everything\n    status: IN_PROGRESS\n    owned_scope: ['**']\n"
SESSION = "6c1d4e2f-3b2e-4d8f-a021-4f3e2d1c0b98"
#: the attacker: a clean filter for *.py of its scope, planted in .git/config; a tracked file changed so that the
#: next `git status` hashes it (through the filter); then it keeps running until its stdin closes
PLANT = r"""
import os, sys
pwned = sys.argv[1]
with open('.git/config', 'a') as fh:
    fh.write('[filter "tidy"]\n\tclean = "touch %s; cat"\n' % pwned)
open('src/.gitattributes', 'w').write('*.py filter=tidy\n')
os.utime('src/app.py', (1, 1))  # same size, stat changed: git status hashes it again
print('planted', flush=True)
sys.stdin.read()
"""
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def hook(root: Path, event: dict[str, Any]) -> Any:
    event = {"cwd": str(root), "transcript_path": None, "session_id": SESSION, **event}
    return run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(root), "ORCH_APPROVAL_CHANNEL": "deny"})


def wrapped(root: Path, command: str, tool_use_id: str) -> str:
    out = json.loads(hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": tool_use_id, "tool_name": "Bash",
                                 "tool_input": {"command": command}}).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow", out
    return out["updatedInput"]["command"]


@needs_landlock
def test_a_filter_planted_by_a_running_git_mode_command_never_runs_in_the_hook(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project", INTENTS, git=True).resolve()
    (root / "src" / "plant.py").write_text(PLANT)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"], cwd=root,
                   check=True)
    pwned = root / ".orchestration" / "PWNED"  # governance: no sandboxed command (nor its filter) may write here
    hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_sel", "tool_input": {"intent_id": "INT-1"},
                "tool_name": "mcp__orchestrator__select_active_intent"})
    command = wrapped(root, f"python3 src/plant.py {pwned}", "toolu_plant")
    assert "--git" in command or "orch-sandbox" in command
    holder = subprocess.Popen(["/bin/bash", "-c", command], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "planted\n", holder.stderr
        assert "tidy" in (root / ".git" / "config").read_text()  # the command's, while it runs
        # the agent's next call, while the first one still runs: its hooks scan the workspace for changes
        second = wrapped(root, "echo hi > src/note.txt", "toolu_next")
        done = subprocess.run(["/bin/bash", "-c", second], cwd=root, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        post = hook(root, {"hook_event_name": "PostToolUse", "tool_use_id": "toolu_next", "tool_name": "Bash",
                           "tool_input": {"command": "echo hi > src/note.txt"},
                           "tool_response": {"stdout": "", "stderr": ""}})
        assert post.exit_code == 0, post.stderr
        assert not pwned.exists(), "the hook's git ran the command's clean filter outside the sandbox"
        # the scan walked the workspace instead: the call's change is recorded all the same
        assert "src/note.txt" in (root / ".orchestration" / "agent_trace.jsonl").read_text()
    finally:
        holder.communicate(input="", timeout=60)
    assert "tidy" not in (root / ".git" / "config").read_text()  # put back by the guardian
    assert not pwned.exists()


@needs_landlock
@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_index_flag_set_by_a_command_hides_no_later_change_from_the_ledger(tmp_path: Path, flag: str) -> None:
    """A git-mode command marks a tracked file assume-unchanged (or skip-worktree): git then trusts its index entry
    and ``git status`` never looks at the file again. As found, a later write to it was in no ledger record (nor in
    the person's ``git diff``). The scan watches such entries itself."""
    root = make_workspace(tmp_path / "project", INTENTS, git=True).resolve()
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"], cwd=root,
                   check=True)
    hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_sel", "tool_input": {"intent_id": "INT-1"},
                "tool_name": "mcp__orchestrator__select_active_intent"})
    for n, command in enumerate([f"git update-index {flag} src/app.py",
                                 "python3 -c \"open('src/app.py', 'a').write('y = 2\\n')\""]):
        done = subprocess.run(["/bin/bash", "-c", wrapped(root, command, f"toolu_{n}")], cwd=root,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        hook(root, {"hook_event_name": "PostToolUse", "tool_use_id": f"toolu_{n}", "tool_name": "Bash",
                    "tool_input": {"command": command}, "tool_response": {"stdout": "", "stderr": ""}})
    assert (root / "src" / "app.py").read_text().endswith("y = 2\n")
    records = (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
    assert any('"src/app.py"' in line and "toolu_1" in line for line in records), records
