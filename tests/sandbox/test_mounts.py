"""The command's own mount namespace (orchestrator/sandbox/mounts.py, hidden.py, protected.py, launcher.c).

Real launchers under the real kernel, through the engine, for each launcher (the compiled one, the Python one and git
mode): a sandboxed script cannot reach the daemon's socket or any file of the run directories (judged by a real
``orch serve`` whose state the script tries to change), cannot connect to the pathname or abstract sockets of servers
outside (real listening servers standing in for docker and an ssh agent: they receive nothing) unless policy
``sandbox.sockets.allow`` names them, cannot signal a process outside, and cannot change, remove or rename a path
``.intentignore`` protects beneath its writable scope root (``git switch --orphan`` and ``git revert`` included).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import sandbox
from orchestrator.sandbox import compiled, doctor, hidden, landlock, protected
from orchestrator.sandbox.cwd import split
from tests.sandbox.conftest import Host, needs_landlock
from tests.sandbox.escapes import Listener
from tests.waiting import wait_until


def _can_unshare() -> bool:
    args = ["unshare", "-m", "true"] if os.geteuid() == 0 else ["unshare", "-Urm", "true"]
    return subprocess.run(args, capture_output=True, check=False).returncode == 0


pytestmark = [needs_landlock, pytest.mark.skipif(not _can_unshare(), reason="the kernel refuses mount namespaces here")]
KINDS = ("compiled", "python", "git")
needs_scopes = pytest.mark.skipif(landlock.abi() < 6, reason="Landlock ABI < 6: no scoping of abstract sockets and "
                                                             "signals")

#: what a hostile script tries, one action per argument (``kind=path``); prints {argument: "ok" | errno name}
PROBE = r'''
import errno, json, os, shutil, signal, socket, sys
out = {}
for arg in sys.argv[1:]:
    kind, _, path = arg.partition("=")
    try:
        if kind == "connect":
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(30)
            s.connect("\0" + path[1:] if path.startswith("@") else path)
            s.sendall(b"hello from the sandbox\n")
            s.close()
        elif kind == "daemon":  # a real request: select INT-ALL for another session
            event = {"session_id": "victim", "hook_event_name": "PreToolUse", "cwd": os.getcwd(), "tool_use_id": "t",
                     "tool_name": "mcp__orchestrator__select_active_intent", "tool_input": {"intent_id": "INT-ALL"}}
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(30)
            s.connect(path)
            s.sendall(b"ORCH1 claude-code\n\n" + json.dumps(event).encode())
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        elif kind == "read":
            open(path, "rb").read()
        elif kind == "list":
            out[arg] = sorted(os.listdir(path))
            continue
        elif kind == "write":
            with open(path, "w") as fh:
                fh.write("written by the sandbox\n")
        elif kind == "rmtree":
            shutil.rmtree(path)
        elif kind == "unlink":
            os.unlink(path)
        elif kind == "rename":
            os.rename(path, path + ".moved")
        elif kind == "kill":
            os.kill(int(path), signal.SIGTERM)
        out[arg] = "ok"
    except OSError as exc:
        out[arg] = errno.errorcode.get(exc.errno, str(exc.errno))
print(json.dumps(out))
'''


def run(ws: Path, kind: str, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as the engine wraps it, the way a host runs it, through the launcher of ``kind``.

    A script is code the analyzer cannot see into, so the engine gives it git mode (the Python launcher with the
    guardian): that is kind ``git``. For ``compiled`` and ``python`` the same plan without ``--git`` runs through
    the compiled launcher or the Python stub directly."""
    verdict = Host(ws).pre(command, sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    line = str(verdict.command)
    opts = sandbox.options_of(line) or []
    if kind == "git":
        assert "--git" in opts
    else:
        kept = [w for i, w in enumerate(opts) if w != "--git" and (i == 0 or opts[i - 1] != "--git")]
        spec_dir = ws / ".orchestration" / "run" / "sandbox"
        spec_id = os.path.basename(sandbox._write_spec(str(spec_dir), kept))[:-len(".spec")]
        if kind == "compiled":
            assert compiled.state(str(spec_dir))[0] == "compiled"
        stub = spec_dir / (compiled.STUB if kind == "compiled" else compiled.PYTHON_STUB)
        prefix, inner = split(command)
        line = prefix + shlex.join([str(stub), spec_id, "--", inner])
    return subprocess.run(["/bin/bash", "-c", line + "\n:"], cwd=ws, capture_output=True, text=True, timeout=120)


def probe(ws: Path, kind: str, actions: list[str], prefix: str = "", script: str = "src/probe.py"
          ) -> dict[str, object]:
    """Run the probe with ``actions`` (``script``: its path as the command names it; it lives in ``src/``)."""
    (ws / "src" / "probe.py").write_text(PROBE)
    proc = run(ws, kind, prefix + f"python3 {script} " + " ".join(shlex.quote(a) for a in actions))
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


HELLO = b"hello from the sandbox\n"


def set_policy(ws: Path, extra: str) -> None:
    policy = ws / ".orchestration" / "policy.yaml"
    policy.write_text(policy.read_text() + extra)


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Listener]]:
    """A docker-like socket and an ssh agent (``SSH_AUTH_SOCK`` in the hook's environment), outside the workspace."""
    (tmp_path / "docker").mkdir()
    (tmp_path / "ssh-Xq1").mkdir()
    out = {"docker": Listener(str(tmp_path / "docker" / "docker.sock")),
           "agent": Listener(str(tmp_path / "ssh-Xq1" / "agent.77"))}
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "ssh-Xq1" / "agent.77"))
    yield out
    for s in out.values():
        s.close()


