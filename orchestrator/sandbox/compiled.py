"""The launcher the command line names: ``.orchestration/run/sandbox/orch-sandbox``, compiled when it can be.

Every wrapped shell command starts the launcher, so its start-up is paid on every command. The Python launcher
(:mod:`orchestrator.sandbox.landlock`, run through a ``#!python -IS`` stub) costs the interpreter's start-up
(~7.5 ms here); ``launcher.c`` (shipped beside this module) does the same for the non-git case in ~1 ms. The
engine compiles it on demand with the system's C compiler (:mod:`orchestrator.sandbox.build`: in a private
directory, from a copy of the source, its hash recorded outside the workspace) into the governance dir, keyed by a
hash of the sources (``launcher-<key>``), and hard-links it as ``orch-sandbox``, so the line the host shows is
unchanged. The Python stub stays beside it as ``orch-sandbox-python``: the binary hands git mode (``--git``, the
guardian in gitdir.py) over to it, and it *is* ``orch-sandbox`` when there is no compiler or the compile failed (the
reason is kept in ``launcher-<key>.failed`` and reported by ``orch doctor``; delete that file to retry).
``ORCH_SANDBOX_LAUNCHER=python`` forces the Python launcher (benchmarks, debugging).

Before each use the binary's hash is checked against the record (:func:`orchestrator.sandbox.build.verified`): a
binary that does not match is renamed ``launcher-<key>.rejected`` (kept for inspection; ``orch doctor`` reports
it) and built again, or the Python stub serves.

The hot path when the binary is there: three ``stat`` calls of the sources (their key is cached per mtime and
size), one read of the Python stub (it must be current), two ``stat`` calls (the binary and the link), and the hash
check (memoised by the binary's stat key). The compile happens once per source version and workspace, under a
lock; a hook that finds the lock taken uses the Python stub for that call rather than wait.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from orchestrator.sandbox.build import LAUNCHER_DIR, SOURCE, source_key

#: the stub's file name (in the spec dir, ``.orchestration/run/sandbox/``): what the command line names
STUB = "orch-sandbox"
#: the Python stub's name beside it (git mode; the fallback's source)
PYTHON_STUB = "orch-sandbox-python"


def forced_python() -> bool:
    """``ORCH_SANDBOX_LAUNCHER=python``: the Python launcher even where the compiled one could serve."""
    return os.environ.get("ORCH_SANDBOX_LAUNCHER", "").lower() == "python"


def _write_if_stale(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return True
    except (OSError, UnicodeDecodeError):
        pass
    try:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)  # atomic: a command starting now runs the old or the new stub, never half of one
    except OSError:
        return False
    return True


def install(directory: str) -> str | None:
    """The launcher ``directory/orch-sandbox``, made current (compiled if possible, else the Python stub); None if
    it cannot be written."""
    from orchestrator.sandbox.landlock import stub_text

    text = stub_text(sys.executable, LAUNCHER_DIR)
    path = os.path.join(directory, STUB)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    if not _write_if_stale(os.path.join(directory, PYTHON_STUB), text):
        return None
    binary = None if forced_python() else _binary(directory)
    if binary is not None and _link(binary, path):
        return path
    return path if _write_if_stale(path, text) else None


def _same_file(a: str, b: str) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_ino, sa.st_dev) == (sb.st_ino, sb.st_dev)


def _link(binary: str, path: str) -> bool:
    """``path`` becomes (a hard link to) ``binary``; False if it cannot."""
    if _same_file(binary, path):
        return True
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        try:
            os.link(binary, tmp)
        except FileExistsError:
            os.unlink(tmp)
            os.link(binary, tmp)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def _binary(directory: str) -> str | None:
    """``directory/launcher-<key>``, verified against the record or (re)built now if it is missing and no earlier
    attempt failed; None: use the Python stub."""
    from orchestrator.sandbox import build

    key = source_key()
    if key is None:
        return None
    binary = os.path.join(directory, f"launcher-{key}")
    try:
        st = os.stat(binary)
    except OSError:
        st = None
    if st is not None:
        if build.verified(binary, key, st):
            return binary
        _reject(binary)
    if os.path.exists(binary + ".failed"):
        return None
    if _copy_built(key, binary):
        return binary
    return binary if compile_launcher(binary) is None else None


def _reject(binary: str) -> None:
    """A binary whose hash is not in the record: kept aside as ``….rejected`` (``orch doctor`` reports it), never
    run; the caller builds it again."""
    try:
        os.replace(binary, binary + ".rejected")
    except OSError:
        pass


#: key -> a binary this process built (its digest is in the record): a new workspace gets a verified copy, not a
#: new compile (a test corpus makes hundreds of workspaces; the daemon serves many)
_built: dict[str, str] = {}


def _copy_built(key: str, binary: str) -> bool:
    import shutil

    from orchestrator.sandbox import build

    built = _built.get(key)
    if built is None:
        return False
    tmp = f"{binary}.{os.getpid()}.tmp"
    try:
        shutil.copyfile(built, tmp)
        os.chmod(tmp, 0o755)
        if build.digest(tmp) not in build.recorded(key):  # changed since it was built: compile anew
            os.unlink(tmp)
            return False
        os.replace(tmp, binary)
    except OSError:
        return False
    return True


def compile_launcher(binary: str) -> str | None:
    """Build the launcher to ``binary`` (:func:`orchestrator.sandbox.build.build`: a private directory, its hash
    recorded). None on success, else why not (also written to ``binary.failed``). A compile already under way
    elsewhere returns "busy" without waiting."""
    import fcntl

    from orchestrator.sandbox import build

    lock = os.open(binary + ".lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "busy: another hook is compiling it"
        key = source_key()
        if key is None:
            return f"the launcher's sources are missing from {LAUNCHER_DIR}"
        if os.path.exists(binary) and build.verified(binary, key, os.stat(binary)):
            return None
        reason = build.build(binary, key=key)
        if reason is None:
            _built[key] = binary
            return None
        if not reason.startswith("the launcher's sources changed"):
            try:
                with open(binary + ".failed", "w", encoding="utf-8") as fh:
                    fh.write(reason + "\n")
            except OSError:
                pass
        return reason
    finally:
        os.close(lock)


def is_stub(path: str) -> bool:
    """``path`` is a launcher this installation wrote (``…/.orchestration/run/sandbox/orch-sandbox``: the current
    compiled launcher, or a stub running this very Python launcher), not a file an agent named to look like one."""
    if not path.endswith("/.orchestration/run/sandbox/" + STUB):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head.startswith(b"\x7fELF"):
        key = source_key()
        return key is not None and _same_file(path, os.path.join(os.path.dirname(path), f"launcher-{key}"))
    return head.startswith(b"#!") and repr(LAUNCHER_DIR).encode() in head


def state(directory: str) -> tuple[str, str]:
    """Which launcher ``directory/orch-sandbox`` is: ("compiled", binary) or ("python", why)."""
    path = os.path.join(directory, STUB)
    key = source_key()
    if key is None:
        return "python", f"the launcher's source {SOURCE} is missing from this installation"
    binary = os.path.join(directory, f"launcher-{key}")
    if _same_file(path, binary):
        return "compiled", binary
    if forced_python():
        return "python", "ORCH_SANDBOX_LAUNCHER=python"
    try:
        with open(binary + ".failed", encoding="utf-8") as fh:
            return "python", f"the compile failed: {fh.read().strip()} (delete {binary}.failed to retry)"
    except OSError:
        pass
    return "python", "not compiled yet"


def provenance(binary: str) -> str:
    """What ``orch doctor`` says of a compiled launcher: its hash, whether the record has it, where and when it was
    built, by which compiler."""
    from orchestrator.sandbox import build

    key = os.path.basename(binary)[len("launcher-"):]
    try:
        digest = build.digest(binary)
    except OSError as exc:
        return f"unreadable ({exc})"
    builds = build.recorded(key).get(digest)
    if not builds:
        return f"sha256 {digest}: NOT in the record {build.record_dir()}/{key}"
    here = [b for b in builds if b[2] == os.path.dirname(binary)]
    when, compiler, where = (here or builds)[-1]  # a copy of one built for another workspace names that one
    return f"sha256 {digest}, built {when} by {compiler} in a private directory under {where}"


def check(ws: Any, writable: Any = ()) -> Any:
    """``orch doctor``: which launcher the wrapped commands run (compiling it now if it is missing), its hash and
    where it was built, any binary refused because its hash was not the one recorded at build, and whether the
    launcher's own sources lie where a sandboxed command may write (``writable``: policy ``sandbox.writable``)."""
    from orchestrator.core.findings import Finding
    from orchestrator.sandbox import build

    exposed = build.exposed(writable)
    if exposed is not None:
        yield Finding("sandbox-launcher-source", "fail",
                      f"orchestrator's launcher sources ({build.LAUNCHER_DIR}: launcher.c and the Python launcher) lie "
                      f"beneath {exposed}, which sandboxed commands may write: a command could rewrite the launcher "
                      "that every later command runs, unsandboxed",
                      "install orchestrator where only you write (a venv under your home, not under /tmp), or drop "
                      "that entry from sandbox.writable")

    directory = os.path.join(str(ws.run_dir), "sandbox")
    shared = build.world_writable_above(os.path.realpath(str(ws.root)))
    if shared is not None:
        yield Finding("sandbox-workspace-shared", "warn",
                      f"this workspace lies beneath {shared}, which every other workspace's sandboxed commands may "
                      "write (the default sandbox.writable grants /tmp and /dev/shm): they can rewrite its governance "
                      "files, spec files and Python launcher (the compiled one is hash-checked)",
                      "keep governed checkouts under your home, or drop /tmp from sandbox.writable in the others")
    if install(directory) is None:
        yield Finding("sandbox-launcher", "warn", f"cannot write the launcher in {directory}",
                      "check the permissions of .orchestration/run/")
        return
    yield from _check_pidns(directory)
    kind, detail = state(directory)
    if kind == "compiled":
        yield Finding("sandbox-launcher", "ok", f"compiled launcher in use ({os.path.basename(detail)}, "
                      f"{provenance(detail)}): ~1 ms per command; git mode runs the Python launcher")
    else:
        yield Finding("sandbox-launcher", "warn", f"Python launcher in use (~8 ms more per shell command): {detail}",
                      "install a C compiler (cc) or fix the compile; see docs/performance.md")
    rejected = sorted(n for n in os.listdir(directory) if n.endswith(".rejected"))
    if rejected:
        yield Finding("sandbox-launcher-rejected", "warn",
                      f"refused a compiled launcher whose sha256 was not the one recorded at build: "
                      f"{', '.join(os.path.join(directory, n) for n in rejected)} (kept for inspection; the launcher "
                      "was built again or the Python launcher served). Something outside the sandbox rewrote it",
                      "find out what wrote it, then delete the .rejected file")


