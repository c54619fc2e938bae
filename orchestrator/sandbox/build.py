"""Building the compiled launcher where no command can reach it, and knowing later that it is the one we built.

The first version ran ``cc`` with the hook's environment: its intermediate files (``cc*.s``, ``cc*.o``) went to the
hook's ``TMPDIR`` — ``/tmp`` by default, which every sandboxed command may write — so a background command could
swap its own assembly in between ``cc1`` and ``as``; the installed launcher then ran every later command of the
workspace unsandboxed, and the smoke check passed (issue 28, finding 3; tests/sandbox/test_launcher_build.py). Now:

- **a private directory**: each compile runs in a fresh ``0700`` directory under the run dir (``.orchestration/run/
  sandbox/build-*``: a governance path, never granted to a command), with ``TMPDIR`` pointed there and ``-pipe``;
- **a copy of the source**: ``launcher.c`` and ``launcher_env.h`` are read once, their bytes are what the key hashes
  and what the compiler reads (copied into that directory), and ``envpolicy.h`` is generated there from the bytes of
  ``envpolicy.py`` that the key hashes too (:func:`sources`);
- **the system's compiler, with nothing of ours around it**: a root-owned ``/usr/bin/cc`` (``gcc``, ``clang``) whose
  directories only root may write, never ``$CC`` or the hook's ``PATH`` (a workspace ``bin/cc`` or ``node_modules/
  .bin`` would run outside the sandbox), and an environment of ``PATH=/usr/bin:/bin``, ``TMPDIR`` and ``LC_ALL=C``
  only: no ``GCC_EXEC_PREFIX``, ``COMPILER_PATH``, ``LIBRARY_PATH``, ``CPATH``, ``LD_PRELOAD``, ``LD_LIBRARY_PATH``
  or ``GCC_COMPARE_DEBUG`` from an agent's environment (gcc's specs and clang's default config files then come from
  the compiler's own root-owned directories);
- **a record of what was built**: the binary's sha256 goes to this machine's state directory
  (``$XDG_STATE_HOME/orchestrator/launchers/<key>``, beside the ledger anchors: outside every workspace and every
  plan) before the binary is installed, and :func:`verified` checks it before each use. A binary whose hash is not
  in the record is refused (compiled.py renames it ``….rejected``, rebuilds or falls back to the Python launcher,
  and ``orch doctor`` says so). Once a binary was hashed, its stat key is trusted (memoised in the process, and
  as a ``checked`` line in the record for the next process): a call pays one ``stat`` (and in a new process one
  read of the record), a rewritten binary moves its ctime and is hashed again.
"""

from __future__ import annotations

import os

#: the launcher's sources beside this module: the C files the compiler reads and the module the header comes from
LAUNCHER_DIR = os.path.dirname(os.path.abspath(__file__))
SOURCE_FILES = ("launcher.c", "launcher_env.h", "envpolicy.py")
SOURCE = os.path.join(LAUNCHER_DIR, "launcher.c")
CFLAGS = ("-O2", "-std=gnu99", "-Wall", "-pipe")
#: where the system's C compiler is looked for (absolute paths only: never $CC, never the hook's PATH)
COMPILERS = ("/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang", "/bin/cc", "/usr/local/bin/cc")
#: the compiler's PATH (``as``, ``ld``, ``collect2`` when its own directories do not have them)
COMPILE_PATH = "/usr/bin:/bin"
#: a compile that takes longer is abandoned (the Python stub serves)
COMPILE_TIMEOUT = 60.0

_key_cache: dict[tuple[tuple[int, int], ...], str] = {}


def _sigs() -> tuple[tuple[int, int], ...] | None:
    try:
        return tuple((st.st_mtime_ns, st.st_size) for st in (os.stat(os.path.join(LAUNCHER_DIR, n))
                                                              for n in SOURCE_FILES))
    except OSError:
        return None


def source_key() -> str | None:
    """The compiled launcher's key: a hash of its sources and flags (None when a source is missing, as in an
    installation that left package data out). Cached per the sources' stat signatures: three ``stat`` calls."""
    sigs = _sigs()
    if sigs is None:
        return None
    key = _key_cache.get(sigs)
    if key is None:
        found = sources()
        if found is None:
            return None
        key = found[0]
        _key_cache.clear()
        _key_cache[sigs] = key
    return key


