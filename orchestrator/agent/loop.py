"""The reference tool loop: messages → model → tool calls → governed execution → results → model.

Every tool call goes through the :class:`~orchestrator.engine.pipeline.Governor`::

    verdict = gov.pre(call)            # allow / deny(structured error) / ask
    ask    → approver(request)         # if the loop has one; else the ask goes back as an error
    allow  → run the tool → gov.post(call, result)   # read-stamps, ledger record
    deny   → tool error carrying the verdict JSON, so the model can read type + hint and self-correct

The loop stops when the model answers without tool calls, or after ``max_turns`` model calls.
Safe calls (reads, listings, read-only commands) never wait on anyone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.agent.providers import Provider, Reply, ToolUse
from orchestrator.agent.tools import DEFAULT_TOOLS, CommandFailed, LoopTool, ToolContext, ToolFailure, run_command
from orchestrator.core.models import ToolCall, ToolResult, Verdict
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

SYSTEM_PROMPT = """\
You are a coding agent working in a governed repository. Rules:
- Before changing any file, call select_active_intent with one of the IN_PROGRESS intents; it tells you
  which files you own (owned_scope), the constraints and lessons from earlier agents.
- Change only files inside owned_scope. Governance files and protected paths are off limits.
- A tool error that starts with [orchestrator:<type>] is a structured refusal, not a crash: read its type and
  hint (the JSON at its end has the details) and correct course — e.g. re-read a file that is stale.
- Destructive commands wait for a person's approval; prefer precise, reversible actions.
- When you learn something future agents should know, call record_lesson.
When the task is done, answer with a short summary and no tool calls."""


@dataclass(frozen=True)
class ApprovalQuestion:
    """An ``ask`` verdict put to the loop's approver (in-process; the broker's file-backed request a person answers
    in ``orch tui`` is :class:`orchestrator.approvals.ApprovalRequest`)."""

    call: ToolCall
    verdict: Verdict
    session_id: str

    @property
    def summary(self) -> str:
        return self.call.command or f"{self.call.tool} {' '.join(self.call.resolved)}".strip()

    @property
    def reasons(self) -> list[str]:
        return list((self.verdict.error or {}).get("reasons") or [])


@dataclass(frozen=True)
class ApprovalDecision:
    """The approver's answer: approved or not, with a reason shown to the agent."""

    approved: bool
    reason: str = ""
    by: str = "approver"


Approver = Callable[[ApprovalQuestion], ApprovalDecision]


@dataclass
class LoopEvent:
    """Something the loop did, for narration and logs.

    ``type`` is one of: ``model`` (a reply with tool calls; ``text``), ``call`` (a tool call is about
    to be checked; ``tool``, ``input``), ``verdict`` (the pre verdict), ``approval`` (the approver's
    decision), ``result`` (``content``, ``is_error``, ``record``), ``answer`` (final ``text``),
    ``turn_cap``.
    """

    type: str
    session_id: str
    turn: int
    tool: str | None = None
    input: dict[str, Any] | None = None
    call: ToolCall | None = None
    verdict: Verdict | None = None
    approval: ApprovalDecision | None = None
    content: str | None = None
    is_error: bool = False
    record: dict[str, Any] | None = None
    text: str | None = None


@dataclass
class CallOutcome:
    """One executed (or refused) tool call."""

    tool: str
    input: dict[str, Any]
    decision: str  # allow | deny | ask (unanswered) | rejected
    is_error: bool
    content: str
    error: dict[str, Any] | None = None
    record: dict[str, Any] | None = None


@dataclass
class LoopResult:
    """How a :meth:`AgentLoop.run` ended."""

    answer: str | None
    turns: int
    stopped: str  # "answer" | "turn_cap"
    calls: list[CallOutcome] = field(default_factory=list)

    @property
    def denials(self) -> list[CallOutcome]:
        return [c for c in self.calls if c.decision != "allow"]