def write_spec(directory: str, opts: list[str]) -> str:
    """The launcher's options as the content-addressed spec file ``directory/<16 hex>.spec`` (NUL-terminated
    entries); its path."""
    import hashlib

    data = b"".join(o.encode("utf-8", "surrogateescape") + b"\0" for o in opts)  # each entry NUL-terminated
    path = os.path.join(directory, hashlib.sha256(data).hexdigest()[:16] + ".spec")
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # atomic: a concurrent launcher never reads half a spec
    return path


def _probe(directory: str, script: str) -> str | None:
    """What ``script`` prints when ``directory/orch-sandbox`` runs it (None: it could not run)."""
    import subprocess

    spec = os.path.basename(write_spec(directory, ["-w", "/dev/null"]))[:-len(".spec")]
    try:
        proc = subprocess.run([os.path.join(directory, STUB), spec, "--", script], capture_output=True, text=True,
                              timeout=30, check=False, cwd=directory)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout


def pidns_isolated(directory: str) -> bool:
    """Whether a command run by ``directory/orch-sandbox`` sees only its own processes (a PID namespace with its own
    /proc: launcher.c, pidns.py): it runs one and asks."""
    out = _probe(directory, f"echo $$; test -e /proc/{os.getpid()} && echo visible || echo hidden")
    return out is not None and out.split() == ["2", "hidden"]


