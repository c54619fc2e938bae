"""``orch serve``: a resident per-workspace daemon answering hook events over a Unix socket.

Why: a hook process that imports the engine costs ~90 ms per tool call (pydantic + yaml + pathspec imports); the
stdlib-only client (:mod:`orchestrator.hookclient`) plus this daemon costs one bare interpreter start and a socket
round trip. The daemon runs the same :func:`orchestrator.adapters.base.run_hook` as the in-process path, so both
answer identically; it keeps one Governor per approval channel. Each call proves freshness with system calls, as a
one-call hook process does (a ``stat`` per governance and session file, an ``lstat`` per path component), so the
daemon answers exactly as a new process would and nothing is applied late (docs/performance.md, "Live cache
decision").

Wire protocol (one request per connection, no JSON on the client side: importing json costs the client ~10 ms):
the client sends ``ORCH1 <agent>\n``, its ``ORCH_*`` variables as ``KEY=VALUE`` lines, an empty line, then the raw
event bytes, and half-closes; the daemon answers ``<exit> <len stdout> <len stderr>\n`` + both bodies, and closes.

Concurrency: every connection is answered in its own thread, without a daemon-wide lock, so a call that waits for
a person (an approval on channel ``tui``, for minutes) holds nothing another session needs. What the threads share
is safe for it: session files and the approval broker are updated under per-file ``flock``s (which also exclude
other threads of this process: each holds its own open file description), the ledger is appended under its own
``flock``, the stat-keyed config and session memos are single dict operations, the shell parser has its lock.

Safety:
- one daemon per workspace: it holds an exclusive ``flock`` on ``run/orch.lock`` for its whole life; a second
  ``orch serve`` exits at once;
- stale sockets: under that lock, a socket file nobody listens on is unlinked before binding;
- it exits after ``ORCH_DAEMON_IDLE`` seconds without requests (default 900), or when its workspace or socket file
  disappears (checked four times a second), so daemons of deleted test workspaces do not linger;
- it exits when orchestrator's own code changes (an upgrade, or a developer's edit; checked every second), so a
  resident daemon never keeps answering with old code: the next call falls back in-process and starts a new one;
- the socket is created with mode 0600 (owner only);
- telemetry (docs/telemetry.md): a background thread (:class:`orchestrator.telemetry.shipper.Shipper`) ships the
  workspace's telemetry spool in batches, so no call waits on a collector; it reads ``OTEL_*`` from the daemon's own
  environment (inherited from the hook that started it) and sends what is left once more on exit. A call's own
  telemetry events are appended to the spool right after its answer is sent (``spool.deferred``), not before;
- ``run/orch.daemon.json`` says who serves (pid, start time, version, the package directory and a digest of its
  code), for ``orch status`` and ``orch doctor``.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import socketserver
import threading
import time
from pathlib import Path
from typing import Any

PROTOCOL = b"ORCH1"
SOCKET_NAME = "orch.sock"
LOCK_NAME = "orch.lock"
PID_NAME = "orch.pid"
INFO_NAME = "orch.daemon.json"
MAX_REQUEST = 16 * 1024 * 1024
#: seconds a peer has to send its whole request (``ORCH_DAEMON_FRAME_TIMEOUT``): the hook client sends it at once
#: and half-closes; a frame held open longer is dropped, never read later
FRAME_SECONDS = 5.0
#: what a refused peer may still send (read and dropped, never kept: a refused connection used to buffer up to
#: MAX_REQUEST for FRAME_SECONDS, so a sandboxed script opening connections in a loop grew the daemon by 16 MiB
#: each — 665 MB for 40 — until the kernel's OOM killer chose a process; redteam3), and for how long
REFUSED_DRAIN = 64 * 1024
REFUSED_SECONDS = 1.0
#: at most this many refusals of the daemon logged per :data:`LOG_WINDOW` seconds; the rest are counted and the
#: count logged once (a flood must not rotate the real refusals out of ``run/refusals.jsonl``)
LOG_BURST = 20
LOG_WINDOW = 10.0


def encode_refusal(reason: str) -> bytes:
    """``R <len>`` then the reason: the daemon will not serve this peer (the client evaluates in-process)."""
    body = reason.encode("utf-8", "replace")
    return b"R %d\n" % len(body) + body


def _send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)  # the client reads to EOF: it has its whole answer now
    except OSError:
        pass


def _hung_up(conn: socket.socket) -> bool:
    """The peer closed its end (not just its writing half): nobody reads an answer. A process that exits closes
    its sockets before it is reaped, so this sees a sender's exit before its pidfd does."""
    import select

    poller = select.poll()
    poller.register(conn.fileno(), select.POLLHUP)
    return any(ev & select.POLLHUP for _fd, ev in poller.poll(0))


