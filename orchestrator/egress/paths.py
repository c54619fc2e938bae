"""Where the egress proxy lives: one per user, installation and user namespace, in a private directory outside every
workspace.

``$XDG_RUNTIME_DIR/orchestrator-egress-<install>-u<userns>`` when the session has a runtime directory
(``/run/user/UID``), else ``$XDG_STATE_HOME/orchestrator/egress-<install>-u<userns>`` (``~/.local/state/...``);
``<install>`` is a short hash of this package's directory, so two installations (two virtualenvs, a checkout and a
release) never share a proxy running the other's code; ``<userns>`` is the inode of the user namespace it serves
(:func:`userns_tag`). Mode 0700. It holds the two sockets, the lock, ``info.json``, the log and the proxy's output.
The plans (what each command may reach) stay in each workspace's ``.orchestration/run/sandbox/``.

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


_USERNS: list[str] = []


def userns_tag() -> str:
    """This process's user namespace (its inode), or "" where /proc does not say. A proxy checks its peers' network
    namespaces through ``/proc/PID/ns/net``, which a process may inspect only in its own user namespace or one it
    owns: a proxy started from a nested user namespace (a hook run inside a container's, ``orch doctor`` in a test)
    could not tell a launcher of the host from a sandboxed process, so it would refuse every one of them. Each user
    namespace gets a proxy of its own."""
    if not _USERNS:
        try:
            _USERNS.append(f"-u{os.stat('/proc/self/ns/user').st_ino}")
        except OSError:
            _USERNS.append("")
    return _USERNS[0]


def egress_dir(env: Mapping[str, str] | None = None) -> Path:
    """This user's (installation's, user namespace's) proxy directory."""
    env = os.environ if env is None else env
    name = f"egress-{install_tag()}{userns_tag()}"
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / f"orchestrator-{name}"
    state = env.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path(os.path.expanduser("~")) / ".local" / "state"
    return base / "orchestrator" / name


def plans_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / PLANS
