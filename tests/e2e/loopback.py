"""What every scripted fake API of the e2e tests shares: a script of turns served on 127.0.0.1 in a thread.

A subclass (one per wire protocol: Anthropic Messages, OpenAI Responses, Gemini) only says how one POST is answered
(:meth:`ScriptedAPI.respond`); the HTTP handler, the lifecycle, the request log and the turn bookkeeping are here.

A turn is a ``str`` (the final text), a list of tool calls in the protocol's shape, or a callable
``(request_body) -> turn`` evaluated when the request arrives (outside the lock: it may block, e.g. run another CLI
session). When the script is exhausted the turn is ``"done"``.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, ClassVar, Union

Turn = Union[str, list, Callable[[dict], Any]]
#: an HTTP answer: status, content type, body
Reply = tuple[int, str, bytes]


def json_reply(status: int, obj: Any) -> Reply:
    return status, "application/json", json.dumps(obj).encode()


@dataclass
class ScriptedAPI:
    """The scripted server. Use as a context manager: ``with FakeX(script) as api: api.base_url``."""

    script: list[Turn] = field(default_factory=list)
    #: every request body, in arrival order
    requests: list[dict] = field(default_factory=list)
    #: the bodies that consumed a turn (the agent loop's requests, not side requests such as titles or routing)
    main_requests: list[dict] = field(default_factory=list)

    #: the answer to a body that is not JSON (no CLI sends one; a protocol may give its own error shape)
    BAD_JSON: ClassVar[Reply] = (400, "application/json", b'{"error": "bad json"}')

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._turn = 0
        self._server: ThreadingHTTPServer | None = None

    # -- what a protocol defines -------------------------------------------------------------------------------
    def respond(self, path: str, body: dict) -> Reply:  # pragma: no cover - each fake defines its own
        raise NotImplementedError

    # -- turns -------------------------------------------------------------------------------------------------
    def record(self, body: dict) -> None:
        with self._lock:
            self.requests.append(body)

    def next_turn(self, body: dict) -> Any:
        """The next scripted turn for a main request (callables evaluated outside the lock)."""
        with self._lock:
            self.main_requests.append(body)
            turn: Turn = self.script[self._turn] if self._turn < len(self.script) else "done"
            self._turn += 1
        while callable(turn):
            turn = turn(body)
        return turn

    def insert_next(self, turn: Turn) -> None:
        """Make ``turn`` the next turn (a callable turn may use it to repeat itself, e.g. wait for a tool)."""
        with self._lock:
            self.script.insert(self._turn, turn)

    @property
    def turns_used(self) -> int:
        return self._turn

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> Any:
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
                # model lists, health checks: an empty JSON object
                self.send(json_reply(200, {}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self.send(fake.BAD_JSON)
                    return
                self.send(fake.respond(self.path, body))

            def send(self, reply: Reply) -> None:
                status, ctype, data = reply
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if ctype == "text/event-stream":
                    self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"
