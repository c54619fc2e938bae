"""Codex CLI adapter: ``.codex/hooks.json`` command hooks speak Claude Code's JSON contract.

Differences handled here (sources: Codex's generated hook schemas, codex-rs/hooks/schema/generated/, and its hook
output parser, codex-rs/hooks/src/engine/output_parser.rs):
- tools are ``Bash`` (``tool_input.command``), ``apply_patch`` (the patch text, also in ``tool_input.command``;
  :func:`orchestrator.engine.tools.patch_paths` reads its ``*** Add/Update/Delete File:`` targets) and MCP tools
  ``mcp__<server>__<tool>`` — so the intent handshake is the same ``mcp__orchestrator__select_active_intent``;
- the payload carries ``model`` (recorded as the call's model id) and ``turn_id``;
- ``permissionDecision: "ask"`` is rejected by Codex ("unsupported permissionDecision:ask"), so an "ask" verdict is
  answered as a deny whose reason says a person must approve (fail closed);
- ``permissionDecision: "allow"`` is accepted *only* together with ``updatedInput`` (a bare allow is rejected as
  unsupported), and ``updatedInput`` needs a string ``command``, which Codex puts in place of ``exec_command``'s
  ``cmd``. That is exactly the sandboxed answer: a shell command the analyzer cannot vouch for (tests, builds,
  scripts) is allowed with ``updatedInput.command`` = the Landlock launcher running the original
  (:mod:`orchestrator.sandbox`), as for Claude Code; every other allowed call gets no answer at all. A ``command``
  sent as argv is wrapped as its shell text (:func:`orchestrator.engine.tools._command_text`), still a string. Codex runs
  the wrapped command inside its own sandbox (0.169.0 on Linux: bubblewrap + seccomp); Landlock nests under it
  (verified in tests/e2e/test_codex_cli.py). Its PostToolUse carries the wrapped command, unwrapped before
  ``Governor.post`` so the ledger and read-stamps see the original;
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
    """Answer one Codex hook event (shell commands the analyzer cannot vouch for are sandboxed, see module doc)."""
    return claude_code.handle(event, governor, agent=AGENT, ask=False, sandbox=True)
