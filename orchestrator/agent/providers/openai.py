"""OpenAI-compatible Chat Completions provider, with the standard library only (``urllib``; no SDK).

Used by the reference loop when ``OPENAI_API_KEY`` is set. Any compatible server works
(``OPENAI_BASE_URL``: vLLM, Ollama, LM Studio, OpenRouter...); tests use a fake one on 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import Any

from orchestrator.agent.providers.base import ProviderError, Reply, ToolSpec, ToolUse
from orchestrator.agent.providers._http import post_json

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1"


class OpenAIProvider:
    """Calls ``POST {base_url}/chat/completions``."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str = DEFAULT_BASE_URL,
                 timeout: float = 120.0) -> None:
        self.api_key = api_key
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    @classmethod
    def from_env(cls, env: dict[str, str]) -> OpenAIProvider:
        """Configured from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_MODEL``."""
        return cls(env["OPENAI_API_KEY"], model=env.get("OPENAI_MODEL") or DEFAULT_MODEL,
                   base_url=env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> Reply:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai(system, messages),
            "tools": [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                        "parameters": t.parameters}} for t in tools],
        }
        headers = {"authorization": f"Bearer {self.api_key}"}
        data = post_json(f"{self.base_url}/chat/completions", body, headers, timeout=self.timeout)
        return parse_reply(data)


def to_openai(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions ``messages``."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        role = m["role"]
        if role == "user":
            out.append({"role": "user", "content": m["content"]})
        elif role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
            if m.get("tool_calls"):
                msg["tool_calls"] = [{"id": tc["id"], "type": "function",
                                      "function": {"name": tc["name"], "arguments": json.dumps(tc["input"])}}
                                     for tc in m["tool_calls"]]
            out.append(msg)
        elif role == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            raise ProviderError(f"unknown message role {role!r}")
    return out


def parse_reply(data: dict[str, Any]) -> Reply:
    """A Chat Completions response → :class:`Reply`. Arguments that are not JSON become an error call."""
    if "error" in data and "choices" not in data:
        raise ProviderError(f"API error: {json.dumps(data['error'])[:500]}")
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("reply has no choices[0].message") from None
    calls: list[ToolUse] = []
    for tc in message.get("tool_calls") or ():
        fn = tc.get("function") or {}
        raw_args = fn.get("arguments") or "{}"
        try:
            args = json.loads(raw_args) if isinstance(raw_args, str) else raw_args
        except ValueError:
            # the loop hands the tool an empty input; it fails with a clear error the model can fix
            args = {"_unparsed_arguments": raw_args}
        calls.append(ToolUse(str(tc.get("id")), str(fn.get("name")), args if isinstance(args, dict) else {}))
    return Reply(message.get("content") or "", tuple(calls), model=data.get("model"),
                 stop_reason=choice.get("finish_reason"), raw=data)
