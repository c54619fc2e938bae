"""Gemini CLI adapter: ``BeforeTool`` / ``AfterTool`` command hooks (settings ``hooks`` in .gemini/settings.json).

Protocol (https://geminicli.com/docs/hooks/reference): events carry ``session_id, cwd, hook_event_name,
timestamp`` plus ``tool_name, tool_input`` (and ``tool_response {llmContent, returnDisplay, error?}`` after).
``BeforeTool`` refuses with ``{"decision": "deny", "reason": ...}`` (the reason is sent to the model as the tool's
error); exit 2 also blocks. Gemini has no "ask" there, so an "ask" verdict is answered as a deny. Tools:
``write_file``, ``replace``, ``run_shell_command``, ``read_file`` (see :mod:`orchestrator.tools`); MCP tools are
named ``mcp__<server>__<tool>``, so the handshake is ``mcp__orchestrator__select_active_intent`` as in Claude Code.
``SessionStart`` / ``BeforeAgent`` inject the mandate through ``hookSpecificOutput.additionalContext``.
"""
from __future__ import annotations

from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult
from orchestrator.models import Verdict

AGENT = "gemini"


def answer(verdict: Verdict) -> HookResult:
    """A BeforeTool answer: ``{}`` lets the call run, a deny carries the structured reason."""
    if verdict.allowed:
        return HookResult.json({})
    return HookResult.json({"decision": "deny", "reason": verdict.reason})


def handle(event: dict[str, Any], governor: Any) -> HookResult:
    """Answer one Gemini CLI hook event."""
    name = event.get("hook_event_name")
    tool = event.get("tool_name")
    if name == "BeforeTool":
        if tool == claude_code.SELECT_TOOL:
            return answer(claude_code.select_intent(event, governor, agent=AGENT))
        return answer(governor.pre(claude_code.call_from(event, agent=AGENT)))
    if name == "AfterTool":
        if tool != claude_code.SELECT_TOOL:
            response = event.get("tool_response")
            result = response if isinstance(response, dict) else {"output": response}
            governor.post(claude_code.call_from(event, agent=AGENT), result)
        return HookResult.json({})
    if name in ("SessionStart", "BeforeAgent"):
        text = claude_code.context_text(governor, claude_code.session_of(event), full=name == "SessionStart")
        text = text.replace("mcp__orchestrator__select_active_intent", "select_active_intent (MCP server orchestrator)")
        return HookResult.json({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
    return HookResult.json({})
