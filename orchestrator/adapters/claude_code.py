"""Claude Code adapter: hook events in, Claude Code's hook answers out.

Events (payloads as captured from Claude Code 2.1.328, see tests/adapters/fixtures/claude-code/):

- ``PreToolUse``  → :meth:`Governor.pre`; a refusal answers
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"|"ask",
  "permissionDecisionReason": <message + hint + the structured error as JSON>}}``. An allowed call prints nothing,
  so Claude Code's own permission rules still apply (orchestrator restricts, it never grants).
  ``mcp__orchestrator__select_active_intent`` is the intent handshake: validated and recorded here for the event's
  ``session_id`` (the MCP server cannot know it), refused with a structured error when invalid.
  A shell command the analyzer cannot vouch for (tests, builds, scripts) is allowed *sandboxed*: the answer is
  ``permissionDecision: "allow"`` with ``updatedInput`` = the tool input with ``command`` replaced by the Landlock
  launcher running the original (:mod:`orchestrator.sandbox`); the kernel keeps its writes inside the intent's scope,
  so no person is asked. Claude Code's own deny/ask permission rules still apply to it.
- ``PostToolUseFailure`` → :meth:`Governor.post` with a failed result: nothing is traced, the call's write leases
  are released (:mod:`orchestrator.state.leases`; without it they would hold the file until they expire).
- ``PostToolUse`` → :meth:`Governor.post` (a sandboxed command is unwrapped first: the ledger and read-stamps see
  the original): read-stamps for ``Read`` (optimistic locking between sessions),
  a ledger record for mutations. ``tool_response`` is translated into the engine's :class:`ToolResult` by
  :func:`tool_result` (failure flags; Write/Edit's ``originalFile``/``type`` as the pre-image; ``structuredPatch``).
- ``SessionStart`` / ``UserPromptSubmit`` → ``additionalContext``: the mandate to select an intent before any
  mutation, and the IN_PROGRESS intents.
- ``Stop`` and anything else → nothing to say.

Subagent calls carry ``agent_id``/``agent_type``; they are governed like the main agent's and attributed through
``ToolCall.agent_id``. Failures are handled by :func:`orchestrator.adapters.base.run_hook` (exit 2, never 1).
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from orchestrator.adapters.base import HookResult, read_tail, response_failed, sandbox_reason
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

if TYPE_CHECKING:
    from orchestrator.core.diffing import Hunk

AGENT = "claude-code"
SELECT_TOOL = "mcp__orchestrator__select_active_intent"
#: an agent's proposal of a new intent: decided by a person while this hook waits (orchestrator/adapters/propose.py)
PROPOSE_TOOL = "mcp__orchestrator__propose_intent"

MANDATE = (
    "This workspace is governed by orchestrator. Before any mutating tool call (Write, Edit, NotebookEdit, or a "
    "Bash command that changes files) call the MCP tool `mcp__orchestrator__select_active_intent` with the id of "
    "an IN_PROGRESS intent, then stay inside that intent's owned_scope. Governance files (.orchestration/, "
    ".claude/settings*.json, .mcp.json, AGENTS.md) are read-only. A refused call comes back with a structured "
    "error (type, message, hint): read it and correct course instead of retrying the same call."
)


def handle(event: dict[str, Any], governor: Any, *, agent: str = AGENT, ask: bool = True,
           sandbox: bool | None = None) -> HookResult:
    """Answer one Claude Code hook event.

    Codex CLI speaks the same protocol (:mod:`orchestrator.adapters.codex` calls this with ``agent="codex"`` and
    ``ask=False``: where the agent cannot ask a person, an "ask" verdict is answered as a deny). ``sandbox``: the
    agent runs an ``updatedInput`` command (default: Claude Code; Codex's adapter passes True).
    """
    name = event.get("hook_event_name")
    if name == "PreToolUse":
        return pre_tool_use(event, governor, agent=agent, ask=ask,
                            sandbox=agent == AGENT if sandbox is None else sandbox)
    if name == "PostToolUse":
        return post_tool_use(event, governor, agent=agent)
    if name == "PostToolUseFailure":
        # the tool failed: nothing to trace, but its write leases must go now rather than at their expiry
        return post_tool_use(event, governor, agent=agent, failed=True)
    if name in ("SessionStart", "UserPromptSubmit"):
        return context(event, governor)
    return HookResult()


def session_of(event: dict[str, Any]) -> str:
    """The event's ``session_id`` (:func:`orchestrator.state.sessions.session_from`: no usable id is NO_SESSION, whose
    mutating calls the engine refuses, never the shared ``default`` session)."""
    return session_from(event.get("session_id"))


def call_from(event: dict[str, Any], *, agent: str = AGENT) -> ToolCall:
    """The canonical ToolCall of a tool event (PreToolUse/PostToolUse and their look-alikes in Codex)."""
    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise ValueError("tool event without a tool_name")
    tool_input = event.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        raise ValueError(f"tool_input of {tool} is not an object")
    agent_id = event.get("agent_id")
    return to_call(tool, tool_input or {}, session_id=session_of(event), agent=agent,
                   agent_id=agent_id if isinstance(agent_id, str) else None,
                   cwd=event.get("cwd") if isinstance(event.get("cwd"), str) else None,
                   tool_use_id=event.get("tool_use_id") if isinstance(event.get("tool_use_id"), str) else None,
                   model_id=event.get("model") if isinstance(event.get("model"), str) else None)


def decision(verdict: Verdict, *, ask: bool = True, tool_input: dict[str, Any] | None = None) -> HookResult:
    """A verdict in Claude Code's PreToolUse answer format (nothing at all for a plain allow; for a sandboxed
    command, allow with ``updatedInput``: ``tool_input`` with the wrapped command, every other field kept)."""
    if verdict.allowed:
        wrapped = verdict.command
        if wrapped is not None and tool_input is not None:
            return HookResult.json({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": sandbox_reason(verdict),
                "updatedInput": {**tool_input, "command": wrapped},
            }})
        return HookResult()
    answer = verdict.decision if ask or verdict.decision == "deny" else "deny"
    out: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": answer,
                           "permissionDecisionReason": verdict.reason}
    if answer == "ask" and verdict.command is not None and tool_input is not None:
        # a person's yes runs the command in the kernel sandbox all the same (the prompt shows the wrapped line)
        out["updatedInput"] = {**tool_input, "command": verdict.command}
    return HookResult.json({"hookSpecificOutput": out})


def error_verdict(exc: OrchestratorError, hook: str) -> Verdict:
    """An expected engine error (unknown intent, bad config) as a structured deny verdict."""
    return Verdict.refusal(exc.to_dict(), hook)


def select_intent(event: dict[str, Any], governor: Any, *, agent: str = AGENT) -> Verdict:
    """The handshake: validate the requested intent and record it for the event's session."""
    tool_input = ti if isinstance(ti := event.get("tool_input"), dict) else {}
    intent_id = tool_input.get("intent_id")
    if not isinstance(intent_id, str) or not intent_id.strip():
        available = [i.id for i in governor.intents().in_progress()]
        return Verdict.deny("intent-invalid", "select", "select_active_intent needs an intent_id",
                            available=available, hint="call it again with one of the available intent ids")
    try:
        governor.select_intent(intent_id.strip(), session_of(event), agent=agent)
    except OrchestratorError as exc:
        return error_verdict(exc, "select")
    return Verdict.allow()


