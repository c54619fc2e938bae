"""The one way the engine and the CLI run the ``git`` program (off the hook path: the hot path reads ``.git`` with
the stdlib, see :mod:`orchestrator.vcs.worktrees` and :mod:`orchestrator.vcs.revision`).

``git`` runs with an environment that cannot redirect or restyle it: variables a caller's shell may carry
(``GIT_DIR``, ``GIT_WORK_TREE``: another repository; ``GIT_EXTERNAL_DIFF``, ``GIT_DIFF_OPTS``, ``GIT_PAGER``: other
output) are dropped, prompts are off, and paths come back unquoted and uncoloured. :data:`NO_FSMONITOR` (also
used by the hook's own git runs) keeps git from starting ``core.fsmonitor``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

#: ``-c`` for every git the engine runs itself, outside the sandbox: git starts ``core.fsmonitor`` whenever it loads
#: the index (``status``, ``ls-files``), and a git-mode sandboxed command can set it in ``.git/config`` while it runs
#: (the guardian restores the file only after the command), so a hook running git meanwhile would run the agent's
#: command unsandboxed (found in review; tests/secrets/test_tracked.py)
NO_FSMONITOR = ("-c", "core.fsmonitor=false")
#: variables that would point git at another repository or change what it prints
_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER")


def git(cwd: str | os.PathLike[str], *args: str, stdin: bytes | None = None, config: Sequence[str] = (),
        timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <args>`` in ``cwd`` and return the finished process (stdout/stderr as bytes; never raises on a
    non-zero exit). ``config`` adds ``-c key=value`` settings. Raises :class:`FileNotFoundError` when git is not
    on PATH and :class:`subprocess.TimeoutExpired` after ``timeout`` seconds."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env["GIT_TERMINAL_PROMPT"] = "0"
    cmd = ["git", *NO_FSMONITOR, "-c", "core.quotepath=off", "-c", "color.ui=never"]
    for item in config:
        cmd += ["-c", item]
    return subprocess.run([*cmd, *args], cwd=cwd, input=stdin, capture_output=True, env=env, timeout=timeout)


def cat_blobs(cwd: str | os.PathLike[str], names: Sequence[str]) -> dict[str, bytes | None]:
    """The contents of the blobs ``names`` (``<sha>`` or ``<rev>:<path>``) through one ``git cat-file --batch``;
    None for a name that is missing or not a blob. Raises :class:`FileNotFoundError` when git is not on PATH."""
    if not names:
        return {}
    req = "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")
    out = git(cwd, "cat-file", "--batch", stdin=req).stdout
    got: dict[str, bytes | None] = {}
    pos = 0
    for name in names:
        nl = out.find(b"\n", pos)
        if nl < 0:
            break
        header = out[pos:nl]
        pos = nl + 1
        fields = header.split()
        if header.endswith((b" missing", b" ambiguous")) or len(fields) != 3:
            got[name] = None  # the name is echoed back (it may hold spaces): no content follows
            continue
        size = int(fields[2])
        got[name] = out[pos:pos + size] if fields[1] == b"blob" else None
        pos += size + 1
    return got


__all__ = ["NO_FSMONITOR", "git", "cat_blobs"]
