"""Where the egress proxy lives: one per user and installation, in a private directory outside every workspace.

``$XDG_RUNTIME_DIR/orchestrator-egress-<install>`` when the session has a runtime directory (``/run/user/UID``),
else ``$XDG_STATE_HOME/orchestrator/egress-<install>`` (``~/.local/state/...``); ``<install>`` is a short hash of
this package's directory, so two installations (two virtualenvs, a checkout and a release) never share a proxy
running the other's code. Mode 0700. It holds the two sockets, the lock, ``info.json``, the log and the proxy's
output. The plans (what each command may reach) stay in each workspace's ``.orchestration/run/sandbox/``.

The socket names are short on purpose: a Unix socket path is limited to 108 bytes, so the proxy binds them by
relative name from inside the directory and the launcher connects through ``/proc/self/fd/N`` of a descriptor it
opened on them (which also reaches them once other directories are hidden in the command's mount namespace).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

#: the registration socket (launchers, from outside the sandbox)
CTL = "ctl"
#: the traffic socket (the forwarder inside a command's network namespace)
PROXY = "proxy"
LOCK = "lock"
INFO = "info.json"
#: the port the forwarder listens on inside the namespace (HTTP CONNECT, plain HTTP and SOCKS5 on one port)
PORT = 3128
#: where a workspace's plans are written, relative to its root (the proxy accepts plans from such a directory only)
PLANS = os.path.join(".orchestration", "run", "sandbox")


def install_tag() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return hashlib.sha256(here.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def egress_dir(env: Mapping[str, str] | None = None) -> Path:
    """This user's (and installation's) proxy directory."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / f"orchestrator-egress-{install_tag()}"
    state = env.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path(os.path.expanduser("~")) / ".local" / "state"
    return base / "orchestrator" / f"egress-{install_tag()}"


def plans_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / PLANS
