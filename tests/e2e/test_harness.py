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


def _post(url: str, body: dict) -> bytes:
    import urllib.request

    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read()


def _sse_chunks(raw: bytes) -> list:
    """The ``data:`` payloads of a Chat Completions stream (``[DONE]`` kept as the string)."""
    lines = [line[len("data: "):] for line in raw.decode().splitlines() if line.startswith("data: ")]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


def test_fake_chat_streams_tool_calls_in_pieces_as_the_real_api() -> None:
    """A client that accumulates ``tool_calls`` deltas by index (as the OpenAI SDKs and @ai-sdk do) gets the scripted
    calls back whole; side requests (no tools) do not consume the script; usage follows include_usage."""
    from tests.e2e.fake_llm import FakeChat, ccall

    calls = [ccall("call_a", "create", {"path": "/r/a.txt", "file_text": "x" * 40}),
             ccall("call_b", "bash", {"command": "echo hi"})]
    with FakeChat([calls, "finished"]) as api:
        url = api.base_url + "/v1/chat/completions"
        side = json.loads(_post(url, {"model": "m", "messages": [], "stream": False}))
        assert side["choices"][0]["message"]["content"] == "ok" and api.turns_used == 0

        chunks = _sse_chunks(_post(url, {"model": "m", "tools": [{"type": "function", "function": {"name": "bash"}}],
                                         "messages": [], "stream": True,
                                         "stream_options": {"include_usage": True}}))
        assert chunks[-1] == "[DONE]" and chunks[-2]["choices"] == [] and chunks[-2]["usage"]["total_tokens"] == 20
        assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"
        assembled: dict[int, dict] = {}
        pieces = 0
        for chunk in chunks[:-2]:
            assert chunk["object"] == "chat.completion.chunk" and chunk["model"] == "m"
            for delta in chunk["choices"][0]["delta"].get("tool_calls", []):
                slot = assembled.setdefault(delta["index"], {"arguments": ""})
                slot.update({k: delta[k] for k in ("id", "type") if k in delta})
                slot.setdefault("name", delta["function"].get("name"))
                slot["arguments"] += delta["function"]["arguments"]
                pieces += bool(delta["function"]["arguments"])
        assert pieces > len(calls)  # arguments really arrive in several pieces
        assert [(s["id"], s["name"], json.loads(s["arguments"])) for s in assembled.values()] == [
            ("call_a", "create", {"path": "/r/a.txt", "file_text": "x" * 40}),
            ("call_b", "bash", {"command": "echo hi"})]

        # without include_usage the usage rides on the finishing chunk; the final text turn ends with "stop"
        body = {"model": "m", "tools": [{"type": "function", "function": {"name": "bash"}}], "stream": True,
                "messages": [{"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "hi"}]},
                             {"role": "tool", "tool_call_id": "call_a", "content": "Created"}]}
        final = _sse_chunks(_post(url, body))
        assert final[-2]["choices"][0]["finish_reason"] == "stop" and final[-2]["usage"]["prompt_tokens"] == 10
        assert "".join(c["choices"][0]["delta"].get("content") or "" for c in final[:-1]) == "finished"
        assert api.outputs() == {"call_b": "hi", "call_a": "Created"}
        assert api.offered_tools() == ["bash"] and api.turns_used == 2 and len(api.requests) == 3
        import urllib.error

        try:
            _post(api.base_url + "/v1/responses", {})
        except urllib.error.HTTPError as err:
            assert err.code == 404
        else:
            raise AssertionError("an unknown path must be a 404")


COPILOT_HOOK = """\
import json, sys
raw = sys.stdin.read()
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"event": sys.argv[2], "payload": json.loads(raw)}) + "\\n")
event = json.loads(raw)
if sys.argv[2] == "preToolUse" and event["toolArgs"].get("path", "").endswith("bad.txt"):
    print(json.dumps({"permissionDecision": "deny", "permissionDecisionReason": "harness says no"}))
elif sys.argv[2] == "preToolUse" and event["toolName"] == "bash":
    print(json.dumps({"permissionDecision": "allow",
                      "modifiedArgs": dict(event["toolArgs"], command="echo rewritten > rewritten.txt")}))
"""


def test_copilot_cli_runs_scripted_calls_and_obeys_repo_hooks(run_copilot, tmp_path: Path) -> None:
    """The real Copilot CLI against FakeChat: a create lands, a `.github/hooks` deny reaches the model as
    "Denied by preToolUse hook: …", a bash command is replaced through ``modifiedArgs``, and the hooks see the
    session id of the run."""
    from tests.e2e.fake_llm import FakeChat, ccall

    repo = tmp_path / "repo"
    (repo / ".github" / "hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hook, events = tmp_path / "hook.py", tmp_path / "events.jsonl"
    hook.write_text(COPILOT_HOOK)
    (repo / ".github" / "hooks" / "harness.json").write_text(json.dumps({"version": 1, "hooks": {
        name: [{"type": "command", "bash": f"{sys.executable} {hook} {events} {name}", "timeoutSec": 30}]
        for name in ("preToolUse", "postToolUse")}}))
    script = [[ccall("c_good", "create", {"path": str(repo / "good.txt"), "file_text": "hello\n"})],
              [ccall("c_bad", "create", {"path": str(repo / "bad.txt"), "file_text": "bad\n"})],
              [ccall("c_sh", "bash", {"command": "echo original > original.txt", "description": "write"})],
              "all done"]
    with FakeChat(script) as api:
        run = run_copilot(repo, api.base_url)

    assert run.returncode == 0, run.stderr
    assert (repo / "good.txt").read_text() == "hello\n" and not (repo / "bad.txt").exists()
    assert (repo / "rewritten.txt").read_text() == "rewritten\n" and not (repo / "original.txt").exists()
    outputs = api.outputs()
    assert outputs["c_bad"] == "Denied by preToolUse hook: harness says no"
    assert "Created file" in outputs["c_good"]
    seen = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["event"], e["payload"]["toolName"]) for e in seen] == [
        ("preToolUse", "create"), ("postToolUse", "create"), ("preToolUse", "create"),
        ("preToolUse", "bash"), ("postToolUse", "bash")]
    assert seen[-1]["payload"]["toolArgs"]["command"] == "echo rewritten > rewritten.txt"
    assert {e["payload"]["sessionId"] for e in seen} == {run.session_id}


