"""Keep this user's egress proxy running: what the engine calls when it plans a command with egress.

On the hook's path, so it is cheap: one ``flock`` probe on the proxy's lock tells whether a proxy holds it (the
proxy takes it for its whole life, so the probe cannot be fooled by a stale socket or pid file). When none does,
a proxy is started in the background (``python -m orchestrator.egress DIR``, its own session, output to ``DIR/out``)
and the hook goes on: the launcher waits for the proxy's registration socket (a few hundred milliseconds, once).
Starts are at most one per :data:`SPAWN_BACKOFF` seconds, so a proxy that
cannot start does not cost every call a process: the launcher then runs the command without network and says why.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from pathlib import Path

from orchestrator.egress.paths import LOCK

SPAWN_BACKOFF = 3.0
STAMP = "spawned"


def running(directory: Path) -> bool:
    """Whether a proxy holds the lock in ``directory``."""
    path = directory / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # also drops the probe's shared lock
    return False


def ensure(directory: Path) -> bool:
    """Start the proxy unless one runs (or one was started a moment ago); True when one runs or was started."""
    if running(directory):
        return True
    stamp = directory / STAMP
    try:
        if time.time() - stamp.stat().st_mtime < SPAWN_BACKOFF:
            return True
    except OSError:
        pass
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        stamp.touch()
        import subprocess

        parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        # this package's own parent only: an inherited PYTHONPATH into the workspace would let a planted module
        # (``src/json.py``) run in the proxy, outside the sandbox; the proxy needs nothing but the stdlib
        env["PYTHONPATH"] = parent
        with open(directory / "out", "ab") as out:
            subprocess.Popen([sys.executable, "-m", "orchestrator.egress", str(directory)], stdin=subprocess.DEVNULL,
                             stdout=out, stderr=out, start_new_session=True, close_fds=True, env=env, cwd="/")
    except OSError:
        return False
    return True


def code_stamp() -> tuple[tuple[str, int], ...]:
    """mtimes of the proxy's own modules: a running proxy exits (when idle) once they change."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            try:
                out.append((name, os.stat(os.path.join(here, name)).st_mtime_ns))
            except OSError:
                pass
    return tuple(out)
