"""Serving the console with uvicorn: loopback by default, TLS required beyond it; ``run/console.json``.

Why Starlette + uvicorn (docs/console.md): both are already in the dependency tree of the MCP SDK orchestrator
uses, pure Python (anyio, h11, click), small, and they serve a few JSON routes and static files with a middleware
chain built once — no framework, template engine or asset pipeline is needed for one page.

``run/console.json`` (in the workspace's run dir, never committed) records the running console's pid, port and
URL so that ``orch approver add`` and ``orch console --url`` find it; it is removed when the server stops.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from orchestrator.core.errors import OrchestratorError
from orchestrator.web.app import create_app
from orchestrator.web.console import Console

STATE_FILE = "console.json"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listen(host: str, certfile: str | None, keyfile: str | None) -> None:
    """Refuse to listen beyond loopback without TLS (the page carries decisions and a CSRF token)."""
    if (certfile is None) != (keyfile is None):
        raise OrchestratorError("--tls-cert and --tls-key go together")
    if not is_loopback(host) and certfile is None:
        raise OrchestratorError(
            f"listening on {host} (beyond loopback) needs TLS",
            hint="pass --tls-cert and --tls-key, or keep 127.0.0.1 and reach it through the team's tunnel "
                 "(docs/console.md, 'Reaching the console from elsewhere')")
    for path in (certfile, keyfile):
        if path is not None and not os.path.isfile(path):
            raise OrchestratorError(f"TLS file not found: {path}")


def state_path(console: Console) -> Path:
    return console.workspace.run_dir / STATE_FILE


def running(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The running console of a workspace (from ``run/console.json``, its port answering), else None."""
    try:
        data = json.loads((Path(run_dir) / STATE_FILE).read_bytes())
        port = int(data["port"])
        host = str(data.get("host") or "127.0.0.1")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        with socket.create_connection((host if host not in ("0.0.0.0", "::") else "127.0.0.1", port), timeout=0.5):
            return data if isinstance(data, dict) else None
    except OSError:
        return None


def _server(console: Console, host: str, port: int, certfile: str | None, keyfile: str | None) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # here, not after run(): uvicorn re-raises a captured SIGTERM once it has shut down, which ends the
            # process before any code after run() could remove the state file
            try:
                await super().shutdown(sockets=sockets)
            finally:
                _remove_state(console)

    config = uvicorn.Config(create_app(console), host=host, port=port, log_level="warning", access_log=False,
                            lifespan="off", server_header=False, date_header=False,
                            ssl_certfile=certfile, ssl_keyfile=keyfile, timeout_graceful_shutdown=2)
    return Server(config)


def _write_state(console: Console, host: str, port: int) -> None:
    from orchestrator.core.fsutil import atomic_write_json

    console.workspace.ensure_run_dir()
    atomic_write_json(state_path(console), {"pid": os.getpid(), "host": host, "port": port, "url": console.url,
                                            "origins": console.origins, "started": time.time()})


def _remove_state(console: Console) -> None:
    with contextlib.suppress(OSError):
        data = json.loads(state_path(console).read_bytes())
        if data.get("pid") == os.getpid():
            state_path(console).unlink()


def serve(console: Console, *, host: str = "127.0.0.1", certfile: str | None = None,
          keyfile: str | None = None) -> None:
    """Serve in the foreground until interrupted."""
    check_listen(host, certfile, keyfile)
    server = _server(console, host, console.port, certfile, keyfile)
    _write_state(console, host, console.port)
    try:
        server.run()
    finally:
        _remove_state(console)
    if not getattr(server, "started", True):
        raise OrchestratorError(f"the console could not listen on {host}:{console.port}",
                                hint="another process holds the port? pass --port")


class Background:
    """The console served from a thread (``orch approver add`` without a running console; tests)."""

    def __init__(self, console: Console, *, host: str = "127.0.0.1") -> None:
        check_listen(host, None, None)
        self.console = console
        self.server = _server(console, host, console.port, None, None)
        self.host = host
        self.thread = threading.Thread(target=self.server.run, name="orch-console", daemon=True)

    def __enter__(self) -> Background:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise OrchestratorError(f"the console could not listen on {self.host}:{self.console.port}")
            self.thread.join(0.02)
        _write_state(self.console, self.host, self.console.port)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        _remove_state(self.console)


__all__ = ["Background", "check_listen", "is_loopback", "running", "serve"]
