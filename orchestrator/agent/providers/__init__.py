"""Model providers for the reference loop: one neutral interface, three implementations.

A provider turns the loop's neutral message list into one model reply. The neutral messages are:

* ``{"role": "user", "content": str}``
* ``{"role": "assistant", "content": str, "tool_calls": [{"id", "name", "input"}]}``
* ``{"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}``

The interface is :mod:`.base` (re-exported here). Implementations: :mod:`.scripted` (replays a YAML script;
offline, deterministic), :mod:`.anthropic` (Messages API) and :mod:`.openai` (Chat Completions, any compatible
server).
The HTTP providers use only the standard library (``urllib``): no SDK is needed.
"""

from __future__ import annotations

import os

from orchestrator.agent.providers.base import Provider, ProviderError, Reply, ToolSpec, ToolUse


def from_env(env: dict[str, str] | None = None) -> Provider | None:
    """A real provider if a key is set: ``ANTHROPIC_API_KEY`` first, then ``OPENAI_API_KEY``.

    Base URLs and models come from ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_MODEL`` and
    ``OPENAI_BASE_URL`` / ``OPENAI_MODEL``. Returns None when no key is set.
    """
    env = dict(os.environ if env is None else env)
    if env.get("ANTHROPIC_API_KEY"):
        from orchestrator.agent.providers.anthropic import AnthropicProvider

        return AnthropicProvider.from_env(env)
    if env.get("OPENAI_API_KEY"):
        from orchestrator.agent.providers.openai import OpenAIProvider

        return OpenAIProvider.from_env(env)
    return None


__all__ = ["Provider", "ProviderError", "Reply", "ToolSpec", "ToolUse", "from_env"]
