"""opencode adapter: the events of orchestrator's opencode plugin (``.opencode/plugin/orchestrator.js``) in, answers
out — for opencode and, as :class:`Host` ``kilo``, for its fork Kilo CLI (:mod:`orchestrator.adapters.kilo`).

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
the event's ``sessionID`` (the MCP server, started with ``ORCH_MCP_HOOKED=1``, records nothing itself). Kilo adds
``background_process {action, command, workdir}``: a ``start`` runs its command, governed (and sandboxed) like
``bash``'s; its other actions run nothing new.
"""
from __future__ import annotations

import json
import os
from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult
from orchestrator.adapters.payload import Malformed, field
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.state.sessions import session_from
from orchestrator.engine.tools import to_call

AGENT = "opencode"
#: the handshake tool as opencode names MCP tools (``<server>_<tool>``)
SELECT_TOOL = "orchestrator_select_active_intent"
SHELL_TOOL = "bash"
#: Kilo's tracked long-running process (``{action: start, command, workdir}``): its command is a shell command too
BACKGROUND_TOOL = "background_process"
#: ``background_process`` actions that run no new command (``restart`` re-runs the one governed at its ``start``)
BACKGROUND_META = frozenset({"list", "status", "logs", "stop", "restart"})
BEFORE = "tool.execute.before"
AFTER = "tool.execute.after"
CONTEXT = "session.context"


class Host:
    """What differs between the CLIs that run orchestrator's opencode plugin: opencode and its fork Kilo
    (:mod:`orchestrator.adapters.kilo`). Their events and tools are the same (tests/data/opencode/, tests/data/kilo/);
    the agent name the calls are governed and recorded under, and the governance files named to the model, differ."""

    __slots__ = ("agent", "files")

    def __init__(self, agent: str, files: str) -> None:
        self.agent = agent
        #: the host's own configuration, named in the mandate as read-only
        self.files = files


OPENCODE = Host(AGENT, ".opencode/, opencode.json")


def _str(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value else None


def session_of(event: dict[str, Any]) -> str:
    """The event's ``sessionID`` under the one session rule (:func:`orchestrator.state.sessions.session_from`): no usable
    id is NO_SESSION, whose mutating calls the engine refuses, never the shared ``default`` session."""
    return session_from(event.get("sessionID"))


def _args(event: dict[str, Any], host: Host = OPENCODE) -> dict[str, Any]:
    args = field(event, "args", dict, host.agent, event=_str(event, "hook_event_name"), optional=True, nonempty=False)
    return {} if args is None else args


def _runs_command(tool: str | None, args: dict[str, Any]) -> bool:
    """Whether the call runs a shell command: ``bash``, or a ``background_process`` that starts one."""
    return tool == SHELL_TOOL or (tool == BACKGROUND_TOOL and args.get("action") not in BACKGROUND_META)


def call_of(event: dict[str, Any], host: Host = OPENCODE) -> ToolCall:
    """The canonical ToolCall of an opencode tool event (``workdir`` as the shell's cwd, ``callID`` as its id)."""
    tool = field(event, "tool", str, host.agent, event=_str(event, "hook_event_name"))
    args = _args(event, host)
    cwd = _str(event, "cwd")
    session = session_of(event)
    call_id = _str(event, "callID")
    call = to_call(tool, args, session_id=session, agent=host.agent, agent_id=_str(event, "subagent"), cwd=cwd,
                   # callIDs come from the model (some providers number them call_0, call_1…): scoped by session,
                   # so two sessions' calls never pair with each other's pre-image nor dedupe each other's record
                   tool_use_id=f"{session}/{call_id}" if call_id else None, model_id=_str(event, "model"),
                   # a background_process call that starts nothing (list, logs, stop…) only reads
                   overrides={tool: "meta"} if tool == BACKGROUND_TOOL and not _runs_command(tool, args) else None)
    workdir = args.get("workdir")
    if _runs_command(tool, args) and isinstance(workdir, str) and workdir.strip():
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


def unwrapped_args(args: dict[str, Any]) -> dict[str, Any] | None:
    """``args`` with a sandbox-wrapped ``command`` replaced by the command the model asked for; None when it was not
    wrapped (the ledger records the original, never the launcher's command line)."""
    if not isinstance(args.get("command"), str):
        return None
    from orchestrator.sandbox import unwrap

    original = unwrap(args["command"])
    return None if original is None else {**args, "command": original}


def unwrapped(event: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The event with a sandbox-wrapped shell command replaced by the original, and whether it was."""
    args = event.get("args")
    if not isinstance(args, dict) or not _runs_command(event.get("tool"), args):
        return event, False
    original = unwrapped_args(args)
    return (event, False) if original is None else ({**event, "args": original}, True)


def _select_event(event: dict[str, Any]) -> dict[str, Any]:
    """The handshake in the shape :func:`orchestrator.adapters.claude_code.select_intent` reads."""
    return {"session_id": session_of(event), "tool_input": event.get("args")}


def before(event: dict[str, Any], governor: Any, *, sandbox: bool = True, host: Host = OPENCODE) -> HookResult:
    if event.get("tool") == SELECT_TOOL:
        return answer(claude_code.select_intent(_select_event(event), governor, agent=host.agent))
    call = call_of(event, host)
    args = _args(event, host)
    if sandbox and _runs_command(event.get("tool"), args) and isinstance(args.get("command"), str):
        return answer(governor.pre(call, sandbox=True), args=args)
    return answer(governor.pre(call))


def after(event: dict[str, Any], governor: Any, host: Host = OPENCODE) -> HookResult:
    if event.get("tool") == SELECT_TOOL:
        return HookResult.json({})
    event, sandboxed = unwrapped(event)
    call = call_of(event, host)
    call.sandboxed = sandboxed
    return recorded(governor, call, tool_result(event.get("result")))


def recorded(governor: Any, call: ToolCall, result: ToolResult) -> HookResult:
    """Record the call that ran (``Governor.post``); ``{}``, or ``{"warning": <text>}`` for the plugin to append to
    what the model reads (changes outside the scope that nothing could stop)."""
    from orchestrator.post.trace import warning

    record = governor.post(call, result)
    data = warning(record if isinstance(record, dict) else None)
    if data is None:
        return HookResult.json({})
    text = f"[orchestrator:{data['type']}] {data['message']} Hint: {data['hint']} " + json.dumps(data)
    return HookResult.json({"warning": text})


def context_text(governor: Any, session_id: str, host: Host = OPENCODE) -> str:
    """The mandate and intents, with the handshake and the governance files named as the host's model sees them."""
    text = claude_code.context_text(governor, session_id, full=True)
    return text.replace(claude_code.SELECT_TOOL, SELECT_TOOL).replace(
        ".claude/settings*.json, .mcp.json", host.files)


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True, host: Host = OPENCODE) -> HookResult:
    """Answer one event of orchestrator's opencode plugin (see the module doc).

    ``sandbox``: answer a ``bash`` command the analyzer cannot vouch for with the wrapped command (the plugin puts
    it in ``output.args.command``); False judges as a host that cannot (the approval channel decides).
    """
    name = event.get("hook_event_name")
    if name == BEFORE:
        return before(event, governor, sandbox=sandbox, host=host)
    if name == AFTER:
        return after(event, governor, host)
    if name == CONTEXT:
        return HookResult.json({"context": context_text(governor, session_of(event), host)})
    raise Malformed(host.agent, f"unknown {host.agent} plugin event {name!r} (expected {BEFORE}, {AFTER} or "
                    f"{CONTEXT})", event=name if isinstance(name, str) else None, missing="hook_event_name")
