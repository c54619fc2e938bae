"""Gemini CLI adapter: ``BeforeTool`` / ``AfterTool`` command hooks (settings ``hooks`` in .gemini/settings.json).

Protocol (https://geminicli.com/docs/hooks/reference; payloads as sent by Gemini CLI 0.61.0, see
tests/e2e/test_gemini_cli.py): events carry ``session_id, transcript_path, cwd, hook_event_name, timestamp`` plus
``tool_name, tool_input`` (and ``tool_response {llmContent, returnDisplay, error?}`` after). ``BeforeTool``
refuses with ``{"decision": "deny", "reason": ...}`` (the reason is sent to the model as the tool's error); exit 2
also blocks. An "ask" verdict is answered as a deny (the approval channel already had its say).

Shell commands the analyzer cannot vouch for (tests, builds, scripts) run in the kernel sandbox like Claude Code's:
BeforeTool answers ``{"decision": "allow", "hookSpecificOutput": {"tool_input": {...}}}`` with ``command`` replaced
by the Landlock launcher running the original (:mod:`orchestrator.sandbox`), so no person is asked. What Gemini CLI
0.61.0 does with it (its scheduler, ``evaluateBeforeToolHook``): the hook's ``tool_input`` *replaces* the model's
arguments (the invocation is rebuilt from it alone, hence every field is sent), Gemini's own policy and
confirmation then judge the wrapped command (``--yolo``/an allow rule: no prompt; otherwise its prompt shows the
launcher line), the shell tool runs it with ``bash -c`` in ``dir_path``, the model's result gets "[System] Tool
input parameters were modified by a hook before execution." appended, and AfterTool's ``tool_input`` is the
wrapped input: it is unwrapped (:func:`unwrapped`) before the pairing key and the ledger see it.

What differs from Claude Code, and how it is handled here:

- MCP tools are named ``mcp_<server>_<tool>`` (single underscores) and carry ``mcp_context {server_name,
  tool_name}``: the handshake is ``mcp_orchestrator_select_active_intent``, recognised by either. Its BeforeTool
  hook records the selection for the event's ``session_id`` (Gemini tells the MCP server nothing about the
  session, so the server, started with ``ORCH_MCP_HOOKED=1``, records nothing itself).
- ``run_shell_command`` runs in ``tool_input.dir_path`` (relative to ``cwd``) when given: that is the command's
  working directory for the analysis, so ``echo x > f`` with ``dir_path: "src"`` is ``src/f``.
- Events carry no tool-call id. A pre-image is paired with its post by a key both compute from the session, the
  tool, the canonical target and a hash of ``tool_input`` (:func:`capture_key`); the record's dedupe id adds the
  AfterTool's timestamp, so two identical calls both get a record. Pre-images whose post never came (a call
  refused by Gemini's own policy, a crash) are overwritten by the next identical call and swept at SessionStart.
- ``AfterTool``'s ``tool_response.returnDisplay.originalContent`` (the file before a ``write_file``/``replace``;
  ``isNewFile`` for a create) is handed to the ledger as the pre-image, like Claude Code's ``originalFile``: both
  become the engine's :class:`~orchestrator.core.models.ToolResult` (:func:`tool_result`).
- No model in the payload: the model id comes from the session transcript (``transcript_path``, JSONL whose
  ``gemini`` messages carry ``model``).

``SessionStart`` / ``BeforeAgent`` inject the mandate through ``hookSpecificOutput.additionalContext``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from typing import Any

from orchestrator.adapters import claude_code
from orchestrator.adapters.base import HookResult, read_tail, response_failed, sandbox_reason
from orchestrator.core.models import ToolCall, ToolResult, Verdict

AGENT = "gemini"
SERVER = "orchestrator"
#: the handshake tool as Gemini CLI names it (``mcp_<server>_<tool>``)
SELECT_TOOL = "mcp_orchestrator_select_active_intent"
#: Gemini CLI's shell tool (``tool_input {command, dir_path?, description?, is_background?}``)
SHELL_TOOL = "run_shell_command"
#: pre-images of Gemini calls whose AfterTool never came are removed at SessionStart after this many seconds
STALE_PREIMAGE_S = 3600.0
_PREFIX = "gemini-"
_MODEL = re.compile(rb'"model"\s*:\s*"([^"<][^"]*)"')


def answer(verdict: Verdict, *, tool_input: dict[str, Any] | None = None) -> HookResult:
    """A BeforeTool answer: ``{}`` lets the call run, a deny carries the structured reason.

    A sandboxed shell command (``verdict.command``) is allowed with ``hookSpecificOutput.tool_input``: the whole
    ``tool_input`` (``dir_path``, ``description``... kept) with ``command`` replaced by the wrapped one. Gemini CLI
    0.61.0 builds the invocation from that object alone (it replaces the model's arguments, see the module doc), so
    every field is sent, not only ``command``.
    """
    if verdict.allowed:
        wrapped = verdict.command
        if wrapped is not None and tool_input is not None:
            return HookResult.json({
                "decision": "allow",
                "reason": sandbox_reason(verdict),
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {**tool_input, "command": wrapped}},
            })
        return HookResult.json({})
    return HookResult.json({"decision": "deny", "reason": verdict.reason})


def _shell_input(event: dict[str, Any], shell: str = SHELL_TOOL) -> dict[str, Any] | None:
    """``tool_input`` of a ``run_shell_command`` (or ``shell``) event that carries a command, else None."""
    tool_input = event.get("tool_input")
    if event.get("tool_name") == shell and isinstance(tool_input, dict) and \
            isinstance(tool_input.get("command"), str):
        return tool_input
    return None


def unwrapped(event: dict[str, Any], *, shell: str = SHELL_TOOL) -> tuple[dict[str, Any], bool]:
    """The event with a sandbox-wrapped ``run_shell_command`` command replaced by the original, and whether it was.

    AfterTool's ``tool_input`` is the input the tool ran with, i.e. the wrapped one: the ledger, the read-stamps
    and the pre-image pairing key (:func:`capture_key`, computed in BeforeTool from the original) need the command
    the model asked for. ``shell``: the agent's shell tool (Copilot CLI's adapter passes ``bash``).
    """
    tool_input = _shell_input(event, shell)
    if tool_input is None:
        return event, False
    from orchestrator.sandbox import unwrap

    original = unwrap(tool_input["command"])
    if original is None:
        return event, False
    return {**event, "tool_input": {**tool_input, "command": original}}, True


def is_select(event: dict[str, Any]) -> bool:
    """Is this the ``select_active_intent`` tool of the ``orchestrator`` MCP server?"""
    tool = event.get("tool_name")
    if tool in (SELECT_TOOL, claude_code.SELECT_TOOL):
        return True
    ctx = event.get("mcp_context")
    return isinstance(ctx, dict) and ctx.get("server_name") == SERVER and ctx.get("tool_name") == \
        "select_active_intent"


def _cwd(event: dict[str, Any]) -> str | None:
    cwd = event.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def capture_key(event: dict[str, Any], call: ToolCall, *, prefix: str = _PREFIX) -> str:
    """The key that pairs a call's BeforeTool with its AfterTool (Gemini sends no tool-call id).

    Session, tool, canonical target (the file tool's path, or the shell command's working directory, made
    absolute against ``cwd``) and the canonical JSON of ``tool_input``: identical in both events of one call.
    """
    base = call.cwd or _cwd(event) or ""
    target = call.paths[0] if call.paths else ""
    target = os.path.normpath(os.path.join(base, target)) if target or base else ""
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    material = "\0".join((call.session_id, call.tool, target,
                          json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)))
    return prefix + hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()[:40]


def call_of(event: dict[str, Any]) -> ToolCall:
    """The canonical ToolCall of a Gemini tool event (dir_path as the shell's cwd, the pairing key)."""
    call = claude_code.call_from(event, agent=AGENT)
    tool_input = ti if isinstance(ti := event.get("tool_input"), dict) else {}
    dir_path = tool_input.get("dir_path")
    if call.tool == "run_shell_command" and isinstance(dir_path, str) and dir_path.strip():
        # the command runs there; a relative dir_path is relative to the project directory (the event's cwd)
        call.cwd = os.path.normpath(os.path.join(_cwd(event) or os.getcwd(), dir_path))
    call.capture_key = capture_key(event, call)
    return call


def model_from_transcript(path: Any, *, max_bytes: int = 256 * 1024) -> str | None:
    """The last model named in the tail of a Gemini CLI session transcript (JSONL); None when unknown."""
    data = read_tail(path, max_bytes)
    if data is None:
        return None
    found = _MODEL.findall(data)
    return found[-1].decode("utf-8", "replace") if found else None


def tool_result(response: Any) -> ToolResult:
    """AfterTool's ``tool_response`` as the engine's :class:`ToolResult`: ``error`` (and the other failure flags of
    :func:`orchestrator.adapters.base.response_failed`) → failed; ``returnDisplay.originalContent`` → the pre-image.
    """
    if not isinstance(response, dict):
        return ToolResult()
    if response_failed(response):
        return ToolResult.failure()
    display = response.get("returnDisplay")
    if isinstance(display, dict) and "originalContent" in display:
        # a new file comes with originalContent "" and isNewFile: it did not exist, it was not empty
        original = None if display.get("isNewFile") else display.get("originalContent")
        if original is None:
            return ToolResult(created=True)
        if isinstance(original, str):
            return ToolResult(original=original)
    return ToolResult()


def sweep_preimages(governor: Any, *, max_age: float = STALE_PREIMAGE_S, prefix: str = _PREFIX) -> int:
    """Remove this adapter's pre-images (names starting with ``prefix``) older than ``max_age`` seconds (their
    AfterTool never came)."""
    try:
        folder = os.path.join(str(governor.workspace.run_dir), "preimages")
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".json")]
    except (AttributeError, OSError):
        return 0
    cutoff = time.time() - max_age
    removed = 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed


