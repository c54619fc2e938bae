"""Adapters: translate each agent's tool-call payloads into :class:`~orchestrator.models.ToolCall`
and the :class:`~orchestrator.models.Verdict` back into the agent's own answer."""
