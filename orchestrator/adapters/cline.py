"""Cline adapter: the events of orchestrator's Cline plugin (``.cline/plugins/orchestrator.js``) in, answers out.

Cline (npm ``cline``, verified with 3.0.65: tests/data/cline/, tests/e2e/test_cline.py) runs no hook commands we
can rely on: its hook *files* (``.clinerules/hooks/PreToolUse``) ignore exit codes, let a crash or bad JSON run the
call, and their only refusal (``cancel``) ends the whole run unseen by the model. Its agent *plugins* can refuse
one call with a reason the model reads (``beforeTool`` → ``{skip: true, reason}``), rewrite it (``{input}``), or
hand it to a person (``{policy: {autoApprove: false}}``: a TTY session asks even under ``--auto-approve``, a
headless one refuses). Ours (``orchestrator/data/templates/cline-plugin.js``, written by ``orch install cline``)
forwards ``beforeTool`` / ``afterTool`` as one event each, over the daemon socket or through the launcher, and never
throws (a throw fails Cline's whole run): it answers ``skip`` when orchestrator refuses, cannot be reached, or does
not answer within Cline's 3 s plugin deadline. The events, as the plugin builds them:

- ``{"hook_event_name": "beforeTool", "tool", "toolCallId", "input", "sessionID", "agentId", "parentAgentId"?,
  "cwd", "model"?}`` — ``sessionID`` is the Cline session (a subagent's calls share it: ``spawn_agent`` runs them
  with its own ``agentId`` and the caller's as ``parentAgentId``, recorded as ``agent_id``), ``cwd`` the workspace
  (Cline runs every command there: ``run_commands`` entries are separate shells). Answer: ``{}``,
  ``{"skip": reason}``, ``{"ask": reason, "input"?: …}`` (the plugin sets ``policy.autoApprove: false``), or
  ``{"input": {…}}`` with every shell command that needs it wrapped in the kernel sandbox.
- ``{"hook_event_name": "afterTool", …same, "input" (as it ran), "result": {"isError"?, "output": {"success"} |
  [{"success"}, …]}}`` — a whitelist of the tool's result (never its text). A call the plugin skipped comes back
  with ``isError``: nothing is recorded. Answer ``{}`` or ``{"appendContext": warning}``.
- ``{"hook_event_name": "session.context", "sessionID", "cwd"}`` (``beforeRun``) → ``{"context": text}``.

Tools: ``editor {path, old_text?, new_text, insert_line?}`` (creates a missing file), ``apply_patch {input}`` (offered
instead of ``editor`` to models whose id has "gpt"/"codex"), ``run_commands {commands: [...]}`` — **every entry is
its own governed call** (and its own ledger record), ``read_files {files: [{path}]}`` — every file checked (secrets),
``search_codebase``, ``fetch_web_content``, ``ask_question``, ``spawn_agent``, ``team_*``; MCP tools
``<server>__<tool>``: the handshake is ``orchestrator__select_active_intent``.
"""
from __future__ import annotations

from typing import Any

from orchestrator.adapters import claude_code, gemini
from orchestrator.adapters.base import HookResult
from orchestrator.adapters.payload import Malformed, field
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

AGENT = "cline"
SELECT_TOOL = "orchestrator__select_active_intent"
SHELL_TOOL = "run_commands"
READ_TOOL = "read_files"
BEFORE = "beforeTool"
AFTER = "afterTool"
CONTEXT = "session.context"


def _event(event: dict[str, Any], name: str) -> tuple[str, dict[str, Any], str, str]:
    """(tool, input, session, cwd) of a tool event, checked."""
    tool = field(event, "tool", str, AGENT, event=name)
    tool_input = field(event, "input", dict, AGENT, event=name, nonempty=False)
    session = field(event, "sessionID", str, AGENT, event=name)
    cwd = field(event, "cwd", str, AGENT, event=name)
    field(event, "toolCallId", str, AGENT, event=name)
    return tool, tool_input, session_from(session), cwd


def _call(event: dict[str, Any], tool: str, tool_input: dict[str, Any], session: str, cwd: str,
          suffix: str = "") -> ToolCall:
    """One canonical call of a tool event (``suffix``: which entry of a ``run_commands``/``read_files`` list)."""
    parent = event.get("parentAgentId")
    agent_id = event.get("agentId") if isinstance(parent, str) and parent else None
    model = event.get("model")
    return to_call(tool, tool_input, session_id=session, agent=AGENT, cwd=cwd,
                   agent_id=agent_id if isinstance(agent_id, str) else None,
                   # tool call ids come from the model: scoped by session, as opencode's
                   tool_use_id=f"{session}/{event['toolCallId']}{suffix}",
                   model_id=model if isinstance(model, str) and model else None)


def _entries(tool_input: dict[str, Any], key: str, kind: type, name: str) -> list[Any]:
    """The list ``tool_input[key]`` whose every entry is a ``kind`` (a command string, a ``{path}`` object)."""
    entries = field(tool_input, key, list, AGENT, event=name, nonempty=False)
    for i, entry in enumerate(entries):
        if not isinstance(entry, kind) or (isinstance(entry, str) and not entry.strip()):
            raise Malformed(AGENT, f"{AGENT} {name} event: entry {i + 1} of {key!r} is not "
                            f"{'a command' if kind is str else 'an object'}", event=name, missing=f"{key}[{i}]")
    return entries


def answer(verdict: Verdict, *, tool_input: dict[str, Any] | None = None) -> HookResult:
    """A ``beforeTool`` answer: ``{}``, ``{"input"}`` (a sandboxed command), ``{"ask"}`` or ``{"skip"}``."""
    if verdict.allowed:
        return HookResult.json({"input": tool_input} if tool_input is not None else {})
    if verdict.decision == "ask":
        out: dict[str, Any] = {"ask": verdict.reason}
        if tool_input is not None:
            out["input"] = tool_input  # a person's yes runs it in the kernel sandbox all the same
        return HookResult.json(out)
    return HookResult.json({"skip": verdict.reason})