def sources() -> tuple[str, dict[str, bytes]] | None:
    """(key, file name -> bytes) of what the compiler reads: ``launcher.c``, ``launcher_env.h`` and ``envpolicy.h``
    generated from the same ``envpolicy.py`` bytes the key hashes. Each file read once."""
    import hashlib

    data = {}
    try:
        for name in SOURCE_FILES:
            with open(os.path.join(LAUNCHER_DIR, name), "rb") as fh:
                data[name] = fh.read()
    except OSError:
        return None
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0" + data[name] + b"\0")
    digest.update("\0".join(CFLAGS).encode())
    key = digest.hexdigest()[:16]
    namespace: dict[str, object] = {"__name__": "envpolicy_build"}
    # the header from exactly these bytes (a module imported earlier may be older than the file on disk)
    exec(compile(data.pop("envpolicy.py"), os.path.join(LAUNCHER_DIR, "envpolicy.py"), "exec"), namespace)
    header = namespace["c_header"]
    data["envpolicy.h"] = header().encode() if callable(header) else b""
    return key, data


def _root_owned(path: str) -> bool:
    """``path`` and every directory above it belong to root and only root may write them."""
    while True:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def exposed(writable: object = ()) -> str | None:
    """Where the launcher's sources (launcher.c, and the Python launcher beside it) may be written by a sandboxed
    command: a world-writable directory above them (``/tmp``, ``/dev/shm``), or an absolute ``sandbox.writable``
    entry they lie beneath. None when neither (inside a workspace, orchestrator's own Python is never granted:
    orchestrator/core/own_python.py)."""
    real = os.path.realpath(LAUNCHER_DIR)
    for entry in writable if isinstance(writable, (list, tuple)) else ():
        path = os.path.expanduser(str(entry))
        if os.path.isabs(path) and (real + os.sep).startswith(os.path.realpath(path).rstrip(os.sep) + os.sep):
            return f"sandbox.writable entry {entry}"
    parent = world_writable_above(real)
    return None if parent is None else f"the world-writable directory {parent}"


def world_writable_above(path: str) -> str | None:
    """The nearest directory above ``path`` that everyone may write (``/tmp``, ``/dev/shm``: every workspace's
    default ``sandbox.writable`` grants them), or None."""
    while True:
        parent = os.path.dirname(path)
        try:
            if os.stat(parent).st_mode & 0o002:
                return parent
        except OSError:
            pass
        if parent == path:
            return None
        path = parent


def system_compiler() -> str | None:
    """The first of :data:`COMPILERS` that exists, resolved, root-owned all the way up; None if there is none."""
    for candidate in COMPILERS:
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and os.access(real, os.X_OK) and _root_owned(real):
            return real
    return None


def build(out: str, extra_flags: tuple[str, ...] = (), key: str | None = None) -> str | None:
    """Compile the launcher to ``out`` in a private directory beside it. None on success, else why not.

    ``key``: the key the caller named ``out`` after; the sources must still hash to it, and the binary's digest is
    recorded under it before ``out`` appears (without a key: a variant for benchmarks, not recorded)."""
    import shutil
    import subprocess
    import tempfile

    cc = system_compiler()
    if cc is None:
        return "no system C compiler (a root-owned " + ", ".join(COMPILERS) + ")"
    found = sources()
    if found is None:
        return f"the launcher's sources ({', '.join(SOURCE_FILES)}) are missing from {LAUNCHER_DIR}"
    if key is not None and found[0] != key:
        return "the launcher's sources changed while it was being built (the next call builds the new ones)"
    # 0700, in the run dir: no sandboxed command can write here, nor see the compiler's temp files
    private = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(os.path.abspath(out)))
    env = {"PATH": COMPILE_PATH, "TMPDIR": private, "LC_ALL": "C"}
    try:
        for name, data in found[1].items():
            with open(os.path.join(private, name), "xb") as fh:
                fh.write(data)
        proc = subprocess.run([cc, *CFLAGS, *extra_flags, "-o", "launcher", "launcher.c"], cwd=private, env=env,
                              capture_output=True, text=True, timeout=COMPILE_TIMEOUT, check=False)
        if proc.returncode != 0:
            return f"{cc} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"
        binary = os.path.join(private, "launcher")
        # a binary that does not even refuse a bare call as the launcher must is not installed
        check = subprocess.run([binary], cwd=private, env=env, capture_output=True, text=True,
                               timeout=COMPILE_TIMEOUT, check=False)
        if check.returncode != 126 or "orchestrator sandbox" not in check.stderr:
            return f"the compiled launcher does not behave (exit {check.returncode}: {check.stderr.strip()[:200]})"
        if key is not None:
            reason = record(key, digest(binary), cc, os.path.dirname(os.path.abspath(out)))
            if reason is not None:
                return reason
        os.replace(binary, out)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{cc}: {exc}"
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return None


