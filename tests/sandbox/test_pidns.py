"""Other processes out of sight (orchestrator/sandbox/pidns.py, launcher.c): a sandboxed command runs in a PID
namespace with its own /proc, so the host shell's and the agent's environment and arguments are out of reach.

Real launchers under the real kernel, through the engine: the compiled launcher, the Python launcher
(``ORCH_SANDBOX_LAUNCHER=python``) and git mode (the Python launcher with the git-dir guardian). Signals reach the
command as before, its exit status is the launcher's, and what it leaves running dies with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from orchestrator.config.checks import check_sandbox
from orchestrator.sandbox import compiled
from tests.sandbox.conftest import Host, needs_landlock
from tests.waiting import wait_until

MARKER = "pidns-test-token-5e1f"  # never written literally in a probe: the probe's own text is in /proc too
#: probe prefix per launcher: git mode is chosen by the analyzer for a command that names git
KINDS = {"compiled": "", "python": "", "git": "git add -A >/dev/null 2>&1; "}


def _can_isolate() -> bool:
    proc = subprocess.run(["unshare", "-pmfr", "--mount-proc", "true"], capture_output=True, check=False) \
        if os.geteuid() else subprocess.run(["unshare", "-pmf", "--mount-proc", "true"], capture_output=True,
                                            check=False)
    return proc.returncode == 0


pytestmark = [needs_landlock, pytest.mark.skipif(not _can_isolate(), reason="the kernel refuses PID namespaces here")]


def wrapped(sws: Path, kind: str, command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    if kind != "compiled":
        monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
    verdict = Host(sws).pre(KINDS[kind] + command, sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    if kind == "git":
        from orchestrator import sandbox

        assert "--git" in (sandbox.options_of(verdict.command) or [])
    return str(verdict.command)


def host_run(sws: Path, command: str, **kw: object) -> subprocess.CompletedProcess[str]:
    """As a host runs it, with a secret in the host shell's environment and arguments."""
    return subprocess.run(["/bin/bash", "-c", command + "\n:", "host-shell", f"--api-key={MARKER}"], cwd=sws,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "AGENT_TOKEN": MARKER},
                          **kw)  # type: ignore[call-overload]


