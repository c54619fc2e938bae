"""``orch mcp``: an MCP server (stdio) that lets an agent choose its intent and record lessons.

Tools (Claude Code names them ``mcp__orchestrator__<tool>``):

- ``select_active_intent {intent_id}`` → the ``<intent_context>`` block for that intent;
- ``list_intents`` → the intents with id, name, status and owned scope;
- ``record_lesson {text, intent_id?}`` → appends a lesson (AGENTS.md) through the Governor;
- ``propose_intent {name, owned_scope, why, constraints?, acceptance_criteria?}`` → a person accepts (optionally
  edited) or rejects the proposed intent; accepted, its ``<intent_context>`` (see
  :mod:`orchestrator.adapters.propose` for where the wait happens and why it blocks).

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

    def propose_intent(self, name: Any, owned_scope: Any, why: Any, constraints: Any = None,
                       acceptance_criteria: Any = None, proposal_id: str | None = None) -> str:
        """Propose a new intent; blocks until a person decides (or the approval timeout).

        Hooked agents: the PreToolUse hook already waited, selected the accepted intent for the session and handed
        over ``proposal_id`` (Claude Code), or decided it without handing it over (Codex: found by its fields);
        this renders the context. Otherwise (a plain MCP client, or a host whose hook lets the tool through) the
        wait happens here; the selection is recorded here for an unhooked session, a hooked agent is told to
        select the intent (its session id is only known to its hook).
        """
        from orchestrator.adapters import propose
        from orchestrator.approvals import Broker, proposal
        from orchestrator.core.errors import OrchestratorError

        gov = self.governor
        broker = Broker(gov.workspace.shared_run_dir)
        tool_input = {"name": name, "owned_scope": owned_scope, "why": why, "constraints": constraints,
                      "acceptance_criteria": acceptance_criteria}
        fields = propose.fields_of(tool_input)
        if self.hooked:
            outcome = proposal.outcome_of(broker, proposal_id) if proposal_id else \
                proposal.recent_outcome(broker, fields)
            if outcome is not None and outcome.get("intent_id"):
                return self._accepted(str(outcome["intent_id"]), selected=True)
        verdict, result = propose.run(gov, tool_input, session_id=self.session_id, agent="mcp",
                                      select=not self.hooked)
        if not verdict.allowed or result is None:
            error = dict(verdict.error or {"type": "proposal-invalid", "message": "refused"})
            exc = OrchestratorError(str(error.pop("message", "refused")), hint=error.pop("hint", None),
                                    **{k: v for k, v in error.items() if k != "type"})
            exc.type = str(error.get("type"))  # the agent reads the same error type as from the hook
            raise exc
        return self._accepted(str(result.intent_id), selected=not self.hooked)

    def _accepted(self, intent_id: str, *, selected: bool) -> str:
        from orchestrator.config import intents as _intents
        from orchestrator.post import lessons

        gov = self.governor
        intent = gov.intents().get(intent_id)
        if intent is None:
            return f"A person accepted the proposal as intent {intent_id}, but it is no longer in the intents file."
        head = (f"A person accepted your proposal: intent {intent_id} is IN_PROGRESS and selected for this session."
                if selected else
                f"A person accepted your proposal: intent {intent_id} is IN_PROGRESS. Call select_active_intent "
                f"with intent_id {intent_id!r} before changing files.")
        return head + "\n" + _intents.render_context(intent, lessons.relevant(gov.workspace.agents_md, intent_id))

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

    @server.tool(structured_output=False,
                 description="Propose a new intent when your task fits none of the IN_PROGRESS intents. A person "
                             "accepts it (possibly edited) or rejects it with a reason; this waits for the decision. "
                             "Accepted: returns its <intent_context> (the intent is selected for this session). "
                             "Rejected: the error carries the person's reason; then change nothing for it. "
                             "owned_scope: globs of the files the task changes (e.g. src/auth/**); why: what the "
                             "task is and why no intent fits. Leave proposal_id empty (orchestrator fills it in).")
    def propose_intent(name: str, owned_scope: list[str], why: str, constraints: list[str] | None = None,
                       acceptance_criteria: list[str] | None = None, proposal_id: str | None = None) -> str:
        return guarded(backend.propose_intent, name, owned_scope, why, constraints, acceptance_criteria,
                       proposal_id)

    return server


def serve_stdio(root: str | Path) -> None:
    """Run the server on stdin/stdout until the client closes the pipe."""
    build_server(root).run("stdio")