def propose_intent(event: dict[str, Any], governor: Any, *, agent: str = AGENT, ask: bool = True) -> HookResult:
    """The agent proposes an intent: a person decides while this hook waits. Accepted, the intent is selected for
    the event's session and the tool gets the proposal's id (``updatedInput``: it renders the intent's context);
    rejected, the deny carries the person's reason. Codex accepts no ``updatedInput`` without a command: there
    the tool finds the decided proposal by its fields (:func:`orchestrator.adapters.mcp.McpBackend.propose_intent`)."""
    from orchestrator.adapters import propose

    session = session_of(event)
    if not session:
        from orchestrator.state.sessions import session_required

        return decision(session_required(propose.HOOK), ask=ask)
    agent_id = event.get("agent_id")
    verdict, result = propose.run(governor, event.get("tool_input"), session_id=session, agent=agent,
                                  agent_id=agent_id if isinstance(agent_id, str) else None,
                                  cwd=event.get("cwd") if isinstance(event.get("cwd"), str) else None)
    tool_input = event.get("tool_input")
    if verdict.allowed and result is not None and agent == AGENT and isinstance(tool_input, dict):
        return HookResult.json({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": f"orchestrator: a person accepted the proposal; intent {result.intent_id} "
                                        f"is selected for this session",
            "updatedInput": {**tool_input, propose.ID_KEY: result.proposal_id},
        }})
    return decision(verdict, ask=ask)


