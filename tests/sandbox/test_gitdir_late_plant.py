"""redteam3 (finding 4, documented, pinned): with ``sandbox.pid_namespace: false`` a process a git-mode command
leaves behind can still plant a git hook after the guardian's last verify.

The PID namespace is what closed the second red team's ``R2-late-hook-plant``: every process of the command dies
with it. The policy key that turns the namespace off (a background server that must outlive the command) re-opens
it: a ``setsid`` child that closes every inherited descriptor is not waited for by the guardian (it waits for EOF on
a pipe the command's processes inherit), and it keeps its Landlock domain — the git dir writable — after the verify;
the person's next ``git commit`` runs its hook outside the sandbox. docs/security.md, "What remains uncovered",
says so; this test pins the behaviour, so that a change closing it shows here (and the page is updated with it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


from tests.sandbox.conftest import Host, needs_landlock
from tests.waiting import wait_until

pytestmark = needs_landlock

MARK = "late-plant-5d2c"
#: the process left behind: every descriptor closed, it waits on a FIFO of its scope (no sleep: the test opens it
#: once the launcher and its guardian are gone), then writes the hook
LATE = ("import os\nfor fd in range(0, 1024):\n    try:\n        os.close(fd)\n    except OSError:\n        pass\n"
        "open('src/go').read()\n"
        "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\necho planted\\n')\n"
        "os.chmod('.git/hooks/pre-commit', 0o755)\n")


def _running(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        return True
            except OSError:
                pass
    return False


def test_without_the_pid_namespace_a_late_process_plants_a_git_hook(sws: Path) -> None:
    policy = sws / ".orchestration" / "policy.yaml"
    policy.write_text(policy.read_text() + "  pid_namespace: false\n")
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "late.py").write_text(LATE)
    os.mkfifo(sws / "src" / "go")
    hook = sws / ".git" / "hooks" / "pre-commit"
    proc = Host(sws).run(f"git status >/dev/null; setsid python3 src/late.py & disown; : {MARK}")
    assert proc.returncode == 0, proc.stderr
    from orchestrator import sandbox

    assert "--git" in (sandbox.options_of(proc.verdict.command) or [])  # type: ignore[attr-defined]
    wait_until(lambda: not _running(MARK), what="the launcher and its guardian to be gone")
    assert not hook.exists()
    with open(sws / "src" / "go", "w") as fh:  # the late process goes on
        fh.write("go")
    wait_until(hook.exists, what="the late process to write its hook")
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q",
                           "--allow-empty", "-m", "x"], cwd=sws, capture_output=True, text=True, timeout=60)
    assert "planted" in done.stdout + done.stderr  # the person's git ran it: the gap, as documented
