from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.agent import AgentLoop, ApprovalDecision
from orchestrator.agent.providers import ProviderError
from orchestrator.agent.providers.scripted import ScriptedProvider
from orchestrator.engine.pipeline import Governor


def _verdict_json(content: str) -> dict:
    """The structured verdict at the end of a refusal's text."""
    return json.loads(content[content.index("{"):])


def test_self_corrects_after_a_denial(gov: Governor, ws: Path) -> None:
    script = """
- tool_calls: [{name: write_file, input: {path: src/new.py, content: "x = 1\\n"}}]
- expect: intent-required
  tool_calls: [{name: select_active_intent, input: {intent_id: INT-1}}]
- expect: "<intent_context"
  tool_calls: [{name: write_file, input: {path: src/new.py, content: "x = 1\\n"}}]
- expect: created src/new.py
  answer: done
"""
    loop = AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1")
    result = loop.run("add src/new.py")
    assert result.stopped == "answer" and result.answer == "done"
    assert (ws / "src" / "new.py").read_text() == "x = 1\n"
    assert [c.decision for c in result.calls] == ["deny", "allow", "allow"]
    first = result.calls[0]
    assert first.error["type"] == "intent-required" and first.error["available"] == ["INT-1"]
    # the model saw the structured verdict as a tool error
    tool_msgs = [m for m in loop.messages if m["role"] == "tool"]
    assert tool_msgs[0]["is_error"] is True
    assert _verdict_json(tool_msgs[0]["content"])["type"] == "intent-required"
    assert tool_msgs[2]["is_error"] is False


