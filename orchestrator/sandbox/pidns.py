"""Other processes out of the sandboxed command's sight: a PID namespace with its own ``/proc`` (the Python launcher).

Landlock cannot refuse ``/proc/PID/environ`` of the host's shell or the agent (same uid): a command could read their
API keys there and send them out. So the launcher moves the command into a new PID namespace with a fresh ``/proc``
before Landlock restricts it, inside the command's own mount namespace (``mounts.py``: made first, whatever the
PID namespace; a user namespace too when not root): the host's processes are not in that ``/proc``. The launcher forks the namespace's PID 1, which mounts ``/proc``, restricts
itself (landlock.py), wipes the environment block the kernel shows as its ``/proc/1/environ`` (the one from before
the scrub) and runs the command as its child in a nested Landlock domain (``landlock.nest``: the command may not
ptrace-attach to PID 1, so ``/proc/1/mem`` is closed too). PID 1 passes signals on (a signal PID 1 has no handler
for is ignored) and reaps orphans until the command ends; then it exits with the command's status (128 + signal if
killed), and the kernel kills whatever the command left running. The launcher outside waits, passes the host's
signals on to PID 1, and exits with that status. ``launcher.c`` does the same in C (the fast path).

When the kernel refuses (nested in another sandbox, user namespaces restricted by AppArmor or sysctl), the command
runs as before, without the namespace (``orch doctor`` says so). Imported by the launcher under ``-I -S``: stdlib
only, ``os`` and ``ctypes`` (``_signal`` rather than ``signal``, which imports ``enum``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the launcher's import path
    from collections.abc import Callable

CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
PR_SET_PDEATHSIG = 1
#: what a host sends to stop a command: passed on (names: `_signal` has the numbers of this architecture)
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _libc():  # -> ctypes.CDLL
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def enter() -> bool:
    """A new PID namespace, inside the mount (+ user) namespace ``mounts.enter`` made: True when the next child is
    PID 1 of it, False when the kernel refused (the command then runs as before)."""
    if not hasattr(os, "fork"):
        return False
    try:
        return bool(_libc().unshare(CLONE_NEWPID) == 0)
    except (OSError, AttributeError):
        return False


def _forward_to(pid: int) -> None:
    import _signal  # type: ignore[import-not-found]

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for name in FORWARDED:
        _signal.signal(getattr(_signal, name), forward)


def _code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _block() -> None:
    """Hold the forwarded signals until the process to pass them to exists (they stay pending, not lost)."""
    import _signal

    _signal.pthread_sigmask(_signal.SIG_BLOCK, [getattr(_signal, name) for name in FORWARDED])


def unblock() -> None:
    import _signal

    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [getattr(_signal, name) for name in FORWARDED])


def split(waiter: Callable[[int], int] | None = None) -> int | None:
    """Fork PID 1 of the namespace :func:`enter` made. In the launcher: wait for it (``waiter``, when given, does:
    the network namespace's handshake, netns.py) and return its exit status. In PID 1: set it up (``/proc``, the
    environment block wiped) and return None (the caller restricts and runs; the forwarded signals stay blocked
    until :func:`run_init` or :func:`unblock`)."""
    _block()
    pid = os.fork()
    if pid:
        _forward_to(pid)
        unblock()
        if waiter is not None:
            return waiter(pid)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
            except InterruptedError:
                continue
            return _code(status)
    lib = _libc()
    lib.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # the launcher killed: the namespace and the command die with it
    _wipe_environ_block(lib)
    # a refused mount leaves the host's /proc in sight: the command still runs, as without the namespace
    lib.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    return None


def _wipe_environ_block(lib) -> None:  # noqa: ANN001 (ctypes.CDLL)
    """Zero what the kernel shows as this process's ``/proc/PID/environ`` (fields 50-51 of ``/proc/self/stat``: the
    block this process was started with, before the scrub): PID 1 stays visible to the command."""
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # fields[0] is field 3 (state)
    except (OSError, IndexError, ValueError):
        return
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)


def run_init(shell: str, command: str, env: dict[str, str], nest: Callable[[], object],
             after_fork: Callable[[int], object] | None = None) -> int:
    """PID 1's work: run the command (in the nested domain ``nest`` makes), pass signals on, reap every orphan until
    the command ends; its exit status. The forwarded signals are blocked (:func:`split`) until the child exists.
    ``after_fork(pid)`` runs once the command is forked and signals are passed on (the network bridge's forwarder,
    started when a first connection comes: netns.py)."""
    pid = os.fork()
    if pid == 0:
        try:
            import _signal  # type: ignore[import-not-found]

            for name in FORWARDED:
                _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
            unblock()
            nest()
            os.execve(shell, [shell, "-c", command], env)
        except BaseException as exc:  # noqa: BLE001 — a child never returns into the launcher's code
            os.write(2, f"orchestrator sandbox: cannot run {shell}: {exc}\n".encode())
        os._exit(126)
    _forward_to(pid)
    unblock()
    if after_fork is not None:
        after_fork(pid)
    while True:
        try:
            reaped, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            return 126
        if reaped == pid:
            return _code(status)
