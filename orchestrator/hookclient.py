"""The fast hook entry: ``python -S /abs/path/orchestrator/hookclient.py <agent>``.

Hot path (stdlib only, no site-packages): read the event on stdin, find the workspace, send the event to the
workspace's daemon over ``.orchestration/run/orch.sock``, print its answer, exit with its code. That costs about one
bare interpreter start plus a socket round trip, instead of importing the engine (pydantic, yaml, pathspec) per call.

If the daemon is absent, unreachable or does not answer in time, the client starts one in the background for the
next call and evaluates *this* call in-process (importing the engine) — it never answers "allow" by itself. Any
failure of its own ends in exit 2 (block), never exit 1 (which Claude Code treats as allow).

Run as a file (``-S`` skips site-packages for speed), it finds its package next to itself; the in-process fallback
re-enables site-packages first.
"""
from __future__ import annotations

import sys

if __name__ == "__main__" and not __package__ and sys.path:
    # Run as a file, sys.path[0] is orchestrator/ itself: its modules must not shadow the stdlib (json, socket...).
    del sys.path[0]

import os  # noqa: E402

import _socket  # noqa: E402 - the C module: `socket` would import enum, selectors... (~4 ms)

PROTOCOL = b"ORCH1"
SOCKET_NAME = "orch.sock"
#: the daemon answers a normal call in about a millisecond; a human approval through the TUI may take minutes
CONNECT_TIMEOUT = 0.5
#: seconds the whole hook may take — the daemon's answer *and* an in-process evaluation after it — before the
#: client answers "blocked" itself (``ORCH_HOOK_TIMEOUT``). Below the hook timeout ``orch install`` gives every host
#: (600 s): a host whose hook times out runs the call without it (Claude Code's default ``onFailure: continue``,
#: Copilot CLI, Qwen Code), so the client must always answer first, whatever hangs (redteam3: a FIFO a sandboxed
#: command put where a file was held the stale check's ``open`` until the host gave up and ran the command bare)
ANSWER_TIMEOUT = float(os.environ.get("ORCH_HOOK_TIMEOUT") or 570)
#: seconds between two attempts to start a daemon for one workspace
SPAWN_BACKOFF = 3.0
#: where agents say their project is (the event's own ``cwd`` is checked by whoever evaluates the call)
PROJECT_VARS = ("ORCH_ROOT", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR", "COPILOT_PROJECT_DIR")


def _find_root() -> str | None:
    """The workspace to ask, from the environment or the cwd — without parsing the event (json costs ~10 ms).

    The same walk as :func:`orchestrator.config.workspace.find_root_of` (the project's workspace finder), written out with
    ``os.path`` because this file runs with ``-S`` before the package can be imported (importing it would load the
    engine); ``tests/config/test_workspace.py`` checks that the two agree."""
    starts = [os.environ.get(name) for name in PROJECT_VARS]
    starts.append(os.getcwd())
    for start in starts:
        if not start:
            continue
        path = os.path.realpath(start)
        while True:
            if os.path.isdir(os.path.join(path, ".orchestration")):
                return path
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return None


#: processes between an agent and its hook client (the same set as ``orchestrator.state.leases.SHELLS``)
SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ash", "ksh", "mksh", "busybox", "orch-hook"})


def agent_process() -> str:
    """``pid:start`` of the agent process that ran this hook: the parent, skipping the shells in between (start: its
    start time in clock ticks, so that a reused pid is not taken for it). The same walk as
    :func:`orchestrator.state.leases.agent_process` (the write leases name it as their holder), with the stdlib only;
    ``tests/state/test_leases.py`` checks that the two agree."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
            comm = data[data.index(b"(") + 1:data.rindex(b")")].decode("utf-8", "replace")
            fields = data[data.rindex(b")") + 2:].split()
            parent, start = int(fields[1]), int(fields[19])
        except (OSError, ValueError, IndexError):
            return str(pid)
        if comm not in SHELLS or parent <= 1:
            return f"{pid}:{start}"
        pid = parent
    return str(pid)


#: host variables the daemon needs, forwarded under an ``ORCH_`` name: Claude Code's entry point says whether it runs
#: in print mode (``sdk-cli``), where a PreToolUse hook may defer a call (adapters/claude_code.py)
HOST_VARS = {"CLAUDE_CODE_ENTRYPOINT": "ORCH_CLAUDE_ENTRYPOINT"}


def encode_request(agent: str, env: dict, raw: bytes) -> bytes:
    """``ORCH1 <agent>`` line, ``KEY=VALUE`` lines (ORCH_* variables), an empty line, then the raw event."""
    lines = [PROTOCOL + b" " + agent.encode()]
    for key, value in env.items():
        if key in HOST_VARS and "\n" not in value:
            key = HOST_VARS[key]
        if key.startswith("ORCH_") and "\n" not in value and "=" not in key:
            lines.append(f"{key}={value}".encode())
    return b"\n".join(lines) + b"\n\n" + raw


#: the exit code :func:`decode_answer` gives a refusal frame (``R <len>`` + reason): the daemon does not serve this
#: process (orchestrator/daemon/peer.py); the call is evaluated in-process and no daemon is started
REFUSED = -1


def decode_answer(data: bytes) -> tuple[int, bytes, bytes] | None:
    """``<exit> <len stdout> <len stderr>`` line, then both bodies; None if malformed. A refusal frame gives
    ``(REFUSED, b"", reason)``."""
    head, sep, body = data.partition(b"\n")
    parts = head.split()
    if sep and len(parts) == 2 and parts[0] == b"R" and parts[1].isdigit() and len(body) == int(parts[1]):
        return REFUSED, b"", body
    if not sep or len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    code, n_out, n_err = (int(p) for p in parts)
    if code not in (0, 2) or len(body) != n_out + n_err:
        return None
    return code, body[:n_out], body[n_out:]


def _deadline(seconds: float) -> None:
    """Answer "blocked" (exit 2) once ``seconds`` have passed, whatever the hook is doing then: ``SIGALRM``
    interrupts a blocking ``open``, ``recv`` or ``flock`` too. The alarm is not inherited by the processes the
    evaluation starts (``fork``), and the client runs nothing after its answer."""
    import _signal  # type: ignore[import-not-found]  # the C module: `signal` imports enum (~4 ms)

    def expired(_signum: int, _frame: object) -> None:
        try:
            os.write(2, f"orchestrator: the hook did not finish within {seconds:g} s (ORCH_HOOK_TIMEOUT); call "
                        f"blocked\n".encode())
        finally:
            os._exit(2)

    _signal.signal(_signal.SIGALRM, expired)
    _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 0.001))


def _ask_daemon(sock_path: str, request: bytes) -> tuple[int, bytes, bytes] | None:
    """One request/response over the Unix socket; ``None`` when there is no usable daemon."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(sock_path)
        sock.settimeout(ANSWER_TIMEOUT)
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return decode_answer(b"".join(chunks))
    except OSError:
        return None
    finally:
        sock.close()


def _package_parent() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def outside(root: str | None, entries: list[str]) -> list[str]:
    """``entries`` (``sys.path``, ``PYTHONPATH``) without those inside the workspace ``root`` -- a ``PYTHONPATH=src``
    the person exported would let a sandboxed command plant ``src/yaml.py`` for the hook to import, unsandboxed
    (redteam2) -- except this package's own parent (a source checkout that is itself the workspace) and this
    interpreter's own environment (a project ``.venv``, which the sandbox never grants: sandbox/guard.py)."""
    if not root:
        return entries
    real = os.path.realpath(root)
    keep = _package_parent()
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix)}
    out = []
    for e in entries:
        full = os.path.realpath(e or ".")
        if e == keep or not (full == real or full.startswith(real + os.sep)) or \
                any(full == p or full.startswith(p + os.sep) for p in prefixes):
            out.append(e)
    return out


