"""LangChain v1 middleware: govern every tool call of a ``create_agent`` agent.

    from langchain.agents import create_agent
    from orchestrator.adapters.langchain import OrchestratorMiddleware

    agent = create_agent(model, tools=[read_file, write_file],
                         middleware=[OrchestratorMiddleware(".", session_id="lc-1")])

``wrap_tool_call`` runs :meth:`Governor.pre` before the tool and :meth:`Governor.post` after it.
A refusal never reaches the tool: the model gets a ``ToolMessage`` with ``status="error"`` whose
content is the verdict (message, hint and the structured JSON), so it can correct itself.

Requires the optional extra: ``pip install 'orchestrator[langchain]'`` (langchain >= 1.0).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware
    from langchain.tools import ToolRuntime
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool as _tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "orchestrator.adapters.langchain needs LangChain 1.x: pip install 'orchestrator[langchain]'"
    ) from exc

from orchestrator.core.models import Kind, ToolCall, ToolResult, Verdict
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

#: what a caller-supplied approver gets and returns (same shapes as the reference loop's approver)
Approver = Callable[[Any], Any]


class OrchestratorMiddleware(AgentMiddleware):
    """Governs tool calls of a LangChain agent with orchestrator's pre/post hooks.

    ``workspace``: a path or a :class:`Governor`. ``session_id``: the orchestrator session (default:
    the LangGraph ``thread_id`` when there is one, else ``"langchain"``). ``tools``: kinds for tool
    names the registry does not know (e.g. ``{"save_note": "write"}``); unknown tools are treated as
    possibly mutating. ``approver``: called with an
    :class:`~orchestrator.agent.loop.ApprovalQuestion` when a call needs a person; without one, an
    ``ask`` verdict is returned to the model as an error. ``handshake_tools``: register the
    ``select_active_intent`` and ``record_lesson`` tools with the agent (turn off if you define your own).
    ``sandbox_shell``: your shell tools run their ``command`` argument with a shell (``bash -c`` or the like); a
    command the analyzer cannot vouch for is then replaced by its Landlock-sandboxed form (orchestrator.sandbox)
    and needs no person when its only risk is running code. Off by default: a tool that does not hand the
    argument to a shell would break on the wrapped form.
    """

    def __init__(self, workspace: str | os.PathLike[str] | Governor, *, session_id: str | None = None,
                 tools: dict[str, Kind | str] | None = None, approver: Approver | None = None,
                 approval_channel: str | None = None, handshake_tools: bool = True,
                 sandbox_shell: bool = False) -> None:
        super().__init__()
        self.gov = workspace if isinstance(workspace, Governor) else Governor(workspace,
                                                                             approval_channel=approval_channel)
        self.session_id = session_id
        self.overrides = {name: Kind(kind).value for name, kind in (tools or {}).items()}
        self.approver = approver
        self.sandbox_shell = sandbox_shell
        # AgentMiddleware.tools: extra tools create_agent registers alongside the user's
        self.tools = self._handshake_tools() if handshake_tools else []

    # ------------------------------------------------------------------ translation
    def _session_of(self, config: Any) -> str:
        if self.session_id:
            return self.session_id
        thread = (config.get("configurable") or {}).get("thread_id") if isinstance(config, dict) else None
        return str(thread) if thread else "langchain"

    def _session(self, request: Any) -> str:
        return self._session_of(getattr(getattr(request, "runtime", None), "config", None) or {})

    def _handshake_tools(self) -> list[Any]:
        from orchestrator.core.errors import OrchestratorError

        middleware = self

        @_tool
        def select_active_intent(intent_id: str, runtime: ToolRuntime) -> str:
            """Select the intent you work on; required before changing files. Returns its owned_scope,
            constraints and lessons."""
            try:
                return middleware.gov.select_intent(intent_id, middleware._session_of(runtime.config),
                                                    agent="langchain")
            except OrchestratorError as exc:
                import json

                return f"[orchestrator:{exc.type}] {exc.message} " + json.dumps(exc.to_dict(), default=str)

        @_tool
        def record_lesson(text: str, runtime: ToolRuntime) -> str:
            """Record a lesson learned (one sentence) in AGENTS.md for future agents."""
            added = middleware.gov.record_lesson(text, session_id=middleware._session_of(runtime.config))
            return "lesson recorded in AGENTS.md" if added else "this lesson is already in AGENTS.md"

        return [select_active_intent, record_lesson]

    def to_call(self, request: Any) -> ToolCall:
        """The LangChain tool call (``{"name", "args", "id"}``) as an orchestrator :class:`ToolCall`."""
        tc = request.tool_call
        args = tc.get("args") if isinstance(tc.get("args"), dict) else {}
        return to_call(str(tc.get("name")), args, overrides=self.overrides or None,
                       session_id=self._session(request), agent="langchain", cwd=self.gov.root,
                       tool_use_id=tc.get("id"))

    def _refusal(self, request: Any, verdict: Verdict) -> ToolMessage:
        tc = request.tool_call
        content = verdict.reason
        if verdict.decision == "ask":
            content += " (no approver is attached, so the call did not run)"
        return ToolMessage(content=content, tool_call_id=tc.get("id") or "", name=tc.get("name"), status="error",
                           artifact={"orchestrator": verdict.to_dict()})

    def _decide(self, call: ToolCall) -> Verdict:
        verdict = self.gov.pre(call, sandbox=self.sandbox_shell)
        if verdict.decision != "ask" or self.approver is None:
            return verdict
        from orchestrator.agent.loop import ApprovalDecision, ApprovalQuestion

        try:
            answer = self.approver(ApprovalQuestion(call, verdict, call.session_id))
        except Exception as exc:  # noqa: BLE001 — a failing approver has not approved (fail closed)
            answer = ApprovalDecision(False, f"the approver failed: {exc!r}", by="orchestrator")
        if getattr(answer, "approved", False):
            return self.gov.pre(call, approved=True, sandbox=self.sandbox_shell)
        return Verdict.deny("approval-rejected", "approval", f"{getattr(answer, 'by', 'approver')} rejected the call",
                            reason=getattr(answer, "reason", None) or None,
                            reasons=(verdict.error or {}).get("reasons"),
                            hint="do not retry the same call; find a narrower, non-destructive way")

    @staticmethod
    def _runnable(request: Any, verdict: Verdict) -> Any:
        """``request`` with the sandboxed command in place of the original, when the verdict carries one."""
        wrapped = verdict.command
        if wrapped is None:
            return request
        tc = dict(request.tool_call)
        args = dict(tc.get("args") or {})
        key = next((k for k in ("command", "cmd") if isinstance(args.get(k), str)), None)
        if key is None:
            return request
        args[key] = wrapped
        tc["args"] = args
        return request.override(tool_call=tc)

    def _after(self, call: ToolCall, result: Any) -> None:
        failed = isinstance(result, ToolMessage) and result.status == "error"
        self.gov.post(call, ToolResult.failure() if failed else None)

    # ------------------------------------------------------------------ the hooks
    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Pre-hooks → (refuse | run the tool) → post-hooks."""
        call = self.to_call(request)
        verdict = self._decide(call)
        if not verdict.allowed:
            return self._refusal(request, verdict)
        try:
            result = handler(self._runnable(request, verdict))
        except Exception:
            self.gov.post(call, ToolResult.failure())
            raise
        self._after(call, result)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """The async variant; the pre-hooks run in a thread (an approval may block on a person)."""
        call = self.to_call(request)
        verdict = await asyncio.to_thread(self._decide, call)
        if not verdict.allowed:
            return self._refusal(request, verdict)
        try:
            result = await handler(self._runnable(request, verdict))
        except Exception:
            await asyncio.to_thread(self.gov.post, call, ToolResult.failure())
            raise
        await asyncio.to_thread(self._after, call, result)
        return result


__all__ = ["OrchestratorMiddleware"]