def test_out_of_scope_and_governance_writes_never_run(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    script = """
- tool_calls:
    - {name: write_file, input: {path: README.md, content: "hacked"}}
    - {name: write_file, input: {path: .orchestration/active_intents.yaml, content: "active_intents: []"}}
    - {name: edit_file, input: {path: ../outside.txt, old_string: a, new_string: b}}
- expect: [scope-violation, governance-file, path-outside-workspace]
  answer: ok
"""
    before = (ws / ".orchestration" / "active_intents.yaml").read_text()
    result = AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1").run("go")
    assert [c.error["type"] for c in result.calls] == ["scope-violation", "governance-file", "path-outside-workspace"]
    assert (ws / "README.md").read_text() == "# repo\n"
    assert (ws / ".orchestration" / "active_intents.yaml").read_text() == before
    assert not (ws.parent / "outside.txt").exists()


def test_safe_calls_never_wait_and_need_no_intent(gov: Governor, ws: Path) -> None:
    asked: list[object] = []
    script = """
- tool_calls:
    - {name: read_file, input: {path: src/app.py}}
    - {name: list_files, input: {}}
    - {name: run_command, input: {command: "ls src"}}
- expect: ["def main", "src/app.py", "app.py"]
  answer: seen
"""
    loop = AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1", approver=asked.append)
    result = loop.run("look around")
    assert asked == [] and all(c.decision == "allow" and not c.is_error for c in result.calls)
    listing = result.calls[1].content.splitlines()
    assert "src/app.py" in listing and not any(p.startswith(".orchestration/run") for p in listing)
    # the read left a read-stamp for the stale check
    assert "src/app.py" in gov.sessions.get("s1")["reads"]


RM = """
- tool_calls: [{name: run_command, input: {command: "rm -rf build/*"}}]
- answer: finished
"""


def test_ask_without_approver_is_an_error_and_nothing_runs(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    result = AgentLoop(gov, ScriptedProvider.from_yaml(RM), session_id="s1").run("clean")
    call = result.calls[0]
    assert call.decision == "ask" and call.is_error and call.error["type"] == "approval-required"
    assert "no approver" in call.content
    assert (ws / "build" / "out.txt").exists()


def test_rejected_approval_keeps_files_and_tells_the_model_why(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    seen = []

    def no(request):  # type: ignore[no-untyped-def]
        seen.append(request)
        return ApprovalDecision(False, "keep the build", by="tester")

    result = AgentLoop(gov, ScriptedProvider.from_yaml(RM), session_id="s1", approver=no).run("clean")
    call = result.calls[0]
    assert seen[0].summary == "rm -rf build/*" and seen[0].reasons
    assert call.decision == "rejected" and call.error["type"] == "approval-rejected"
    assert call.error["reason"] == "keep the build"
    assert (ws / "build" / "out.txt").exists()


def test_approved_destructive_command_runs(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    loop = AgentLoop(gov, ScriptedProvider.from_yaml(RM), session_id="s1",
                     approver=lambda r: ApprovalDecision(True, "fine"))
    result = loop.run("clean")
    assert result.calls[0].decision == "allow" and not result.calls[0].is_error
    assert (ws / "build").is_dir() and not (ws / "build" / "out.txt").exists()


def test_a_failing_approver_does_not_approve(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")

    def boom(request):  # type: ignore[no-untyped-def]
        raise RuntimeError("approver crashed")

    result = AgentLoop(gov, ScriptedProvider.from_yaml(RM), session_id="s1", approver=boom).run("clean")
    assert result.calls[0].decision == "rejected"
    assert (ws / "build" / "out.txt").exists()


def test_stale_write_after_another_session_changed_the_file(gov: Governor, ws: Path) -> None:
    for sid in ("a", "b"):
        gov.select_intent("INT-1", sid)
    a = AgentLoop(gov, ScriptedProvider.from_yaml("""
- tool_calls: [{name: read_file, input: {path: src/app.py}}]
- answer: read
"""), session_id="a")
    a.run("read")
    b = AgentLoop(gov, ScriptedProvider.from_yaml("""
- tool_calls: [{name: read_file, input: {path: src/app.py}}]
- tool_calls: [{name: edit_file, input: {path: src/app.py, old_string: "return 1", new_string: "return 2"}}]
- answer: changed
"""), session_id="b")
    assert b.run("change").calls[1].decision == "allow"
    a.provider = ScriptedProvider.from_yaml("""
- tool_calls: [{name: edit_file, input: {path: src/app.py, old_string: "def main", new_string: "def run"}}]
- expect: stale-file
  tool_calls: [{name: read_file, input: {path: src/app.py}}]
- expect: return 2
  tool_calls: [{name: edit_file, input: {path: src/app.py, old_string: "def main", new_string: "def run"}}]
- answer: redone
""")
    result = a.run("rename")
    assert [c.decision for c in result.calls] == ["deny", "allow", "allow"]
    assert (ws / "src" / "app.py").read_text() == "def run():\n    return 2\n"


def test_tool_failures_reach_the_model_without_killing_the_loop(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    calls = [
        {"name": "edit_file", "input": {"path": "src/app.py", "old_string": "nope", "new_string": "x"}},
        {"name": "read_file", "input": {"path": "src/missing.py"}},
        {"name": "run_command", "input": {"command": "exit 3"}},
        {"name": "select_active_intent", "input": {"intent_id": "INT-2"}},
    ]
    provider = ScriptedProvider([{"tool_calls": calls}, {"answer": "ok"}])
    loop = AgentLoop(gov, provider, session_id="s1", approver=lambda r: ApprovalDecision(True, "ok"))
    result = loop.run("x")
    errs = [c.content for c in result.calls]
    assert all(c.is_error for c in result.calls)
    assert "old_string not found" in errs[0] and "does not exist" in errs[1]
    assert errs[2].startswith("exit code 3")
    assert "intent-invalid" in errs[3] and "PENDING" in errs[3]
    assert (ws / "src" / "app.py").read_text() == "def main():\n    return 1\n"


def test_unknown_tool_name_from_a_model_is_refused(gov: Governor) -> None:
    class Rogue:
        model = "rogue"

        def __init__(self) -> None:
            self.n = 0

        def complete(self, system, messages, tools):  # type: ignore[no-untyped-def]
            from orchestrator.agent.providers import Reply, ToolUse

            self.n += 1
            if self.n == 1:
                return Reply("", (ToolUse("t1", "delete_everything", {"path": "src"}),))
            return Reply("gave up")

    result = AgentLoop(gov, Rogue(), session_id="s1").run("x")
    assert result.calls[0].is_error and "unknown tool" in result.calls[0].content


def test_turn_cap_stops_a_model_that_never_answers(gov: Governor) -> None:
    turns = [{"tool_calls": [{"name": "list_files", "input": {}}]} for _ in range(10)]
    result = AgentLoop(gov, ScriptedProvider(turns), session_id="s1", max_turns=3).run("loop forever")
    assert result.stopped == "turn_cap" and result.answer is None and len(result.calls) == 3


def test_command_timeout(gov: Governor) -> None:
    gov.select_intent("INT-1", "s1")
    loop = AgentLoop(gov, ScriptedProvider([{"tool_calls": [{"name": "run_command", "input": {"command": "sleep 5"}}]},
                                            {"answer": "x"}]),
                     session_id="s1", approver=lambda r: ApprovalDecision(True, "ok"), command_timeout=0.3)
    result = loop.run("wait")
    assert result.calls[0].is_error and "timed out" in result.calls[0].content


def test_record_lesson_tool_writes_agents_md(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "s1")
    script = """
- tool_calls: [{name: record_lesson, input: {text: "Run the tests before committing."}}]
- expect: lesson recorded
  answer: noted
"""
    AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1").run("x")
    assert "- [INT-1] Run the tests before committing." in (ws / "AGENTS.md").read_text()


def test_script_expectation_mismatch_raises(gov: Governor) -> None:
    script = """
- tool_calls: [{name: read_file, input: {path: src/app.py}}]
- expect: "this text is not there"
  answer: never
"""
    with pytest.raises(ProviderError, match="expected the previous tool result to contain"):
        AgentLoop(gov, ScriptedProvider.from_yaml(script), session_id="s1").run("x")


def test_script_exhausted_raises(gov: Governor) -> None:
    with pytest.raises(ProviderError, match="no turn 1"):
        AgentLoop(gov, ScriptedProvider([]), session_id="s1").run("x")


def test_events_narrate_every_step(gov: Governor) -> None:
    events = []
    AgentLoop(gov, ScriptedProvider.from_yaml("""
- say: reading
  tool_calls: [{name: read_file, input: {path: src/app.py}}]
- answer: done
"""), session_id="s1", on_event=events.append).run("x")
    assert [e.type for e in events] == ["model", "call", "verdict", "result", "answer"]
    assert events[0].text == "reading" and events[-1].text == "done"
