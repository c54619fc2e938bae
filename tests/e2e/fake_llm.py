"""Scripted fakes of the OpenAI Responses API (for Codex CLI) and the Gemini API (for Gemini CLI), on loopback.

Like :mod:`tests.e2e.fake_anthropic` (both are :class:`tests.e2e.loopback.ScriptedAPI`): each *main* request (one that carries the agent's tools) consumes the next
turn of the script; side requests (Gemini's routing classifier, summaries) get a short text answer and leave the
script alone. A turn is a ``str`` (the final text), a list of tool calls, or a callable ``(request_body) -> turn``
evaluated when the request arrives. When the script is exhausted the server answers ``"done"``.

Tool calls:
- Responses API (Codex): :func:`fn` (a ``function_call`` item: ``exec_command``, an MCP tool with ``namespace``),
  :func:`patch` (a ``custom_tool_call`` of the freeform ``apply_patch`` tool), :func:`tool_search`. The stream is
  ``response.created``, ``response.output_item.added``/``.done`` per item, ``response.completed`` (the event
  shapes of codex-rs's own test helpers, core/tests/common/responses.rs).
- Gemini API: :func:`gcall` (a ``functionCall`` part with an ``id``), served on
  ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` as one SSE ``data:`` chunk (and on
  ``:generateContent`` as JSON).

``outputs()`` returns what the CLI sent back per call id: ``function_call_output`` / ``custom_tool_call_output`` /
``tool_search_output`` items (Codex) or ``functionResponse`` parts (Gemini) — how tests read what a hook answered.
"""
from __future__ import annotations

import json
from typing import Any

from tests.e2e.loopback import Reply, ScriptedAPI

CODEX_MODEL = "gpt-5.5"  # a slug in Codex 0.169.0's bundled model catalog, so it offers apply_patch
GEMINI_MODEL = "gemini-2.5-pro"


def fn(call_id: str, name: str, arguments: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    """A Responses API ``function_call`` output item (``namespace`` for a deferred MCP tool)."""
    item: dict[str, Any] = {"type": "function_call", "call_id": call_id, "name": name,
                            "arguments": json.dumps(arguments)}
    if namespace:
        item["namespace"] = namespace
    return item


def patch(call_id: str, text: str) -> dict[str, Any]:
    """A ``custom_tool_call`` of Codex's freeform ``apply_patch`` tool (``*** Begin Patch`` … ``*** End Patch``)."""
    return {"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch", "input": text}


def tool_search(call_id: str, query: str) -> dict[str, Any]:
    """Codex's client-side ``tool_search`` (MCP tools are deferred until searched)."""
    return {"type": "tool_search_call", "call_id": call_id, "execution": "client", "arguments": {"query": query}}


def gcall(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A Gemini ``functionCall`` part."""
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


class FakeResponses(ScriptedAPI):
    """The OpenAI Responses API as Codex CLI uses it (``POST /v1/responses``, ``stream: true``)."""

    def respond(self, path: str, body: dict) -> Reply:
        self.record(body)
        if not path.split("?", 1)[0].endswith("/responses"):
            return 404, "application/json", b'{"error": "not found"}'
        turn = self.next_turn(body)
        rid = f"resp_{next(self._ids)}"
        items = [{"type": "message", "role": "assistant", "id": f"msg_{rid}",
                  "content": [{"type": "output_text", "text": turn}]}] if isinstance(turn, str) else turn
        events: list[dict] = [{"type": "response.created", "response": {"id": rid}}]
        for item in items:
            events.append({"type": "response.output_item.added", "item": item})
            events.append({"type": "response.output_item.done", "item": item})
        events.append({"type": "response.completed", "response": {"id": rid, "usage": {
            "input_tokens": 10, "input_tokens_details": None, "output_tokens": 10, "output_tokens_details": None,
            "total_tokens": 20}}})
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        return 200, "text/event-stream", data

    def outputs(self, body: dict | None = None) -> dict[str, Any]:
        """Tool outputs the CLI sent back, by call id (from the last main request, or ``body``)."""
        body = body if body is not None else (self.main_requests[-1] if self.main_requests else {})
        out: dict[str, Any] = {}
        for item in body.get("input") or []:
            kind = item.get("type", "") if isinstance(item, dict) else ""
            if kind == "tool_search_output":
                out[item["call_id"]] = item.get("tools") or []
            elif kind.endswith("_call_output"):
                out[item["call_id"]] = _text(item.get("output"))
        return out


class FakeGemini(ScriptedAPI):
    """The Gemini API as Gemini CLI uses it with ``GOOGLE_GEMINI_BASE_URL`` and an API key."""

    def respond(self, path: str, body: dict) -> Reply:
        self.record(body)
        if ":countTokens" in path:
            return 200, "application/json", b'{"totalTokens": 10}'
        if body.get("tools"):
            turn = self.next_turn(body)
            parts = [{"text": turn}] if isinstance(turn, str) else turn
        else:  # a side request (e.g. the model router's classifier)
            parts = [{"text": "ok"}]
        resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
                "modelVersion": GEMINI_MODEL}
        if "streamGenerateContent" in path:
            return 200, "text/event-stream", f"data: {json.dumps(resp)}\r\n\r\n".encode()
        return 200, "application/json", json.dumps(resp).encode()

    def outputs(self) -> dict[str, Any]:
        """``functionResponse.response`` of every call the CLI answered, by call id (over all main requests)."""
        out: dict[str, Any] = {}
        for body in self.main_requests:
            for content in body.get("contents") or []:
                for part in content.get("parts") or []:
                    resp = part.get("functionResponse") if isinstance(part, dict) else None
                    if isinstance(resp, dict) and resp.get("id"):
                        out[resp["id"]] = resp.get("response")
        return out


def _text(output: Any) -> str:
    """A tool output (a string, or a list of ``input_text`` items) as one string."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(o.get("text", "")) for o in output if isinstance(o, dict))
    return json.dumps(output)
