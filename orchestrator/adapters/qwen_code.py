"""Qwen Code adapter: Claude-style command hooks in ``.qwen/settings.json`` in, Qwen Code's hook answers out.

Qwen Code (``@qwen-code/qwen-code``, a Gemini CLI fork; verified with 0.24.4: tests/data/qwen-code/,
tests/e2e/test_qwen_code.py) sends Claude Code's events with Gemini's tools and tool responses:

- ``PreToolUse {session_id, transcript_path, cwd, hook_event_name, timestamp, permission_mode, prompt_id, tool_name,
  tool_input, tool_use_id, tool_call_id}``. Tools: ``write_file {file_path, content}``, ``edit {file_path,
  old_string, new_string, replace_all?}``, ``run_shell_command {command, description?, directory?, is_background?,
  timeout?}`` (``directory``: an absolute directory the command runs in), ``read_file {file_path}``; MCP tools are
  deferred behind ``tool_search``/``tool_call`` but reach the hooks under their own name ``mcp__<server>__<tool>``:
  the handshake is ``mcp__orchestrator__select_active_intent``, recorded here for the event's ``session_id``;
  ``mcp__orchestrator__propose_intent`` waits here for a person, as Claude Code's (:mod:`orchestrator.adapters.propose`).
  Answer: nothing (allow), or ``hookSpecificOutput.permissionDecision`` ``deny`` (the model reads the reason, the
  run goes on) or ``ask`` (an interactive session asks the person; ``-p`` refuses with the reason).
- **PreToolUse ignores ``updatedInput``** (Qwen applies it to PermissionRequest hooks only): a shell command cannot be
  replaced by its sandboxed form there. So a shell call is judged as on a host that cannot wrap (the approval
  channel decides what the analyzer cannot vouch for), and the channel ``allow`` does not waive it here
  (:func:`orchestrator.pre.approval.waived`): it is asked, never run unsandboxed silently.
- ``PermissionRequest {tool_name, tool_input, permission_mode, permission_suggestions}`` fires only where Qwen would
  prompt a person (an interactive or ``--input-format stream-json`` session, not ``--yolo``, the tool not already
  allowed): there a shell command the analyzer cannot vouch for is answered ``{"decision": {"behavior": "allow",
  "updatedInput": …}}`` with the command wrapped in the kernel sandbox, which Qwen runs. Its PreToolUse then carries
  the wrapped command: the original is judged again, and the launcher line is allowed only if orchestrator issued
  it to this session for this command (remembered in the session state, which no agent can write).
- ``PostToolUse {…, tool_response {llmContent, returnDisplay}}`` → :meth:`Governor.post`; ``returnDisplay`` of a
  file tool carries ``originalContent`` (the pre-image; ``""`` for a new file *and* for an empty one, so an empty
  one is left to the engine's snapshot). ``PostToolUseFailure {…, error, is_interrupt}`` fires only for a tool that
  ran: a failed file tool releases its leases, a shell command that exited non-zero is recorded like any other.
- ``SessionStart`` / ``UserPromptSubmit`` → ``additionalContext``: the mandate and the IN_PROGRESS intents.

Failure modes (verified with 0.24.4, docs/adapters.md "Qwen Code"): a hook that exits 1, is killed, times out, prints
nothing on exit 2 or prints a JSON object without a decision lets the call RUN. The launcher and the hook client
answer every failure with exit 2 and a text reason (never JSON on stderr), and the installed PreToolUse timeout is
longer than the client's own deadline: see :mod:`orchestrator.adapters.qwen_setup`.
"""
from __future__ import annotations

import hashlib
import os
import time
from typing import Any

from orchestrator.adapters import claude_code, gemini
from orchestrator.adapters.base import HookResult, sandbox_reason
from orchestrator.adapters.payload import Malformed, field
from orchestrator.core.models import Kind, ToolCall, ToolResult, Verdict

AGENT = "qwen-code"
SELECT_TOOL = claude_code.SELECT_TOOL
SHELL_TOOL = "run_shell_command"
#: events orchestrator installs no hook for, or answers with nothing: a failure there must not stop the agent
QUIET = frozenset({"Stop", "SubagentStop", "SessionEnd", "Notification", "PreCompact", "PostToolBatch"})
#: pre-images of a PermissionRequest's evaluation (its PreToolUse captures again): swept at SessionStart
_PERMISSION_PREFIX = "qwen-perm-"
#: session state: the launcher lines handed to Qwen by PermissionRequest, not yet run (sha256 -> when)
_ISSUED = "qwen_sandboxed"
_MAX_ISSUED = 32


def _tool_event(event: dict[str, Any], name: str) -> dict[str, Any]:
    """The fields of a tool event this adapter relies on, checked (:class:`~orchestrator.adapters.payload.Malformed`
    names what is missing)."""
    field(event, "session_id", str, AGENT, event=name)
    field(event, "tool_name", str, AGENT, event=name)
    field(event, "tool_input", dict, AGENT, event=name, nonempty=False)
    field(event, "cwd", str, AGENT, event=name)
    if name != "PermissionRequest":  # Qwen sends no tool_use_id there
        field(event, "tool_use_id", str, AGENT, event=name)
    return event


