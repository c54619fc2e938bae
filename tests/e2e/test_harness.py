"""Proves the e2e harness itself: the real CLI, driven by the fake API, runs a scripted Write and obeys a
command hook that denies (independent of orchestrator, so a harness fault is told apart from a product fault)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse

DENY_HOOK = """\
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
if event.get("hook_event_name") == "PreToolUse" and event["tool_input"].get("file_path", "").endswith("bad.txt"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "harness says no"}}))
"""


def test_cli_runs_scripted_write_and_obeys_deny_hook(run_claude, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hook = tmp_path / "deny_hook.py"
    hook.write_text(DENY_HOOK)
    events = tmp_path / "events.jsonl"
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": f"{sys.executable} {hook} {events}"}]}]}}))

    script = [[ToolUse("Write", {"file_path": str(repo / "good.txt"), "content": "hello\n"}, id="toolu_good")],
              [ToolUse("Write", {"file_path": str(repo / "bad.txt"), "content": "bad\n"}, id="toolu_bad")],
              "all done"]
    with FakeAnthropic(script) as api:
        run = run_claude(repo, api.base_url)

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "all done"
    assert (repo / "good.txt").read_text() == "hello\n"
    assert not (repo / "bad.txt").exists()
    assert run.denied_ids == {"toolu_bad"}
    results = api.tool_results()
    assert results["toolu_bad"]["is_error"] and "harness says no" in results["toolu_bad"]["content"]
    assert not results["toolu_good"]["is_error"]
    seen = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["tool_use_id"] for e in seen] == ["toolu_good", "toolu_bad"]
    assert all(e["session_id"] == run.result["session_id"] for e in seen)
