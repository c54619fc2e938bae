"""``orch mcp``: an MCP server (stdio) that lets an agent choose its intent and record lessons.

Tools (Claude Code names them ``mcp__orchestrator__<tool>``):

- ``select_active_intent {intent_id}`` → the ``<intent_context>`` block for that intent;
- ``list_intents`` → the intents with id, name, status and owned scope;
- ``record_lesson {text, intent_id?}`` → appends a lesson (AGENTS.md) through the Governor.

Who records the selection: an MCP server cannot see the agent's session id (Gemini CLI 0.61.0, for one, sends none:
no env variable, no ``_meta`` beyond a progress token), so for agents with hooks (Claude Code, Codex, Gemini CLI) the
*pre-tool hook* of the select tool (``mcp__orchestrator__select_active_intent``; Gemini:
``mcp_orchestrator_select_active_intent``) validates the intent and records it for the hook's ``session_id``; the
tool itself then only renders the context. Agents without hooks (or plain MCP
clients) get the selection recorded here, for the session named by ``ORCH_SESSION_ID`` (default ``"default"``).
``orch install`` sets ``ORCH_MCP_HOOKED=1`` in the server's environment for hooked agents.

The SDK (and pydantic) are imported lazily in :func:`build_server`: ``import orchestrator.adapters.mcp`` stays cheap.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from mcp.server.mcpserver import MCPServer

SERVER_NAME = "orchestrator"

INSTRUCTIONS = (
    "This workspace is governed by orchestrator. Before any mutating tool call (Write, Edit, Bash that changes "
    "files), call select_active_intent with the id of an IN_PROGRESS intent (see list_intents). Stay inside that "
    "intent's owned_scope; when a call is refused, read the structured error and its hint."
)


class McpBackend:
    """The governance operations behind the MCP tools, kept free of the SDK so they can be tested directly."""

    def __init__(self, root: str | Path, *, session_id: str | None = None, hooked: bool | None = None) -> None:
        self.root = Path(root)
        self.session_id = session_id or os.environ.get("ORCH_SESSION_ID") or "default"
        self.hooked = hooked if hooked is not None else os.environ.get("ORCH_MCP_HOOKED", "") not in ("", "0")
        self._governor: Any = None

    @property
    def governor(self) -> Any:
        if self._governor is None:
            from orchestrator.engine.pipeline import Governor

            self._governor = Governor(self.root)
        return self._governor

    def select_active_intent(self, intent_id: str) -> str:
        """Validate ``intent_id`` and return its ``<intent_context>``; records the selection unless hooked."""
        if self.hooked:
            return self.intent_context(intent_id)
        return self.governor.select_intent(intent_id, self.session_id, agent="mcp")

    def intent_context(self, intent_id: str) -> str:
        """The ``<intent_context>`` of an IN_PROGRESS intent, without recording a selection (the hook did)."""
        from orchestrator.config import intents as _intents
        from orchestrator.core.errors import IntentError
        from orchestrator.post import lessons

        gov = self.governor
        intents = gov.intents()
        intent = intents.get(str(intent_id))
        available = [i.id for i in intents.in_progress()]
        if intent is None or intent.status != _intents.IN_PROGRESS:
            what = "unknown intent" if intent is None else f"intent is {intent.status}, not IN_PROGRESS:"
            raise IntentError(f"{what} {intent_id!r}", intent=intent_id, available=available,
                              hint="pick one of the available IN_PROGRESS intents")
        return _intents.render_context(intent, lessons.relevant(gov.workspace.agents_md, intent.id))

    def list_intents(self) -> str:
        """The workspace's intents as JSON (id, name, status, owned_scope)."""
        rows = [{"id": i.id, "name": i.name, "status": i.status, "owned_scope": list(i.owned_scope)}
                for i in self.governor.intents()]
        return json.dumps(rows, indent=1)

    def record_lesson(self, text: str, intent_id: str | None = None) -> str:
        """Record a lesson learned; returns a short confirmation."""
        added = self.governor.record_lesson(text, intent_id)
        return "lesson recorded" if added else "lesson already recorded"


def build_server(root: str | Path, *, session_id: str | None = None, hooked: bool | None = None) -> "MCPServer":
    """Build the ``orchestrator`` MCP server for the workspace at ``root``.

    Expected errors (unknown intent, wrong status) become MCP tool errors carrying the structured error as JSON, so
    the model reads the same shape as a refused tool call.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from orchestrator.core.errors import OrchestratorError

    backend = McpBackend(root, session_id=session_id, hooked=hooked)
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    def guarded(fn: Any, *args: Any) -> str:
        try:
            return fn(*args)
        except OrchestratorError as exc:
            raise ToolError(json.dumps(exc.to_dict())) from exc

    # structured_output=False: the model gets the plain text block, not {"result": "..."}
    @server.tool(structured_output=False,
                 description="Select the intent you are working on (required before any mutation). "
                             "Returns its <intent_context>: scope, constraints, acceptance criteria.")
    def select_active_intent(intent_id: str) -> str:
        return guarded(backend.select_active_intent, intent_id)

    @server.tool(structured_output=False,
                 description="List the workspace's intents (id, name, status, owned_scope).")
    def list_intents() -> str:
        return guarded(backend.list_intents)

    @server.tool(structured_output=False,
                 description="Record a lesson learned (appended to AGENTS.md) so later sessions benefit.")
    def record_lesson(text: str, intent_id: str | None = None) -> str:
        return guarded(backend.record_lesson, text, intent_id)

    return server


def serve_stdio(root: str | Path) -> None:
    """Run the server on stdin/stdout until the client closes the pipe."""
    build_server(root).run("stdio")
