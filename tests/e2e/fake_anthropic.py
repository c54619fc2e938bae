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

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

from tests.e2e.loopback import LoopbackServer

MODEL = "claude-sonnet-4-5"


@dataclass
class ToolUse:
    """One scripted ``tool_use`` block; ``id`` is generated when omitted."""

    name: str
    input: dict[str, Any]
    id: str | None = None


Turn = Union[str, list, Callable[[dict], Any]]


@dataclass
class FakeAnthropic(LoopbackServer):
    """The scripted server. Use as a context manager: ``with FakeAnthropic(script) as api: api.base_url``."""

    script: list[Turn] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    main_requests: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._turn = 0
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> "FakeAnthropic":
        """Bind a random loopback port and serve in a daemon thread."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                # Anything but /v1/messages (model lists, health checks): an empty JSON object.
                self._json(200, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                "message": "bad json"}})
                    return
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._json(200, {"input_tokens": 10})
                    return
                if not path.endswith("/v1/messages"):
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
                    return
                blocks, stop = fake._answer(body)
                if body.get("stream"):
                    self._sse(fake._events(blocks, stop))
                else:
                    self._json(200, fake._message(blocks, stop))

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str, dict]]) -> None:
                data = b"".join(
                    f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._serve(Handler)
        return self

    # -- scripting -------------------------------------------------------------------------------------------
    def _answer(self, body: dict) -> tuple[list[dict], str]:
        """Pick the content blocks for this request (the script for main requests, text for side ones)."""
        with self._lock:
            self.requests.append(body)
            if not body.get("tools"):
                return [{"type": "text", "text": "Scripted session"}], "end_turn"
            self.main_requests.append(body)
            turn: Turn = self.script[self._turn] if self._turn < len(self.script) else "done"
            self._turn += 1
        # Callables run outside the lock: they may block (e.g. run another CLI session against another server).
        while callable(turn):
            turn = turn(body)
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
