"""pi adapter: the events of orchestrator's pi extension (``.pi/extensions/orchestrator.js``) in, answers out.

pi (``@earendil-works/pi-coding-agent``, verified with 1.6.0 in tests/e2e/test_pi.py) runs no hook commands; it loads
extensions. Ours (``orchestrator/data/templates/pi-extension.js``, written by ``orch install pi``) forwards pi's
``tool_call`` / ``tool_result`` events, over the daemon socket or through the portable launcher
(``.orchestration/bin/orch-hook pi``), and answers ``tool_call`` with ``{block: true, reason}`` (the model reads the
reason as the tool's result; the run goes on) on a refusal, when neither answers, or on any error of its own. The
events, as the extension builds them from what pi hands it (real inputs: tests/data/pi/):

- ``{"hook_event_name": "tool_call", "toolName", "toolCallId", "parentToolCallId"?, "input", "sessionID", "cwd",
  "model"?}`` — ``input`` is pi's ``event.input`` (the tool's arguments, which a handler may change in place),
  ``sessionID`` ``ctx.sessionManager.getSessionId()``, ``cwd`` ``ctx.cwd`` (where pi resolves relative paths and
  runs ``bash``), ``model`` ``<provider>/<id>``. ``parentToolCallId``: a call a ``codemode`` script made
  (``tools.<name>(args)``): governed exactly like a direct call — the script itself only reaches files through such
  calls. Answer: ``{}`` to let it run; ``{"deny": <reason>}``; ``{"input": {"command": <wrapped>}}`` for a ``bash``
  command to run in the Landlock sandbox (the extension assigns ``event.input.command``: pi runs the replaced
  command, verified).
- ``{"hook_event_name": "tool_result", ...same, "result": {"isError", "exit_code"?}}`` — ``input`` is what the tool
  ran with (a sandboxed command is the wrapped one: unwrapped here before the ledger sees it). pi sends a
  ``tool_result`` for a call that failed too (``isError``; not recorded), and marks a ``bash`` that ran and exited
  non-zero ``isError`` as well: that one ran and may have changed files, so it is recorded. Answer: ``{}``, or
  ``{"warning": <text>}`` (changes outside the scope that nothing could stop), appended to what the model reads.
- ``{"hook_event_name": "session.context", "sessionID", "cwd"}`` (``before_agent_start``) → ``{"context": <the
  mandate and the IN_PROGRESS intents>}``, appended to the system prompt.

Tools (``orchestrator.engine.tools``): ``write {path, content}``, ``edit {path, edits: [{oldText, newText}, …]}`` (several
replacements in one call: the ledger records the ranges that changed), ``bash {command, timeout}``, ``read``,
``grep``, ``find``, ``ls``, ``codemode {code}``, ``tool_search``; MCP tools are named ``mcp__<server>__<tool>``, as
Claude Code's: the handshake is ``mcp__orchestrator__select_active_intent``, recorded here for the event's
``sessionID`` (the MCP server, started with ``ORCH_MCP_HOOKED=1``, records nothing itself).
"""
from __future__ import annotations

from typing import Any

from orchestrator.adapters import claude_code, opencode
from orchestrator.adapters.base import HookResult
from orchestrator.adapters.payload import Malformed, field
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

AGENT = "pi"
#: the handshake, named as pi names MCP tools (``mcp__<server>__<tool>``: Claude Code's naming)
SELECT_TOOL = claude_code.SELECT_TOOL
SHELL_TOOL = "bash"
BEFORE = "tool_call"
AFTER = "tool_result"
CONTEXT = "session.context"
#: pi's own configuration, named in the mandate as read-only
FILES = ".pi/"


