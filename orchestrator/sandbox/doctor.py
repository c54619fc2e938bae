"""``orch doctor`` for the sandbox: is it available, which launcher runs, and what the namespaces hold here.

The findings are made from the loaded policy (:func:`orchestrator.config.checks.check_sandbox` loads it: the sandbox
sits below ``config``); the launcher's own checks are :func:`orchestrator.sandbox.compiled.check`. What the command's
mount namespace and Landlock's scopes hold (:mod:`orchestrator.sandbox.hidden`, :mod:`orchestrator.sandbox.mounts`)
is not read from the kernel's version alone: :func:`probe` runs a command through the real launcher that tries each
thing (a hidden file, a covered socket, a read-only directory, an abstract socket and a signal outside) and reports
what held.
"""

from __future__ import annotations

import os
from typing import Any

from orchestrator.sandbox.compiled import STUB, write_spec


def findings(ws: Any, pol: Any) -> Any:
    """``orch doctor``: is the shell sandbox available here, and does the loaded policy ``pol`` use it? (The check
    that loads the policy is :func:`orchestrator.config.checks.check_sandbox`: the sandbox sits below ``config``.)"""
    from orchestrator.core.findings import Finding
    from orchestrator.sandbox import abi, unavailable_reason

    reason = unavailable_reason(pol)
    if reason is not None:
        yield Finding("sandbox", "warn",
                      f"shell commands are NOT sandboxed: {reason}. Commands the analyzer cannot vouch for (tests, "
                      "builds, scripts) fall back to the approval channel",
                      "enable Landlock (Linux >= 5.13, lsm=...,landlock) and set sandbox.enabled: true"
                      if "policy" not in reason else "set sandbox.enabled: true in .orchestration/policy.yaml")
        return
    cursor = os.path.join(str(ws.root), ".cursor", "hooks.json")
    try:
        with open(cursor, encoding="utf-8") as fh:
            cursor_hooked = "orch" in fh.read()
    except OSError:
        cursor_hooked = False
    if cursor_hooked:
        yield Finding("sandbox-cursor", "warn",
                      "Cursor cannot replace a command: its shell commands run WITHOUT the kernel sandbox (no secret "
                      "read denied by the kernel, no environment scrubbed, writes not held to the scope). Every "
                      "command the analyzer does not call read-only asks through the approval channel instead",
                      "prefer Claude Code, Codex or Gemini CLI for unattended work; see docs/adapters.md (Cursor)")
    version = abi()
    gaps = []
    if version < 2:
        gaps.append("ABI 1: renames across directories are refused inside the sandbox too")
    if version < 3:
        gaps.append("ABI < 3: truncate(2) outside the scope is not blocked")
    if version < 4:
        gaps.append("ABI < 4: sandbox.network.ports (where no network namespace can be made) is not enforced")
    if version < 6:
        gaps.append("ABI < 6: a command running git can signal the launcher that restores .git after it")
    status = "ok" if not gaps else "warn"
    yield Finding("sandbox", status,
                  f"Landlock ABI {version}: every shell command runs in the kernel sandbox on hosts that can replace "
                  "it (Claude Code, Codex, Gemini CLI, the reference loop, LangChain): writes held to the intent's "
                  "scope, secrets unreadable, only an allow-list of environment variables inherited"
                  + (" (" + "; ".join(gaps) + ")" if gaps else ""),
                  "" if not gaps else "upgrade the kernel (Landlock ABI >= 3)")
    from orchestrator.sandbox import compiled

    yield from compiled.check(ws, getattr(getattr(pol, "sandbox", None), "writable", ()) or ())
    if compiled.install(os.path.join(str(ws.run_dir), "sandbox")) is not None:
        yield from check_mounts(os.path.join(str(ws.run_dir), "sandbox"))
    from orchestrator.sandbox import netcheck

    yield from netcheck.check(ws, pol, version)


_PROBE = r"""
import os, socket, sys
d, name, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = []
out.append("hidden" if not os.path.exists(os.path.join(d, "hidden", "x")) else "-")
def reach(address):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(address)
        return True
    except OSError:
        return False
    finally:
        s.close()
out.append("covered" if not reach(os.path.join(d, "srv.sock")) else "-")
try:
    open(os.path.join(d, "ro", "x"), "w").close()
    out.append("-")
except OSError:
    out.append("read-only")
out.append("abstract" if not reach("\0" + name) else "-")
try:
    os.kill(pid, 0)
    out.append("-")
except OSError:
    out.append("signals")
print(" ".join(out))
"""
#: what the probe prints when everything holds
HOLDS = ("hidden", "covered", "read-only", "abstract", "signals")


