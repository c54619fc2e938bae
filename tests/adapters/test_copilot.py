"""GitHub Copilot CLI adapter on the payloads Copilot CLI 1.0.102 really sends (tests/adapters/fixtures/copilot/:
``.github/hooks`` payloads, and ``claude-*`` the Claude-shaped ones it sends to ``.claude/settings.json`` hooks)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.adapters import copilot, installer
from orchestrator.adapters.base import copilot_shaped, run_hook
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock, unwrap
from orchestrator.engine.tools import to_call

SESSION = "c0b1a2d3-0000-4000-8000-00000000000c"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def hook(event: dict, agent: str = "copilot", **env: str) -> dict | None:
    """The hook's JSON answer (None when it printed nothing: an allow without a word)."""
    result = run_hook(agent, json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout) if result.stdout else None


def error_of(answer: dict | None) -> dict:
    assert answer is not None and answer["permissionDecision"] == "deny", answer
    reason = answer["permissionDecisionReason"]
    return json.loads(reason[reason.index("{"):])


def native(payload, name: str, **args) -> dict:
    """A ``.github/hooks`` fixture, its ``toolArgs`` updated with ``args``."""
    event = payload("copilot", name)
    if args:
        event["toolArgs"] = {**(event.get("toolArgs") or {}), **args}
    return event


def select(payload) -> None:
    assert hook(payload("copilot", "preToolUse-mcp-select_active_intent", toolArgs={"intent_id": "INT-1"})) is None


def ledger(ws: Path) -> list[dict]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_events_are_told_by_their_shape(payload) -> None:
    names = {name: copilot.normalize(payload("copilot", name))["event"] for name in (
        "sessionStart", "userPromptSubmitted", "preToolUse-create", "postToolUse-create", "agentStop", "sessionEnd")}
    assert names == {"sessionStart": "sessionStart", "userPromptSubmitted": "userPromptSubmitted",
                     "preToolUse-create": "preToolUse", "postToolUse-create": "postToolUse", "agentStop": None,
                     "sessionEnd": None}
    claude = copilot.normalize(payload("copilot", "claude-PostToolUse-Write"))
    assert (claude["event"], claude["tool_name"], claude["tool_result"]["resultType"]) == \
        ("postToolUse", "create", "success")
    # what tells the two hosts apart in .claude/settings.json hooks
    assert copilot_shaped(payload("copilot", "claude-PreToolUse-Write"))
    assert not copilot_shaped(payload("claude-code", "PreToolUse-Write"))
    assert not copilot_shaped(payload("copilot", "preToolUse-create"))  # native: its own command, no event name


def test_pre_tool_use_gates_create_edit_and_governance(payload, ws: Path) -> None:
    new = str(ws / "src/new.py")
    assert error_of(hook(native(payload, "preToolUse-create", path=new)))["type"] == "intent-required"
    select(payload)
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert Governor(ws).sessions.get("default").get("intent_id") is None
    assert hook(native(payload, "preToolUse-create", path=new)) is None  # allowed: nothing to say
    assert hook(native(payload, "preToolUse-edit", path=str(ws / "src/app.py"))) is None
    assert hook(native(payload, "preToolUse-view", path=str(ws / "README.md"))) is None
    assert error_of(hook(native(payload, "preToolUse-create", path=str(ws / "docs/x.md"))))["type"] == \
        "scope-violation"
    for gov in (".github/hooks/zz.json", ".github/mcp.json", ".github/copilot/settings.local.json",
                ".orchestration/policy.yaml"):
        assert error_of(hook(native(payload, "preToolUse-create", path=str(ws / gov))))["type"] == "governance-file"


def test_ask_is_passed_to_copilot_and_unknown_tools_fail_closed(payload, ws: Path) -> None:
    select(payload)
    rm = hook(native(payload, "preToolUse-bash", command="rm -rf src"), ORCH_APPROVAL_CHANNEL="agent-ask")
    assert rm is not None and rm["permissionDecision"] == "ask" and "approval" in rm["permissionDecisionReason"]
    # unknown tools (keystrokes into a running shell, another MCP server's tool) go to a person, never through
    for tool, args in (("write_bash", {"shellId": "1", "input": "echo x > README.md\n"}),
                       ("github-create_issue", {"title": "t"})):
        event = payload("copilot", "preToolUse-view", toolName=tool, toolArgs=args)
        assert hook(event, ORCH_APPROVAL_CHANNEL="agent-ask")["permissionDecision"] == "ask"
        assert error_of(hook(event, ORCH_APPROVAL_CHANNEL="deny"))["hook"] == "approval"
    # Copilot sends `null` arguments for list_bash (Claude-shaped): a harmless tool, allowed
    assert hook(payload("copilot", "claude-PreToolUse-sql", tool_name="list_bash", tool_input=None),
                agent="claude-code") is None