WALK = ("python3 -c \"import os\nd = b''\nfor p in os.listdir('/proc'):\n  if p.isdigit():\n    for f in ('environ', "
        "'cmdline', 'mem'):\n      try: d += open('/proc/%s/%s' % (p, f), 'rb').read(1 << 16)\n      except OSError: "
        "pass\nprint(d.count(b'pidns-test-' + b'token-5e1f'), len([p for p in os.listdir('/proc') if p.isdigit()]))\"")


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_command_sees_no_other_process_environment_or_arguments(sws: Path, kind: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    proc = host_run(sws, wrapped(sws, kind, f"echo pid=$$; {WALK}; ps eww -e -o args= | grep -c pidns-test-[t]oken",
                                 monkeypatch))
    lines = proc.stdout.split("\n")
    assert lines[0] == "pid=2"  # PID 1 is the launcher's init, the command's shell the first it started
    found, processes = map(int, lines[1].split())
    assert found == 0 and processes < 10, proc.stdout
    assert lines[2] == "0"
    # unwrapped, the same walk finds the secret (the test would see a leak)
    assert int(host_run(sws, WALK).stdout.split()[0]) > 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_signals_reach_the_command_and_its_status_is_the_launchers(sws: Path, kind: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for sig, script, expected in ((signal.SIGTERM, "trap 'echo got-term; exit 7' TERM; echo ready; "
                                   "while :; do sleep 0.05; done", 7),
                                  (signal.SIGINT, "echo ready; exec sleep 300", 128 + signal.SIGINT),
                                  (signal.SIGHUP, "echo ready; sleep 300; echo not-reached", 128 + signal.SIGHUP)):
        words = wrapped(sws, kind, script, monkeypatch)
        launcher = subprocess.Popen(["/bin/bash", "-c", "exec " + words], cwd=sws, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        assert launcher.stdout is not None
        assert launcher.stdout.readline() == "ready\n"
        launcher.send_signal(sig)
        out, err = launcher.communicate(timeout=60)
        assert launcher.returncode == expected, (kind, sig, out, err)
        assert "not-reached" not in out
        if sig == signal.SIGTERM:
            assert out == "got-term\n"


def _running(marker: str) -> list[str]:
    found = []
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(p)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("kind", list(KINDS))
def test_what_the_command_leaves_running_dies_with_it(sws: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"{os.getpid()}.{len(kind)}17"  # a sleep argument no other process has
    # the command ends only once both are running (so the check below cannot pass before they started)
    proc = host_run(sws, wrapped(sws, kind, f"(setsid sleep {marker} >/dev/null 2>&1 &); nohup sleep {marker} "
                                 f">/dev/null 2>&1 & until [ \"$(pgrep -c -f '^sleep {marker}$')\" = 2 ]; do :; done; "
                                 "echo started", monkeypatch))
    assert proc.returncode == 0 and proc.stdout == "started\n", proc.stderr
    wait_until(lambda: not _running(f"sleep\0{marker}"), what="the command's leftover processes to be gone")


def test_the_launcher_killed_takes_the_command_with_it(sws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"{os.getpid()}.29"
    launcher = subprocess.Popen(["/bin/bash", "-c", "exec " + wrapped(sws, "compiled", f"echo ready; sleep {marker}",
                                                                      monkeypatch)],
                                cwd=sws, stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None and launcher.stdout.readline() == "ready\n"
    wait_until(lambda: _running(f"sleep\0{marker}"), what="the command's sleep to start")
    launcher.kill()
    launcher.wait(timeout=60)
    wait_until(lambda: not _running(f"sleep\0{marker}"), what="the command to die with its launcher")


def test_doctor_reports_the_pid_namespace(sws: Path) -> None:
    from orchestrator.config.workspace import Workspace

    findings = [f for f in check_sandbox(Workspace(sws)) if f.check == "sandbox-pidns"]
    assert [f.status for f in findings] == ["ok"] and "their own processes" in findings[0].message
    assert compiled.pidns_isolated(str(sws / ".orchestration" / "run" / "sandbox"))


@pytest.mark.parametrize("launcher", [compiled.STUB, compiled.PYTHON_STUB])
def test_a_refused_namespace_leaves_the_command_running_as_before(launcher: str) -> None:
    """In a user namespace without an id mapping (``unshare -U``) the kernel refuses a new one: the launcher runs
    the command as before, without the namespace (still under Landlock)."""
    import shutil
    import tempfile

    from orchestrator import sandbox

    directory = tempfile.mkdtemp(prefix="orch-pidns-", dir="/var/tmp")
    try:
        os.chmod(directory, 0o755)  # readable by the unmapped (overflow) uid
        assert compiled.install(directory) is not None
        spec = Path(sandbox._write_spec(directory, ["-w", "/dev/null"]))
        spec.chmod(0o644)
        proc = subprocess.run(["unshare", "-U", os.path.join(directory, launcher), spec.name[:-5], "--",
                               "echo pid=$$; echo x > " + directory + "/written; echo rc=$?"],
                              capture_output=True, text=True, timeout=60, cwd="/")
        assert proc.returncode == 0, proc.stderr
        pid, rc = proc.stdout.split()
        assert pid != "pid=2" and rc == "rc=1", proc.stdout  # no namespace; the write still refused by Landlock
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("kind", list(KINDS))
def test_policy_off_lets_a_background_server_outlive_the_command(sws: Path, kind: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``sandbox.pid_namespace: false`` (review: `nohup npm run dev &` in one call, `curl` in the next): the launcher
    gets ``--pidns off``, the command sees the host's pids, and what it leaves running is still there after it."""
    policy = sws / ".orchestration" / "policy.yaml"
    policy.write_text(policy.read_text() + "  pid_namespace: false\n")
    marker = f"{os.getpid()}.{len(kind)}29"
    command = wrapped(sws, kind, f"nohup sleep {marker} >/dev/null 2>&1 & echo pid=$$", monkeypatch)
    from orchestrator import sandbox

    assert (sandbox.options_of(command) or [])[-2:] == ["--pidns", "off"]
    proc = host_run(sws, command)
    try:
        assert proc.returncode == 0 and proc.stdout.startswith("pid=") and proc.stdout != "pid=2\n", proc.stderr
        # the background child may not have exec'd `sleep` yet when the command's shell is done
        wait_until(lambda: _running(f"sleep\0{marker}"), what="the server the command left to be running")
    finally:
        subprocess.run(["pkill", "-f", f"^sleep {marker}$"], check=False)
