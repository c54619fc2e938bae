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

import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402

PROTOCOL = 1
SOCKET_NAME = "orch.sock"
#: the daemon answers a normal call in a few ms; a human approval through the TUI may take minutes
CONNECT_TIMEOUT = 0.5
ANSWER_TIMEOUT = float(os.environ.get("ORCH_HOOK_TIMEOUT", "600"))


def _find_root(event: dict) -> str | None:
    starts = [event.get("cwd")]
    roots = event.get("workspace_roots")
    if isinstance(roots, list) and roots:
        starts.append(roots[0])
    starts += [os.environ.get("ORCH_ROOT"), os.environ.get("CLAUDE_PROJECT_DIR"), os.getcwd()]
    for start in starts:
        if not isinstance(start, str) or not start:
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


def _ask_daemon(sock_path: str, request: bytes) -> dict | None:
    """One request/response over the Unix socket; ``None`` when there is no usable daemon."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(sock_path)
        sock.settimeout(ANSWER_TIMEOUT)
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        answer = json.loads(b"".join(chunks))
        if not isinstance(answer, dict) or answer.get("exit_code") not in (0, 2):
            return None
        return answer
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def _package_parent() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _start_daemon(root: str) -> None:
    """Start ``orch serve`` for ``root`` in the background (its own session, detached from this hook's pipes)."""
    if os.environ.get("ORCH_NO_DAEMON"):
        return
    import subprocess

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_parent(), env.get("PYTHONPATH")) if p)
    try:
        subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", root],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, env=env, cwd=root)
    except OSError:
        pass  # the in-process evaluation below still answers this call


def _in_process(agent: str, raw: bytes) -> dict:
    if sys.flags.no_site:
        import site

        site.main()
    parent = _package_parent()
    if parent not in sys.path:
        sys.path.insert(0, parent)
    from orchestrator.adapters.base import run_hook

    return run_hook(agent, raw).to_dict()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    agent = argv[0] if argv else "claude-code"
    try:
        raw = sys.stdin.buffer.read()
        try:
            event = json.loads(raw)
        except ValueError:
            event = None
        answer = None
        root = _find_root(event) if isinstance(event, dict) else None
        if root is not None:
            sock_path = os.path.join(root, ".orchestration", "run", SOCKET_NAME)
            env = {k: v for k, v in os.environ.items() if k.startswith("ORCH_")}
            request = json.dumps({"v": PROTOCOL, "agent": agent, "env": env}).encode() + b"\n" + raw
            answer = _ask_daemon(sock_path, request)
            if answer is None:
                _start_daemon(root)
        if answer is None:
            # No daemon (or no workspace / bad input, which run_hook turns into a block with a clear reason).
            answer = _in_process(agent, raw)
        if answer.get("stdout"):
            sys.stdout.write(answer["stdout"])
            sys.stdout.flush()
        if answer.get("stderr"):
            sys.stderr.write(answer["stderr"])
        return 2 if answer.get("exit_code") == 2 else 0
    except BaseException as exc:  # noqa: BLE001 - fail closed, and never with exit 1
        try:
            sys.stderr.write(f"orchestrator hook client failed ({type(exc).__name__}: {exc}); call blocked\n")
        finally:
            return 2


if __name__ == "__main__":
    sys.exit(main())
