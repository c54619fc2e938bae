"""GitHub Copilot CLI adapter: ``.github/hooks/*.json`` command hooks, and Copilot running Claude Code's hooks.

Protocol (GitHub Copilot CLI 1.0.102, every point verified with the real binary: tests/e2e/test_copilot_cli.py,
payloads in tests/adapters/fixtures/copilot/):

- ``.github/hooks/*.json`` is ``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "…",
  "timeoutSec": N}], …}}``. The payload names no event: ``{sessionId, timestamp (epoch ms), cwd}`` plus
  ``source, initialPrompt`` (sessionStart), ``prompt`` (userPromptSubmitted), ``toolName, toolArgs`` (preToolUse)
  and ``toolResult {resultType, textResultForLlm}`` (postToolUse). orchestrator installs one identical command for
  every event, so the event is told by its shape (:func:`normalize`).
- Copilot CLI also runs ``.claude/settings.json`` hooks, Claude-shaped (``hook_event_name``, ``session_id``,
  ``tool_name``, ``tool_input``, an ISO ``timestamp``, never a ``transcript_path`` or ``tool_use_id`` before Stop)
  but with Copilot's own arguments: ``Write {path, file_text}``, ``Edit {path, old_str, new_str}``, ``Read
  {path}``, ``Bash {command, description}`` (Copilot's create/edit/view/bash renamed), MCP tools
  ``<server>-<tool>``, and ``tool_result {result_type, text_result_for_llm}``.
  :func:`orchestrator.adapters.base.copilot_shaped` recognises them, and ``orch hook claude-code`` hands them here:
  a repository where only ``orch install claude-code`` ran governs a Copilot user correctly. Where
  ``orch install copilot`` also ran, Copilot runs both files for every call; the Claude-shaped run then steps
  aside (answers nothing) so that a call is judged, sandboxed and recorded once (:func:`native_installed`).
- preToolUse answers ``{"permissionDecision": "deny"|"ask", "permissionDecisionReason": …}``; the model reads
  "Denied by preToolUse hook: <reason>". ``ask`` is asked in an interactive session; in ``-p`` mode Copilot denies
  it ("unable to ask user for confirmation"). ``{"permissionDecision": "allow", "modifiedArgs": {…}}`` replaces the
  tool's arguments: a shell command the analyzer cannot vouch for runs in the Landlock sandbox of the intent
  (the same :meth:`Governor.pre` ``sandbox=True`` wrapping Claude Code's adapter uses), and postToolUse carries the
  wrapped command, unwrapped before the ledger sees it. An allowed call gets no answer (Copilot's own permissions
  still apply). Both files accept this format (the Claude-shaped run accepts Claude Code's too).
- postToolUse, sessionStart and userPromptSubmitted accept ``{"additionalContext": …}``: the session's mandate and
  intents, and a post's out-of-scope warning, reach the model that way.
- Failure modes (measured): a hook that exits 1, 2 or is killed DENIES the call (fail closed; with exit 2 the
  reason is read from a JSON answer on stdout, else the model reads "hook exited with code 2"); a hook that prints
  garbage, or outlives ``timeoutSec``, ALLOWS it (fail open). Hence orchestrator's boundary answers a deny as JSON
  *and* exit 2 (:func:`orchestrator.adapters.base.run_hook`) and the installed preToolUse timeout is generous.
- No tool-call id and no model reach the hooks: a pre-image is paired with its post by a key from session, tool,
  target and arguments (as for Gemini CLI, :func:`orchestrator.adapters.gemini.capture_key`); the record's dedupe
  id adds the post's timestamp. The model id is the last one named in the session's own event log
  (``$COPILOT_HOME`` or ``~/.copilot``, ``session-state/<sessionId>/events.jsonl``), read by the process that
  answers the hook.
- A tool that fails (a create over an existing file, an edit whose ``old_str`` is not found) fires no postToolUse.
- Subagents (``task``; ``Agent`` Claude-shaped) run their tool calls through the same hooks with ``sessionId`` =
  the subagent's own id plus ``agentId``, ``agentType`` and ``parentAgentId`` (``agent_id``… Claude-shaped): they
  are governed under the parent's session and its intent, and recorded with the subagent as ``agent_id``.

Trust, the MCP server and ``orch doctor``'s checks live in :mod:`orchestrator.adapters.copilot_setup`.
"""
from __future__ import annotations

import os
import re
from typing import Any

from orchestrator.adapters import claude_code, gemini
from orchestrator.adapters.base import HookResult, read_tail
from orchestrator.adapters.managed import MARK
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from

AGENT = "copilot"
#: the handshake tool as Copilot names MCP tools (``<server>-<tool>``)
SELECT_TOOL = "orchestrator-select_active_intent"
SHELL_TOOL = "bash"
#: the file orchestrator installs (see copilot_setup); its presence makes the Claude-shaped run step aside
HOOKS_FILE = ".github/hooks/orchestrator.json"
#: Claude Code's names for Copilot's tools, as Copilot sends them to ``.claude/settings.json`` hooks
CLAUDE_NAMES = {"Write": "create", "Edit": "edit", "Bash": "bash", "Read": "view", "Grep": "grep", "Glob": "glob",
                "Agent": "task"}
