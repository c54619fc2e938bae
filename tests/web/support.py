"""A console served for real (uvicorn on a free loopback port, in a thread) for the web tests."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

from orchestrator.config.workspace import Workspace
from orchestrator.web.console import Console
from orchestrator.web.server import Background


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served(ws: Workspace, port: int) -> Iterator[Console]:
    """``ws``'s console at ``http://localhost:<port>`` until the block ends."""
    console = Console(ws, origins=[f"http://localhost:{port}"], port=port)
    with Background(console):
        yield console
