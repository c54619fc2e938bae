"""redteam3: a sandboxed command keeps no capability, even run as root.

As found: the launchers add a user namespace only for a user other than root, so a command an agent ran as root
kept every capability of the init namespace (CapEff 000001fffeffffff). Landlock restricts paths, not privileges:
``mknod`` of a block device in a writable directory reads the whole disk (the hidden run dir, the machine key),
``CAP_SYS_TIME`` moves the clock the freshness rules and approval expiries read, ``CAP_SYS_ADMIN`` undoes the
command's mounts (``umount`` of the tmpfs over the run dir), ``CAP_NET_ADMIN`` changes the host's network. The
launchers now drop every capability — effective, permitted, inheritable, ambient and the bounding set — just
before the ``exec`` of the command (launcher.c ``drop_caps``, landlock.drop_capabilities).

Real launchers under the real kernel, through the engine, for each way a command is started: the compiled
launcher, the Python one, git mode (the Python launcher with the git-dir guardian), each with and without the PID
namespace (the exec of the command happens in a different place in each).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator import sandbox
from tests.sandbox.conftest import Host, needs_landlock

pytestmark = needs_landlock

#: probe prefix per launcher: git mode is chosen by the analyzer for a command that names git
KINDS = {"compiled": "", "python": "", "git": "git add -A >/dev/null 2>&1; "}
#: the attacker's helper: make device nodes where its scope lets it create files
PROBE = ("import os, stat, sys\n"
         "for name, kind, dev in (('src/disk', stat.S_IFBLK, os.makedev(int(sys.argv[1]), int(sys.argv[2]))),\n"
         "                        ('src/mem', stat.S_IFCHR, os.makedev(1, 1))):\n"
         "    try:\n        os.mknod(name, kind | 0o600, dev)\n        print('made', name)\n"
         "    except OSError as exc:\n        print('refused', name, exc.errno)\n")
CAPS = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status"


def run(sws: Path, kind: str, command: str, pidns: bool, monkeypatch: pytest.MonkeyPatch) -> \
        subprocess.CompletedProcess[str]:
    if kind != "compiled":
        monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
    if not pidns:
        policy = sws / ".orchestration" / "policy.yaml"
        policy.write_text(policy.read_text() + "  pid_namespace: false\n")
    verdict = Host(sws).pre(KINDS[kind] + command, sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    assert kind != "git" or "--git" in (sandbox.options_of(verdict.command) or [])
    return subprocess.run(["/bin/bash", "-c", str(verdict.command)], cwd=sws, capture_output=True, text=True,
                          timeout=120)


def caps(stdout: str) -> dict[str, int]:
    return {line.split(":")[0]: int(line.split(":")[1], 16) for line in stdout.splitlines() if line.startswith("Cap")}


@pytest.mark.parametrize("pidns", [True, False], ids=["pidns", "no-pidns"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_the_command_has_no_capability(sws: Path, kind: str, pidns: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    done = run(sws, kind, CAPS, pidns, monkeypatch)  # a plain command: not git mode unless it names git
    assert done.returncode == 0, done.stderr
    got = caps(done.stdout)
    assert set(got) == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}, done.stdout
    assert got["CapEff"] == got["CapPrm"] == got["CapInh"] == got["CapAmb"] == 0, done.stdout
    assert got["CapBnd"] == 0, done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the privileges under test are root's")
@pytest.mark.parametrize("pidns", [True, False], ids=["pidns", "no-pidns"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_root_cannot_make_a_device_nor_regain_a_capability(sws: Path, kind: str, pidns: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A device node in the scope: the disk the workspace is on (readable whole: every hidden file), /dev/mem.
    A command that runs code of the scope is run in git mode (it could run git): this covers the guardian's exec."""
    disk = os.stat(sws).st_dev
    (sws / "src" / "probe.py").write_text(PROBE)
    probe = f"python3 src/probe.py {os.major(disk)} {os.minor(disk)}; {CAPS}"
    done = run(sws, kind, probe, pidns, monkeypatch)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("refused") == 2 and "made" not in done.stdout, done.stdout + done.stderr
    assert not (sws / "src" / "disk").exists() and not (sws / "src" / "mem").exists()
    assert all(v == 0 for v in caps(done.stdout).values()), done.stdout