def call_of(event: dict[str, Any]) -> ToolCall:
    """The canonical ToolCall of a tool event (``directory`` as the shell's working directory)."""
    call = claude_code.call_from(event, agent=AGENT)
    tool_input = event["tool_input"]
    directory = tool_input.get("directory") if call.tool == SHELL_TOOL else None
    if directory is not None:
        if not isinstance(directory, str):
            raise Malformed(AGENT, f"{AGENT} {SHELL_TOOL}: 'directory' is not a string", missing="directory",
                            event=event.get("hook_event_name"))
        if directory.strip():
            call.cwd = os.path.normpath(os.path.join(event["cwd"], directory))
    return call


def _command(event: dict[str, Any]) -> str | None:
    """The shell command of a ``run_shell_command`` event (a string), else None."""
    if event.get("tool_name") != SHELL_TOOL:
        return None
    command = event["tool_input"].get("command")
    if not isinstance(command, str):
        raise Malformed(AGENT, f"{AGENT} {SHELL_TOOL}: 'command' is not a string", missing="command",
                        event=event.get("hook_event_name"))
    return command


def unsandboxed(call: ToolCall, verdict: Verdict, governor: Any) -> Verdict:
    """The verdict for a shell command Qwen runs as it is (no sandbox): what the channel ``allow`` waived is asked
    (:func:`orchestrator.pre.approval.waived`) instead of run unsandboxed silently."""
    if not verdict.allowed or call.kind is not Kind.EXEC:
        return verdict
    from orchestrator.pre import approval

    why = approval.waived(call, governor.policy)
    if not why:
        return verdict
    if call.leased:
        governor.release_leases(call)
    return Verdict.ask(
        "approval-required", "sandbox", f"needs a person's approval: {call.command}", reasons=why, agent=AGENT,
        hint="Qwen Code cannot run a command in orchestrator's kernel sandbox from PreToolUse (it ignores "
             "updatedInput), and approval.channel `allow` trusts that sandbox: a person must approve it; prefer "
             "the file tools, or a command that only reads")


def pre_tool_use(event: dict[str, Any], governor: Any) -> HookResult:
    _tool_event(event, "PreToolUse")
    if event["tool_name"] == SELECT_TOOL:
        return claude_code.decision(claude_code.select_intent(event, governor, agent=AGENT))
    if event["tool_name"] == claude_code.PROPOSE_TOOL:
        # a person decides while this hook waits (its 660 s outlast the approval timeout); Qwen ignores updatedInput,
        # so the MCP tool finds the decided proposal by its fields, as Codex's does (adapters/propose.py)
        return claude_code.propose_intent(event, governor, agent=AGENT)
    command = _command(event)
    if command is not None:
        from orchestrator.sandbox import unwrap

        original = unwrap(command)
        if original is not None:
            return claude_code.decision(_rewrapped(event, original, command, governor))
    call = call_of(event)
    verdict = governor.pre(call)
    return claude_code.decision(unsandboxed(call, verdict, governor))


def _rewrapped(event: dict[str, Any], original: str, wrapped: str, governor: Any) -> Verdict:
    """A PreToolUse whose command is already the sandbox launcher (a PermissionRequest answer put it there): judged
    again as the original (intent, scope, leases, pre-images), and allowed only if it is a launcher line orchestrator
    issued to this session for exactly this command (:func:`_issue`). A command the model typed to look like one, or
    one issued to another session, is refused: its sandbox could be another intent's."""
    call = call_of({**event, "tool_input": {**event["tool_input"], "command": original}})
    verdict = governor.pre(call, sandbox=True)
    if not verdict.allowed:
        return verdict
    key = _wrap_key(wrapped)
    taken: list[bool] = []

    def take(state: dict[str, Any]) -> None:
        issued = state.get(_ISSUED)
        taken.append(isinstance(issued, dict) and issued.pop(key, None) is not None)

    governor.sessions.update(call.session_id, take)
    if taken and taken[0]:
        return verdict
    if call.leased:
        governor.release_leases(call)
    return Verdict.deny("sandbox-mismatch", "sandbox", "the command is a sandbox launcher line orchestrator did not "
                        "issue to this session for this command", agent=AGENT,
                        hint="send the plain command; orchestrator puts it in the sandbox itself")


def _wrap_key(wrapped: str) -> str:
    return hashlib.sha256(wrapped.encode("utf-8", "surrogateescape")).hexdigest()


def _issue(governor: Any, session: str, wrapped: str) -> None:
    """Remember that ``wrapped`` was handed to ``session`` (its PreToolUse accepts it once). The session state lives
    under .orchestration/run/, which no agent can write."""
    def add(state: dict[str, Any]) -> None:
        issued = state.get(_ISSUED)
        issued = dict(issued) if isinstance(issued, dict) else {}
        issued[_wrap_key(wrapped)] = time.time()
        state[_ISSUED] = dict(sorted(issued.items(), key=lambda kv: kv[1])[-_MAX_ISSUED:])

    governor.sessions.update(session, add)


