"""A scripted fake of the Anthropic Messages API, served on loopback for end-to-end tests.

The real Claude Code CLI is pointed at it with ``ANTHROPIC_BASE_URL``. Each *main* request (one that carries a
``tools`` list: the agent loop) consumes the next turn of the script; *side* requests without tools (title
generation, summaries, ...) get a short plain text answer and leave the script alone.

A turn is one of:
- a ``str``: the final assistant text (``stop_reason: end_turn``);
- a list of ``ToolUse`` (or ``{"name", "input"}`` dicts): one assistant message with those ``tool_use`` blocks
  (``stop_reason: tool_use``);
- a callable ``(request_body) -> turn``: evaluated when the request arrives, so a test can react to what the CLI
  sent back (e.g. run a second session in between, or branch on a tool_result).

When the script is exhausted the server answers ``"done"``. Every request body is recorded in ``requests``;
``tool_results()`` extracts the ``tool_result`` blocks the CLI sent back, which is how tests read what a hook
answered (a denied call comes back as an ``is_error`` tool_result carrying the hook's reason).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.e2e.loopback import Reply, ScriptedAPI, json_reply

MODEL = "claude-sonnet-4-5"


@dataclass
class ToolUse:
    """One scripted ``tool_use`` block; ``id`` is generated when omitted."""

    name: str
    input: dict[str, Any]
    id: str | None = None



class FakeAnthropic(ScriptedAPI):
    """The scripted server. Use as a context manager: ``with FakeAnthropic(script) as api: api.base_url``."""

    BAD_JSON = json_reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad json"}})

    def respond(self, path: str, body: dict) -> Reply:
        path = path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            return json_reply(200, {"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            return json_reply(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
        blocks, stop = self._answer(body)
        if body.get("stream"):
            events = self._events(blocks, stop)
            data = b"".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events)
            return 200, "text/event-stream", data
        return json_reply(200, self._message(blocks, stop))

    # -- scripting -------------------------------------------------------------------------------------------
    def _answer(self, body: dict) -> tuple[list[dict], str]:
        """Pick the content blocks for this request (the script for main requests, text for side ones)."""
        self.record(body)
        if not body.get("tools"):
            return [{"type": "text", "text": "Scripted session"}], "end_turn"
        turn = self.next_turn(body)
        if isinstance(turn, str):
            return [{"type": "text", "text": turn}], "end_turn"
        blocks = []
        for use in turn:
            if isinstance(use, dict):
                use = ToolUse(use["name"], use.get("input", {}), use.get("id"))
            blocks.append({"type": "tool_use", "id": use.id or f"toolu_fake_{next(self._ids):04d}",
                           "name": use.name, "input": use.input})
        return blocks, "tool_use"

    def _message(self, blocks: list[dict], stop: str) -> dict:
        return {"id": f"msg_fake_{next(self._ids):04d}", "type": "message", "role": "assistant", "model": MODEL,
                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 10}}

    def _events(self, blocks: list[dict], stop: str) -> list[tuple[str, dict]]:
        msg = self._message([], "")
        msg["stop_reason"] = None
        events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": msg})]
        for i, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": start}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 10}}))
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    # -- inspection ------------------------------------------------------------------------------------------
    def tool_results(self) -> dict[str, dict]:
        """All ``tool_result`` blocks the CLI sent back, by tool_use_id: ``{"content": str, "is_error": bool}``."""
        out: dict[str, dict] = {}
        for body in self.main_requests:
            for message in body.get("messages", []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        out[block["tool_use_id"]] = {"content": _text(block.get("content")),
                                                     "is_error": bool(block.get("is_error"))}
        return out


def _text(content: Any) -> str:
    """Flatten a tool_result content (a string or a list of text blocks) to one string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""