def _str(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value else None


def session_of(event: dict[str, Any]) -> str:
    """The event's ``sessionID`` under the one session rule (:func:`orchestrator.state.sessions.session_from`)."""
    return session_from(event.get("sessionID"))


def _input(event: dict[str, Any]) -> dict[str, Any]:
    """The tool's arguments (``event.input``), or a :class:`~orchestrator.adapters.payload.Malformed` refusal."""
    return field(event, "input", dict, AGENT, event=_str(event, "hook_event_name"), nonempty=False)


def call_of(event: dict[str, Any]) -> ToolCall:
    """The canonical ToolCall of a pi tool event (``toolCallId`` as its id, scoped by session)."""
    tool = field(event, "toolName", str, AGENT, event=_str(event, "hook_event_name"))
    args = _input(event)
    session = session_of(event)
    call_id = _str(event, "toolCallId")
    # codemode's nested calls are numbered <script's id>/<n>: unique within the session like the direct ones
    return to_call(tool, args, session_id=session, agent=AGENT, cwd=_str(event, "cwd"),
                   tool_use_id=f"{session}/{call_id}" if call_id else None, model_id=_str(event, "model"))


def tool_result(tool: str | None, result: Any) -> ToolResult:
    """The extension's ``result`` (``isError``, ``exit_code``) as the engine's :class:`ToolResult`.

    A ``bash`` command ran whatever its exit code (pi marks a non-zero exit ``isError``): never failed. Any other
    tool with ``isError`` did nothing (an ``edit`` whose ``oldText`` is absent, an MCP tool's failure)."""
    if tool == SHELL_TOOL or not isinstance(result, dict):
        return ToolResult()
    return ToolResult.failure() if result.get("isError") is True else ToolResult()


def answer(verdict: Verdict, *, wrap: bool = False) -> HookResult:
    """A ``tool_call`` answer: ``{}``, ``{"deny": reason}`` or the sandboxed ``{"input": {"command"}}``."""
    if verdict.allowed:
        if wrap and verdict.command is not None:
            return HookResult.json({"input": {"command": verdict.command}})
        return HookResult.json({})
    # an "ask" is a deny: pi's -p mode has no prompt, and an extension cannot hand the call to a person
    return HookResult.json({"deny": verdict.reason})


def unwrapped(event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The event with a sandbox-wrapped ``bash`` command replaced by the original, and whether it was."""
    args = event.get("input")
    if event.get("toolName") != SHELL_TOOL or not isinstance(args, dict):
        return event, False
    original = opencode.unwrapped_args(args)
    return (event, False) if original is None else ({**event, "input": original}, True)


def before(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    if event.get("toolName") == SELECT_TOOL:
        select = {"session_id": session_of(event), "tool_input": _input(event)}
        return answer(claude_code.select_intent(select, governor, agent=AGENT))
    call = call_of(event)
    if sandbox and event.get("toolName") == SHELL_TOOL and isinstance(_input(event).get("command"), str):
        return answer(governor.pre(call, sandbox=True), wrap=True)
    return answer(governor.pre(call))


def after(event: dict[str, Any], governor: Any) -> HookResult:
    if event.get("toolName") == SELECT_TOOL:
        return HookResult.json({})
    event, sandboxed = unwrapped(event)
    call = call_of(event)
    call.sandboxed = sandboxed
    return opencode.recorded(governor, call, tool_result(_str(event, "toolName"), event.get("result")))


def context_text(governor: Any, session_id: str) -> str:
    """The mandate and intents, with pi's configuration named among the read-only governance files."""
    return claude_code.context_text(governor, session_id, full=True).replace(".claude/settings*.json, .mcp.json",
                                                                             FILES)


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    """Answer one event of orchestrator's pi extension (see the module doc).

    ``sandbox``: answer a ``bash`` command the analyzer cannot vouch for with the wrapped command (the extension puts
    it in ``event.input.command``); False judges as a host that cannot (the approval channel decides).
    """
    name = event.get("hook_event_name")
    if name == BEFORE:
        return before(event, governor, sandbox=sandbox)
    if name == AFTER:
        return after(event, governor)
    if name == CONTEXT:
        return HookResult.json({"context": context_text(governor, session_of(event))})
    raise Malformed(AGENT, f"unknown pi extension event {name!r} (expected {BEFORE}, {AFTER} or {CONTEXT})",
                    event=name if isinstance(name, str) else None, missing="hook_event_name")
