"""Anthropic Messages API provider, with the standard library only (``urllib``; no SDK).

Used by the reference loop when ``ANTHROPIC_API_KEY`` is set. ``base_url`` may point at any
server speaking the Messages API (tests use a fake one on 127.0.0.1).
"""

from __future__ import annotations

import json
from typing import Any

from orchestrator.agent.providers.base import ProviderError, Reply, ToolSpec, ToolUse
from orchestrator.agent.providers._http import post_json

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"


class AnthropicProvider:
    """Calls ``POST {base_url}/v1/messages``."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL,
                 max_tokens: int = 4096, timeout: float = 120.0) -> None:
        self.api_key = api_key
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.max_tokens = max_tokens
        self.timeout = timeout

    @classmethod
    def from_env(cls, env: dict[str, str]) -> AnthropicProvider:
        """Configured from ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_MODEL``."""
        return cls(env["ANTHROPIC_API_KEY"], model=env.get("ANTHROPIC_MODEL") or DEFAULT_MODEL,
                   base_url=env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> Reply:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic(messages),
            "tools": [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools],
        }
        if system:
            body["system"] = system
        headers = {"x-api-key": self.api_key, "anthropic-version": API_VERSION}
        data = post_json(f"{self.base_url}/v1/messages", body, headers, timeout=self.timeout)
        return parse_reply(data)


def to_anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages → Messages API ``messages`` (tool results become user ``tool_result`` blocks)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m["role"]
        if role == "user":
            out.append({"role": "user", "content": m["content"]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            for tc in m.get("tool_calls") or ():
                blocks.append({"type": "tool_use", "id": tc["id"], "name": tc["name"], "input": tc["input"]})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"],
                     "is_error": bool(m.get("is_error"))}
            # consecutive results of one assistant turn go back in a single user message
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) and \
                    all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            raise ProviderError(f"unknown message role {role!r}")
    return out


def parse_reply(data: dict[str, Any]) -> Reply:
    """A Messages API response → :class:`Reply`."""
    if data.get("type") == "error" or "error" in data and "content" not in data:
        raise ProviderError(f"API error: {json.dumps(data.get('error', data))[:500]}")
    content = data.get("content")
    if not isinstance(content, list):
        raise ProviderError("reply has no 'content' list")
    texts: list[str] = []
    calls: list[ToolUse] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            args = block.get("input")
            calls.append(ToolUse(str(block.get("id")), str(block.get("name")), args if isinstance(args, dict) else {}))
    return Reply("\n".join(t for t in texts if t), tuple(calls), model=data.get("model"),
                 stop_reason=data.get("stop_reason"), raw=data)