def test_registry_names_every_copilot_tool() -> None:
    kinds = {tool: to_call(tool, {"path": "/p", "command": "ls"}).kind for tool in (
        "bash", "view", "create", "edit", "grep", "glob", "read_bash", "stop_bash", "list_bash", "task", "sql",
        "session_store_sql", "read_agent", "list_agents", "write_agent", "skill", "fetch_copilot_cli_documentation",
        "orchestrator-select_active_intent", "orchestrator-list_intents", "write_bash", "github-create_issue")}
    assert kinds["bash"] is Kind.EXEC and kinds["view"] is Kind.READ
    assert kinds["create"] is Kind.WRITE and kinds["edit"] is Kind.EDIT
    assert to_call("create", {"path": "/p/a", "file_text": ""}).paths == ["/p/a"]
    assert kinds["write_bash"] is Kind.UNKNOWN and kinds["github-create_issue"] is Kind.UNKNOWN
    assert {t for t, k in kinds.items() if k is Kind.META} == {
        "grep", "glob", "read_bash", "stop_bash", "list_bash", "task", "sql", "session_store_sql", "read_agent",
        "list_agents", "write_agent", "skill", "fetch_copilot_cli_documentation",
        "orchestrator-select_active_intent", "orchestrator-list_intents"}


def _events_log(home: Path, lines: list[dict]) -> None:
    log = home / ".copilot" / "session-state" / SESSION / "events.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_post_tool_use_records_exact_ranges_once_with_session_and_model(payload, ws: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    _events_log(tmp_path / "home", [{"type": "session.start", "data": {"selectedModel": "gpt-4.1"}},
                                    {"type": "assistant.message", "data": {"model": "claude-sonnet-4.6"}}])
    select(payload)
    app = str(ws / "src/app.py")
    edit = {"path": app, "old_str": "x = 1", "new_str": "x = 2\ny = 3"}
    assert hook(native(payload, "preToolUse-edit", **edit)) is None
    (ws / "src/app.py").write_text("x = 2\ny = 3\nprint(x)\n")  # what Copilot's edit tool does
    post = native(payload, "postToolUse-edit", **edit)
    assert hook(post) is None
    assert hook(post) is None  # the same event delivered twice: one record
    (rec,) = ledger(ws)
    meta = rec["metadata"]["dev.orchestrator"]
    assert (meta["agent"], meta["session_id"], meta["tool_name"], meta["intent_id"]) == \
        ("copilot", SESSION, "edit", "INT-1")
    (conv,) = rec["files"][0]["conversations"]
    assert [(r["start_line"], r["end_line"]) for r in conv["ranges"]] == [(1, 2)]  # from the pre-image
    assert conv["contributor"]["model_id"] == "claude-sonnet-4.6"
    assert not list((ws / ".orchestration/run/preimages").glob("copilot-*"))


def test_failed_tool_result_is_not_recorded_and_model_falls_back_to_the_session_start(payload, ws: Path,
                                                                                     tmp_path: Path) -> None:
    env = {"COPILOT_HOME": str(tmp_path / "ch")}
    log = tmp_path / "ch" / "session-state" / SESSION / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({"type": "session.start", "data": {"selectedModel": "gpt-4.1"}}) + "\n")
    assert copilot.transcript_path(SESSION, env) == str(log)
    assert copilot.transcript_path("../../etc", env) is None
    select(payload)
    new = str(ws / "src/new.py")
    failed = native(payload, "postToolUse-create", path=new)
    failed["toolResult"] = {"resultType": "failure", "textResultForLlm": "boom"}
    (ws / "src/new.py").write_text("x\n")
    assert hook(failed) is None and ledger(ws) == []
    import os

    old = os.environ.get("COPILOT_HOME")
    os.environ["COPILOT_HOME"] = env["COPILOT_HOME"]
    try:
        assert copilot.model_from_transcript(SESSION) == "gpt-4.1"  # Copilot logs in batches: session.start only
    finally:
        os.environ.pop("COPILOT_HOME") if old is None else os.environ.__setitem__("COPILOT_HOME", old)


def test_session_start_and_prompt_give_the_mandate_in_copilot_words(payload, ws: Path) -> None:
    for name in ("sessionStart", "userPromptSubmitted", "claude-SessionStart"):
        answer = hook(payload("copilot", name), agent="claude-code" if name.startswith("claude") else "copilot")
        assert answer is not None
        assert "orchestrator-select_active_intent" in answer["additionalContext"]
    assert "INT-1" in hook(payload("copilot", "sessionStart"))["additionalContext"]
    for name in ("agentStop", "sessionEnd"):
        assert hook(payload("copilot", name)) is None