def _warning(record: Any) -> str | None:
    """The out-of-scope warning of a ledger record as text for the model, or None."""
    from orchestrator.post.trace import warning

    data = warning(record if isinstance(record, dict) else None)
    if data is None:
        return None
    return f"[orchestrator:{data['type']}] {data['message']} Hint: {data['hint']} " + json.dumps(data)


def context_text(governor: Any, session_id: str, *, full: bool) -> str:
    """The mandate and intents, with the handshake named as Gemini's model sees it."""
    text = claude_code.context_text(governor, session_id, full=full)
    return text.replace(claude_code.SELECT_TOOL, SELECT_TOOL)


def handle(event: dict[str, Any], governor: Any, *, sandbox: bool = True) -> HookResult:
    """Answer one Gemini CLI hook event.

    ``sandbox``: answer a shell command the analyzer cannot vouch for with the wrapped command (Gemini CLI runs
    BeforeTool's ``tool_input``); False judges as a host that cannot (the approval channel decides).
    """
    name = event.get("hook_event_name")
    if name == "BeforeTool":
        if is_select(event):
            return answer(claude_code.select_intent(event, governor, agent=AGENT))
        shell_input = _shell_input(event) if sandbox else None
        if shell_input is not None:
            return answer(governor.pre(call_of(event), sandbox=True), tool_input=shell_input)
        return answer(governor.pre(call_of(event)))
    if name == "AfterTool":
        if not is_select(event):
            event, sandboxed = unwrapped(event)
            call = call_of(event)
            call.sandboxed = sandboxed
            stamp = event.get("timestamp")
            # the record's dedupe id: unique per call (a replayed event has the same timestamp)
            call.tool_use_id = f"{call.capture_key}@{stamp}" if isinstance(stamp, str) and stamp else None
            if call.kind.mutating:
                call.model_id = model_from_transcript(event.get("transcript_path"))
            warned = _warning(governor.post(call, tool_result(event.get("tool_response"))))
            if warned is not None:
                # changes outside the intent's scope that nothing could stop: the model reads them with the tool's
                # result (AfterTool's additionalContext), in the structured form of a denial
                return HookResult.json({"hookSpecificOutput": {"hookEventName": "AfterTool",
                                                               "additionalContext": warned}})
        return HookResult.json({})
    if name in ("SessionStart", "BeforeAgent"):
        if name == "SessionStart":
            sweep_preimages(governor)
        text = context_text(governor, claude_code.session_of(event), full=name == "SessionStart")
        return HookResult.json({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
    return HookResult.json({})
