"""Codex CLI adapter: ``.codex/hooks.json`` command hooks speak Claude Code's JSON contract.

Differences handled here (sources: Codex's generated hook schemas, codex-rs/hooks/schema/generated/):
- tools are ``Bash`` (``tool_input.command``), ``apply_patch`` (the patch text, also in ``tool_input.command``;
  :func:`orchestrator.tools.patch_paths` reads its ``*** Add/Update/Delete File:`` targets) and MCP tools
  ``mcp__<server>__<tool>`` — so the intent handshake is the same ``mcp__orchestrator__select_active_intent``;
- the payload carries ``model`` (recorded as the call's model id) and ``turn_id``;
- ``permissionDecision: "ask"`` is not something we can rely on in Codex, so an "ask" verdict is answered as a
  deny whose reason says a person must approve (fail closed);
- ``exec_command``'s ``workdir`` is not in ``tool_input``: Codex 0.169.0 sends it as the event's ``cwd`` (verified
  in tests/e2e/test_codex_cli.py), which is the call's cwd here.

Trust, the MCP server and ``orch doctor``'s check live in :mod:`orchestrator.adapters.codex_setup`.
"""
from __future__ import annotations

from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult

AGENT = "codex"


def handle(event: dict[str, Any], governor: Any) -> HookResult:
    """Answer one Codex hook event."""
    return claude_code.handle(event, governor, agent=AGENT, ask=False)
