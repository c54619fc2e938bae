"""The reference tool loop: a governed agent loop with scripted, Anthropic and OpenAI providers.

>>> from orchestrator import Governor                                           # doctest: +SKIP
>>> from orchestrator.agent import AgentLoop
>>> from orchestrator.agent.providers.scripted import ScriptedProvider
>>> loop = AgentLoop(Governor("."), ScriptedProvider.from_yaml("script.yaml"))  # doctest: +SKIP
>>> loop.run("Add a farewell() function").answer                               # doctest: +SKIP

May import: everything up to ``engine`` (it drives a ``Governor``); never an adapter, the CLI or the TUI.
"""

from __future__ import annotations

from orchestrator.agent.loop import (
    AgentLoop,
    ApprovalDecision,
    ApprovalQuestion,
    CallOutcome,
    LoopEvent,
    LoopResult,
)
from orchestrator.agent.tools import DEFAULT_TOOLS, LoopTool, ToolContext, ToolFailure

__all__ = ["AgentLoop", "ApprovalDecision", "ApprovalQuestion", "CallOutcome", "DEFAULT_TOOLS", "LoopEvent",
           "LoopResult", "LoopTool", "ToolContext", "ToolFailure"]