def probe(directory: str, runner: tuple[str, ...] = (), python: str | None = None, base: str | None = None
          ) -> list[str]:
    """Run a command through ``directory/orch-sandbox`` that tries each thing the namespace and the scopes hide;
    the words of :data:`HOLDS` that held. ``runner``: a prefix that runs the launcher as another user (tests: the
    user namespace of an unprivileged user); the probe's files are then open to everyone, so that only the
    namespace keeps them out of reach (``python``: an interpreter that user may run; ``base``: where the probe's
    files are made, default the temp dir)."""
    import shutil
    import subprocess
    import sys
    import tempfile

    scratch = tempfile.mkdtemp(prefix="orch-doctor-", dir=base)
    name = f"orch-doctor-{os.getpid()}-{os.path.basename(scratch)}"
    servers = [socket_at(os.path.join(scratch, "srv.sock")), socket_at("\0" + name)]
    try:
        for d in ("hidden", "ro"):
            os.mkdir(os.path.join(scratch, d))
            open(os.path.join(scratch, d, "x"), "w").close()
        if runner:
            for path, mode in ((scratch, 0o755), (os.path.join(scratch, "srv.sock"), 0o777),
                               (os.path.join(scratch, "ro"), 0o777), (os.path.join(scratch, "ro", "x"), 0o666)):
                os.chmod(path, mode)
        spec = write_spec(directory, ["-w", scratch, "-w", "/dev/null", "--hide", os.path.join(scratch, "hidden"),
                                      "--cover", os.path.join(scratch, "srv.sock"), "--ro", os.path.join(scratch, "ro")])
        spec_id = os.path.basename(spec)[:-len(".spec")]
        command = f"{python or sys.executable} -S -c {_quote(_PROBE)} {scratch} {name} {os.getpid()}"
        proc = subprocess.run([*runner, os.path.join(directory, STUB), spec_id, "--", command], capture_output=True,
                              text=True, timeout=30, check=False, cwd="/")
        return [w for w in proc.stdout.split() if w in HOLDS]
    except (OSError, subprocess.SubprocessError):
        return []
    finally:
        for s in servers:
            s.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def socket_at(address: str) -> Any:
    import socket

    s = socket.socket(socket.AF_UNIX)
    s.bind(address)
    s.listen(1)
    return s


def check_mounts(directory: str) -> Any:
    """``orch doctor``: what the command's mount namespace and Landlock's scopes hold here."""
    from orchestrator.core.findings import Finding

    held = probe(directory)
    missing = [w for w in HOLDS if w not in held]
    if not missing:
        yield Finding("sandbox-mounts", "ok", "sandboxed commands run in their own mount namespace: orchestrator's "
                      "run directories (the daemon's socket, the approval broker) are hidden, the sockets of servers "
                      "outside (docker, ssh-agent, tmux, D-Bus, X11...) are covered unless sandbox.sockets.allow "
                      "names them, protected paths beneath a writable scope root are read-only; abstract sockets and "
                      "signals outside the sandbox are refused (Landlock scopes)")
        return
    gaps = []
    if {"hidden", "covered", "read-only"} & set(missing):
        gaps.append("the kernel refused the mount namespace (nested in another sandbox, or user namespaces "
                    "restricted): a sandboxed command can connect to orchestrator's daemon and to every server "
                    "outside (docker, ssh-agent, tmux...), and write protected paths beneath a writable scope root")
    if "abstract" in missing:
        gaps.append("abstract UNIX sockets outside the sandbox are reachable (Landlock ABI < 6)")
    if "signals" in missing:
        gaps.append("a sandboxed command can signal processes outside it (Landlock ABI < 6)")
    yield Finding("sandbox-mounts", "warn", "; ".join(gaps),
                  "allow unprivileged user namespaces (AppArmor: kernel.apparmor_restrict_unprivileged_userns=0) and "
                  "use a kernel with Landlock ABI >= 6 (Linux 6.12)")


__all__ = ["findings", "probe", "check_mounts", "HOLDS"]
