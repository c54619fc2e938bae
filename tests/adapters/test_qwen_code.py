"""The Qwen Code adapter on the payloads Qwen Code 0.24.4 really sent (tests/data/qwen-code/hooks.jsonl, captured by
tests/data/capture_hosts.py), through the fail-closed boundary ``run_hook`` as the hook client calls it, in a real
governed workspace: intents, scope, the ledger, the shell analysis without a sandbox Qwen could run (PreToolUse
ignores ``updatedInput``), the sandbox through PermissionRequest, and payloads mutated into shapes no Qwen version
sent (refused with a structured error naming the agent and the field, never allowed)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters import qwen_code
from orchestrator.adapters.base import run_hook
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock, unwrap
from orchestrator.engine.tools import to_call

DATA = Path(__file__).resolve().parents[1] / "data" / "qwen-code" / "hooks.jsonl"
DOC_ROOT = "/home/dev/project"


def captured(ws: Path) -> list[dict[str, Any]]:
    """The captured events, their paths moved into ``ws``."""
    return [json.loads(line.replace(DOC_ROOT, str(ws)))["event"] for line in DATA.read_text().splitlines() if line]


def find(events: list[dict[str, Any]], name: str, tool: str | None = None, **tool_input: Any) -> dict[str, Any]:
    for event in events:
        if event["hook_event_name"] == name and (tool is None or event.get("tool_name") == tool) and \
                all(event.get("tool_input", {}).get(k) == v for k, v in tool_input.items()):
            return copy.deepcopy(event)
    raise AssertionError(f"no captured {name} {tool} {tool_input}")


def hook(event: dict[str, Any], **env: str) -> tuple[int, dict[str, Any] | None, str]:
    result = run_hook("qwen-code", json.dumps(event), env=env)
    return result.exit_code, json.loads(result.stdout) if result.stdout else None, result.stderr


def decision(answer: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(permissionDecision, the structured error) of a PreToolUse answer."""
    assert answer is not None
    out = answer["hookSpecificOutput"]
    reason = out["permissionDecisionReason"]
    return out["permissionDecision"], json.loads(reason[reason.index("{"):])


def select(ws: Path, events: list[dict[str, Any]]) -> str:
    event = find(events, "PreToolUse", qwen_code.SELECT_TOOL)
    assert hook(event) == (0, None, "")
    return event["session_id"]