def pre_tool_use(event: dict[str, Any], governor: Any, *, agent: str = AGENT, ask: bool = True,
                 sandbox: bool = False) -> HookResult:
    if event.get("tool_name") == SELECT_TOOL:
        return decision(select_intent(event, governor, agent=agent), ask=ask)
    if event.get("tool_name") == PROPOSE_TOOL:
        return propose_intent(event, governor, agent=agent, ask=ask)
    call = call_from(event, agent=agent)
    defer = agent == AGENT and print_mode()
    if sandbox and isinstance(event.get("tool_input"), dict) and _is_command(event["tool_input"].get("command")):
        return decision(governor.pre(call, sandbox=True, defer=defer), ask=ask, tool_input=event["tool_input"])
    return decision(governor.pre(call, defer=defer), ask=ask)


def print_mode() -> bool:
    """Claude Code runs in print mode (``claude -p``: entry point ``sdk-cli``), where a PreToolUse hook may answer
    ``defer``: the run ends with the call in ``deferred_tool_use`` and ``claude -p --resume`` asks the hook again
    (verified with the pinned CLI, docs/console.md). Never in an interactive session, where "defer" is not a
    decision. The hook's own environment in process; the one its client forwarded when the daemon answers."""
    broker = sys.modules.get("orchestrator.approvals.broker")  # the daemon imported it to set CALL_ENV
    forwarded = broker.CALL_ENV.get() if broker is not None else None
    if forwarded is not None:
        return forwarded.get("ORCH_CLAUDE_ENTRYPOINT") == "sdk-cli"
    return os.environ.get("CLAUDE_CODE_ENTRYPOINT") == "sdk-cli"


def _is_command(value: Any) -> bool:
    """A shell command as an agent sends it: a string, or argv (Codex); the wrapped form is always a string."""
    return isinstance(value, str) or (isinstance(value, list) and bool(value) and
                                      all(isinstance(w, str) for w in value))


def post_tool_use(event: dict[str, Any], governor: Any, *, agent: str = AGENT, failed: bool = False) -> HookResult:
    if event.get("tool_name") == SELECT_TOOL:
        return HookResult()
    result = ToolResult.failure() if failed else tool_result(event.get("tool_response"))
    tool_input = event.get("tool_input")
    if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        from orchestrator.sandbox import unwrap

        original = unwrap(tool_input["command"])
        if original is not None:  # the command ran sandboxed: record what the agent asked for
            event = {**event, "tool_input": {**tool_input, "command": original}}
    else:
        original = None
    call = call_from(event, agent=agent)
    call.sandboxed = original is not None
    if call.model_id is None and call.kind.mutating:
        # Claude Code's hook payload names no model; its transcript does, per assistant message.
        call.model_id = model_from_transcript(event.get("transcript_path"), call.tool_use_id)
    warning = _post_warning(governor.post(call, result))
    if warning is None:
        return HookResult()
    # the command changed files outside the intent's scope (nothing could stop it, or no sandbox did): tell the
    # agent now, in the structured form of a denial; the ledger record already holds them
    text = f"[orchestrator:{warning['type']}] {warning['message']} Hint: {warning['hint']} " + json.dumps(warning)
    return HookResult.json({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}})


def tool_result(response: Any) -> ToolResult:
    """Claude Code's (and Codex's) PostToolUse ``tool_response`` as the engine's :class:`ToolResult`.

    - failed: ``is_error`` / ``error`` / ``success: false``, or ``interrupted`` before any output
      (:func:`orchestrator.adapters.base.response_failed`);
    - Write/Edit: ``type: "create"`` → ``created`` (no pre-image); ``originalFile`` text → ``original`` (the
      pre-image, trusted over the engine's snapshot). ``originalFile: null`` tells nothing: Claude Code leaves the
      text out for a subagent, an older session or a large file (a Write's ``type: "update"`` included), so the
      engine's snapshot decides;
    - ``structuredPatch`` (jsdiff hunks with context lines) → ``hunks``, only when no pre-image is given (the engine
      reads them only then); a malformed one is left out, as the engine ignored it when it had its own snapshot.

    A response that is not an object (Codex's ``apply_patch`` answers with text) tells nothing beyond "it ran".
    """
    if not isinstance(response, dict):
        return ToolResult()
    if response_failed(response):
        return ToolResult.failure()
    created = response.get("type") == "create"
    original = response.get("originalFile")
    if not isinstance(original, str):
        original = None  # null: left out, not "no file" (sdk-tools.d.ts: "or when ... too large to include")
    hunks = None
    if not created and original is None:
        patch = response.get("structuredPatch")
        if patch and isinstance(patch, list):
            try:
                hunks = hunks_from_structured_patch(patch)
            except (TypeError, ValueError, AttributeError):
                # only a fallback (the engine's snapshot usually gives the pre-image): a malformed one must not
                # fail the hook and cost the record
                hunks = None
    return ToolResult(created=created, original=original, hunks=hunks)