def test_claude_shaped_events_are_governed_as_copilot(payload, ws: Path) -> None:
    """A repository with only ``orch install claude-code``: Copilot's Claude-shaped events, through
    ``orch hook claude-code``, are judged with Copilot's arguments and recorded as Copilot's."""
    new = str(ws / "src/new.py")
    write = payload("copilot", "claude-PreToolUse-Write", tool_input={"path": new, "file_text": "a\n"})
    assert error_of(hook(write, agent="claude-code"))["type"] == "intent-required"
    assert hook(payload("copilot", "claude-PreToolUse-mcp-select_active_intent",
                        tool_input={"intent_id": "INT-1"}), agent="claude-code") is None
    assert hook(write, agent="claude-code") is None
    (ws / "src/new.py").write_text("a\n")
    post = payload("copilot", "claude-PostToolUse-Write", tool_input={"path": new, "file_text": "a\n"})
    assert hook(post, agent="claude-code") is None
    (rec,) = ledger(ws)
    assert rec["metadata"]["dev.orchestrator"]["agent"] == "copilot"
    assert rec["metadata"]["dev.orchestrator"]["tool_name"] == "create"
    edit = payload("copilot", "claude-PreToolUse-Edit", tool_input={"path": str(ws / "README.md"), "old_str": "a",
                                                                     "new_str": "b"})
    assert error_of(hook(edit, agent="claude-code"))["type"] == "scope-violation"


def test_claude_shaped_run_steps_aside_where_copilot_hooks_are_installed(payload, ws: Path) -> None:
    installer.install("copilot", ws)
    write = payload("copilot", "claude-PreToolUse-Write", tool_input={"path": str(ws / "README.md"),
                                                                      "file_text": "x"})
    assert hook(write, agent="claude-code") is None  # the .github/hooks run of this same call answers
    assert error_of(hook(native(payload, "preToolUse-create", path=str(ws / "README.md"))))["type"] == \
        "intent-required"


def test_a_failure_blocks_with_exit_2_and_the_reason_as_json(payload, ws: Path) -> None:
    """Copilot denies on exit 2 but tells the model why only through a JSON answer on stdout."""
    for agent, raw in (("copilot", "not json"), ("copilot", json.dumps({"toolName": "create", "toolArgs": "x"})),
                       ("claude-code", json.dumps(payload("copilot", "claude-PreToolUse-Write", tool_input=[])))):
        result = run_hook(agent, raw)
        assert result.exit_code == 2, (agent, raw)
        answer = json.loads(result.stdout)
        assert answer["permissionDecision"] == "deny" and "blocked" in answer["permissionDecisionReason"]
    claude = run_hook("claude-code", json.dumps(payload("claude-code", "PreToolUse-Write", tool_input=[])))
    assert claude.exit_code == 2 and claude.stdout == ""  # Claude Code's own events: unchanged


@needs_landlock
def test_opaque_bash_is_sandboxed_through_modified_args_and_recorded_unwrapped(payload, ws: Path) -> None:
    select(payload)
    (ws / "src/gen.sh").write_text("echo g > src/gen.txt\n")
    pre = native(payload, "preToolUse-bash", command="sh src/gen.sh")
    answer = hook(pre, ORCH_APPROVAL_CHANNEL="deny")
    assert answer is not None and answer["permissionDecision"] == "allow", answer
    args = answer["modifiedArgs"]
    assert args["description"] == pre["toolArgs"]["description"]  # every argument kept
    assert unwrap(args["command"]) == "sh src/gen.sh"
    (ws / "src/gen.txt").write_text("g\n")  # what the command did
    post = native(payload, "postToolUse-bash", command=args["command"])
    assert hook(post) is None
    (rec,) = ledger(ws)
    meta = rec["metadata"]["dev.orchestrator"]
    assert meta["tool_name"] == "bash" and "landlock" not in json.dumps(rec)
    assert [f["path"] for f in rec["files"]] == ["src/gen.txt"]


@pytest.mark.parametrize("session", [None, "", 42], ids=repr)
def test_an_event_without_a_usable_session_is_refused_not_defaulted(payload, ws: Path, session: object) -> None:
    """The one session rule (orchestrator.state.sessions.session_from): never the shared ``default`` session."""
    Governor(ws).select_intent("INT-1", "default")
    event = native(payload, "preToolUse-create")
    if session is None:
        event.pop("sessionId", None)
    else:
        event["sessionId"] = session
    assert error_of(hook(event))["type"] == "session-required"


@pytest.mark.parametrize("name,agent", [("preToolUse-subagent-create", "copilot"),
                                        ("claude-PreToolUse-subagent-Write", "claude-code")])
def test_subagent_calls_work_under_the_parent_sessions_intent(payload, ws: Path, name: str, agent: str) -> None:
    """A ``task`` subagent's calls carry its own id as the session: they are judged under the parent's."""
    event = payload("copilot", name)
    args_key = "toolArgs" if agent == "copilot" else "tool_input"
    event[args_key]["path"] = str(ws / "src/sub.txt")
    assert error_of(hook(event, agent=agent))["type"] == "intent-required"  # the parent selected nothing yet
    select(payload)
    assert hook(event, agent=agent) is None
    ev = copilot.normalize(event)
    assert (ev["session_id"], ev["agent_id"]) == (SESSION, "5ab0a9e1-0000-4000-8000-0000000000a1")
    event[args_key]["path"] = str(ws / "README.md")
    assert error_of(hook(event, agent=agent))["type"] == "scope-violation"
