"""Small local stand-ins of the services a push goes to, on real loopback sockets.

- :class:`NtfyStandIn`: ntfy's HTTP API as orchestrator uses it — JSON publishing (``POST /`` with ``topic``,
  ``title``, ``message``, ``priority``, ``tags``, ``click``, ``actions``), an access token (``Authorization:
  Bearer``, 403 without it when one is set, as an ntfy server with access control answers), and subscribing by
  polling (``GET /<topic>/json?poll=1``: one JSON message a line, ``"event": "message"``). There is no ntfy server
  on PyPI or in Debian (PyPI's ``ntfy`` is an unrelated tool): this follows docs.ntfy.sh's publish/subscribe pages.
- :class:`WebhookReceiver`: records every POST (headers and JSON body).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server:
    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.standin = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.received: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    @property
    def standin(self) -> Any:
        return self.server.standin  # type: ignore[attr-defined]

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, status: int, body: Any) -> None:
        data = (json.dumps(body) + "\n").encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _NtfyHandler(_Handler):
    def do_POST(self) -> None:  # noqa: N802
        ntfy: NtfyStandIn = self.standin
        raw = self._body()
        if ntfy.token and self.headers.get("Authorization") != f"Bearer {ntfy.token}":
            self._reply(403, {"code": 40301, "http": 403, "error": "forbidden"})
            return
        if self.path.rstrip("/") != "":
            self._reply(400, {"code": 40001, "http": 400, "error": "stand-in: JSON publishing posts to /"})
            return
        try:
            msg = json.loads(raw)
            topic = msg["topic"]
        except (ValueError, KeyError, TypeError):
            self._reply(400, {"code": 40024, "http": 400, "error": "invalid request: JSON body with topic"})
            return
        event = {"id": f"m{len(ntfy.received)}", "time": int(time.time()), "event": "message", **msg}
        with ntfy.lock:
            ntfy.received.append({"headers": dict(self.headers), "body": msg})
            ntfy.topics.setdefault(topic, []).append(event)
        self._reply(200, event)

    def do_GET(self) -> None:  # noqa: N802
        ntfy: NtfyStandIn = self.standin
        path, _, query = self.path.partition("?")
        parts = path.strip("/").split("/")
        if len(parts) != 2 or parts[1] != "json" or "poll=1" not in query:
            self._reply(404, {"code": 40401, "http": 404, "error": "page not found"})
            return
        with ntfy.lock:
            events = list(ntfy.topics.get(parts[0], []))
        self._reply(200, b"".join((json.dumps(e) + "\n").encode() for e in events))


class NtfyStandIn(_Server):
    """``with NtfyStandIn(token="tk_…") as ntfy: ntfy.url``; ``poll(topic)`` reads back like a subscriber."""

    def __init__(self, token: str | None = None) -> None:
        super().__init__(_NtfyHandler)
        self.token = token
        self.topics: dict[str, list[dict[str, Any]]] = {}

    def poll(self, topic: str) -> list[dict[str, Any]]:
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/{topic}/json?poll=1", timeout=5) as resp:  # noqa: S310
            return [json.loads(line) for line in resp.read().splitlines() if line.strip()]


class _WebhookHandler(_Handler):
    def do_POST(self) -> None:  # noqa: N802
        hook: WebhookReceiver = self.standin
        raw = self._body()
        with hook.lock:
            hook.received.append({"path": self.path, "headers": dict(self.headers), "raw": raw,
                                  "body": json.loads(raw)})
        self._reply(hook.status, {"ok": hook.status < 300})


class WebhookReceiver(_Server):
    """Records POSTs; answers ``status`` (200 unless a test wants the receiver to fail)."""

    def __init__(self, status: int = 200) -> None:
        super().__init__(_WebhookHandler)
        self.status = status
