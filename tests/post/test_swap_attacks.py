"""Issue 28, finding 1: the post-hook's symlink-swap restore must never write what the agent chose, where the agent
chose. Through the real pipeline (Claude Code's hook events into ``run_hook``, in-process: no daemon involved), with
the swapping process run as a sandboxed command the hook allowed (the real Landlock launcher), as in the red team's
cases: a background command waits for the host's next write of ``src/x.py`` and replaces the file with a symlink to
``README.md``, ``.git/config`` or ``.claude/settings.json``; the post-hook then sees a swap.

Before the fix, the "restore" wrote the tool's ``originalFile`` (content the agent wrote earlier) through the link,
and a Write of type ``create`` deleted the link's target. Now restores use only the engine's own captures, never
follow a link at any component, and leave a path outside the scope alone: the swap is reported, nothing is
written there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, unwrap
from tests.conftest import make_workspace
from tests.e2e.orch_support import INTENTS

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")

SESSION = "5b0c6d2e-1f7a-4c1e-9a53-0e1f2a3b4c5d"
README = "# project\n\nthe person's readme\n"
GIT_CONFIG_PAYLOAD = "[core]\n\tfsmonitor = touch /tmp/orch-pwned\n"
SETTINGS_PAYLOAD = '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}}\n'

#: the background command: tells the test it is ready, waits for the word "go" (sent once the host wrote the file),
#: then replaces the file by a symlink and says so
SWAPPER = """\
import os, sys
path, target = sys.argv[1], sys.argv[2]
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
os.unlink(path)
os.symlink(target, path)
print("swapped", flush=True)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "project", INTENTS, git=True)
    (root / "src" / "swapper.py").write_text(SWAPPER)
    (root / "README.md").write_text(README)
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    return root.resolve()


def hook(ws: Path, event: dict[str, Any]) -> Any:
    event = {"session_id": SESSION, "cwd": str(ws), "transcript_path": None, **event}
    return run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(ws), "ORCH_APPROVAL_CHANNEL": "deny"})


def pre(ws: Path, tool: str, tool_input: dict[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    result = hook(ws, {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
                       "tool_use_id": tool_use_id})
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"] if result.stdout else None


def post(ws: Path, tool: str, tool_input: dict[str, Any], response: dict[str, Any], tool_use_id: str) -> Any:
    return hook(ws, {"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": tool_input,
                     "tool_response": response, "tool_use_id": tool_use_id})


def write(ws: Path, rel: str, content: str, tool_use_id: str, *, original: str | None) -> None:
    """A whole Write as Claude Code makes it: pre-hook, the host's own write, post-hook."""
    tool_input = {"file_path": str(ws / rel), "content": content}
    answer = pre(ws, "Write", tool_input, tool_use_id)
    assert answer is None or answer.get("permissionDecision") == "allow", answer
    (ws / rel).write_text(content)
    post(ws, "Write", tool_input, _response(ws, rel, content, original), tool_use_id)


def _response(ws: Path, rel: str, content: str, original: str | None) -> dict[str, Any]:
    return {"type": "create" if original is None else "update", "filePath": str(ws / rel), "content": content,
            "structuredPatch": [], "originalFile": original, "userModified": False}


def start_swapper(ws: Path, rel: str, target: str) -> subprocess.Popen:
    """The background command, as the agent would start it: a Bash call the hook allows, run in the sandbox."""
    command = f"{sys.executable} src/swapper.py {rel} {target}"
    answer = pre(ws, "Bash", {"command": command, "description": "watch"}, "toolu_bg")
    assert answer is not None and answer["permissionDecision"] == "allow", answer
    wrapped = answer["updatedInput"]["command"]
    assert unwrap(wrapped) == command  # really the sandboxed form
    proc = subprocess.Popen(["/bin/bash", "-c", wrapped], cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stderr
    return proc


def swap_now(proc: subprocess.Popen) -> None:
    out, err = proc.communicate("go\n", timeout=60)
    assert proc.returncode == 0 and out.strip().endswith("swapped"), err


def select(ws: Path) -> None:
    answer = pre(ws, "mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, "toolu_sel")
    assert answer is None, answer


def last_record(ws: Path) -> dict[str, Any]:
    lines = (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
    return json.loads(lines[-1])


TARGETS = {
    "README.md": ("../README.md", "README.md", "x = 'a payload'\n"),
    ".git/config": ("../.git/config", ".git/config", GIT_CONFIG_PAYLOAD),
    ".claude/settings.json": ("../.claude/settings.json", ".claude/settings.json", SETTINGS_PAYLOAD),
}


@pytest.mark.parametrize("name", list(TARGETS))
def test_write_then_swap_does_not_restore_the_agents_content_through_the_link(ws: Path, name: str) -> None:
    link, victim, payload = TARGETS[name]
    before = (ws / victim).read_bytes()
    select(ws)
    write(ws, "src/x.py", payload, "toolu_1", original=None)  # the payload, written where the scope allows it
    proc = start_swapper(ws, "src/x.py", link)
    tool_input = {"file_path": str(ws / "src/x.py"), "content": "x = 2\n"}
    assert pre(ws, "Write", tool_input, "toolu_2") is None
    (ws / "src" / "x.py").write_text("x = 2\n")  # the host's write; then the background command swaps the file
    swap_now(proc)
    result = post(ws, "Write", tool_input, _response(ws, "src/x.py", "x = 2\n", payload), "toolu_2")
    assert (ws / victim).read_bytes() == before, f"{victim} was overwritten by the post-hook"
    # reported: the record flags the swap and the hook's answer warns
    ns = last_record(ws)["metadata"]["dev.orchestrator"]
    assert ns["swapped"][0]["written"] == victim and not ns["swapped"][0]["restored"]
    assert "symlink-swap" in result.stdout


def test_create_then_swap_does_not_delete_the_links_target(ws: Path) -> None:
    select(ws)
    proc = start_swapper(ws, "src/new.py", "../README.md")
    tool_input = {"file_path": str(ws / "src/new.py"), "content": "y = 1\n"}
    assert pre(ws, "Write", tool_input, "toolu_3") is None
    (ws / "src" / "new.py").write_text("y = 1\n")
    swap_now(proc)
    post(ws, "Write", tool_input, _response(ws, "src/new.py", "y = 1\n", None), "toolu_3")
    assert (ws / "README.md").read_text() == README, "README.md was deleted (or changed) by the post-hook"
    # the allowed path was captured as absent: the swapped-in link goes, nothing else does
    assert not os.path.lexists(ws / "src" / "new.py")


def test_edit_then_swap_does_not_restore_the_agents_content_through_the_link(ws: Path) -> None:
    select(ws)
    write(ws, "src/x.py", GIT_CONFIG_PAYLOAD, "toolu_4", original=None)
    before = (ws / ".git" / "config").read_bytes()
    proc = start_swapper(ws, "src/x.py", "../.git/config")
    tool_input = {"file_path": str(ws / "src/x.py"), "old_string": "touch", "new_string": "true ||"}
    assert pre(ws, "Edit", tool_input, "toolu_5") is None
    (ws / "src" / "x.py").write_text(GIT_CONFIG_PAYLOAD.replace("touch", "true ||"))
    swap_now(proc)
    post(ws, "Edit", tool_input, {"filePath": str(ws / "src/x.py"), "oldString": "touch", "newString": "true ||",
                                  "originalFile": GIT_CONFIG_PAYLOAD, "structuredPatch": [], "userModified": False,
                                  "replaceAll": False}, "toolu_5")
    assert (ws / ".git" / "config").read_bytes() == before, ".git/config was overwritten by the post-hook"
