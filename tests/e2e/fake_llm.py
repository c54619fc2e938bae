"""Scripted fakes of the OpenAI Responses API (for Codex CLI), the Gemini API (for Gemini CLI) and the OpenAI Chat
Completions API (for GitHub Copilot CLI and opencode), on loopback.

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
- Chat Completions: :func:`ccall` (a ``tool_calls`` entry), served on ``POST …/chat/completions`` as SSE chunks
  whose tool call arguments are streamed in pieces, then ``data: [DONE]`` (or as one JSON answer without
  ``stream``).

``outputs()`` returns what the CLI sent back per call id: ``function_call_output`` / ``custom_tool_call_output`` /
``tool_search_output`` items (Codex), ``functionResponse`` parts (Gemini) or ``role: tool`` messages (Chat) — how
tests read what a hook answered.
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


# -- OpenAI Chat Completions (GitHub Copilot CLI with COPILOT_PROVIDER_BASE_URL; opencode's openai-compatible) ----
CHAT_MODEL = "gpt-4.1"


def ccall(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions ``tool_calls`` entry (``function.arguments`` is a JSON string, streamed in pieces)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class FakeChat(ScriptedAPI):
    """The OpenAI Chat Completions API (``POST …/chat/completions``, ``stream: true`` SSE or a whole JSON answer).

    Main requests are those that offer ``tools``; side requests (titles, summaries: no tools) get ``"ok"`` and leave
    the script alone. A streamed tool call arrives as the real API sends it: a first delta with ``id``, ``type`` and
    ``function.name`` (empty arguments), then the arguments string in several pieces keyed by ``index`` only — so
    a client that does not accumulate the pieces fails here as against the real API. Usage comes as a last chunk
    with empty ``choices`` when ``stream_options.include_usage`` asks for it, else on the finishing chunk.
    """

    #: arguments strings are cut into this many streamed pieces (at most)
    ARG_PIECES = 3

    def respond(self, path: str, body: dict) -> Reply:
        self.record(body)
        if not path.split("?", 1)[0].endswith("/chat/completions"):
            return 404, "application/json", b'{"error": {"message": "not found", "type": "invalid_request_error"}}'
        turn = self.next_turn(body) if body.get("tools") else "ok"
        calls = [] if isinstance(turn, str) else list(turn)
        text = turn if isinstance(turn, str) else None
        cid, model = f"chatcmpl-{next(self._ids)}", body.get("model") or CHAT_MODEL
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            return 200, "application/json", json.dumps({
                "id": cid, "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}).encode()
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": text or ""}]
        for index, call in enumerate(calls):
            fn_ = call["function"]
            deltas.append({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                           "function": {"name": fn_["name"], "arguments": ""}}]})
            deltas += [{"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                       for piece in _pieces(fn_["arguments"], self.ARG_PIECES)]
        separate_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if separate_usage:
            chunks.append({"choices": [], "usage": usage})
        else:
            chunks[-1]["usage"] = usage
        head = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model}
        data = "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return 200, "text/event-stream", data.encode()

    def outputs(self) -> dict[str, str]:
        """What the client sent back per tool call id: the ``role: tool`` messages of every main request."""
        out: dict[str, str] = {}
        for body in self.main_requests:
            for message in body.get("messages") or []:
                if isinstance(message, dict) and message.get("role") == "tool" and message.get("tool_call_id"):
                    content = message.get("content")
                    out[message["tool_call_id"]] = content if isinstance(content, str) else _text(content)
        return out

    def offered_tools(self, body: dict | None = None) -> list[str]:
        """The function names a main request offered (the last one, or ``body``)."""
        body = body if body is not None else (self.main_requests[-1] if self.main_requests else {})
        return [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def _pieces(text: str, n: int) -> list[str]:
    """``text`` cut into at most ``n`` non-empty consecutive pieces (one empty piece for an empty string)."""
    if not text:
        return [""]
    size = max(1, -(-len(text) // n))
    return [text[i:i + size] for i in range(0, len(text), size)]