# ------------------------------------------------------------------------------------ the run dirs and the daemon
@pytest.fixture
def served(sws: Path) -> Iterator[Path]:
    """``orch serve`` for the workspace, answering on .orchestration/run/orch.sock."""
    from orchestrator.daemon import server as daemon

    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(sws)],
                            env={**os.environ, "ORCH_DAEMON_IDLE": "60"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(sws)) or proc.poll() is not None,
               what="the daemon to answer on its socket")
    yield daemon.socket_path(sws)
    daemon.stop(sws)
    proc.wait(timeout=60)


def _daemon_refusals(run: Path) -> list[dict[str, object]]:
    try:
        lines = (run / "refusals.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return []
    return [r for r in map(json.loads, lines) if r.get("hook") == "daemon"]


def _victim_intent(ws: Path) -> object:
    from orchestrator.state.sessions import SessionStore

    return SessionStore(ws / ".orchestration" / "run").get("victim").get("intent_id")


@pytest.mark.parametrize("pidns", ["on", "off"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_daemon_and_the_run_dirs_are_out_of_reach(sws: Path, served: Path, kind: str, pidns: str) -> None:
    """A script that talks to ``orch serve`` itself (issue 28, finding 2) finds no socket, and the broker's files
    are gone from its sight, with or without the PID namespace; the daemon's state is unchanged."""
    if pidns == "off":
        set_policy(sws, "  pid_namespace: false\n")
    run = sws / ".orchestration" / "run"
    (run / "approvals").mkdir(exist_ok=True)
    (run / "approvals" / "req-1.json").write_text("{}")
    out = probe(sws, kind, [f"daemon={served}", f"read={run}/approvals/req-1.json", f"list={run}"])
    assert out == {f"daemon={served}": "ENOENT", f"read={run}/approvals/req-1.json": "ENOENT", f"list={run}": []}
    assert _victim_intent(sws) is None
    assert _daemon_refusals(run) == []  # it never saw a request to refuse (it would log one: daemon/server.py)
    # the same script outside the sandbox does reach it: the judge would see a request that got through
    proc = subprocess.run([sys.executable, "src/probe.py", f"daemon={served}"], cwd=sws, capture_output=True,
                          text=True, timeout=120)
    assert json.loads(proc.stdout) == {f"daemon={served}": "ok"}
    assert _victim_intent(sws) == "INT-ALL"


LIFT = """\
umount -l {run} 2>/dev/null && echo umounted
mount -t tmpfs none {run} 2>/dev/null && echo mounted
nsenter -t 1 -m ls -A {run} 2>/dev/null | grep -q . && echo host-namespace
unshare -m sh -c 'umount -l {run} && ls -A {run}' 2>/dev/null | grep -q . && echo nested
ls -A /proc/1/root{run} 2>/dev/null | grep -q . && echo proc-root
ls -A {run} | grep -q . && echo visible
echo done
"""


@pytest.mark.parametrize("pidns", ["on", "off"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_command_cannot_lift_its_namespace(sws: Path, kind: str, pidns: str) -> None:
    """Landlock forbids mount, umount and remount to the command (in a nested namespace too); the host's mount
    namespace is out of reach through PID 1 (``nsenter``, ``/proc/1/root``) with and without the PID namespace."""
    if pidns == "off":
        set_policy(sws, "  pid_namespace: false\n")
    run_dir = sws / ".orchestration" / "run"
    (sws / "src" / "lift.sh").write_text(LIFT.format(run=run_dir))
    proc = run(sws, kind, "bash src/lift.sh")
    assert proc.stdout == "done\n", (proc.stdout, proc.stderr)
    # the judge's own check sees the run dir outside (never the script itself there: it would mount on the host)
    assert os.listdir(run_dir)


# ------------------------------------------------------------------------------------------ servers outside
@pytest.mark.parametrize("kind", KINDS)
def test_servers_outside_are_hidden_and_the_policy_opens_one(sws: Path, servers: dict[str, Listener], kind: str
                                                             ) -> None:
    docker, agent = (str(servers[n].sock.getsockname()) for n in ("docker", "agent"))
    actions = [f"connect={docker}", f"connect={agent}"]
    assert probe(sws, kind, actions) == dict.fromkeys(actions, "ECONNREFUSED")
    assert servers["docker"].take() == b"" and servers["agent"].take() == b""
    set_policy(sws, f"  sockets:\n    allow: ['$SSH_AUTH_SOCK', '{os.path.dirname(docker)}']\n")
    assert probe(sws, kind, actions) == dict.fromkeys(actions, "ok")
    for name in ("docker", "agent"):
        wait_until(lambda n=name: bytes(servers[n].received) == HELLO,  # type: ignore[misc]
                   what=f"the {name} server to read the connection")


@needs_scopes
@pytest.mark.parametrize("kind", KINDS)
def test_abstract_sockets_outside_are_refused_unless_allowed(sws: Path, kind: str) -> None:
    name = f"@orch-test-bus-{os.getpid()}-{kind}"
    server = Listener("\0" + name[1:])
    try:
        # the command's own network namespace has abstract sockets of its own (egress by host); Landlock's scope
        # refuses them where none is made
        assert probe(sws, kind, [f"connect={name}"])[f"connect={name}"] in ("EPERM", "ECONNREFUSED")
        original = (sws / ".orchestration" / "policy.yaml").read_text()
        set_policy(sws, "  pid_namespace: false\n")  # no network namespace: the Landlock scope alone
        assert probe(sws, kind, [f"connect={name}"]) == {f"connect={name}": "EPERM"}
        assert server.take() == b""
        (sws / ".orchestration" / "policy.yaml").write_text(original)
        # an abstract name opened keeps the command in the host's network namespace (the port rules instead)
        set_policy(sws, f"  sockets:\n    allow: ['{name}']\n")
        assert probe(sws, kind, [f"connect={name}"]) == {f"connect={name}": "ok"}
        wait_until(lambda: bytes(server.received) == HELLO, what="the abstract server to read the connection")
    finally:
        server.close()


@needs_scopes
@pytest.mark.parametrize("kind", KINDS)
def test_a_process_outside_cannot_be_signalled(sws: Path, kind: str) -> None:
    """With ``sandbox.pid_namespace: false`` the host's pids are in sight; Landlock's signal scope keeps them out of
    reach all the same."""
    set_policy(sws, "  pid_namespace: false\n")
    outside = subprocess.Popen(["sleep", "600"])
    try:
        assert probe(sws, kind, [f"kill={outside.pid}"]) == {f"kill={outside.pid}": "EPERM"}
        assert outside.poll() is None
    finally:
        outside.kill()
        outside.wait()


# ------------------------------------------------------------------------------- protected paths in the scope
@pytest.fixture
def vendored(sws: Path) -> Path:
    """``src/vendor/`` (and ``*.golden``) protected by .intentignore, an existing nested host configuration
    (``src/.claude/settings.json``), all committed; the intent's scope is ``src/**``."""
    with open(sws / ".orchestration" / ".intentignore", "a") as fh:
        fh.write("src/vendor/\n*.golden\n")
    for rel, text in {"src/vendor/lib.js": "vendored\n", "src/vendor/deep/x.js": "deep\n", "src/keys/a.golden": "golden\n",
                      "src/.claude/settings.json": "{}\n", "src/mine.py": "mine\n"}.items():
        (sws / rel).parent.mkdir(parents=True, exist_ok=True)
        (sws / rel).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}
    subprocess.run(["git", "add", "-A", "-f", "src"], cwd=sws, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "vendor"], cwd=sws, check=True, env=env)
    return sws


VENDORED = {"src/vendor/lib.js": "vendored\n", "src/vendor/deep/x.js": "deep\n", "src/keys/a.golden": "golden\n",
            "src/.claude/settings.json": "{}\n"}


def _intact(ws: Path) -> None:
    for rel, text in VENDORED.items():
        assert (ws / rel).read_text() == text, rel


@pytest.mark.parametrize("kind", KINDS)
def test_protected_paths_beneath_the_scope_root_are_read_only(vendored: Path, kind: str) -> None:
    ws = vendored
    actions = ["rmtree=src/vendor", "write=src/vendor/lib.js", "write=src/vendor/new.js", "rename=src/vendor",
               "rename=src/vendor/deep", "write=src/keys/a.golden", "unlink=src/keys/a.golden",
               "write=src/.claude/settings.json", "write=src/mine.py", "write=src/keys/b.golden"]
    out = probe(ws, kind, actions)
    assert out == {"rmtree=src/vendor": "EROFS", "write=src/vendor/lib.js": "EROFS", "write=src/vendor/new.js": "EROFS",
                   "rename=src/vendor": "EBUSY", "rename=src/vendor/deep": "EROFS", "write=src/keys/a.golden": "EROFS",
                   "unlink=src/keys/a.golden": "EBUSY", "write=src/.claude/settings.json": "EROFS",
                   # the rest of the scope stays writable; a protected name created by the command is not held by
                   # the kernel (no inode to mount over before it exists): the post-hook reports it
                   "write=src/mine.py": "ok", "write=src/keys/b.golden": "ok"}
    _intact(ws)


@pytest.mark.parametrize("command", ["git switch -q --orphan pw", "git revert --no-edit HEAD",
                                     "git checkout -q --orphan x && git rm -rq --cached . && git clean -fdq"])
def test_git_cannot_delete_a_protected_tree_in_scope(vendored: Path, command: str) -> None:
    """The last two of the earlier held-out cases (issue 28, item 7): git itself removing ``src/vendor/`` when the
    scope is ``src/**``."""
    host = Host(vendored)
    verdict = host.pre(command, sandbox=True)
    if not verdict.allowed:
        # the analyzer asks for the more destructive spellings; the kernel must hold them when run as a script
        (vendored / "src" / "g.sh").write_text(command + "\n")
        command = "bash src/g.sh"
    host.run(command)
    _intact(vendored)


@pytest.mark.parametrize("kind", KINDS)
def test_a_working_directory_inside_a_protected_tree_is_read_only_too(vendored: Path, kind: str) -> None:
    """The leading ``cd`` runs in the host's shell: the launcher starts in ``src/vendor`` and looks its working
    directory up again, so relative writes go through the read-only mount."""
    out = probe(vendored, kind, ["write=new.js", "write=lib.js"], prefix="cd src/vendor && ",
                script="../probe.py")
    assert out == {"write=new.js": "EROFS", "write=lib.js": "EROFS"}
    assert not (vendored / "src" / "vendor" / "new.js").exists()
    _intact(vendored)


def test_the_plan_lists_what_it_hides_and_protects(vendored: Path) -> None:
    verdict = Host(vendored).pre("python3 src/mine.py", sandbox=True)
    opts = sandbox.options_of(verdict.command) or []
    pairs = list(zip(opts[::2], opts[1::2]))
    ro = sorted(os.path.relpath(v, vendored) for k, v in pairs if k == "--ro")
    assert ro == ["src/.claude/settings.json", "src/keys/a.golden", "src/vendor"]
    assert ("--hide", str(vendored / ".orchestration" / "run")) in pairs
    # the read plan grants no workspace write: nothing to protect
    read = Host(vendored).pre("ls src", sandbox=True)
    assert "--ro" not in (sandbox.options_of(read.command) or [])


# ---------------------------------------------------------------------------------------------- the engine side
def test_bound_sockets_come_from_the_kernels_list(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    table.write_text("Num       RefCount Protocol Flags    Type St Inode Path\n"
                     "0000: 00000002 00000000 00010000 0001 01 88189 /run/a b.sock\n"
                     "0000: 00000002 00000000 00000000 0001 03 88190 /run/a b.sock\n"
                     "0000: 00000003 00000000 00000000 0001 03  1072\n"
                     "0000: 00000002 00000000 00010000 0001 01 1073 @/tmp/.X11-unix/X0\n"
                     "0000: 00000002 00000000 00010000 0001 01 1074 relative.sock\n"
                     "0000: 00000002 00000000 00000000 0002 07 1075 /dev/log\n")
    assert hidden.bound_sockets(str(table)) == ["/run/a b.sock", "/dev/log"]


def test_the_allow_list_expands_and_an_unset_variable_opens_nothing(tmp_path: Path) -> None:
    class Policy:
        class sandbox:  # noqa: N801 - the policy's shape
            class sockets:  # noqa: N801
                allow = ["$SSH_AUTH_SOCK", "${NOPE}/x", "run/db.sock", "~/.gnupg", "@bus"]

    paths, abstract = hidden.allow_list(str(tmp_path), Policy, {"SSH_AUTH_SOCK": str(tmp_path / "agent")})
    assert paths == [str(tmp_path / "agent"), str(tmp_path / "run" / "db.sock"),
                     os.path.realpath(os.path.expanduser("~/.gnupg"))]
    assert abstract


def test_sockets_beneath_a_hidden_or_allowed_dir_are_not_covered(tmp_path: Path) -> None:
    run = tmp_path / "ws" / ".orchestration" / "run"
    run.mkdir(parents=True)
    (tmp_path / "srv").mkdir()
    socks = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    paths = [str(run / "orch.sock"), str(tmp_path / "srv" / "a.sock"), str(tmp_path / "srv" / "kept.sock")]
    for s, p in zip(socks, paths):
        s.bind(p)
    try:
        opts = hidden.options(str(tmp_path / "ws"), None, run, keep=[paths[2]],
                              sockets=[*paths, str(tmp_path / "gone.sock"), str(run)])
    finally:
        for s in socks:
            s.close()
    assert opts == ["--hide", str(run), "--cover", paths[1]]


def test_the_policy_schema_validates_the_allow_list(sws: Path) -> None:
    from orchestrator.config import policy
    from orchestrator.core.errors import ConfigError

    path = sws / ".orchestration" / "policy.yaml"
    path.write_text("version: 1\nsandbox:\n  sockets:\n    allow: ['$SSH_AUTH_SOCK', /run/postgresql, '@bus']\n")
    assert policy.load(path).sandbox.sockets.allow == ["$SSH_AUTH_SOCK", "/run/postgresql", "@bus"]
    for bad in ("[1]", "['']", "/run/x", "{a: b}"):
        path.write_text(f"version: 1\nsandbox:\n  sockets:\n    allow: {bad}\n")
        with pytest.raises(ConfigError, match="sockets"):
            policy.load(path)


def test_read_only_judges_entry_by_entry_under_a_negation(tmp_path: Path) -> None:
    from orchestrator.config.intentignore import IgnoreRules, _validate

    root = tmp_path / "ws"
    for rel in ("src/vendor/a.js", "src/vendor/README", "src/app/node_modules/x/AGENTS.md", "src/lib/AGENTS.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    text = "vendor/\n!src/vendor/README\nAGENTS.md\n"
    rules = IgnoreRules(_validate(root / ".intentignore", text))
    protected.clear()
    paths, truncated = protected.read_only(str(root), [str(root / "src")], rules)
    # a negation re-opens one file: the directory is judged entry by entry; node_modules is not entered
    assert sorted(os.path.relpath(p, root) for p in paths) == ["src/lib/AGENTS.md", "src/vendor/a.js"]
    assert not truncated
    plain = IgnoreRules(_validate(root / ".intentignore", "vendor/\n"))
    assert protected.read_only(str(root), [str(root / "src")], plain)[0] == [str(root / "src" / "vendor")]
    # a grant that is itself protected is bound whole
    assert protected.read_only(str(root), [str(root / "src" / "vendor")], plain)[0] == [str(root / "src" / "vendor")]


def test_doctor_reports_what_the_mount_namespace_holds(sws: Path) -> None:
    from orchestrator.config.checks import check_sandbox
    from orchestrator.config.workspace import Workspace

    findings = [f for f in check_sandbox(Workspace(sws)) if f.check == "sandbox-mounts"]
    assert [f.status for f in findings] == ["ok"], findings
    assert "hidden" in findings[0].message


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON),
                    reason="needs root, setpriv and a system python3 to become an unprivileged user")
@pytest.mark.parametrize("locked", [False, True])
@pytest.mark.parametrize("launcher", [compiled.STUB, compiled.PYTHON_STUB])
def test_an_unprivileged_user_gets_the_same_namespace(launcher: str, locked: bool, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """Not root: the launcher makes a user namespace for the mount namespace, and a read-only remount keeps the
    flags the host set (``locked``: the probe's files on a nosuid, nodev, noexec mount, as a home may be; a remount
    that dropped them is refused in a user namespace)."""
    directory = tempfile.mkdtemp(prefix="orch-mounts-", dir="/var/tmp")
    try:
        os.chmod(directory, 0o755)
        if launcher == compiled.PYTHON_STUB:
            monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
        assert compiled.install(directory) is not None
        if launcher == compiled.PYTHON_STUB:  # the venv's interpreter may live where that user cannot go (~root)
            Path(directory, compiled.STUB).write_text(landlock.stub_text(SYSTEM_PYTHON, compiled.LAUNCHER_DIR))
        nobody: tuple[str, ...] = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        base = Path(directory) / "files"
        base.mkdir(mode=0o755)
        if locked:  # the files' own mount, made in a mount namespace of the runner's
            nobody = ("unshare", "-m", "--propagation", "private", "sh", "-c",
                      'mount --bind "$0" "$0" && mount -o remount,bind,nosuid,nodev,noexec "$0" && exec "$@"',
                      str(base), *nobody)
        held = doctor.probe(directory, nobody, SYSTEM_PYTHON, str(base))
        assert {"hidden", "covered", "read-only"} <= set(held), held
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("launcher", [compiled.STUB, compiled.PYTHON_STUB])
def test_malformed_options_and_a_hidden_working_directory_fail_closed_in_both(tmp_path: Path, launcher: str,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if launcher == compiled.PYTHON_STUB:
        monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
    directory = tmp_path / "run" / "sandbox"
    assert compiled.install(str(directory)) is not None
    (tmp_path / "work" / "deep").mkdir(parents=True)
    (tmp_path / "work" / "f").write_text("x")

    def launch(opts: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        spec = os.path.basename(sandbox._write_spec(str(directory), ["-w", "/dev/null", *opts]))[:-len(".spec")]
        return subprocess.run([str(directory / launcher), spec, "--", "ls -A; echo ran"], cwd=cwd,
                              capture_output=True, text=True, timeout=60)

    bad = launch(["--abstract", "maybe"], tmp_path)
    assert bad.returncode == landlock.EXIT_SETUP and "ran" not in bad.stdout and "--abstract" in bad.stderr
    deeper = launch(["--hide", str(tmp_path / "work")], tmp_path / "work" / "deep")
    assert deeper.returncode == landlock.EXIT_SETUP and "ran" not in deeper.stdout, deeper.stderr
    assert "is hidden in the sandbox" in deeper.stderr
    itself = launch(["--hide", str(tmp_path / "work")], tmp_path / "work")
    assert (itself.returncode, itself.stdout) == (0, "ran\n")  # the empty directory over it


@pytest.mark.parametrize("seed", range(10))
def test_the_name_screen_never_changes_what_is_protected(tmp_path: Path, seed: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """protected.py tests each entry's name against the last segment of every pattern before the full match: on
    random trees of governance and pattern-like names, the result equals the full test's."""
    import random

    from orchestrator.config.intentignore import IgnoreRules, _validate
    from orchestrator.core.governance import GOVERNANCE

    rng = random.Random(seed)
    names = ["src", "vendor", "lib", "a.golden", "x.key", ".env", "AGENTS.md", ".claude", "settings.local.json",
             ".mcp.json", ".git", "hooks", "config", ".github", "mcp.json", "copilot", "opencode.jsonc", "foo", "b",
             "keep.txt", "x[a]y", "xby", ".codex", "deep"]
    root = tmp_path / "ws"
    for _ in range(250):
        rel = "/".join(rng.choice(names) for _ in range(rng.randint(1, 5)))
        path = root / "src" / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("x")
        except (NotADirectoryError, FileExistsError):
            continue
    text = rng.choice(["vendor/\n*.golden\nAGENTS.md\n", "**/foo/**\na/**/b\n/src/lib\n", "src/deep/\nx[!a]y\n",
                       ".env\n*.key\n.git/\nconfig\n"])
    rules = IgnoreRules(_validate(root / ".intentignore", text))
    assert len(GOVERNANCE) > 10
    protected.clear()
    screened = protected.read_only(str(root), [str(root / "src")], rules)
    assert protected._Judge(rules).screen is not None  # the screen was in use
    protected.clear()
    monkeypatch.setattr(protected, "_glob_last", lambda _p: None)  # no screen: every entry fully tested
    assert protected._Judge(rules).screen is None
    assert protected.read_only(str(root), [str(root / "src")], rules) == screened
