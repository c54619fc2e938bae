"""Keep this user's egress proxy running: what the engine calls when it plans a command with egress.

On the hook's path, so it is cheap: one ``flock`` probe on the proxy's lock tells whether a proxy holds it (the
proxy takes it for its whole life, so the probe cannot be fooled by a stale socket or pid file). When none does,
a proxy is started in the background (``python -m orchestrator.egress DIR``, its own session, output to ``DIR/out``)
and the hook goes on: the launcher waits for the proxy's registration socket (a few hundred milliseconds, once).
A proxy that is coming up is not started twice, and one that dies coming up is started again only after
:data:`SPAWN_BACKOFF` seconds, so a proxy that cannot start does not cost every call a process: the launcher then
runs the command without network and says why.
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


def _starting(directory: Path) -> bool:
    """A proxy was started a moment ago and is still coming up, or died coming up (do not start one per call).
    One that came up (it wrote ``info.json``) and died since, killed or crashed, is started again at once."""
    stamp = directory / STAMP
    try:
        if time.time() - stamp.stat().st_mtime >= SPAWN_BACKOFF:
            return False
        pid = int(stamp.read_text() or 0)
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
        return True  # still starting (it holds the lock once it serves)
    except ProcessLookupError:
        pass
    except OSError:
        return True
    try:
        import json

        return json.loads((directory / "info.json").read_text()).get("pid") != pid  # never came up: back off
    except (OSError, ValueError, AttributeError):
        return True


def ensure(directory: Path) -> bool:
    """Start the proxy unless one runs (or one is coming up); True when one runs or was started."""
    if running(directory):
        return True
    if _starting(directory):
        return True
    stamp = directory / STAMP
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        import subprocess

        parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        # this package's own parent only: an inherited PYTHONPATH into the workspace would let a planted module
        # (``src/json.py``) run in the proxy, outside the sandbox; the proxy needs nothing but the stdlib
        env["PYTHONPATH"] = parent
        with open(directory / "out", "ab") as out:
            child = subprocess.Popen([sys.executable, "-m", "orchestrator.egress", str(directory)],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                     close_fds=True, env=env, cwd="/")
        stamp.write_text(str(child.pid))
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