def hunks_from_structured_patch(patch: list[Any]) -> list[Hunk]:
    """Convert Claude Code's ``structuredPatch`` (jsdiff hunks *with* context lines) to ``-U0`` hunks.

    Each input hunk has ``oldStart``, ``newStart`` and ``lines`` prefixed with ``" "``, ``"-"`` or ``"+"``.
    The ledger's fallback when no pre-image is known (neither the tool's nor the engine's snapshot).
    """
    from orchestrator.core.diffing import Hunk  # lazily: only a response without a pre-image needs it

    def close(cur: list[int]) -> Hunk:
        os_, ol, ns_, nl = cur
        return Hunk(os_ if ol else os_ - 1, ol, ns_ if nl else ns_ - 1, nl)

    hunks: list[Hunk] = []
    for ph in patch or ():
        o = int(ph.get("oldStart", 1))
        n = int(ph.get("newStart", 1))
        cur: list[int] | None = None  # [old_start, old_lines, new_start, new_lines]
        for raw in ph.get("lines", ()):
            tag = raw[:1]
            if tag == "\\":  # "\ No newline at end of file"
                continue
            if tag == " ":
                if cur is not None:
                    hunks.append(close(cur))
                    cur = None
                o += 1
                n += 1
                continue
            if cur is None:
                cur = [o, 0, n, 0]
            if tag == "-":
                cur[1] += 1
                o += 1
            elif tag == "+":
                cur[3] += 1
                n += 1
        if cur is not None:
            hunks.append(close(cur))
    return hunks


def _post_warning(record: Any) -> dict[str, Any] | None:
    from orchestrator.post.trace import warning

    return warning(record if isinstance(record, dict) else None)


def model_from_transcript(path: Any, tool_use_id: str | None, *, max_bytes: int = 256 * 1024) -> str | None:
    """The model that issued ``tool_use_id``, from the tail of a Claude Code transcript (JSONL); else the last
    model seen there; None when unreadable. Reads at most ``max_bytes`` from the end of the file."""
    data = read_tail(path, max_bytes)
    if data is None:
        return None
    fallback = None
    for line in reversed(data.splitlines()):
        if b'"assistant"' not in line:
            continue
        try:
            message = json.loads(line).get("message")
        except (ValueError, AttributeError):
            continue
        model = message.get("model") if isinstance(message, dict) else None
        if not isinstance(model, str) or not model or model.startswith("<"):  # "<synthetic>" messages
            continue
        if tool_use_id and any(isinstance(b, dict) and b.get("id") == tool_use_id
                               for b in message.get("content") or []):
            return model
        fallback = fallback or model
    return fallback


def context_text(governor: Any, session_id: str, *, full: bool = True) -> str:
    """The mandate plus the IN_PROGRESS intents and this session's selection."""
    try:
        intents = governor.intents()
    except OrchestratorError as exc:
        return (f"{MANDATE}\nWARNING: the intents file cannot be loaded ({exc}); every mutation will be refused "
                "until a person fixes it.")
    selected = governor.sessions.get(session_id).get("intent_id")
    if not full and selected:
        return f"orchestrator: this session works on intent {selected}; stay inside its owned_scope."
    active = intents.in_progress()
    lines = [MANDATE]
    if active:
        lines.append("IN_PROGRESS intents:")
        lines += [f"- {i.id}: {i.name} (owned_scope: {', '.join(i.owned_scope) or 'none'})" for i in active]
    else:
        lines.append("There is no IN_PROGRESS intent: mutations will be refused until a person starts one.")
    lines.append(f"Selected for this session: {selected}." if selected else "No intent selected yet.")
    return "\n".join(lines)


def context(event: dict[str, Any], governor: Any) -> HookResult:
    name = event["hook_event_name"]
    text = context_text(governor, session_of(event), full=name == "SessionStart")
    return HookResult.json({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