def _start_daemon(root: str) -> None:
    """Start ``orch serve`` for ``root`` in the background (its own session, detached from this hook's pipes)."""
    if os.environ.get("ORCH_NO_DAEMON"):
        return
    # Back off: parallel hook calls (or a daemon that cannot start) must not spawn a process per call. The daemon's
    # own flock already guarantees one per workspace; this only saves the wasted starts.
    marker = os.path.join(root, ".orchestration", "run", "orch.spawn")
    try:
        import time

        if time.time() - os.stat(marker).st_mtime < SPAWN_BACKOFF:
            return
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w"):
            pass
    except OSError:
        pass
    import subprocess

    env = dict(os.environ)
    inherited = outside(root, env.get("PYTHONPATH", "").split(os.pathsep)) if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join(p for p in [_package_parent(), *inherited] if p)
    try:
        subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", root],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, env=env, cwd=root)
    except OSError:
        pass  # the in-process evaluation below still answers this call


def _in_process(agent: str, raw: bytes) -> tuple[int, bytes, bytes]:
    if sys.flags.no_site:
        import site

        site.main()
    parent = _package_parent()
    sys.path[:] = outside(os.environ.get("ORCH_ROOT"), sys.path)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    from orchestrator.adapters.base import run_hook

    result = run_hook(agent, raw)
    return result.exit_code, result.stdout.encode(), result.stderr.encode()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    agent = argv[0] if argv else "claude-code"
    try:
        _deadline(ANSWER_TIMEOUT)
        raw = sys.stdin.buffer.read()
        answer = None
        root = _find_root()
        # the agent this call belongs to: the holder of the write leases it takes (orchestrator/state/leases.py)
        os.environ["ORCH_HOST_PID"] = agent_process()
        if root is not None:
            # the root this client chose governs the call, in the daemon and in-process alike (never the event's cwd)
            os.environ["ORCH_ROOT"] = root
            sock_path = os.path.join(root, ".orchestration", "run", SOCKET_NAME)
            answer = _ask_daemon(sock_path, encode_request(agent, dict(os.environ), raw))
            if answer is None:
                _start_daemon(root)
            elif answer[0] == REFUSED:
                answer = None  # a daemon serves, not this process: evaluate here, with this process's own rights
        if answer is None:
            # No daemon: evaluate here (run_hook also blocks bad input or a missing workspace, with a reason).
            answer = _in_process(agent, raw)
        code, out, err = answer
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.flush()
        return 2 if code == 2 else 0
    except BaseException as exc:  # noqa: BLE001 - fail closed, and never with exit 1
        try:
            sys.stderr.write(f"orchestrator hook client failed ({type(exc).__name__}: {exc}); call blocked\n")
        finally:
            return 2


if __name__ == "__main__":
    sys.exit(main())