def _drain(conn: socket.socket) -> None:
    """Read and drop what a refused peer sends, up to :data:`REFUSED_DRAIN` bytes or :data:`REFUSED_SECONDS`."""
    deadline = time.monotonic() + REFUSED_SECONDS
    left = REFUSED_DRAIN
    try:
        while left > 0 and (wait := deadline - time.monotonic()) > 0:
            conn.settimeout(wait)
            chunk = conn.recv(min(left, 65536))
            if not chunk:
                return
            left -= len(chunk)
    except OSError:
        pass


def encode_answer(result: Any) -> bytes:
    """``<exit> <len stdout> <len stderr>`` then both bodies: the client decodes it without importing json."""
    out, err = result.stdout.encode(), result.stderr.encode()
    return f"{result.exit_code} {len(out)} {len(err)}\n".encode() + out + err


def _code_stamp() -> dict[str, int]:
    """mtime of every module of the orchestrator package (a few dozen stats)."""
    package = Path(__file__).resolve().parent
    stamp = {}
    for path in package.rglob("*.py"):
        try:
            stamp[str(path)] = path.stat().st_mtime_ns
        except OSError:
            pass
    return stamp


def code_digest(stamp: dict[str, int] | None = None) -> str:
    """A short digest of :func:`_code_stamp`: equal digests mean the same code files, unchanged."""
    stamp = _code_stamp() if stamp is None else stamp
    text = "\n".join(f"{path} {mtime}" for path, mtime in sorted(stamp.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def package_dir() -> str:
    """The directory of the orchestrator package this process runs."""
    return str(Path(__file__).resolve().parent)


def info(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What the workspace's daemon says about itself (``run/orch.daemon.json``) plus whether its socket answers;
    None when no daemon ever wrote one (or it exited cleanly)."""
    try:
        data = json.loads((run_dir(root) / INFO_NAME).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data["alive"] = is_alive(socket_path(root))
    return data


def run_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / ".orchestration" / "run"


def socket_path(root: str | os.PathLike[str]) -> Path:
    return run_dir(root) / SOCKET_NAME


def is_alive(path: str | os.PathLike[str], timeout: float = 0.5) -> bool:
    """True when something accepts connections on the Unix socket at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        sock.close()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False


class Daemon:
    """The per-workspace hook daemon. ``serve_forever()`` returns when idle, orphaned or ``stop()``-ed."""

    def __init__(self, root: str | os.PathLike[str], *, idle_timeout: float | None = None) -> None:
        self.root = Path(root).resolve()
        self.run_dir = run_dir(self.root)
        self.sock_path = self.run_dir / SOCKET_NAME
        env_idle = os.environ.get("ORCH_DAEMON_IDLE")
        self.idle_timeout = idle_timeout if idle_timeout is not None else float(env_idle or 900)
        self.last_request = time.monotonic()
        self.requests = 0
        #: calls being evaluated right now (some may be waiting for a person)
        self.in_flight = 0
        #: monotonic time of the watchdog's last check that kept the daemon running. Only observed (by tests, to
        #: know that the idle rule was applied after a given moment without sleeping and hoping it was).
        self.last_check = 0.0
        self.started = time.time()
        self._governors: dict[str | None, Any] = {}
        self._gov_lock = threading.Lock()
        # No evaluation lock: calls run concurrently (see the module docstring). This lock guards the counters only.
        self._count_lock = threading.Lock()
        #: refusal log rate: [window start, refusals in it, refusals not logged in it]
        self._log_window: list[float] = [time.monotonic(), 0, 0]
        self._server: _Server | None = None
        self._lock_fd: int | None = None
        self._stopped = threading.Event()
        self._code = _code_stamp()
        from orchestrator.daemon.peer import Self

        #: the daemon's own uid, namespaces and no_new_privs: what a peer must share (orchestrator/daemon/peer.py)
        self.me = Self(isolates=self.sandbox_isolates)
        env_frame = os.environ.get("ORCH_DAEMON_FRAME_TIMEOUT")
        self.frame_seconds = float(env_frame) if env_frame else FRAME_SECONDS

    def sandbox_isolates(self) -> bool:
        """Whether this workspace's sandboxed commands get a mount namespace of their own (the launcher, run once)."""
        from orchestrator.sandbox import compiled

        return compiled.mountns_isolated(str(self.run_dir / "sandbox"))

    # -- governors ------------------------------------------------------------------------------------------------
    def governor(self, root: Path, approval_channel: str | None) -> Any:
        """One Governor per approval channel, created on first use (it caches intents/policy by mtime)."""
        if root.resolve() != self.root:
            from orchestrator.engine.pipeline import Governor  # an event from another workspace: do not cache

            return Governor(root, approval_channel=approval_channel, persist_preimages=True)
        with self._gov_lock:
            gov = self._governors.get(approval_channel)
            if gov is None:
                from orchestrator.engine.pipeline import Governor

                gov = self._governors[approval_channel] = Governor(
                    self.root, approval_channel=approval_channel, persist_preimages=True)
            return gov

    def handle_request(self, data: bytes) -> bytes:
        """Answer one wire request (see :func:`orchestrator.hookclient.encode_request`) with a framed answer."""
        from orchestrator.adapters.base import HookResult, run_hook

        head, sep, rest = data.partition(b"\n\n")
        lines = head.split(b"\n")
        first = lines[0].split()
        if not sep or len(first) != 2 or first[0] != PROTOCOL:
            return encode_answer(HookResult.block("orchestrator daemon: bad request header; call blocked"))
        agent = first[1].decode("utf-8", "replace")
        env = {}
        for line in lines[1:]:
            key, eq, value = line.decode("utf-8", "replace").partition("=")
            if eq and key.startswith("ORCH_"):
                env[key] = value
        from orchestrator.approvals import CALL_ENV

        with self._count_lock:
            self.last_request = time.monotonic()
            self.requests += 1
            self.in_flight += 1
        token = CALL_ENV.set(env)  # this thread's call: its hook's ORCH_* variables, not the daemon's
        try:
            # this daemon's workspace, whatever the event's cwd says (the client asked it because it governs)
            result = run_hook(agent, rest, env=env, governor_factory=self.governor, root=self.root)
        finally:
            CALL_ENV.reset(token)
            with self._count_lock:
                self.in_flight -= 1
                # a call that waited for a person for longer than the idle timeout must not look idle afterwards
                self.last_request = time.monotonic()
        return encode_answer(result)

    # -- one connection -------------------------------------------------------------------------------------------
    def serve_connection(self, conn: socket.socket) -> None:
        """Authenticate the peer, read its whole request within :data:`FRAME_SECONDS`, and answer it only while
        the peer still waits for the answer (module docstring, "Who may ask")."""
        from orchestrator.daemon import peer as peers
        from orchestrator.telemetry import spool

        who = peers.of(conn)
        try:
            why = peers.refusal(who, self.me)
            if why is not None:
                self.refuse("peer-refused", who, f"the daemon does not serve this process: {why}",
                            "a hook client runs where its agent runs; a sandboxed command may not drive the daemon "
                            "(the hook client then evaluates in-process, with its own rights)")
                _send(conn, encode_refusal(f"orchestrator daemon: refused: {why}"))
                _drain(conn)  # dropped unparsed and unkept: closing on unread bytes would reset the answer
                return
            data, problem = self.read_frame(conn)
            deferred: list = []
            if problem == "timeout":
                self.refuse("frame-timeout", who, f"the request was not complete within {self.frame_seconds:g} s: "
                            "dropped, never acted on", "a hook client sends its whole request at once")
                return
            if problem is not None:
                from orchestrator.adapters.base import HookResult

                answer = encode_answer(HookResult.block(f"orchestrator daemon: bad request ({problem}); call blocked"))
            elif not data and _hung_up(conn):
                return  # a liveness probe (is_alive: connect, close): nothing was asked
            elif _hung_up(conn) or not peers.alive(who):
                self.refuse("peer-gone", who, "the request was completed by its sender's exit (nobody waits for the "
                            "answer): dropped, never acted on", "a hook client half-closes and waits for its answer")
                return
            else:
                # telemetry events of this call are written after the answer (off the hook's wait)
                with spool.deferred() as deferred:
                    answer = self.handle_request(data)
            _send(conn, answer)
            spool.write_deferred(deferred)
        finally:
            who.close()

    def read_frame(self, conn: socket.socket) -> tuple[bytes, str | None]:
        """The whole request (up to the peer's half-close), and what went wrong: ``timeout`` (not complete within
        :attr:`frame_seconds` of the start: a frame held open is never read later), or another reason."""
        deadline = time.monotonic() + self.frame_seconds
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return b"", "timeout"
                conn.settimeout(left)
                chunk = conn.recv(65536)
                if not chunk:
                    return b"".join(chunks), None
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_REQUEST:
                    return b"", "request too large"
        except socket.timeout:
            return b"", "timeout"
        except OSError as exc:
            return b"", str(exc)

    def refuse(self, kind: str, who: Any, message: str, hint: str) -> None:
        """Log a request the daemon did not act on (``run/refusals.jsonl``, ``hook: daemon``): at most
        :data:`LOG_BURST` per :data:`LOG_WINDOW` seconds, then one line saying how many more were refused."""
        from orchestrator.state import refusals

        with self._count_lock:
            self._roll_log()
            self._log_window[1] += 1
            if self._log_window[1] > LOG_BURST:
                self._log_window[2] += 1
                return
        refusals.log(self.run_dir, {"decision": "refused", "type": kind, "hook": "daemon", "message": message,
                                    "peer": who.describe(), "hint": hint})

    def _roll_log(self, end: bool = False) -> None:
        """Start a new window of the refusal log's rate once the last one is over (or ``end``), logging how many
        refusals it did not log one by one. Under ``_count_lock``."""
        now = time.monotonic()
        if not end and now - self._log_window[0] <= LOG_WINDOW:
            return
        suppressed = int(self._log_window[2])
        self._log_window = [now, 0, 0]
        if suppressed:
            from orchestrator.state import refusals

            refusals.log(self.run_dir, {"decision": "refused", "type": "refusals-suppressed", "hook": "daemon",
                                        "message": f"{suppressed} more refused requests were not logged one by one "
                                        f"(over {LOG_BURST} in {LOG_WINDOW:g} s)", "count": suppressed})

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def acquire(self) -> bool:
        """Take the per-workspace daemon lock; False when another daemon holds it."""
        from orchestrator.core.fsutil import try_lock

        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = try_lock(self.run_dir / LOCK_NAME)
        return self._lock_fd is not None

    def bind(self) -> None:
        """Bind the socket, replacing a stale one (we hold the lock, so nobody else is serving)."""
        assert self._lock_fd is not None, "acquire() first"
        if self.sock_path.exists() or self.sock_path.is_symlink():
            self.sock_path.unlink()
        daemon = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                daemon.serve_connection(self.request)

        old_umask = os.umask(0o177)
        try:
            self._server = _Server(str(self.sock_path), Handler)
        finally:
            os.umask(old_umask)
        (self.run_dir / PID_NAME).write_text(f"{os.getpid()}\n")
        from orchestrator._version import __version__
        from orchestrator.core.fsutil import atomic_write_json

        atomic_write_json(self.run_dir / INFO_NAME, {
            "pid": os.getpid(), "started": self.started, "version": __version__, "package": package_dir(),
            "code": code_digest(self._code), "root": str(self.root), "socket": str(self.sock_path)})

    def _watchdog(self) -> None:
        ticks = 0
        while not self._stopped.wait(0.25):
            ticks += 1
            now = time.monotonic()
            idle = 0.0 if self.in_flight else now - self.last_request
            gone = not self.sock_path.exists() or not (self.root / ".orchestration").is_dir()
            upgraded = ticks % 4 == 0 and _code_stamp() != self._code
            with self._count_lock:
                self._roll_log(end=gone or upgraded or idle > self.idle_timeout)
            if gone or upgraded or idle > self.idle_timeout:
                self.stop()
                return
            self.last_check = now

    def serve_forever(self) -> None:
        assert self._server is not None, "bind() first"
        threading.Thread(target=self._watchdog, daemon=True, name="orch-daemon-watchdog").start()
        # telemetry: ships the spool in batches off every call's path; idle while the policy keeps telemetry off
        from orchestrator.telemetry.shipper import Shipper

        shipper = Shipper(self.root).start()
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self.close()
            shipper.stop()

    def stop(self) -> None:
        self._stopped.set()
        if self._server is not None:
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def close(self) -> None:
        self._stopped.set()
        if self._server is not None:
            self._server.server_close()
            self._server = None
            try:
                if self.sock_path.exists():
                    self.sock_path.unlink()
                (self.run_dir / PID_NAME).unlink(missing_ok=True)
                (self.run_dir / INFO_NAME).unlink(missing_ok=True)
            except OSError:
                pass
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def serve(root: str | os.PathLike[str], *, idle_timeout: float | None = None, warm: bool = True) -> int:
    """Run the daemon for ``root`` in the foreground; returns 0, also when another daemon already serves it."""
    # The approval channel comes with each request (the hook client forwards its ORCH_* variables); the daemon's own
    # environment, inherited from whichever hook started it, must not override later callers' choice.
    os.environ.pop("ORCH_APPROVAL_CHANNEL", None)
    if os.environ.get("ORCH_SANDBOXED"):
        # a hook client inside a sandboxed command found no daemon: one started from there would share the
        # command's namespaces and no_new_privs, and so serve sandboxed peers; the host's own hooks start the daemon
        return 0
    daemon = Daemon(root, idle_timeout=idle_timeout)
    if not daemon.acquire():
        return 0
    if warm:
        # Import the engine and build the default Governor before accepting calls: the first hook call is then fast.
        try:
            gov = daemon.governor(daemon.root, None)
            gov.intents()
            from orchestrator.sandbox import network

            network.prestart(gov.policy)  # the first sandboxed command need not wait for the egress proxy
            import orchestrator.adapters.claude_code  # noqa: F401
            from orchestrator.shell import analyze

            analyze("true")  # sets up the shell parser (and its lock) once, before concurrent calls may race to
            if gov.policy.approval.channel == "passkey":
                # the assertion check's library (~130 ms cold, more under load): loaded here, in the background
                # daemon, so that a person's approval is not waiting on it; a hook process never imports it before
                # it has an assertion to check (tests/test_hotpath_imports.py)
                import webauthn  # noqa: F401
        except Exception:  # noqa: BLE001 - a broken workspace is reported per call, fail-closed, by run_hook
            pass
    try:
        daemon.bind()
    except FileNotFoundError:
        # the workspace was removed while we started (the socket was up, its run/ files could not be
        # written): nothing is left to govern, which is the watchdog's clean exit, not a crash
        if not (daemon.root / ".orchestration").is_dir():
            return 0
        raise
    daemon.serve_forever()
    return 0


def stop(root: str | os.PathLike[str], timeout: float = 5.0) -> bool:
    """Ask the workspace's daemon to exit (by removing its socket, which its watchdog notices); True if it did."""
    path = socket_path(root)
    pid_file = run_dir(root) / PID_NAME
    if not path.exists():
        return True
    path.unlink()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_file.exists():
            return True
        time.sleep(0.05)
    return not pid_file.exists()