#: Claude Code's event names as Copilot sends them, and Copilot's own
_EVENTS = {"PreToolUse": "preToolUse", "PostToolUse": "postToolUse", "SessionStart": "sessionStart",
           "UserPromptSubmit": "userPromptSubmitted"}
_PREFIX = "copilot-"
_MODEL = re.compile(rb'"(model|selectedModel)"\s*:\s*"([^"<][^"]*)"')
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def normalize(event: dict[str, Any]) -> dict[str, Any]:
    """Either shape as one: ``{event, session_id, cwd, timestamp, tool_name, tool_input, tool_result}`` with
    Copilot's own tool names (``create``, ``bash``…) and ``tool_result {resultType, textResultForLlm}``.

    ``event`` is None for events orchestrator does not answer (agentStop, sessionEnd, errorOccurred…). A native
    payload is told by its fields: a tool call with a ``toolResult`` is a postToolUse, without one a preToolUse.
    """
    claude = event.get("hook_event_name")
    if isinstance(claude, str):
        tool = event.get("tool_name")
        result = event.get("tool_result")
        if isinstance(result, dict):
            result = {"resultType": result.get("result_type"), "textResultForLlm": result.get("text_result_for_llm")}
        return _subagent({"event": _EVENTS.get(claude), "session_id": event.get("session_id"), "cwd": event.get("cwd"),
                          "timestamp": event.get("timestamp"), "tool_input": event.get("tool_input"),
                          "tool_name": CLAUDE_NAMES.get(tool, tool) if isinstance(tool, str) else tool,
                          "tool_result": result, "claude_shaped": True},
                         event.get("agent_id"), event.get("parent_agent_id"))
    if "toolName" in event:
        name: str | None = "postToolUse" if "toolResult" in event else "preToolUse"
    elif "prompt" in event:
        name = "userPromptSubmitted"
    elif "source" in event or "initialPrompt" in event:
        name = "sessionStart"
    else:
        name = None
    return _subagent({"event": name, "session_id": event.get("sessionId"), "cwd": event.get("cwd"),
                      "timestamp": event.get("timestamp"), "tool_name": event.get("toolName"),
                      "tool_input": event.get("toolArgs"), "tool_result": event.get("toolResult"),
                      "claude_shaped": False}, event.get("agentId"), event.get("parentAgentId"))


def _subagent(ev: dict[str, Any], agent_id: Any, parent: Any) -> dict[str, Any]:
    """A subagent's (``task``) call: its ``sessionId`` is the subagent's own id, so the session whose intent it
    works under is its parent's (``parentAgentId``), and the subagent is recorded as ``agent_id`` (as Claude Code's
    subagents are). A subagent of a subagent would name another subagent as parent: its calls then need their own
    selection (refused until then, fail closed)."""
    if isinstance(agent_id, str) and agent_id and isinstance(parent, str) and parent:
        ev["session_id"] = parent
        ev["agent_id"] = agent_id
    return ev


def native_installed(governor: Any) -> bool:
    """Whether orchestrator's own Copilot hooks are installed in the governor's workspace (then Copilot runs
    them for every call, and a Claude-shaped run of the same call must not judge or record it a second time)."""
    try:
        with open(os.path.join(str(governor.workspace.root), HOOKS_FILE), encoding="utf-8") as fh:
            return MARK in fh.read()
    except (OSError, UnicodeDecodeError, AttributeError):
        return False


def answer(verdict: Verdict, *, tool_input: dict[str, Any] | None = None) -> HookResult:
    """A preToolUse answer: nothing for a plain allow, ``modifiedArgs`` for a sandboxed command (every argument
    kept, ``command`` wrapped), else the decision with the structured reason."""
    if verdict.allowed:
        wrapped = verdict.command
        if wrapped is not None and tool_input is not None:
            return HookResult.json({
                "permissionDecision": "allow",
                "permissionDecisionReason": "orchestrator: runs in the Landlock sandbox of the selected intent "
                                            "(writes only inside its scope)",
                "modifiedArgs": {**tool_input, "command": wrapped},
            })
        return HookResult()
    return HookResult.json({"permissionDecision": verdict.decision, "permissionDecisionReason": verdict.reason})


def is_select(ev: dict[str, Any]) -> bool:
    return ev.get("tool_name") == SELECT_TOOL


def call_of(ev: dict[str, Any]) -> ToolCall:
    """The canonical ToolCall of a normalized tool event, with the key pairing its pre with its post."""
    if not isinstance(ev.get("tool_name"), str) or not ev["tool_name"]:
        raise ValueError("Copilot tool event without a toolName")
    if ev.get("tool_input") is None:
        ev = {**ev, "tool_input": {}}  # Copilot sends `null` arguments for argument-less tools (list_bash)
    call = claude_code.call_from(ev, agent=AGENT)
    call.capture_key = gemini.capture_key(ev, call, prefix=_PREFIX)
    return call