def mountns_isolated(directory: str) -> bool:
    """Whether a command run by ``directory/orch-sandbox`` (installed now if need be) gets a mount namespace of its
    own: the launcher enters one whatever the policy says, unless the kernel refuses it (nested in another sandbox,
    a container's seccomp profile, user namespaces restricted). The daemon asks this once where it has
    ``no_new_privs`` (orchestrator/daemon/peer.py)."""
    try:
        mine = os.readlink("/proc/self/ns/mnt")
        if install(directory) is None:
            return False
    except OSError:
        return False
    out = _probe(directory, "readlink /proc/self/ns/mnt")
    return out is not None and out.strip() not in ("", mine)


def _check_pidns(directory: str) -> Any:
    from orchestrator.core.findings import Finding

    if pidns_isolated(directory):
        yield Finding("sandbox-pidns", "ok", "sandboxed commands see only their own processes (a PID namespace with "
                      "its own /proc): the agent's and the host shell's environment (/proc/PID/environ) is out of reach")
    else:
        yield Finding("sandbox-pidns", "warn", "the kernel refused a PID namespace here (nested in another sandbox, or "
                      "user namespaces restricted): a sandboxed command can read /proc/PID/environ of the agent and the "
                      "host's shell, and so their tokens",
                      "allow unprivileged user namespaces (AppArmor: kernel.apparmor_restrict_unprivileged_userns=0), or "
                      "keep long-lived tokens out of the agent's environment")
