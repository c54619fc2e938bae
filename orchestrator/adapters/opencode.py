"""opencode adapter: the events of orchestrator's opencode plugin (``.opencode/plugin/orchestrator.js``) in, answers out.

opencode (``opencode-ai``, verified with 1.18.33 in tests/e2e/test_opencode.py) has no command hooks; it loads JS
plugins. Ours (``orchestrator/data/templates/opencode-plugin.js``, written by ``orch install opencode``) forwards
opencode's ``tool.execute.before`` / ``tool.execute.after`` hooks as one event each, over the daemon socket or
through the portable launcher (``.orchestration/bin/orch-hook opencode``), and throws (which blocks the call: the
model reads the error's message as the tool's result) on a refusal or when neither answers. The events, as the
plugin builds them from what opencode hands it (real inputs: tests/data/opencode/):

- ``{"hook_event_name": "tool.execute.before", "tool", "sessionID", "callID", "args", "cwd", "model"?,
  "subagent"?}`` — ``args`` is opencode's ``output.args`` (the tool's arguments, which a plugin may change),
  ``cwd`` the plugin's ``ctx.directory`` (where opencode resolves relative paths and runs ``bash``), ``model``
  ``<providerID>/<modelID>`` of the session's last ``chat.params``, ``subagent`` the child session of a ``task``
  subagent (then ``sessionID`` is the root session, whose intent governs it, as Claude Code's ``agent_id``).
  Answer (stdout, exit 0): ``{}`` to let it run; ``{"deny": <reason>}`` (the plugin throws it);
  ``{"args": {"command": <wrapped>}}`` for a shell command to run in the Landlock sandbox (the plugin assigns
  ``output.args.command``: opencode runs the replaced command, verified).
- ``{"hook_event_name": "tool.execute.after", ...same, "result": {"title", "exit"?, "exists"?, "isError"?}}``
  — ``args`` is the input the tool ran with (a sandboxed command is the wrapped one: unwrapped here before the
  ledger sees it); ``result`` a whitelist of ``output.metadata`` (the plugin never forwards the tool's text).
  A tool that failed (an ``edit`` whose ``oldString`` is absent…) gets no ``tool.execute.after`` at all in
  1.18.33, so it is never recorded; its pre-image is swept like any orphan. Answer: ``{}``, or
  ``{"warning": <text>}`` (changes outside the scope that nothing could stop), which the plugin appends to the
  output the model reads.
- ``{"hook_event_name": "session.context", "sessionID"}`` (``experimental.chat.system.transform``) → ``{"context":
  <the mandate and the IN_PROGRESS intents>}``, added to the system prompt.

Tools (``orchestrator.engine.tools``): ``bash {command, timeout, workdir, description}`` — ``workdir`` (relative to the
project directory) is the shell's cwd; ``write {filePath, content}``, ``edit {filePath, oldString, newString,
replaceAll}``, ``apply_patch {patchText}`` (offered instead of edit/write to ``gpt-*`` models), ``read``, ``glob``,
``grep``, ``list``, ``task``, ``todowrite``, ``todoread``, ``webfetch``, ``websearch``, ``skill``, ``question``;
MCP tools are named ``<server>_<tool>``: the handshake is ``orchestrator_select_active_intent``, recorded here for
the event's ``sessionID`` (the MCP server, started with ``ORCH_MCP_HOOKED=1``, records nothing itself).
"""
from __future__ import annotations

import json
import os
from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

AGENT = "opencode"
#: the handshake tool as opencode names MCP tools (``<server>_<tool>``)
SELECT_TOOL = "orchestrator_select_active_intent"
SHELL_TOOL = "bash"
BEFORE = "tool.execute.before"
AFTER = "tool.execute.after"
CONTEXT = "session.context"