def digest(path: str) -> str:
    """The sha256 of the file at ``path`` (hex)."""
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def record_dir() -> str:
    """This machine's record of built launchers: ``$XDG_STATE_HOME/orchestrator/launchers`` (else
    ``~/.local/state/…``), beside the ledger anchors (orchestrator/state/keys.py): outside every workspace."""
    from orchestrator.state.keys import state_dir

    return os.path.join(state_dir(), "launchers")


def record(key: str, sha256: str, compiler: str, where: str) -> str | None:
    """Add a built binary's digest to the record of ``key`` (one line: digest, time, compiler, where it was built).
    None, else why it could not be written (then the binary is not installed: it could not be verified)."""
    import time

    line = f"{sha256} {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {compiler} {where}\n"
    try:
        _append(key, line)
    except OSError as exc:
        return f"cannot record the launcher's hash in {record_dir()}: {exc}"
    return None


def _append(key: str, line: str) -> None:
    """One line to the record of ``key``. A path is the last field: a line break in it (a directory so named) would
    start a line of its own, a digest the record would accept; it is written as ``?``."""
    line = line[:-1].replace("\n", "?").replace("\r", "?") + "\n"
    directory = record_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(directory, key), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, line.encode("utf-8", "surrogateescape"))  # one write: no torn line between writers
    finally:
        os.close(fd)


def _text(key: str) -> str:
    try:
        with open(os.path.join(record_dir(), key), encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read()
    except OSError:
        return ""


def _read(text: str) -> tuple[dict[str, list[list[str]]], set[str]]:
    """A record's text: digest -> its builds ([time, compiler, the directory it was built for], oldest first), and
    the ``<stat key> <path>`` of binaries already hashed and found in it."""
    builds: dict[str, list[list[str]]] = {}
    checked = set()
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[0] == "checked":
            checked.add(f"{parts[1]} {parts[3]}")
        elif len(parts) == 4 and len(parts[0]) == 64:
            builds.setdefault(parts[0], []).append(parts[1:])
    return builds, checked


def _checked(text: str, stamp: str, binary: str) -> bool:
    """Whether the record's text has ``checked <stamp> <digest> <binary>`` (found without parsing every line)."""
    needle = f"checked {stamp} "
    start = text.find(needle)
    while start >= 0:
        end = text.find("\n", start)
        line = text[start:end if end >= 0 else len(text)]
        if (start == 0 or text[start - 1] == "\n") and line == f"{needle}{line[len(needle):len(needle) + 64]} {binary}":
            return True
        start = text.find(needle, start + 1)
    return False


def recorded(key: str) -> dict[str, list[list[str]]]:
    """digest -> its builds, oldest first ([time, compiler, the directory it was built for]), for every binary this
    machine built from ``key``'s sources."""
    return _read(_text(key))[0]


#: binary path -> the stat key it was verified with (a long-lived process hashes it again only when it changed)
_verified: dict[str, tuple[int, ...]] = {}


def verified(binary: str, key: str, st: os.stat_result) -> bool:
    """Whether ``binary`` (``st``: its stat, taken by the caller) is one this machine built from ``key``'s
    sources: its sha256 is in the record.

    A binary hashed once is not hashed again while its stat key (device, inode, size, mtime, ctime) stays the same:
    in this process (a memo) and in the next ones (a ``checked`` line in the record, outside every sandbox). A
    rewrite moves the ctime, which no unprivileged process can set back; a key younger than the clock's granularity
    is never trusted (fsutil's racy rule: a second write in the same tick could keep it)."""
    from orchestrator.core.fsutil import racy

    sk = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if _verified.get(binary) == sk:
        return True
    text = _text(key)
    stamp = ":".join(str(n) for n in sk)
    fresh = racy(st)
    if not fresh and _checked(text, stamp, binary):
        _verified[binary] = sk
        return True
    _verified.pop(binary, None)
    try:
        sha = digest(binary)
    except OSError:
        return False
    if sha not in _read(text)[0]:
        return False
    if not fresh:
        _verified[binary] = sk
        try:
            _append(key, f"checked {stamp} {sha} {binary}\n")
        except OSError:
            pass  # the next process hashes it again
    return True


__all__ = ["CFLAGS", "COMPILERS", "SOURCE", "build", "digest", "exposed", "record", "record_dir", "recorded", "source_key",
           "sources", "system_compiler", "verified", "world_writable_above"]
