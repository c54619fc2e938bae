"""The git-mode lock: the engine's own ``git status`` never runs while a sandboxed command has the git dir writable.

A command that runs git (or code the analyzer cannot see into) runs in git mode: the repository's git dir is
writable for it, and its guardian puts back what git would run or trust (``config``, ``hooks/``, ``info/``…) only
after it (:mod:`orchestrator.sandbox.gitdir`). Meanwhile ``.git/config`` is the command's: a clean filter planted
there (``filter.x.clean``) and matched by a ``.gitattributes`` in its scope runs in every ``git status`` that
hashes a file of that path — and the post-hook's change scan runs ``git status`` outside the sandbox, for every call
of every session, including the calls an agent makes while its own background command (a dev server, a watcher)
still runs (redteam3). ``-c core.fsmonitor=false`` closed the one key git runs on every index load; a filter's
driver name is the command's to choose, so no ``-c`` list can switch them all off.

So the two sides exclude each other through one lock per repository, ``gitmode.lock`` in the repository's shared
run directory (:func:`orchestrator.vcs.worktrees.shared_run_dir`: hidden from every sandboxed command):

- the launcher of a git-mode command takes it *shared* before the command starts (``--git-lock``), and it stays held
  until its guardian's last restore (the guardian inherits it): many commands may run at once;
- the engine takes it *exclusive* around each ``git status`` it runs (:func:`exclusive`), waiting a little (a
  git-mode call that just ended: its guardian's last restore); when a git-mode command still holds it, the engine
  runs no git: the change snapshot walks the workspace instead (slower on a large tree, and blind to nothing), and
  the comparison of a snapshot git made is reported incomplete (``truncated``) — only when a git-mode command started
  between the two hooks of a call.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

#: the lock file's name in the repository's shared run directory
NAME = "gitmode.lock"
#: seconds the engine waits for the lock (a git-mode command that just ended: its guardian's last restore)
WAIT = 0.5


def lock_path(root: str | os.PathLike[str]) -> Path:
    """The git-mode lock of the repository whose worktree top is ``root``."""
    from orchestrator.vcs.worktrees import shared_run_dir

    return shared_run_dir(root) / NAME


@contextlib.contextmanager
def exclusive(root: str | os.PathLike[str], wait: float = WAIT) -> Iterator[bool]:
    """Hold the git-mode lock exclusively for the ``with`` body: True when held (no git-mode command runs in this
    repository meanwhile), False when one does (or the lock cannot be opened): then run no git."""
    path = lock_path(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    held = False
                    break
                time.sleep(0.01)
        yield held
    finally:
        os.close(fd)  # releases the lock
