"""Where the egress proxy lives: ``.orchestration/run/egress/`` (its sockets, lock, info and log) of a workspace.

The socket names are short on purpose: a Unix socket path is limited to 108 bytes, so the proxy binds them by
relative name from inside the directory and the launcher connects through ``/proc/self/fd/N`` of a descriptor it
opened on them (which also reaches them once the run directory is hidden in the command's mount namespace).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the registration socket (launchers, from outside the sandbox)
CTL = "ctl"
#: the traffic socket (the forwarder inside a command's network namespace)
PROXY = "proxy"
LOCK = "lock"
INFO = "info.json"
#: the port the forwarder listens on inside the namespace (HTTP CONNECT, plain HTTP and SOCKS5 on one port)
PORT = 3128


def run_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / ".orchestration" / "run"


def egress_dir(root: str | os.PathLike[str]) -> Path:
    return run_dir(root) / "egress"


def sandbox_dir(root: str | os.PathLike[str]) -> Path:
    """Where the launcher's spec files and the egress plans are written."""
    return run_dir(root) / "sandbox"
