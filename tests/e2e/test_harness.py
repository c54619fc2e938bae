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


def test_missing_cli_skips_locally_but_fails_in_ci(monkeypatch) -> None:
    import pytest

    from tests.e2e.conftest import _unavailable

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="unavailable in CI: no npm"):
        _unavailable("no npm")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no npm"):
        _unavailable("no npm")


def test_fake_api_answers_side_requests_and_non_streaming(tmp_path: Path) -> None:
    """Side requests (no tools) do not consume the script; non-stream requests get a whole message."""
    import urllib.request

    def post(url: str, body: dict) -> bytes:
        req = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.read()

    with FakeAnthropic([[ToolUse("Read", {"file_path": "a"}, id="t1")], "end"]) as api:
        side = json.loads(post(api.base_url, {"messages": [], "stream": False}))
        assert side["content"][0]["type"] == "text" and api.turns_used == 0
        whole = json.loads(post(api.base_url, {"tools": [{"name": "Read"}], "messages": [], "stream": False}))
        assert whole["stop_reason"] == "tool_use" and whole["content"][0]["id"] == "t1"
        sse = post(api.base_url, {"tools": [{"name": "Read"}], "messages": [], "stream": True}).decode()
        events = [line[len("event: "):] for line in sse.splitlines() if line.startswith("event: ")]
        assert events == ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                          "message_delta", "message_stop"]
        assert '"stop_reason": "end_turn"' in sse and api.turns_used == 2
