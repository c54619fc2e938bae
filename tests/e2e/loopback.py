"""The lifecycle every scripted fake API of the e2e tests shares: serve a handler on 127.0.0.1 in a thread."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackServer:
    """Mixin for a fake API: a subclass's ``start()`` builds its request handler and calls :meth:`_serve`.

    Subclasses set ``self._server = None`` and ``self._turn = 0`` in their constructor (they are dataclasses).
    """

    _server: ThreadingHTTPServer | None
    _turn: int

    def start(self) -> Any:  # pragma: no cover - each fake defines its own
        raise NotImplementedError

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

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

    @property
    def turns_used(self) -> int:
        return self._turn