FAILING_HOOK = """\
import json, sys
path = json.load(sys.stdin)["toolArgs"].get("path", "")
if path.endswith("exit1.txt"):
    sys.exit(1)
if path.endswith("garbage.txt"):
    print("this is not JSON")
if path.endswith("exit2.txt"):
    sys.exit(2)
if path.endswith("exit2json.txt"):
    print(json.dumps({"permissionDecision": "deny", "permissionDecisionReason": "reason on stdout"}))
    sys.exit(2)
"""


def test_copilot_cli_hook_failure_modes(run_copilot, tmp_path: Path) -> None:
    """What orchestrator's Copilot adapter is built around (docs/adapters.md, "Failure modes"): a preToolUse hook
    that exits 1 or 2 denies the call, the model reads a reason only from a JSON answer on stdout, and a hook that
    prints garbage lets the call RUN (fail open)."""
    from tests.e2e.fake_llm import FakeChat, ccall

    repo = tmp_path / "repo"
    (repo / ".github" / "hooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hook = tmp_path / "hook.py"
    hook.write_text(FAILING_HOOK)
    (repo / ".github" / "hooks" / "failing.json").write_text(json.dumps({"version": 1, "hooks": {
        "preToolUse": [{"type": "command", "bash": f"{sys.executable} {hook}", "timeoutSec": 30}]}}))
    names = ("exit1", "garbage", "exit2", "exit2json")
    script: list = [[ccall(n, "create", {"path": str(repo / f"{n}.txt"), "file_text": "x\n"})] for n in names]
    with FakeChat([*script, "done"]) as api:
        run = run_copilot(repo, api.base_url)
    assert run.returncode == 0, run.stderr
    out = api.outputs()
    assert out["exit1"].startswith("Denied by preToolUse hook") and not (repo / "exit1.txt").exists()
    assert out["exit2"] == "Denied by preToolUse hook: hook exited with code 2" and not (repo / "exit2.txt").exists()
    assert out["exit2json"] == "Denied by preToolUse hook: reason on stdout"
    assert (repo / "garbage.txt").exists()  # fail open: why orchestrator always answers JSON or nothing
