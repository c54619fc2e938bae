"""Cursor adapter: ``.cursor/hooks.json`` (``{"version": 1, "hooks": {...}}``) command hooks.

Protocol (https://cursor.com/docs/hooks): every event carries ``conversation_id`` (our session id),
``generation_id``, ``workspace_roots`` and ``hook_event_name``.

- ``preToolUse {tool_name, tool_input, tool_use_id}``, ``beforeShellExecution {command, cwd}``,
  ``beforeMCPExecution {tool_name, tool_input}`` → :meth:`Governor.pre`, answered with
  ``{"permission": allow|deny|ask, "user_message", "agent_message"}`` (``decision``/``reason`` are sent too, for
  builds that read the older preToolUse shape); exit 2 also blocks.
- ``beforeReadFile {file_path, content}`` → refused for secret files (:mod:`orchestrator.pre.secrets`), else
  allowed, and the file's hash is stamped for this conversation (Cursor has no after-read event), so optimistic
  locking works across conversations.
- ``afterFileEdit {file_path, edits[{old_string, new_string}]}`` → the ledger record. It is the one trace point for
  file edits (``postToolUse`` only stamps reads), so an edit is never logged twice.
- ``sessionStart`` → ``{"additional_context": mandate}``.

The intent handshake is the orchestrator MCP server's ``select_active_intent``: Cursor reports the bare tool name
in ``beforeMCPExecution`` (with the server's ``command``/``url``), ``MCP:select_active_intent`` or
``mcp__orchestrator__select_active_intent`` in ``preToolUse`` depending on the build; all are recognised.
"""
from __future__ import annotations

import json
from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult
from orchestrator.core.models import Kind, ToolCall, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

AGENT = "cursor"
#: Cursor tool names -> the registry's names for the same operation
ALIASES = {"StrReplace": "Edit", "MultiEdit": "Edit", "TabWrite": "Write", "ReadFile": "Read",
           "Terminal": "Shell", "run_terminal_cmd": "Shell", "edit_file": "Edit", "read_file": "Read",
           "delete_file": "Delete"}
SELECT_NAMES = {"select_active_intent", "MCP:select_active_intent", claude_code.SELECT_TOOL}


def session_of(event: dict[str, Any]) -> str:
    """The event's ``conversation_id`` under the one session rule (:func:`orchestrator.state.sessions.session_from`)."""
    return session_from(event.get("conversation_id"))


def _cwd(event: dict[str, Any]) -> str | None:
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = event.get("workspace_roots")
    return roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None


def _input(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # beforeMCPExecution sends tool_input as a JSON string in some builds
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("tool_input is not an object")
    value = dict(value)
    # Cursor's file tools say path/contents where the registry expects file_path/content
    if "file_path" not in value and isinstance(value.get("path"), str):
        value["file_path"] = value["path"]
    if "content" not in value and isinstance(value.get("contents"), str):
        value["content"] = value["contents"]
    return value


def call_of(event: dict[str, Any], tool: str, tool_input: dict[str, Any]) -> ToolCall:
    tool_use_id = event.get("tool_use_id")
    return to_call(ALIASES.get(tool, tool), tool_input, session_id=session_of(event), agent=AGENT, cwd=_cwd(event),
                   tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
                   model_id=event.get("model") if isinstance(event.get("model"), str) else None)


def answer(verdict: Verdict) -> HookResult:
    """A permission answer; the structured reason goes to the agent, a short message to the person."""
    if verdict.allowed:
        return HookResult.json({"permission": "allow", "decision": "allow"})
    error = verdict.error or {}
    return HookResult.json({"permission": verdict.decision, "decision": verdict.decision,
                            "user_message": f"orchestrator: {error.get('message', verdict.decision)}",
                            "agent_message": verdict.reason, "reason": verdict.reason})


def _select(event: dict[str, Any], governor: Any, tool_input: dict[str, Any]) -> HookResult:
    fake = {"session_id": session_of(event), "tool_input": tool_input}
    return answer(claude_code.select_intent(fake, governor, agent=AGENT))


def handle(event: dict[str, Any], governor: Any) -> HookResult:
    """Answer one Cursor hook event."""
    name = event.get("hook_event_name")
    if name in ("preToolUse", "beforeMCPExecution"):
        tool = event.get("tool_name")
        if not isinstance(tool, str) or not tool:
            raise ValueError(f"{name} without a tool_name")
        tool_input = _input(event.get("tool_input"))
        if tool in SELECT_NAMES:
            return _select(event, governor, tool_input)
        if name == "beforeMCPExecution" and not tool.startswith("mcp__"):
            tool = f"mcp__{tool}"  # an MCP tool unknown to the registry stays unknown: policy decides
        return answer(governor.pre(call_of(event, tool, tool_input)))
    if name == "beforeShellExecution":
        command = event.get("command")
        if not isinstance(command, str):
            raise ValueError("beforeShellExecution without a command")
        return answer(governor.pre(call_of(event, "Shell", {"command": command})))
    if name == "beforeReadFile":
        path = event.get("file_path")
        if not isinstance(path, str) or not path:
            raise ValueError("beforeReadFile without a file_path")
        call = call_of(event, "Read", {"file_path": path})
        verdict = governor.pre(call)
        if verdict.allowed:
            governor.post(call_of(event, "Read", {"file_path": path}))
        return answer(verdict)
    if name == "postToolUse":
        tool = event.get("tool_name")
        if isinstance(tool, str):
            call = call_of(event, tool, _input(event.get("tool_input")))
            if call.kind is Kind.READ:
                governor.post(call)
        return HookResult.json({})
    if name == "afterFileEdit":
        path = event.get("file_path")
        if not isinstance(path, str) or not path:
            raise ValueError("afterFileEdit without a file_path")
        edits = event.get("edits") if isinstance(event.get("edits"), list) else []
        # the edits say nothing the engine needs (no pre-image), and the event no id to find its preToolUse by:
        # recorded as unpaired (post/trace.py)
        call = call_of(event, "Edit", {"file_path": path, "edits": edits})
        call.pairless = True
        governor.post(call)
        return HookResult.json({})
    if name == "sessionStart":
        text = claude_code.context_text(governor, session_of(event))
        text = text.replace("mcp__orchestrator__select_active_intent", "select_active_intent (MCP server orchestrator)")
        return HookResult.json({"additional_context": text})
    return HookResult.json({})
