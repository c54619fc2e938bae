"""The compiled launcher (orchestrator/sandbox/launcher.c, installed by orchestrator/sandbox/compiled.py).

Parity: the same spec files through the compiled launcher and the Python stub give the same exit codes, the same
output and the same files on disk, for writes in and out of the scope, secret reads, the environment scrub, the
network rules, symlinks, malformed specs and git mode. Then the engine side: the binary is what the command line
names, it is compiled once, and no compiler (or a busy lock) falls back to the Python stub.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orchestrator.config.checks import check_sandbox
from orchestrator import sandbox
from orchestrator.sandbox import compiled, landlock
from tests.sandbox.conftest import Host, needs_landlock
from tests.sandbox.test_pidns import _can_isolate as pidns_available

pytestmark = [needs_landlock, pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")]
GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent-home"}


@pytest.fixture(autouse=True)
def no_built_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no binary compiled earlier to copy."""
    monkeypatch.setattr(compiled, "_built", {})


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("launcher") / f"launcher-{compiled.source_key()}")
    assert compiled.compile_launcher(path) is None
    return path


def install(directory: Path, binary: str, kind: str) -> Path:
    """A sandbox dir holding the launcher of ``kind`` as orch-sandbox, and the Python stub beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    text = landlock.stub_text(sys.executable, compiled.LAUNCHER_DIR)
    (directory / compiled.PYTHON_STUB).write_text(text)
    (directory / compiled.PYTHON_STUB).chmod(0o755)
    stub = directory / compiled.STUB
    if kind == "compiled":
        os.link(binary, stub)
    else:
        shutil.copy(directory / compiled.PYTHON_STUB, stub)
    return stub


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("run", ".git")]
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = "<link>" if p.is_symlink() else p.read_text(errors="replace")
        out.update({str((Path(dirpath) / d).relative_to(root)) + "/": "" for d in dirnames})
    return out


def tree(root: Path) -> None:
    for d in ("in", "out", "sec"):
        (root / d).mkdir(parents=True)
    (root / "out" / "f").write_text("old\n")
    (root / "in" / "ok").write_text("readable\n")
    (root / "sec" / ".env").write_text("API_KEY=sk-live-secret\n")
    (root / "sec" / "plain").write_text("plain\n")
    (root / "file").write_text("file\n")
    os.symlink(root / "out", root / "link")


#: (name, options (``{root}`` replaced), command): each run through both launchers
PROBES: list[tuple[str, list[str], str]] = [
    ("scope", ["-w", "{root}/in", "-w", "/dev/null"],
     "echo a > in/x; echo b > out/f; echo rc=$?; mkdir out/d; mv in/x out/x; ln -s /etc out/l; rm out/f; echo done"),
    ("exit-code", ["-w", "/dev/null"], "echo out; echo err >&2; exit 7"),
    ("symlink-grant", ["-w", "{root}/link", "-w", "/dev/null"], "echo x > link/new; echo rc=$?; echo y > out/f2"),
    ("file-grant", ["-w", "{root}/file", "-w", "/dev/null"], "echo more >> file; : > file; echo z >> file; rm file"),
    ("secret", ["-W", "{root}/sec", "-w", "/dev/null", "READABLE"],
     "cat sec/.env; echo rc=$?; cat sec/plain; cat in/ok; ls sec | sort; echo n > sec/new; cat sec/new; echo rc=$?"),
    ("tmp", ["--tmp", "{root}/private/t"],
     'echo x > "$TMPDIR/f" && echo "$TMPDIR" "$ORCH_SANDBOXED" && stat -c %a "$TMPDIR"'),
    ("env-default", ["-w", "/dev/null"], "env | grep -E '^(MY_|GITHUB|PLAIN|x_|gh_|TMPDIR|ORCH_SANDBOXED|HOME)' | sort"),
    ("env-policy", ["--env-scrub", "PLAIN*", "--env-scrub", "*_tok*", "--env-keep", "github_token", "--env-keep",
                    "MY_*", "--env-keep", "PLAIN*", "--env-keep", "x_*", "--env-keep", "gh_*", "-w", "/dev/null"],
     "env | grep -E '^(MY_|GITHUB|PLAIN|x_|gh_)' | sort"),
    ("env-none", ["--env-scrub", "", "--env-keep", "*", "-w", "/dev/null"],
     "env | grep -E '^(MY_|GITHUB|PLAIN|x_|gh_)' | sort"),
    ("net-deny", ["--net", "deny"], "CONNECT"),
    ("net-port", ["--net", "443, {port}"], "CONNECT"),
    ("net-other-port", ["--net", "1,2"], "CONNECT"),
    ("net-allow", ["--net", "allow"], "CONNECT"),
    ("bad-option", ["--bogus", "x"], "echo ran"),
    # policy sandbox.pid_namespace: false (the command sees the host's pids; what it leaves running outlives it)
    ("pidns-default", ["-w", "/dev/null"], "[ $$ -gt 2 ] && echo host || echo ns"),
    ("pidns-off", ["--pidns", "off", "-w", "/dev/null"], "[ $$ -gt 2 ] && echo host || echo ns"),
    ("pidns-bad", ["--pidns", "maybe"], "echo ran"),
    ("no-value", ["-w"], "echo ran"),
    ("bad-net", ["--net", "22x"], "echo ran"),
    ("net-out-of-range", ["--net", "70000"], "echo ran"),
    ("tmp-under-a-file", ["--tmp", "{root}/file/t"], "echo ran"),
]
ENV = {"MY_API_KEY": "k1", "GITHUB_TOKEN": "t1", "PLAIN": "p", "PLAINER": "p2", "x_token": "t2", "gh_tok_x": "t3",
       "HOME": "/h", "MY_REDIS": "redis://:pw@cache:6379/0", "MY_PROXY": "http://u:pw@proxy:3128",
       "MY_SITE": "https://example.com:8443/a@b", "MY_GIT": "git@github.com:o/r.git", "MY_USER_URL": "ftp://anon@h/",
       "MY_HOOK_WEBHOOK_URL": "https://hooks.example/x", "MY_GPG_PASSPHRASE": "pp", "MY_JWT": "j"}
#: what the URL test keeps (a port, an @ in the path, ssh-style): a URL's user info, with or without a password, is
#: dropped (tests/sandbox/test_envpolicy.py has the rest of the credential shapes)
KEPT = "MY_GIT=git@github.com:o/r.git\n"


def run_probe(root: Path, stub: Path, opts: list[str], command: str, port: int,
              extra: list[str] | None = None) -> tuple[int, str, str]:
    words: list[str] = []
    for o in opts:
        if o == "READABLE":
            words += [a for p in sandbox.readable_except(str(root), [str(root / "sec" / ".env")]) for a in ("-r", p)]
        else:
            words.append(o.replace("{root}", str(root)).replace("{port}", str(port)))
    if command == "CONNECT":
        command = (f"{sys.executable} -S -c \"import socket; s = socket.socket(); s.settimeout(5); "
                   f"print(s.connect_ex(('127.0.0.1', {port})))\"")
    spec = sandbox._write_spec(str(stub.parent), words)
    spec_id = os.path.basename(spec)[:-len(".spec")]
    proc = subprocess.run([str(stub), spec_id, *(extra or []), "--", command], cwd=root, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **ENV})
    norm: Callable[[str], str] = lambda s: s.replace(str(root), "ROOT")  # noqa: E731
    return proc.returncode, norm(proc.stdout), norm(proc.stderr)


@pytest.fixture
def listener() -> Iterator[int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    yield srv.getsockname()[1]
    srv.close()


@pytest.mark.parametrize("name, opts, command", PROBES, ids=[p[0] for p in PROBES])
def test_both_launchers_give_the_same_outcome(tmp_path: Path, binary: str, listener: int, name: str,
                                              opts: list[str], command: str) -> None:
    outcomes = {}
    for kind in ("compiled", "python"):
        root = tmp_path / kind
        tree(root)
        stub = install(root / "run" / "sandbox", binary, kind)
        code, out, err = run_probe(root, stub, opts, command, listener)
        outcomes[kind] = (code, out, snapshot(root))
        if code == landlock.EXIT_SETUP:
            assert "orchestrator sandbox: " in err and "ran" not in out, (kind, err)
    assert outcomes["compiled"] == outcomes["python"]
    code, out, disk = outcomes["compiled"]
    expected = {"scope": (0, "rc=1\ndone\n"), "exit-code": (7, "out\n"), "net-deny": (0, "13\n"),
                "net-port": (0, "0\n"), "net-other-port": (0, "13\n"), "net-allow": (0, "0\n"),
                # every name kept (`*`) and no name pattern: still no credential-shaped value
                "env-none": (0, "GITHUB_TOKEN=t1\nMY_API_KEY=k1\n" + KEPT + "MY_GPG_PASSPHRASE=pp\n"
                             "MY_HOOK_WEBHOOK_URL=https://hooks.example/x\nMY_JWT=j\n"
                             "MY_SITE=https://example.com:8443/a@b\nPLAIN=p\nPLAINER=p2\ngh_tok_x=t3\nx_token=t2\n"),
                # globs kept minus the policy's own patterns; the exact name passes as it is
                "env-policy": (0, "GITHUB_TOKEN=t1\nMY_API_KEY=k1\n" + KEPT + "MY_GPG_PASSPHRASE=pp\n"
                               "MY_HOOK_WEBHOOK_URL=https://hooks.example/x\nMY_JWT=j\n"
                               "MY_SITE=https://example.com:8443/a@b\n"),
                # only the allow-list: none of these names is on it
                "env-default": (0, "HOME=/h\nORCH_SANDBOXED=1\n")}
    if name in expected:
        assert (code, out) == expected[name]
    if name in ("pidns-default", "pidns-off") and pidns_available():
        assert out == ("ns\n" if name == "pidns-default" else "host\n")
    if name in ("bad-option", "no-value", "bad-net", "net-out-of-range", "tmp-under-a-file", "pidns-bad"):
        assert code == landlock.EXIT_SETUP
    if name == "scope":
        assert disk["out/f"] == "old\n" and "out/x" not in disk and disk["in/x"] == "a\n"
    if name == "secret":
        assert out == "rc=1\nplain\nreadable\nplain\nrc=1\n"  # the secret unread, a new file beside it too
        assert disk["sec/new"] == "n\n"
    if name == "symlink-grant":
        assert "out/new" not in disk and "out/f2" not in disk and out == "rc=1\n"
    if name == "tmp":
        assert out == "ROOT/private/t 1\n700\n"


def test_malformed_ids_and_specs_fail_closed_in_both(tmp_path: Path, binary: str) -> None:
    for kind in ("compiled", "python"):
        stub = install(tmp_path / kind, binary, kind)
        (tmp_path / kind / "00ff.spec").write_bytes(b"-w\0/tmp\0--\0echo ran\0")  # a spec may not carry "--"
        (tmp_path / kind / "00fe.spec").write_bytes(b"--spec\0/etc/passwd\0")
        for argv in (["../../etc/passwd", "--", "echo ran"], ["0123456789abcdef", "--", "echo ran"],  # missing
                     ["ABCDEF", "--", "echo ran"], ["00ff", "--", "echo ran"], ["00fe", "--", "echo ran"],
                     ["00ff"], [], ["", "--", "echo ran"]):
            proc = subprocess.run([str(stub), *argv], capture_output=True, text=True, timeout=60)
            assert proc.returncode == landlock.EXIT_SETUP and "ran" not in proc.stdout, (kind, argv, proc.stderr)
            assert proc.stderr.startswith("orchestrator sandbox: "), (kind, argv)


def test_extra_command_line_options_after_the_id_are_parsed_alike(tmp_path: Path, binary: str) -> None:
    for kind in ("compiled", "python"):
        root = tmp_path / kind
        tree(root)
        stub = install(root / "run" / "sandbox", binary, kind)
        code, out, _ = run_probe(root, stub, [], "echo a > out/f; echo rc=$?", 0, extra=["-w", str(root / "out")])
        assert (code, out, (root / "out" / "f").read_text()) == (0, "rc=0\n", "a\n"), kind
        code, _, _ = run_probe(root, stub, [], "echo ran", 0, extra=["-w", "x", "--", "y"])
        assert code == landlock.EXIT_SETUP, kind


def test_git_mode_still_runs_the_guardian(tmp_path: Path, binary: str) -> None:
    from orchestrator.sandbox import gitdir

    for kind in ("compiled", "python"):
        repo = tmp_path / kind
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env={**os.environ, **GIT_ENV})
        (repo / "src").mkdir()
        config = (repo / ".git" / "config").read_text()
        stub = install(tmp_path / f"{kind}-run" / "sandbox", binary, kind)
        opts = ["-w", str(repo / "src"), "-w", "/dev/null", *[a for d in gitdir.git_dirs(str(repo))
                                                              for a in ("--git", d)]]
        spec = sandbox._write_spec(str(stub.parent), opts)
        command = ("echo x > src/a && git add src/a && git commit -qm a && printf '#!/bin/sh\\n' > .git/hooks/"
                   "pre-commit && printf '[core]\\n\\thooksPath = /x\\n' >> .git/config && echo committed")
        proc = subprocess.run([str(stub), Path(spec).name[:-5], "--", command], cwd=repo, capture_output=True,
                              text=True, timeout=120, env={**os.environ, **GIT_ENV})
        assert proc.returncode == 1 and "committed" in proc.stdout, (kind, proc.stderr)
        assert "pre-commit was created: restored" in proc.stderr, kind
        assert not (repo / ".git" / "hooks" / "pre-commit").exists(), kind
        assert (repo / ".git" / "config").read_text() == config, kind
        log = subprocess.run(["git", "log", "--oneline"], cwd=repo, capture_output=True, text=True).stdout
        assert log.strip().endswith(" a"), kind


def test_the_engine_installs_the_compiled_launcher_once(sws: Path) -> None:
    verdict = Host(sws).pre("ls", sandbox=True)
    stub = verdict.command.split(" ")[0]
    directory = os.path.dirname(stub)
    kind, binary = compiled.state(directory)
    assert kind == "compiled"
    assert Path(stub).read_bytes()[:4] == b"\x7fELF" and os.path.samefile(stub, binary)
    assert sandbox.unwrap(verdict.command) == "ls"
    mtime = os.stat(binary).st_mtime_ns
    proc = Host(sws).run("echo hi > src/x.txt && cat src/x.txt")  # runs through the binary
    assert proc.returncode == 0 and proc.stdout == "hi\n", proc.stderr
    assert os.stat(binary).st_mtime_ns == mtime  # not compiled again
    # an ELF that is not this installation's launcher is not unwrapped
    fake = sws / "x" / ".orchestration" / "run" / "sandbox" / "orch-sandbox"
    fake.parent.mkdir(parents=True)
    shutil.copy(binary, fake)
    assert sandbox.unwrap(f"{fake} abc -- 'rm -rf src'") is None


def test_no_compiler_falls_back_to_the_python_stub_and_doctor_says_why(sws: Path, monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    from orchestrator.config.workspace import Workspace
    from orchestrator.sandbox import build

    compilers = build.COMPILERS
    monkeypatch.setattr(build, "COMPILERS", (str(sws / "no-such-cc"),))
    proc = Host(sws).run("echo hi > src/x.txt && echo $ORCH_SANDBOXED")
    assert proc.returncode == 0 and proc.stdout == "1\n", proc.stderr
    stub = proc.verdict.command.split(" ")[0]
    assert Path(stub).read_text().startswith("#!")
    kind, why = compiled.state(os.path.dirname(stub))
    assert kind == "python" and "compile failed" in why and "no system C compiler" in why and "no-such-cc" in why
    findings = [f for f in check_sandbox(Workspace(sws)) if f.check == "sandbox-launcher"]
    assert findings and findings[0].status == "warn" and "Python launcher in use" in findings[0].message
    # delete the marker (and have a compiler): the next call compiles
    monkeypatch.setattr(build, "COMPILERS", compilers)
    failed = next(Path(os.path.dirname(stub)).glob("launcher-*.failed"))
    failed.unlink()
    Host(sws).pre("ls", sandbox=True)
    assert compiled.state(os.path.dirname(stub))[0] == "compiled"
    findings = [f for f in check_sandbox(Workspace(sws)) if f.check == "sandbox-launcher"]
    assert findings[0].status == "ok" and "compiled launcher in use" in findings[0].message


def test_a_compile_under_way_elsewhere_is_not_waited_for(sws: Path) -> None:
    import fcntl

    directory = sws / ".orchestration" / "run" / "sandbox"
    directory.mkdir(parents=True, exist_ok=True)
    binary = str(directory / f"launcher-{compiled.source_key()}")
    fd = os.open(binary + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = Host(sws).run("echo ok")
        assert proc.returncode == 0 and proc.stdout == "ok\n"
        assert compiled.state(str(directory)) == ("python", "not compiled yet")
    finally:
        os.close(fd)
    Host(sws).pre("ls", sandbox=True)
    assert compiled.state(str(directory))[0] == "compiled"


def test_forced_python_launcher(sws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
    proc = Host(sws).run("echo ok")
    assert proc.returncode == 0 and proc.stdout == "ok\n"
    assert Path(proc.verdict.command.split(" ")[0]).read_text().startswith("#!")
    assert compiled.state(os.path.dirname(proc.verdict.command.split(" ")[0])) == ("python",
                                                                                   "ORCH_SANDBOX_LAUNCHER=python")


def test_a_new_workspace_gets_a_verified_copy_not_a_new_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    from orchestrator.sandbox import build

    first, second, third = (tmp_path / n / "sandbox" for n in ("a", "b", "c"))
    assert compiled.install(str(first)) is not None and compiled.state(str(first))[0] == "compiled"
    monkeypatch.setattr(build, "COMPILERS", (str(tmp_path / "no-such-cc"),))  # a compile now would fail
    assert compiled.install(str(second)) is not None and compiled.state(str(second))[0] == "compiled"
    # a binary changed since it was compiled is not copied: the compile is tried (and fails here)
    key = compiled.source_key()
    built = first / f"launcher-{key}"
    os.unlink(first / compiled.STUB)
    data = built.read_bytes()
    built.unlink()
    built.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert compiled.install(str(third)) is not None
    kind, why = compiled.state(str(third))
    assert kind == "python" and "no-such-cc" in why