def transcript_path(session_id: Any, env: Any = None) -> str | None:
    """The session's event log Copilot CLI keeps (``$COPILOT_HOME`` or ``~/.copilot``), None for a strange id."""
    if not isinstance(session_id, str) or not _SESSION.fullmatch(session_id):
        return None
    env = os.environ if env is None else env
    home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")
    return os.path.join(home, "session-state", session_id, "events.jsonl")


def model_from_transcript(session_id: Any, *, max_bytes: int = 256 * 1024) -> str | None:
    """The last model named in the tail of the session's event log (an assistant message's or a tool
    execution's ``model``), else the ``selectedModel`` of ``session.start``; None when unknown.

    Copilot writes the log in batches: at a session's first tool call it may hold ``session.start`` alone
    (measured with 1.0.102), hence the fallback; on a loaded machine it may not be written at all for the first
    seconds of a session, and those records carry no model id (best effort, like every agent's model id).
    """
    data = read_tail(transcript_path(session_id), max_bytes)
    if data is None:
        return None
    found = _MODEL.findall(data)
    model = next((value for key, value in reversed(found) if key == b"model"), None)
    if model is None and found:
        model = found[-1][1]
    return model.decode("utf-8", "replace") if model is not None else None


def tool_result(result: Any) -> ToolResult:
    """``toolResult`` as the engine's :class:`ToolResult`: any ``resultType`` but ``success`` is a failure (not
    traced). Copilot gives no pre-image: the engine's own snapshot gives the exact ranges."""
    if isinstance(result, dict) and result.get("resultType") not in (None, "success"):
        return ToolResult.failure()
    return ToolResult()


def pre_tool_use(ev: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    if is_select(ev):
        return answer(claude_code.select_intent(ev, governor, agent=AGENT))
    call = call_of(ev)
    tool_input = ev.get("tool_input")
    if sandbox and ev.get("tool_name") == SHELL_TOOL and isinstance(tool_input, dict) and \
            isinstance(tool_input.get("command"), str):
        return answer(governor.pre(call, sandbox=True), tool_input=tool_input)
    return answer(governor.pre(call))


def post_tool_use(ev: dict[str, Any], governor: Any) -> HookResult:
    if is_select(ev):
        return HookResult()
    ev, sandboxed = gemini.unwrapped(ev, shell=SHELL_TOOL)
    call = call_of(ev)
    call.sandboxed = sandboxed
    stamp = ev.get("timestamp")
    # the record's dedupe id: unique per call (a replayed event has the same timestamp)
    call.tool_use_id = f"{call.capture_key}@{stamp}" if isinstance(stamp, (str, int)) and stamp else None
    if call.kind.mutating:
        call.model_id = model_from_transcript(ev.get("session_id"))
    warned = gemini._warning(governor.post(call, tool_result(ev.get("tool_result"))))
    return HookResult.json({"additionalContext": warned}) if warned is not None else HookResult()


def context_text(governor: Any, session_id: str, *, full: bool) -> str:
    """The mandate and intents, with the handshake and tools named as Copilot's model sees them."""
    text = claude_code.context_text(governor, session_id, full=full)
    return text.replace(claude_code.SELECT_TOOL, SELECT_TOOL).replace(
        "(Write, Edit, NotebookEdit, or a Bash command that changes files)",
        "(create, edit, or a bash command that changes files)").replace(
        ".claude/settings*.json, .mcp.json", ".claude/settings*.json, .mcp.json, .github/hooks/, .github/mcp.json")


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    """Answer one Copilot CLI hook event, from ``.github/hooks`` or Claude-shaped from ``.claude/settings.json``.

    ``sandbox``: answer a shell command the analyzer cannot vouch for with the wrapped command (``modifiedArgs``);
    False judges as a host that cannot (the approval channel decides).
    """
    ev = normalize(event)
    if ev["claude_shaped"] and native_installed(governor):
        return HookResult()  # Copilot runs .github/hooks/orchestrator.json for this same call: it answers
    # the one session rule of every adapter: no usable id is NO_SESSION (refused for mutations), never "default"
    ev["session_id"] = session_from(ev["session_id"])
    name = ev["event"]
    if name == "preToolUse":
        return pre_tool_use(ev, governor, sandbox=sandbox)
    if name == "postToolUse":
        return post_tool_use(ev, governor)
    if name in ("sessionStart", "userPromptSubmitted"):
        if name == "sessionStart":
            gemini.sweep_preimages(governor, prefix=_PREFIX)
        return HookResult.json({"additionalContext": context_text(governor, ev["session_id"],
                                                                  full=name == "sessionStart")})
    return HookResult()
