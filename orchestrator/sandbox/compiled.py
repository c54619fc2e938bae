"""The launcher the command line names: ``.orchestration/run/sandbox/orch-sandbox``, compiled when it can be.

Every wrapped shell command starts the launcher, so its start-up is paid on every command. The Python launcher
(:mod:`orchestrator.sandbox.landlock`, run through a ``#!python -IS`` stub) costs the interpreter's start-up
(~7.5 ms here); ``launcher.c`` (shipped beside this module) does the same for the non-git case in ~1 ms. The
engine compiles it on demand with the system's C compiler into the governance dir, keyed by a hash of the source
(``launcher-<key>``), and hard-links it as ``orch-sandbox``, so the line the host shows is unchanged. The Python
stub stays beside it as ``orch-sandbox-python``: the binary hands git mode (``--git``, the guardian in gitdir.py)
over to it, and it *is* ``orch-sandbox`` when there is no compiler or the compile failed (the reason is kept in
``launcher-<key>.failed`` and reported by ``orch doctor``; delete that file to retry). ``ORCH_SANDBOX_LAUNCHER=
python`` forces the Python launcher (benchmarks, debugging).

The hot path when the binary is there: one ``stat`` of the source (its key is cached per mtime and size), one read of
the Python stub (it must be current), two ``stat`` calls (the binary and the link). The compile happens once per
source version and workspace, under a lock; a hook that finds the lock taken uses the Python stub for that call
rather than wait.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: the stub's file name (in the spec dir, ``.orchestration/run/sandbox/``): what the command line names
STUB = "orch-sandbox"
#: the Python stub's name beside it (git mode; the fallback's source)
PYTHON_STUB = "orch-sandbox-python"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.c")
LAUNCHER_DIR = os.path.dirname(os.path.abspath(__file__))
CFLAGS = ("-O2", "-std=gnu99", "-Wall")
#: a compile that takes longer is abandoned (the Python stub serves)
COMPILE_TIMEOUT = 60.0

_key_cache: dict[tuple[int, int], str] = {}


def source_key() -> str | None:
    """The compiled launcher's key: a hash of ``launcher.c`` and the flags (None when the source is missing, as in
    an installation that left package data out)."""
    try:
        st = os.stat(SOURCE)
    except OSError:
        return None
    sig = (st.st_mtime_ns, st.st_size)
    key = _key_cache.get(sig)
    if key is None:
        import hashlib

        with open(SOURCE, "rb") as fh:
            key = hashlib.sha256(fh.read() + "\0".join(CFLAGS).encode()).hexdigest()[:16]
        _key_cache.clear()
        _key_cache[sig] = key
    return key


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
    """``directory/launcher-<key>``, compiled now if it is missing and no earlier attempt failed; None: use the
    Python stub."""
    key = source_key()
    if key is None:
        return None
    binary = os.path.join(directory, f"launcher-{key}")
    if os.path.exists(binary):
        return binary
    if os.path.exists(binary + ".failed"):
        return None
    if _copy_built(key, binary):
        return binary
    return binary if compile_launcher(binary) is None else None


#: key -> (a binary this process compiled, its sha256): a new workspace gets a verified copy, not a new compile
#: (a test corpus makes hundreds of workspaces; the daemon serves many)
_built: dict[str, tuple[str, str]] = {}


def _digest(path: str) -> str:
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _copy_built(key: str, binary: str) -> bool:
    import shutil

    built = _built.get(key)
    if built is None:
        return False
    tmp = f"{binary}.{os.getpid()}.tmp"
    try:
        shutil.copyfile(built[0], tmp)
        os.chmod(tmp, 0o755)
        if _digest(tmp) != built[1]:  # changed since this process compiled it: compile anew
            os.unlink(tmp)
            return False
        os.replace(tmp, binary)
    except OSError:
        return False
    return True


def compile_launcher(binary: str) -> str | None:
    """Compile ``launcher.c`` to ``binary`` (a temp file, checked, then renamed). None on success, else why not
    (also written to ``binary.failed``). A compile already under way elsewhere returns "busy" without waiting."""
    import fcntl

    lock = os.open(binary + ".lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "busy: another hook is compiling it"
        if os.path.exists(binary):
            return None
        reason = _compile(binary)
        if reason is not None:
            try:
                with open(binary + ".failed", "w", encoding="utf-8") as fh:
                    fh.write(reason + "\n")
            except OSError:
                pass
        return reason
    finally:
        os.close(lock)


def _compile(binary: str) -> str | None:
    import shutil
    import subprocess

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return "no C compiler (cc, gcc, clang) on PATH"
    tmp = f"{binary}.{os.getpid()}.tmp"
    try:
        proc = subprocess.run([cc, *CFLAGS, "-o", tmp, SOURCE], capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT, check=False)
        if proc.returncode != 0:
            return f"{cc} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"
        # a binary that does not even refuse a bare call as the launcher must is not installed
        check = subprocess.run([tmp], capture_output=True, text=True, timeout=COMPILE_TIMEOUT, check=False)
        if check.returncode != 126 or "orchestrator sandbox" not in check.stderr:
            return f"the compiled launcher does not behave (exit {check.returncode}: {check.stderr.strip()[:200]})"
        _built[os.path.basename(binary)[len("launcher-"):]] = (binary, _digest(tmp))
        os.replace(tmp, binary)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{cc}: {exc}"
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return None


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


def check(ws: Any) -> Any:
    """``orch doctor``: which launcher the wrapped commands run (compiling it now if it is missing)."""
    from orchestrator.core.findings import Finding

    directory = os.path.join(str(ws.run_dir), "sandbox")
    if install(directory) is None:
        yield Finding("sandbox-launcher", "warn", f"cannot write the launcher in {directory}",
                      "check the permissions of .orchestration/run/")
        return
    yield from _check_pidns(directory)
    kind, detail = state(directory)
    if kind == "compiled":
        yield Finding("sandbox-launcher", "ok", f"compiled launcher in use ({os.path.basename(detail)}): ~1 ms per "
                      "command; git mode runs the Python launcher")
    else:
        yield Finding("sandbox-launcher", "warn", f"Python launcher in use (~8 ms more per shell command): {detail}",
                      "install a C compiler (cc) or fix the compile; see docs/performance.md")


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


def pidns_isolated(directory: str) -> bool:
    """Whether a command run by ``directory/orch-sandbox`` sees only its own processes (a PID namespace with its own
    /proc: launcher.c, pidns.py): it runs one and asks."""
    import subprocess

    spec = os.path.basename(write_spec(directory, ["-w", "/dev/null"]))[:-len(".spec")]
    probe = f"echo $$; test -e /proc/{os.getpid()} && echo visible || echo hidden"
    try:
        proc = subprocess.run([os.path.join(directory, STUB), spec, "--", probe], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.stdout.split() == ["2", "hidden"]


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