class AgentLoop:
    """A governed tool loop for one agent session.

    ``messages`` persist across :meth:`run` calls, so a conversation can continue with a new prompt.
    """

    def __init__(self, gov: Governor, provider: Provider, *, session_id: str = "loop", agent: str = "loop",
                 system: str = SYSTEM_PROMPT, tools: dict[str, LoopTool] | None = None,
                 approver: Approver | None = None, max_turns: int = 25, command_timeout: float = 60.0,
                 on_event: Callable[[LoopEvent], None] | None = None) -> None:
        self.gov = gov
        self.provider = provider
        self.session_id = session_id
        self.agent = agent
        self.system = system
        self.tools = dict(DEFAULT_TOOLS if tools is None else tools)
        self.approver = approver
        self.max_turns = max_turns
        self.on_event = on_event
        self.messages: list[dict[str, Any]] = []
        self.ctx = ToolContext(gov, session_id, agent, command_timeout)
        self._turn = 0

    # ------------------------------------------------------------------ the loop
    def run(self, prompt: str) -> LoopResult:
        """Send ``prompt`` and loop until the model answers without tools or the turn cap is hit."""
        self.messages.append({"role": "user", "content": prompt})
        specs = [t.spec for t in self.tools.values()]
        outcomes: list[CallOutcome] = []
        for n in range(1, self.max_turns + 1):
            self._turn += 1
            reply: Reply = self.provider.complete(self.system, self.messages, specs)
            self.messages.append({"role": "assistant", "content": reply.text,
                                  "tool_calls": [{"id": c.id, "name": c.name, "input": c.input}
                                                 for c in reply.tool_calls]})
            if not reply.tool_calls:
                self._emit(LoopEvent("answer", self.session_id, self._turn, text=reply.text))
                return LoopResult(reply.text, n, "answer", outcomes)
            self._emit(LoopEvent("model", self.session_id, self._turn, text=reply.text))
            for use in reply.tool_calls:
                outcome = self.execute(use, model_id=reply.model or getattr(self.provider, "model", None))
                outcomes.append(outcome)
                self.messages.append({"role": "tool", "tool_call_id": use.id, "name": use.name,
                                      "content": outcome.content, "is_error": outcome.is_error})
        self._emit(LoopEvent("turn_cap", self.session_id, self._turn))
        return LoopResult(None, self.max_turns, "turn_cap", outcomes)

    # ------------------------------------------------------------------ one governed call
    def execute(self, use: ToolUse, *, model_id: str | None = None) -> CallOutcome:
        """Govern and run one tool call; never raises for tool or policy failures."""
        tool = self.tools.get(use.name)
        call = to_call(use.name, use.input, session_id=self.session_id, agent=self.agent, cwd=self.gov.root,
                       tool_use_id=use.id, model_id=model_id)
        self._emit(LoopEvent("call", self.session_id, self._turn, tool=use.name, input=use.input, call=call))
        if tool is None:
            msg = f"unknown tool {use.name!r}; available: {', '.join(self.tools)}"
            self._emit(LoopEvent("result", self.session_id, self._turn, tool=use.name, call=call,
                                 content=msg, is_error=True))
            return CallOutcome(use.name, use.input, "deny", True, msg)
        # run_command is ours: it runs whatever command the verdict says, so shell commands can be sandboxed
        sandbox = tool.run is run_command
        verdict = self.gov.pre(call, sandbox=sandbox)
        self._emit(LoopEvent("verdict", self.session_id, self._turn, tool=use.name, call=call, verdict=verdict))
        decision = verdict.decision
        if verdict.decision == "ask" and self.approver is not None:
            verdict, decision = self._ask(call, verdict, sandbox)
        if not verdict.allowed:
            content = verdict.reason
            if verdict.decision == "ask":
                content += " (no approver is attached to this loop, so the call did not run)"
            self._emit(LoopEvent("result", self.session_id, self._turn, tool=use.name, call=call,
                                 content=content, is_error=True, verdict=verdict))
            return CallOutcome(use.name, use.input, decision, True, content, error=verdict.error)
        failed = False
        try:
            content = tool.run(self.ctx, _sandboxed(call, verdict))
            result = ToolResult()
        except CommandFailed as exc:
            # it ran and may have changed files: trace it (not a failed ToolResult), but tell the model it failed
            content, failed, result = str(exc), True, ToolResult()
        except ToolFailure as exc:
            content, failed, result = str(exc), True, ToolResult.failure()
        except Exception as exc:  # noqa: BLE001 — a tool bug must reach the model, not kill the loop
            content, failed, result = f"{type(exc).__name__}: {exc}", True, ToolResult.failure()
        record = None
        try:
            record = self.gov.post(call, result)
        except Exception as exc:  # noqa: BLE001 — the tool already ran; report, do not crash the session
            content += f"\n[orchestrator: tracing this call failed: {exc!r}]"
        self._emit(LoopEvent("result", self.session_id, self._turn, tool=use.name, call=call, content=content,
                             is_error=failed, record=record))
        return CallOutcome(use.name, use.input, "allow", failed, content, record=record)

    def _ask(self, call: ToolCall, verdict: Verdict, sandbox: bool = False) -> tuple[Verdict, str]:
        assert self.approver is not None
        request = ApprovalQuestion(call, verdict, self.session_id)
        try:
            answer = self.approver(request)
        except Exception as exc:  # noqa: BLE001 — an approver that fails has not approved (fail closed)
            answer = ApprovalDecision(False, f"the approver failed: {exc!r}", by="orchestrator")
        self._emit(LoopEvent("approval", self.session_id, self._turn, tool=call.tool, call=call, verdict=verdict,
                             approval=answer))
        if answer.approved:
            # the person said yes: re-check everything but the approval (scope, protection, staleness)
            again = self.gov.pre(call, approved=True, sandbox=sandbox)
            return again, "allow" if again.allowed else again.decision
        err = verdict.error or {}
        rejected = Verdict.deny(
            "approval-rejected", "approval", f"{answer.by} rejected: {request.summary}",
            reason=answer.reason or None, reasons=err.get("reasons"), by=answer.by,
            hint="do not retry the same command; find a narrower, non-destructive way or explain why it is needed",
        )
        return rejected, "rejected"

    def _emit(self, event: LoopEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


def _sandboxed(call: ToolCall, verdict: Verdict) -> ToolCall:
    """The call to run: a copy carrying the sandboxed command when the verdict has one (the ledger keeps ``call``)."""
    wrapped = verdict.command
    if wrapped is None:
        return call
    import copy

    runnable = copy.copy(call)
    runnable.command = wrapped
    return runnable


__all__ = ["AgentLoop", "ApprovalDecision", "ApprovalQuestion", "Approver", "CallOutcome", "LoopEvent",
           "LoopResult", "SYSTEM_PROMPT"]
