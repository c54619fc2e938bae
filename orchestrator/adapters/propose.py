"""``propose_intent`` for the hosts and the MCP server: an agent's proposal waits for a person, blocking.

**Blocking, not a pending id the agent polls** (the design choice; docs/adapters.md says the same):

- the wait happens where the session is known — the PreToolUse hook of ``mcp__orchestrator__propose_intent``
  (Claude Code, Codex), exactly where an approval already waits — and it is bounded by the policy's approval
  timeout (``approval.timeout_seconds``, 300 s), below the hook timeout ``orch install`` sets (600 s), so the host
  never kills the wait: it ends in a decision or a structured ``proposal-timeout``;
- the MCP server's own fallback (hosts whose hook does not handle the tool, plain MCP clients) blocks inside the
  tool call: Claude Code 2.1.328 allows an MCP tool call 1e8 ms (``MCP_TOOL_TIMEOUT``) with a 30-minute idle limit
  for stdio servers, others 60 s to 10 minutes — so the server reports progress every few seconds while it waits;
- a pending id would cost a model turn per poll and, in ``claude -p``, the run ends when the model stops asking:
  a model that gives up polling leaves an accepted intent nobody selected. A decision or a timeout it reads at
  once leaves nothing dangling (a proposal nobody decided expires with the wait, like an approval).

On acceptance the hook selects the new intent for the event's session and answers ``allow`` with the proposal id
in ``updatedInput`` (Claude Code), so the MCP tool only renders the intent's context; a rejection is a ``deny``
carrying the person's reason, so the tool never runs.
"""
from __future__ import annotations

from typing import Any

from orchestrator.core.errors import OrchestratorError
from orchestrator.core.models import Verdict
from orchestrator.state.sessions import usable

HOOK = "propose"
#: the tool's argument the hook fills in with the decided proposal's id (the agent leaves it empty)
ID_KEY = "proposal_id"


def fields_of(tool_input: Any) -> dict[str, Any]:
    """The proposal in a tool input, checked (raises :class:`~orchestrator.approvals.proposal.ProposalError`)."""
    from orchestrator.approvals import proposal

    ti = tool_input if isinstance(tool_input, dict) else {}
    return proposal.normalise(ti.get("name"), ti.get("owned_scope"), ti.get("constraints"), ti.get("why"),
                              ti.get("acceptance_criteria"))


def run(governor: Any, tool_input: Any, *, session_id: str, agent: str, agent_id: str | None = None,
        cwd: str | None = None, select: bool = True) -> tuple[Verdict, Any]:
    """Ask a person about the proposal in ``tool_input``; returns the verdict and the
    :class:`~orchestrator.approvals.proposal.Result` (None when the proposal was refused before anyone was asked).
    Accepted: the new intent is selected for ``session_id`` (when it is usable and ``select``: the MCP server of a
    hooked agent knows no session of its own)."""
    from orchestrator.approvals import Broker, proposal, timeout_of

    try:
        fields = fields_of(tool_input)
    except OrchestratorError as exc:
        return _error(exc), None
    try:
        pol = governor.policy
    except OrchestratorError as exc:
        return _error(exc), None
    if pol.approval.channel == "deny":
        return Verdict.deny("proposal-denied", HOOK, f"proposals are refused here: {fields['name']}",
                            hint="this workspace's policy (approval.channel: deny) lets no agent ask a person; "
                                 "ask the person to create the intent (`orch intents new`)"), None
    ws = governor.workspace
    broker = Broker(ws.shared_run_dir, grant_ttl=float(pol.approval.grant_ttl_seconds))
    timeout = timeout_of(pol.approval.timeout_seconds)
    result = proposal.propose(ws, broker, fields, session_id=session_id, agent=agent, timeout=timeout,
                              agent_id=agent_id, cwd=cwd, approval=pol.approval)
    return verdict_of(governor, result, fields, session_id=session_id if select else "", agent=agent), result


def verdict_of(governor: Any, result: Any, fields: dict[str, Any], *, session_id: str, agent: str) -> Verdict:
    """The structured answer the agent reads (and, accepted, the selection for its session)."""
    name = fields["name"]
    common = {"proposal": result.proposal_id}
    if result.decision == "approve":
        if usable(session_id):
            try:
                governor.select_intent(result.intent_id, session_id, agent=agent)
            except OrchestratorError as exc:
                return _error(exc)
        return Verdict.allow()
    if result.decision == "reject":
        return Verdict.deny(
            "proposal-rejected", HOOK, f"a person rejected the proposed intent {name!r}", reason=result.reason,
            by=result.by, **common,
            hint=f"the person said: {result.reason!r}. Do not propose the same intent again and do not change "
                 "files for it; change your plan accordingly or ask the person")
    if result.decision == "timeout":
        return Verdict.deny(
            "proposal-timeout", HOOK, f"no decision on the proposed intent {name!r} within {result.timeout:g} s",
            timeout=result.timeout, **common,
            hint="nobody decided in time (is `orch tui` or the web console open?); the proposal expired and "
                 "nothing was created. Tell the person what you need, or propose again later")
    return Verdict.deny("proposal-invalid", HOOK, f"the proposal {name!r} could not be accepted: {result.error}",
                        **common, hint="a person must create or fix the intent (`orch intents new`)")


def _error(exc: OrchestratorError) -> Verdict:
    return Verdict.refusal(exc.to_dict(), HOOK)