def permission_request(event: dict[str, Any], governor: Any) -> HookResult:
    """Where Qwen would prompt a person: a shell command runs sandboxed (``updatedInput``) or is refused; other
    tools get no decision (Qwen prompts as usual, and their PreToolUse decides)."""
    _tool_event(event, "PermissionRequest")
    command = _command(event)
    if command is None:
        return HookResult.json({})
    from orchestrator.sandbox import unwrap

    if unwrap(command) is not None:
        return HookResult.json({})  # already wrapped: PreToolUse checks it
    call = call_of(event)
    call.capture_key = _PERMISSION_PREFIX + hashlib.sha256(
        "\0".join((call.session_id, call.cwd or "", command)).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    verdict = governor.pre(call, sandbox=True)
    if call.leased:
        governor.release_leases(call)  # this is only the decision to wrap: its PreToolUse takes them again
    if verdict.allowed and verdict.command is not None:
        _issue(governor, call.session_id, verdict.command)
        return HookResult.json({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
            "behavior": "allow", "message": sandbox_reason(verdict),
            "updatedInput": {**event["tool_input"], "command": verdict.command}}}})
    if verdict.decision == "deny":
        return HookResult.json({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
            "behavior": "deny", "message": verdict.reason}}})
    return HookResult.json({})  # a person decides in Qwen's prompt; PreToolUse judges again


def tool_result(response: Any) -> ToolResult:
    """``tool_response`` as the engine's :class:`ToolResult`: failure flags as Gemini's; ``originalContent`` as the
    pre-image unless it is ``""`` (Qwen sends that for a new file and an empty one alike)."""
    if isinstance(response, dict):
        display = response.get("returnDisplay")
        if isinstance(display, dict) and display.get("originalContent") == "":
            response = {**response, "returnDisplay": {k: v for k, v in display.items() if k != "originalContent"}}
    return gemini.tool_result(response)


def post_tool_use(event: dict[str, Any], governor: Any, *, failed: bool = False) -> HookResult:
    name = "PostToolUseFailure" if failed else "PostToolUse"
    _tool_event(event, name)
    if event["tool_name"] == SELECT_TOOL:
        return HookResult()
    sandboxed = False
    command = _command(event)
    if command is not None:
        from orchestrator.sandbox import unwrap

        original = unwrap(command)
        if original is not None:
            event = {**event, "tool_input": {**event["tool_input"], "command": original}}
            sandboxed = True
    call = call_of(event)
    call.sandboxed = sandboxed
    if call.kind.mutating and call.model_id is None:
        call.model_id = gemini.model_from_transcript(event.get("transcript_path"))
    # PostToolUseFailure fires only for a tool that ran: a shell command that exited non-zero (or was interrupted)
    # may have changed files all the same, so it is recorded; a failed file tool changed nothing
    result = ToolResult() if failed and call.kind is Kind.EXEC else \
        ToolResult.failure() if failed else tool_result(event.get("tool_response"))
    warning = gemini._warning(governor.post(call, result))
    if warning is None:
        return HookResult()
    return HookResult.json({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": warning}})


def context_text(governor: Any, session_id: str, *, full: bool) -> str:
    """The mandate and intents, with the tools and governance files named as Qwen's model sees them."""
    text = claude_code.context_text(governor, session_id, full=full)
    return text.replace("(Write, Edit, NotebookEdit, or a Bash command that changes files)",
                        "(write_file, edit, or a run_shell_command that changes files)").replace(
        ".claude/settings*.json, .mcp.json", ".qwen/, .mcp.json")


def handle(event: dict[str, Any], governor: Any) -> HookResult:
    """Answer one Qwen Code hook event (see the module doc); an event of an unknown name or shape is refused."""
    name = field(event, "hook_event_name", str, AGENT)
    if name == "PreToolUse":
        return pre_tool_use(event, governor)
    if name == "PermissionRequest":
        return permission_request(event, governor)
    if name in ("PostToolUse", "PostToolUseFailure"):
        return post_tool_use(event, governor, failed=name == "PostToolUseFailure")
    if name in ("SessionStart", "UserPromptSubmit"):
        session = field(event, "session_id", str, AGENT, event=name)
        if name == "SessionStart":
            gemini.sweep_preimages(governor, prefix=_PERMISSION_PREFIX)
        text = context_text(governor, claude_code.session_of({"session_id": session}), full=name == "SessionStart")
        return HookResult.json({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
    if name in QUIET:
        return HookResult()
    raise Malformed(AGENT, f"{AGENT}: unknown hook event {name!r} (this orchestrator knows Qwen Code 0.24.4's)",
                    event=name, missing="hook_event_name")


__all__ = ["AGENT", "SELECT_TOOL", "SHELL_TOOL", "call_of", "handle", "permission_request", "pre_tool_use",
           "post_tool_use", "tool_result", "unsandboxed"]