def _str(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value else None


def session_of(event: dict[str, Any]) -> str:
    """The event's ``sessionID`` under the one session rule (:func:`orchestrator.state.sessions.session_from`): no usable
    id is NO_SESSION, whose mutating calls the engine refuses, never the shared ``default`` session."""
    return session_from(event.get("sessionID"))


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise ValueError("args of an opencode tool event is not an object")
    return args


def call_of(event: dict[str, Any]) -> ToolCall:
    """The canonical ToolCall of an opencode tool event (``workdir`` as the shell's cwd, ``callID`` as its id)."""
    tool = _str(event, "tool")
    if tool is None:
        raise ValueError("opencode tool event without a tool")
    args = _args(event)
    cwd = _str(event, "cwd")
    session = session_of(event)
    call_id = _str(event, "callID")
    call = to_call(tool, args, session_id=session, agent=AGENT, agent_id=_str(event, "subagent"), cwd=cwd,
                   # callIDs come from the model (some providers number them call_0, call_1…): scoped by session,
                   # so two sessions' calls never pair with each other's pre-image nor dedupe each other's record
                   tool_use_id=f"{session}/{call_id}" if call_id else None, model_id=_str(event, "model"))
    workdir = args.get("workdir")
    if tool == SHELL_TOOL and isinstance(workdir, str) and workdir.strip():
        # the command runs there; a relative workdir is relative to the project directory (the event's cwd)
        call.cwd = os.path.normpath(os.path.join(cwd or os.getcwd(), workdir))
    return call


def tool_result(result: Any) -> ToolResult:
    """The plugin's ``result`` (a whitelist of opencode's ``output.metadata``) as the engine's :class:`ToolResult`.

    ``isError`` (an MCP tool's failure) → failed; ``exists: false`` (``write`` to a new file) → created. A
    ``bash`` command that exited non-zero ran and may have changed files: not failed.
    """
    if not isinstance(result, dict):
        return ToolResult()
    if result.get("isError") is True:
        return ToolResult.failure()
    if result.get("exists") is False:
        return ToolResult(created=True)
    return ToolResult()


def answer(verdict: Verdict, *, args: dict[str, Any] | None = None) -> HookResult:
    """A ``tool.execute.before`` answer: ``{}``, ``{"deny": reason}`` or the sandboxed ``{"args": {"command"}}``."""
    if verdict.allowed:
        if verdict.command is not None and args is not None:
            return HookResult.json({"args": {"command": verdict.command}})
        return HookResult.json({})
    # an "ask" is a deny: opencode's plugin hook cannot ask a person (the approval channel already had its say)
    return HookResult.json({"deny": verdict.reason})


def unwrapped(event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The event with a sandbox-wrapped ``bash`` command replaced by the original, and whether it was."""
    args = event.get("args")
    if event.get("tool") != SHELL_TOOL or not isinstance(args, dict) or not isinstance(args.get("command"), str):
        return event, False
    from orchestrator.sandbox import unwrap

    original = unwrap(args["command"])
    if original is None:
        return event, False
    return {**event, "args": {**args, "command": original}}, True


def _select_event(event: dict[str, Any]) -> dict[str, Any]:
    """The handshake in the shape :func:`orchestrator.adapters.claude_code.select_intent` reads."""
    return {"session_id": session_of(event), "tool_input": event.get("args")}


def before(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    if event.get("tool") == SELECT_TOOL:
        return answer(claude_code.select_intent(_select_event(event), governor, agent=AGENT))
    call = call_of(event)
    args = _args(event)
    if sandbox and event.get("tool") == SHELL_TOOL and isinstance(args.get("command"), str):
        return answer(governor.pre(call, sandbox=True), args=args)
    return answer(governor.pre(call))


def after(event: dict[str, Any], governor: Any) -> HookResult:
    if event.get("tool") == SELECT_TOOL:
        return HookResult.json({})
    event, sandboxed = unwrapped(event)
    call = call_of(event)
    call.sandboxed = sandboxed
    from orchestrator.post.trace import warning

    record = governor.post(call, tool_result(event.get("result")))
    data = warning(record if isinstance(record, dict) else None)
    if data is None:
        return HookResult.json({})
    text = f"[orchestrator:{data['type']}] {data['message']} Hint: {data['hint']} " + json.dumps(data)
    return HookResult.json({"warning": text})


def context_text(governor: Any, session_id: str) -> str:
    """The mandate and intents, with the handshake and the governance files named as opencode's model sees them."""
    text = claude_code.context_text(governor, session_id, full=True)
    return text.replace(claude_code.SELECT_TOOL, SELECT_TOOL).replace(
        ".claude/settings*.json, .mcp.json", ".opencode/, opencode.json")


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    """Answer one event of orchestrator's opencode plugin (see the module doc).

    ``sandbox``: answer a ``bash`` command the analyzer cannot vouch for with the wrapped command (the plugin puts
    it in ``output.args.command``); False judges as a host that cannot (the approval channel decides).
    """
    name = event.get("hook_event_name")
    if name == BEFORE:
        return before(event, governor, sandbox=sandbox)
    if name == AFTER:
        return after(event, governor)
    if name == CONTEXT:
        return HookResult.json({"context": context_text(governor, session_of(event))})
    raise ValueError(f"unknown opencode plugin event {name!r}")