def _numbered(verdict: Verdict, i: int, n: int, command: str) -> Verdict:
    """A refusal of entry ``i`` of ``n`` of a ``run_commands`` list, naming it (the others were not run either)."""
    if n == 1 or verdict.error is None:
        return verdict
    error = dict(verdict.error)
    error["message"] = f"command {i + 1} of {n} ({command!r}): {error['message']}; none of the {n} was run"
    error["entry"] = i + 1
    return Verdict(verdict.decision, error)


def commands_before(event: dict[str, Any], tool_input: dict[str, Any], session: str, cwd: str,
                    governor: Any) -> HookResult:
    """``run_commands``: every entry judged as its own call (sandbox-wrapped where needed); one refusal refuses the
    whole call, naming the entry, and releases what the entries before it took."""
    commands = _entries(tool_input, "commands", str, BEFORE)
    taken: list[ToolCall] = []
    wrapped: list[str] = []
    asked: Verdict | None = None
    for i, command in enumerate(commands):
        call = _call(event, SHELL_TOOL, {"command": command}, session, cwd, f"#{i}")
        verdict = governor.pre(call, sandbox=True)
        if verdict.decision == "ask" and asked is None:
            asked = _numbered(verdict, i, len(commands), command)
        elif not verdict.allowed:
            for earlier in taken:
                governor.release_leases(earlier)
            return answer(_numbered(verdict, i, len(commands), command))
        taken.append(call)
        wrapped.append(verdict.command or command)
    changed = {**tool_input, "commands": wrapped} if wrapped != commands else None
    if asked is not None:
        return answer(asked, tool_input=changed)
    return answer(Verdict.allow(), tool_input=changed)


def before(event: dict[str, Any], governor: Any) -> HookResult:
    tool, tool_input, session, cwd = _event(event, BEFORE)
    if tool == SELECT_TOOL:
        return answer(claude_code.select_intent({"session_id": session, "tool_input": tool_input}, governor,
                                                agent=AGENT))
    if tool == SHELL_TOOL:
        return commands_before(event, tool_input, session, cwd, governor)
    if tool == READ_TOOL:
        files = _entries(tool_input, "files", dict, BEFORE)
        for i, entry in enumerate(files):
            path = field(entry, "path", str, AGENT, event=BEFORE)
            verdict = governor.pre(_call(event, READ_TOOL, {"path": path}, session, cwd, f"#{i}"))
            if not verdict.allowed:
                return answer(verdict)
        return answer(Verdict.allow())
    return answer(governor.pre(_call(event, tool, tool_input, session, cwd)))


def _failed(result: Any) -> bool:
    """Whether a (whitelisted) result says the call did not run: skipped by the plugin (``isError``), or a file
    tool that failed (``output.success: false``)."""
    if not isinstance(result, dict):
        raise Malformed(AGENT, f"{AGENT} {AFTER} event: field 'result' is missing", event=AFTER, missing="result")
    if result.get("isError") is True:
        return True
    output = result.get("output")
    return isinstance(output, dict) and output.get("success") is False


def after(event: dict[str, Any], governor: Any) -> HookResult:
    tool, tool_input, session, cwd = _event(event, AFTER)
    result = event.get("result")
    failed = _failed(result)
    if tool in (SELECT_TOOL, READ_TOOL):
        return HookResult.json({})
    warnings: list[str] = []
    calls: list[ToolCall] = []
    if tool == SHELL_TOOL:
        from orchestrator.sandbox import unwrap

        for i, command in enumerate(_entries(tool_input, "commands", str, AFTER)):
            original = unwrap(command)
            call = _call(event, SHELL_TOOL, {"command": original or command}, session, cwd, f"#{i}")
            call.sandboxed = original is not None
            calls.append(call)
    else:
        calls.append(_call(event, tool, tool_input, session, cwd))
    for call in calls:
        # a command that exited non-zero ran and may have changed files: only a skipped call did not run
        warned = gemini._warning(governor.post(call, ToolResult.failure() if failed else ToolResult()))
        if warned is not None:
            warnings.append(warned)
    return HookResult.json({"appendContext": "\n".join(warnings)} if warnings else {})


def context_text(governor: Any, session_id: str) -> str:
    """The mandate and intents, with the tools, handshake and governance files named as Cline's model sees them."""
    text = claude_code.context_text(governor, session_id, full=True)
    return text.replace(claude_code.SELECT_TOOL, SELECT_TOOL).replace(
        "(Write, Edit, NotebookEdit, or a Bash command that changes files)",
        "(editor, apply_patch, or run_commands that change files)").replace(
        ".claude/settings*.json, .mcp.json", ".cline/, .clinerules/")


def handle(event: dict[str, Any], governor: Any) -> HookResult:
    """Answer one event of orchestrator's Cline plugin (see the module doc); an unknown one is refused."""
    name = field(event, "hook_event_name", str, AGENT)
    if name == BEFORE:
        return before(event, governor)
    if name == AFTER:
        return after(event, governor)
    if name == CONTEXT:
        session = field(event, "sessionID", str, AGENT, event=name)
        return HookResult.json({"context": context_text(governor, session_from(session))})
    raise Malformed(AGENT, f"{AGENT}: unknown plugin event {name!r}", event=name, missing="hook_event_name")


__all__ = ["AGENT", "SELECT_TOOL", "SHELL_TOOL", "after", "answer", "before", "commands_before", "handle"]