def records(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_registry_knows_every_tool_qwen_offers() -> None:
    offered = {"write_file": Kind.WRITE, "edit": Kind.EDIT, "read_file": Kind.READ, "run_shell_command": Kind.EXEC,
               "glob": Kind.META, "grep_search": Kind.META, "tool_search": Kind.META, "agent": Kind.META,
               "skill": Kind.META, "list_agents": Kind.META, "get_goal": Kind.META, "update_goal": Kind.META,
               "notebook_edit": Kind.EDIT, "web_fetch": Kind.META, qwen_code.SELECT_TOOL: Kind.META}
    for tool, kind in offered.items():
        assert to_call(tool, {}).kind is kind, tool
    assert to_call("edit", {"file_path": "/p/a.py"}).paths == ["/p/a.py"]
    assert to_call("tool_call", {}).kind is Kind.UNKNOWN  # the hooks see the resolved tool; never silently safe


def test_write_before_intent_refused_then_selected_written_and_recorded(ws: Path) -> None:
    events = captured(ws)
    write = find(events, "PreToolUse", "write_file")
    code, answer, _ = hook(write)
    assert code == 0 and decision(answer)[0] == "deny" and decision(answer)[1]["type"] == "intent-required"
    session = select(ws, events)
    assert Governor(ws).sessions.get(session)["intent_id"] == "INT-1"
    assert hook(write) == (0, None, "")
    (ws / "src" / "new.py").write_text("a = 1\n")  # what write_file did
    assert hook(find(events, "PostToolUse", "write_file")) == (0, None, "")
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert record["files"][0]["path"] == "src/new.py" and meta["agent"] == "qwen-code"
    assert meta["session_id"] == session and meta["tool_use_id"] == write["tool_use_id"]
    assert meta["files"][0]["op"] == "create"  # originalContent "" is not taken for an empty pre-image


def test_edit_records_the_changed_line_and_a_failed_edit_nothing(ws: Path) -> None:
    events = captured(ws)
    select(ws, events)
    assert hook(find(events, "PreToolUse", "edit", old_string="x = 1")) == (0, None, "")
    (ws / "src" / "app.py").write_text("x = 2\nprint(x)\n")
    assert hook(find(events, "PostToolUse", "edit", old_string="x = 1")) == (0, None, "")
    assert hook(find(events, "PreToolUse", "edit", old_string="nope")) == (0, None, "")
    assert hook(find(events, "PostToolUseFailure", "edit", old_string="nope")) == (0, None, "")
    [record] = records(ws)
    ranges = record["files"][0]["conversations"][0]["ranges"]
    assert [(r["start_line"], r["end_line"]) for r in ranges] == [(1, 1)]


def test_shell_directory_is_the_commands_cwd_and_a_vouched_write_runs_plain(ws: Path) -> None:
    events = captured(ws)
    shell = find(events, "PreToolUse", "run_shell_command")  # echo z > other.txt, directory src
    assert qwen_code.call_of(shell).cwd == str(ws / "src")
    select(ws, events)
    assert hook(shell) == (0, None, "")  # fully analysed, in scope: nothing for a sandbox to hold
    (ws / "src" / "other.txt").write_text("z\n")
    assert hook(find(events, "PostToolUse", "run_shell_command")) == (0, None, "")
    assert records(ws)[-1]["files"][0]["path"] == "src/other.txt"


def test_shell_escape_through_the_directory_and_a_redirect_out_of_scope_are_refused(ws: Path) -> None:
    events = captured(ws)
    select(ws, events)
    shell = find(events, "PreToolUse", "run_shell_command")
    shell["tool_input"]["directory"] = str(ws.parent)
    assert decision(hook(shell)[1])[1]["type"] == "path-outside-workspace"
    shell["tool_input"].update(directory=str(ws), command="echo h > README.md")
    assert decision(hook(shell)[1])[1]["type"] == "scope-violation"


@pytest.mark.parametrize("channel, expected", [("deny", "deny"), ("agent-ask", "ask"), ("allow", "ask")])
def test_a_command_the_analyzer_cannot_vouch_for_is_never_run_unsandboxed_silently(
        ws: Path, channel: str, expected: str) -> None:
    """PreToolUse cannot hand Qwen a sandboxed command: the channel decides, and ``allow`` (which trusts the kernel
    sandbox) asks here instead of letting it run unsandboxed."""
    events = captured(ws)
    select(ws, events)
    shell = find(events, "PreToolUse", "run_shell_command")
    shell["tool_input"]["command"] = "python3 -c \"open('README.md', 'w').write('x')\""
    code, answer, _ = hook(shell, ORCH_APPROVAL_CHANNEL=channel)
    verdict, error = decision(answer)
    assert code == 0 and verdict == expected, answer
    assert error["type"] in ("approval-denied", "approval-required")
    assert not Governor(ws).sessions.get(shell["session_id"]).get("leases")


def test_allowlisted_commands_are_a_persons_word_under_allow(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text("approval:\n  channel: allow\n  allow_commands: ['make test']\n")
    events = captured(ws)
    select(ws, events)
    shell = find(events, "PreToolUse", "run_shell_command")
    shell["tool_input"]["command"] = "make test"
    assert hook(shell) == (0, None, "")


def test_permission_request_hands_qwen_the_sandboxed_command_and_pre_tool_use_checks_it(ws: Path) -> None:
    if landlock.abi() < 1:
        pytest.skip("no Landlock on this kernel: nothing is wrapped")
    events = captured(ws)
    select(ws, events)
    request = find(events, "PermissionRequest", "run_shell_command")  # echo p > src/p.txt
    request["tool_input"]["command"] = "python3 src/tool.py"
    code, answer, _ = hook(request)
    assert code == 0 and answer is not None
    decided = answer["hookSpecificOutput"]["decision"]
    assert decided["behavior"] == "allow" and unwrap(decided["updatedInput"]["command"]) == "python3 src/tool.py"
    pre = find(events, "PreToolUse", "run_shell_command")
    pre["session_id"] = request["session_id"]
    pre["tool_input"] = decided["updatedInput"]
    assert hook(pre) == (0, None, "")  # the launcher line orchestrator issued to this session: allowed, once
    assert decision(hook(pre)[1])[1]["type"] == "sandbox-mismatch"
    forged = decided["updatedInput"]["command"].replace("python3 src/tool.py", "rm -rf src")
    pre["tool_input"] = {"command": forged}
    verdict, error = decision(hook(pre)[1])
    assert verdict in ("deny", "ask") and error["type"] != "internal-error"
    # a launcher line issued to another session is not this session's
    assert hook({**request, "session_id": "other"})[0] == 0  # no intent there: not wrapped, nothing issued
    pre["tool_input"] = decided["updatedInput"]
    assert decision(hook({**pre, "session_id": "other"})[1])[1]["type"] in ("intent-required", "sandbox-mismatch")
    # the sandboxed command's post records the command the model asked for
    decided = hook(request)[1]["hookSpecificOutput"]["decision"]
    pre["tool_input"] = decided["updatedInput"]
    assert hook(pre) == (0, None, "")
    (ws / "src" / "tool.py").write_text("t = 1\n")
    post = find(events, "PostToolUse", "run_shell_command")
    post.update(session_id=request["session_id"], tool_use_id=pre["tool_use_id"], tool_input=decided["updatedInput"])
    assert hook(post)[0] == 0
    text = (ws / ".orchestration" / "agent_trace.jsonl").read_text()
    assert "orch-sandbox" not in text


def test_permission_request_refuses_and_leaves_other_tools_to_qwen(ws: Path) -> None:
    events = captured(ws)
    request = find(events, "PermissionRequest", "run_shell_command")
    request["tool_input"]["command"] = "echo h > README.md"
    answer = hook(request)[1]
    assert answer is not None and answer["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    request["tool_name"] = "write_file"
    request["tool_input"] = {"file_path": str(ws / "src" / "x.py"), "content": "x"}
    assert hook(request) == (0, {}, "")


def test_context_names_qwens_handshake_and_files(ws: Path) -> None:
    events = captured(ws)
    answer = hook(find(events, "SessionStart"))[1]
    assert answer is not None
    text = answer["hookSpecificOutput"]["additionalContext"]
    assert "mcp__orchestrator__select_active_intent" in text and ".qwen/" in text and "INT-1" in text
    assert hook(find(events, "Stop")) == (0, None, "")


def _mutations(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """Captured events bent into shapes no Qwen Code version sent: (label, event, the field a refusal names)."""
    pre = find(events, "PreToolUse", "write_file")
    shell = find(events, "PreToolUse", "run_shell_command")
    out: list[tuple[str, dict[str, Any], str]] = []
    for key in ("tool_name", "tool_input", "session_id", "cwd", "tool_use_id", "hook_event_name"):
        e = copy.deepcopy(pre)
        del e[key]
        out.append((f"no {key}", e, key))
    out.append(("tool_input a list", {**pre, "tool_input": [pre["tool_input"]]}, "tool_input"))
    out.append(("tool_name a number", {**pre, "tool_name": 7}, "tool_name"))
    out.append(("renamed event", {**pre, "hook_event_name": "BeforeToolUse"}, "hook_event_name"))
    out.append(("command a list", {**shell, "tool_input": {"command": ["echo", "x"]}}, "command"))
    out.append(("directory a list", {**shell, "tool_input": {**shell["tool_input"], "directory": ["src"]}},
                "directory"))
    post = find(events, "PostToolUse", "write_file")
    del post["tool_input"]
    out.append(("post without tool_input", post, "tool_input"))
    return out


def test_malformed_payloads_are_refused_naming_the_agent_and_the_field(ws: Path) -> None:
    events = captured(ws)
    select(ws, events)
    for label, event, missing in _mutations(events):
        code, answer, err = hook(event)
        assert code == 2 and answer is None, label  # exit 2: Qwen blocks and hands the model stderr
        error = json.loads(err[err.index("{"):])
        assert error["type"] == "malformed-call" and error["agent"] == "qwen-code", label
        assert error["missing"] == missing, (label, error)
        assert not err.lstrip().startswith("{"), label  # Qwen would parse JSON on stderr as a (decisionless) answer
    assert not (ws / ".orchestration" / "agent_trace.jsonl").read_text().strip()


def test_a_shell_command_that_exited_non_zero_is_recorded(ws: Path) -> None:
    """Qwen fires PostToolUseFailure only for a tool that ran: a failing shell command may still have written."""
    events = captured(ws)
    select(ws, events)
    pre = find(events, "PreToolUse", "run_shell_command")
    pre["tool_input"]["command"] = "echo z > other.txt && false"
    assert hook(pre) == (0, None, "")
    (ws / "src" / "other.txt").write_text("z\n")
    failure = find(events, "PostToolUseFailure", "edit")
    failure.update(tool_name="run_shell_command", tool_input=pre["tool_input"], tool_use_id=pre["tool_use_id"],
                   error="Command exited with code 1")
    assert hook(failure) == (0, None, "")
    assert records(ws)[-1]["files"][0]["path"] == "src/other.txt"


def test_a_proposal_is_decided_in_the_hook(ws: Path) -> None:
    """propose_intent waits for a person in Qwen's PreToolUse, as in Claude Code's (here the policy refuses)."""
    events = captured(ws)
    event = find(events, "PreToolUse", qwen_code.SELECT_TOOL)
    event.update(tool_name="mcp__orchestrator__propose_intent",
                 tool_input={"name": "docs", "owned_scope": ["docs/**"], "why": "the guide is stale"})
    verdict, error = decision(hook(event, ORCH_APPROVAL_CHANNEL="deny")[1])
    assert verdict == "deny" and error["type"] == "proposal-denied"
