"""Adapters: translate each agent's tool-call payloads into :class:`~orchestrator.core.models.ToolCall`
and the :class:`~orchestrator.core.models.Verdict` back into the agent's own answer.

May import: everything up to ``agent`` (LangChain wraps the reference loop's tools); never the daemon, the CLI or
the TUI.
"""
