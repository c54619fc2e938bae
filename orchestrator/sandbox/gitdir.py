"""Git inside the sandbox: the git dir is writable for the command, and what git would later *run or trust* is
put back right after it.

A sandbox that keeps ``.git`` read-only makes every ``git commit`` need a person (Codex's most repeated sandbox
complaint); one that makes ``.git`` writable lets a command plant a hook or a ``core.fsmonitor`` that runs later,
unsandboxed, under the person's own git. The middle way (docs/security.md, "Git in the sandbox"):

- the command runs under Landlock with the repository's git dir(s) writable (``--git DIR`` on the launcher): git
  and everything it starts -- hooks, filters, pagers, editors, ``--upload-pack``, ``core.fsmonitor``, aliases --
  are sandboxed, so an option such as ``-c``, ``--output`` or ``GIT_*`` can write only what the scope allows;
- before it, the launcher snapshots the *guarded* entries of every git dir (the main one, linked worktrees'
  ``worktrees/*``, submodules' ``modules/**``): ``config``, ``config.worktree``, ``commondir``, ``gitdir``,
  ``objects/info/alternates``, ``objects/info/http-alternates`` and the trees ``hooks/`` and ``info/``;
- after it (the launcher waits for the command), every difference is reverted and reported on stderr. The only
  changes kept are git's own branch bookkeeping in ``config`` (``branch.<b>.remote`` naming a configured remote,
  ``branch.<b>.merge``/``rebase``/``description``, ``submodule.<s>.url``/``active``), judged by git's own
  parser (``git config --file F --list``) so that no spelling of a key hides from the comparison; a git dir the
  command created (``worktree add``, a submodule clone) may also hold a fresh clone's keys
  (``core.repositoryformatversion``..., ``remote.<r>.url``/``fetch``) and ``*.sample`` hooks;
- a guardian process (its own process group, so a host that kills the command's group does not kill it; on
  Landlock ABI >= 6 the command cannot signal it) waits until every process of the command has exited (EOF on a
  pipe they all inherit) and verifies again: the restore happens even when the launcher itself is killed.

This module is imported by the launcher (``landlock.py``, run with ``python -I -S``) as a top-level module, so it
uses the standard library only; :func:`git_dirs` is the engine's side (which dirs to pass).
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the launcher's import path
    from collections.abc import Callable, Iterable

    Entry = tuple  # ("f", mode, bytes, nlink) | ("l", target) | ("d", mode) | ("x",) | ("p", guarded lines)

#: guarded files of every git dir: git runs or trusts what they say (and the broker's grants, see APPROVALS)
GUARDED_FILES = ("config", "config.worktree", "commondir", "gitdir", "objects/info/alternates",
                 "objects/info/http-alternates", "orchestration/approvals/grants.json")
#: guarded trees of every git dir, compared entry by entry. ``refs/replace``: a replace ref swaps one object for
#: another in every later git command of the person's (``git checkout -- README.md`` would write the agent's blob,
#: and ``git log`` would not show it; redteam2 R2-gitlater-replace-*)
GUARDED_TREES = ("hooks", "info", "refs/replace")
#: the replace refs may also be packed: the lines of ``packed-refs`` naming one are guarded (the file is not: git
#: rewrites it for every branch deletion)
PACKED = "packed-refs"
REPLACE_PREFIX = b"refs/replace/"
#: the approval broker's trust-bearing files live in the common git dir (orchestrator/vcs/worktrees.py): a person's
#: remembered grants, and a decision per pending request. A command that runs git must not forge either.
APPROVALS = "orchestration/approvals"
DECISION_SUFFIX = ".decision.json"
#: config keys (section, key) git writes on its own during everyday porcelain; kept when a command changed them
KEEP_CHANGED = frozenset({("branch", "remote"), ("branch", "merge"), ("branch", "rebase"),
                          ("branch", "description"), ("submodule", "url"), ("submodule", "active")})
#: what a fresh clone / worktree writes into a git dir it creates (in addition to KEEP_CHANGED)
KEEP_NEW = KEEP_CHANGED | frozenset({
    ("core", "repositoryformatversion"), ("core", "filemode"), ("core", "bare"), ("core", "logallrefupdates"),
    ("core", "ignorecase"), ("core", "precomposeunicode"), ("core", "symlinks"), ("core", "worktree"),
    ("remote", "url"), ("remote", "fetch")})
#: at most this many entries per guarded tree (a hooks/ dir of a million files is not snapshotted: fail closed)
MAX_ENTRIES = 2000
MAX_BYTES = 1 << 20


# ------------------------------------------------------------------------------------------------ engine side
def git_dirs(root: str) -> list[str]:
    """The git dir and common dir of the repository at the workspace ``root`` (real paths; [] when there is none).

    ``.git`` is a directory, or a file ``gitdir: X`` (a linked worktree or a submodule's work tree), whose git dir
    may name a ``commondir`` (where refs, objects and the shared config live). Only the workspace's own ``.git``
    counts: a repository found further up (a stray ``/tmp/.git``) is not the workspace's to write."""
    path = os.path.realpath(root)
    dot = os.path.join(path, ".git")
    if os.path.isdir(dot) and not os.path.islink(dot):
        return [dot]
    if os.path.isfile(dot):
        return _linked(path, dot)
    return []


def _linked(work: str, dot: str) -> list[str]:
    try:
        with open(dot, encoding="utf-8", errors="replace") as fh:
            first = fh.readline().strip()
    except OSError:
        return []
    if not first.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(os.path.join(work, first[7:].strip()))
    if not os.path.isdir(gitdir):
        return []
    out = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as fh:
            common = os.path.realpath(os.path.join(gitdir, fh.read().strip()))
        if os.path.isdir(common) and common != gitdir:
            out.append(common)
    except OSError:
        pass
    return out


# ---------------------------------------------------------------------------------------------- the snapshot
def _nested(root: str) -> list[str]:
    """``root`` and the git dirs beneath it: linked worktrees (``worktrees/*``), submodules (``modules/**``)."""
    out = [root]
    try:
        for name in sorted(os.listdir(os.path.join(root, "worktrees"))):
            d = os.path.join(root, "worktrees", name)
            if os.path.isdir(d) and not os.path.islink(d):
                out.append(d)
    except OSError:
        pass
    stack = [os.path.join(root, "modules")]
    while stack:
        d = stack.pop()
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            sub = os.path.join(d, name)
            if not os.path.isdir(sub) or os.path.islink(sub):
                continue
            # a dir with HEAD is a git dir; one holding a guarded entry without HEAD is guarded too: a config or
            # hooks/ planted there now would be trusted once a later command adds the HEAD (redteam RT-git-modules)
            if any(os.path.lexists(os.path.join(sub, n)) for n in ("HEAD", "config", *GUARDED_TREES)):
                out.extend(_nested(sub))  # a submodule's git dir, with its own worktrees and submodules
            else:
                stack.append(sub)  # a submodule named a/b lives in modules/a/b
    return out


def _entry(path: str, strict: bool = False) -> Entry | None:
    """What is at ``path`` (None: nothing). ``strict`` (the snapshot): a file too large to keep is an error."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return ("l", os.readlink(path))
    if stat.S_ISDIR(mode):
        return ("d", stat.S_IMODE(mode))
    if stat.S_ISREG(mode):
        if st.st_size > MAX_BYTES:
            if strict:
                raise OSError(27, f"{path} is larger than {MAX_BYTES} bytes")
            return ("x", st.st_ino, st.st_size)
        with open(path, "rb") as fh:
            return ("f", stat.S_IMODE(mode), fh.read(), st.st_nlink)
    return ("x", st.st_ino, 0)  # a fifo or a device: nothing git writes; one made by the command goes


def take(roots: Iterable[str], strict: bool = True) -> dict[str, Entry]:
    """The guarded entries of the git dirs ``roots`` (and those nested in them), by absolute path.

    Raises OSError when a guarded tree holds more than :data:`MAX_ENTRIES` entries (or, ``strict``, a guarded
    file is larger than :data:`MAX_BYTES`): the launcher then refuses to run the command."""
    out: dict[str, Entry] = {}
    for gd in dict.fromkeys(d for r in roots for d in _nested(r)):
        for name in GUARDED_FILES:
            path = os.path.join(gd, name)
            e = _entry(path, strict)
            if e is not None:
                out[path] = e
        try:
            names = os.listdir(os.path.join(gd, APPROVALS))
        except OSError:
            names = []
        for name in names:
            if name.endswith(DECISION_SUFFIX):
                path = os.path.join(gd, APPROVALS, name)
                e = _entry(path, strict)
                if e is not None:
                    out[path] = e
        for name, match in GUARDED_LINES.items():
            lines = _guarded_lines(os.path.join(gd, name), match)
            if lines:
                out[os.path.join(gd, name)] = ("p", lines)
        for name in GUARDED_TREES:
            top = os.path.join(gd, name)
            e = _entry(top, strict)
            if e is None:
                continue
            out[top] = e
            if e[0] != "d":
                continue
            count = 0
            for base, dirs, files in os.walk(top):
                dirs.sort()
                for n in sorted(dirs) + sorted(files):
                    count += 1
                    if count > MAX_ENTRIES:
                        raise OSError(27, f"{top} holds more than {MAX_ENTRIES} entries")
                    p = os.path.join(base, n)
                    sub = _entry(p, strict)
                    if sub is not None:
                        out[p] = sub
    return out


def _is_replace(line: bytes) -> bool:
    return line.partition(b" ")[2].startswith(REPLACE_PREFIX)


def _is_exec(line: bytes) -> bool:
    return line.lstrip().split(None, 1)[:1] in ([b"x"], [b"exec"])


#: guarded *lines* of a file that git rewrites for reasons of its own: a line the command added that matches is
#: removed after it, the rest of the file stays (``packed-refs``: a packed replace ref; a rebase's todo list: an
#: ``exec`` line, which the person's own ``git rebase --continue`` would run outside the sandbox)
GUARDED_LINES: dict[str, Callable[[bytes], bool]] = {PACKED: _is_replace, "rebase-merge/git-rebase-todo": _is_exec}


def _guarded_lines(path: str, match: Callable[[bytes], bool]) -> tuple[bytes, ...]:
    """The lines of ``path`` that ``match`` (a packed ref's peeled ``^`` line goes with it)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES * 64)
    except OSError:
        return ()
    out: list[bytes] = []
    keep = False
    for line in data.splitlines():
        if line.startswith(b"^"):
            if keep:
                out.append(line)
            continue
        keep = match(line)
        if keep:
            out.append(line)
    return tuple(out)


def _guarded_name(path: str) -> str:
    return next(n for n in GUARDED_LINES if path.endswith(os.sep + n))


def _strip_lines(path: str, match: Callable[[bytes], bool], old: tuple[bytes, ...], roots: list[str]) -> None:
    """Rewrite ``path`` without the matching lines that are not in ``old``: written beside as ``<path>.lock`` (git's
    own lock name: a running git holding it makes this fail, and that is reported), renamed over."""
    with open(path, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    out: list[bytes] = []
    drop = False
    for line in lines:
        if line.startswith(b"^"):
            if not drop:
                out.append(line)
            continue
        bare = line.rstrip(b"\r\n")
        drop = match(bare) and bare not in old
        if not drop:
            out.append(line)
    dfd, name = _parent(path, roots)
    try:
        fd = os.open(name + ".lock", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=dfd)
        try:
            os.write(fd, b"".join(out))
        finally:
            os.close(fd)
        os.rename(name + ".lock", name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)


# ------------------------------------------------------------------------------------------------ the verdict
def _config_pairs(git: str, path: str, data: bytes | None = None) -> list[tuple[str, str]] | None:
    """(key, value) pairs of a config file as git itself reads it (no includes), or None if git cannot read it.
    ``data``: parse these bytes instead (fed on stdin: the launcher may have no writable temp dir)."""
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}
    try:
        proc = subprocess.run([git, "config", "--no-includes", "--file", "-" if data is not None else path,
                               "--null", "--list"], input=data if data is not None else b"",
                              capture_output=True, env=env, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    pairs = []
    for item in proc.stdout.split(b"\0")[:-1]:
        key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
        pairs.append((key, value))
    return pairs


def _split_key(key: str) -> tuple[str, str, str]:
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    return section.lower(), sub, name.lower()


def config_kept(git: str | None, path: str, old: bytes | None, new_dir: bool) -> bool:
    """Whether the changed config file at ``path`` may stay: every added or removed pair is git's bookkeeping."""
    if not git:
        return False
    new = _config_pairs(git, path)
    if new is None:
        return False
    before: list[tuple[str, str]] = []
    if old is not None:
        parsed = _config_pairs(git, path, old)
        if parsed is None:
            return False
        before = parsed
    allowed = KEEP_NEW if new_dir else KEEP_CHANGED
    remotes = {_split_key(k)[1] for k, _ in new if _split_key(k)[0] == "remote"}
    changed = [p for p in new if p not in before] + [p for p in before if p not in new]
    for key, value in changed:
        section, sub, name = _split_key(key)
        if (section, name) not in allowed or bool(sub) != (section in ("branch", "remote", "submodule")):
            return False
        if (section, name) == ("branch", "remote") and (key, value) in new and value not in remotes | {"."}:
            return False  # a branch whose pushes would go to a URL nobody configured
    return True


def _show(path: str) -> str:
    cwd = os.getcwd()
    return os.path.relpath(path, cwd) if path.startswith(cwd + os.sep) else path


def _in_new_dir(path: str, before: dict[str, Entry], roots: list[str]) -> bool:
    """True when ``path`` belongs to a git dir that did not exist before the command (worktree add, submodule)."""
    d = os.path.dirname(path)
    for top in roots:
        while d.startswith(top + os.sep):
            if os.path.exists(os.path.join(d, "HEAD")):
                return os.path.join(d, "config") not in before and os.path.join(d, "hooks") not in before
            d = os.path.dirname(d)
    return False


def verify(before: dict[str, Entry], roots: list[str], git: str | None) -> list[str]:
    """Revert every change to the guarded entries; one report line per change (empty: nothing changed)."""
    report: list[str] = []
    try:
        after = take(roots, strict=False)
    except OSError as exc:
        # a guarded tree flooded with entries: it goes whole, and comes back from the snapshot below
        report.append(f"{exc.strerror}: removed")
        for gd in dict.fromkeys(d for r in roots for d in _nested(r)):
            for name in GUARDED_TREES:
                _remove(os.path.join(gd, name), roots)
        after = take(roots, strict=False)
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if (new or old or ("",))[0] == "p":
            if not new or set(new[1]) <= set(old[1] if old else ()):
                continue  # a guarded line removed: nothing git would run or trust more than before
            what = "a replace ref" if path.endswith(PACKED) else "an exec line"
            try:
                _strip_lines(path, GUARDED_LINES[_guarded_name(path)], old[1] if old else (), roots)
                report.append(f"{_show(path)}: {what} was added: removed")
            except OSError as exc:
                report.append(f"{_show(path)}: {what} was added: COULD NOT REMOVE ({exc.strerror or exc})")
            continue
        if old is not None and new is not None and old[0] == new[0] == "f" and old[:3] == new[:3]:
            if new[3] <= old[3]:
                continue
            what = "was hard-linked elsewhere"  # a second name would let a later command edit it
        elif old is None:
            if _kept_new(path, new, before, roots, git):
                continue
            what = "was created"
        elif new is None:
            what = "was removed"
        else:
            if (os.path.basename(path) == "config" and old[0] == new[0] == "f"
                    and config_kept(git, path, old[2], False)):
                continue
            what = "was changed"
        try:
            _restore(path, old, roots)
            report.append(f"{_show(path)} {what}: restored")
        except OSError as exc:
            report.append(f"{_show(path)} {what}: COULD NOT RESTORE ({exc.strerror or exc})")
    return report


def _kept_new(path: str, new: Entry | None, before: dict[str, Entry], roots: list[str], git: str | None) -> bool:
    if new is None or not _in_new_dir(path, before, roots):
        return False
    name = os.path.basename(path)
    parent = os.path.basename(os.path.dirname(path))
    if new[0] == "d":
        return name in ("hooks", "info")
    if new[0] != "f":
        return False
    if parent == "hooks":
        return name.endswith(".sample")
    if name == "config":
        return config_kept(git, path, None, True)
    return name in ("exclude", "gitdir", "commondir")


def _which(name: str) -> str | None:
    """``shutil.which`` without importing shutil (5 ms: it pulls in the compression modules)."""
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _parent(path: str, roots: list[str]) -> tuple[int, str]:
    """A descriptor of the directory that holds ``path`` (the caller closes it) and its last component, opened from
    the guarded git dir ``path`` lies in with no link followed on the way: a process of the command that outlived it
    (possible without the PID namespace) may swap ``hooks/`` for a link between two steps of the restore, which
    must then not remove or write the same names where the link points (issue 28's audit of privileged writes)."""
    root = max((r for r in roots if path.startswith(r + os.sep)), key=len, default=None)
    if root is None:
        raise OSError(22, f"{path} lies in no guarded git dir")
    parts = path[len(root) + 1:].split(os.sep)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _chmod_dir(dfd: int, name: str, mode: int) -> None:
    """``chmod`` the directory ``name`` itself, never a link's target (through its own ``O_PATH`` descriptor: it
    needs no read permission, so a directory the command made unreadable is reached too)."""
    fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    try:
        os.chmod(f"/proc/self/fd/{fd}", mode)
    finally:
        os.close(fd)


def _remove_at(dfd: int, name: str) -> None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dfd)
        return
    _chmod_dir(dfd, name, 0o700)
    fd = os.open(name, _DIR, dir_fd=dfd)
    try:
        for sub in os.listdir(fd):
            _remove_at(fd, sub)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dfd)


def _remove(path: str, roots: list[str]) -> None:
    """Remove whatever is at ``path`` (a tree too, never following a link at any component); a directory made
    unwritable still goes."""
    try:
        dfd, name = _parent(path, roots)
    except FileNotFoundError:
        return  # a directory above it went already (removed first, in path order): so did it
    try:
        _remove_at(dfd, name)
    finally:
        os.close(dfd)


def _restore(path: str, old: Entry | None, roots: list[str]) -> None:
    """Put ``path`` back as ``old`` (None: it did not exist). Never writes through a link, at any component."""
    if old is None:
        _remove(path, roots)
        return
    dfd, name = _parent(path, roots)
    try:
        if old[0] == "d":
            try:
                is_dir = stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
            except FileNotFoundError:
                is_dir = False
            if not is_dir:
                _remove_at(dfd, name)
                os.mkdir(name, old[1], dir_fd=dfd)
            _chmod_dir(dfd, name, old[1])
            return
        _remove_at(dfd, name)
        if old[0] == "l":
            os.symlink(old[1], name, dir_fd=dfd)
        elif old[0] == "f":
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dfd)
            try:
                os.write(fd, old[2])
                os.fchmod(fd, old[1])
            finally:
                os.close(fd)
    finally:
        os.close(dfd)


# ------------------------------------------------------------------------------------------------- the runner
class Guard:
    """Snapshot now, restore after the command (the launcher) and after its last process (the guardian)."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = [r for r in roots if os.path.isdir(r)]
        self.git = _which("git")
        self.before = take(self.roots)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the guardian
            code = 0
            try:
                import _signal  # type: ignore[import-not-found]

                os.close(w)
                os.setpgid(0, 0)
                _signal.signal(_signal.SIGHUP, _signal.SIG_IGN)  # a closing terminal does not end it either
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                while os.read(r, 4096):
                    pass
                verify(self.before, self.roots, self.git)
            except BaseException:  # noqa: BLE001 — a guardian never returns into the launcher's code
                code = 1
            os._exit(code)
        # its own process group, set from here so that it holds before the command exists (no waiting for the
        # guardian to be scheduled): a host's kill of the command's group does not reach it
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # it already did so itself
        os.close(r)
        self.w = w

    def run(self, shell: str, command: str, env: dict[str, str], scope: Callable[[], object],
            after_fork: Callable[[], object] | None = None) -> int:
        """Run ``command`` in a child, wait, verify; the command's exit status (128 + signal if killed).
        ``after_fork`` runs once the command is forked (the network bridge's forwarder: netns.py)."""
        import _signal as signal  # type: ignore[import-not-found]  # `signal` imports enum (~4 ms)

        pid = os.fork()
        if pid == 0:
            try:
                scope()  # the command may not signal the launcher or the guardian (Landlock ABI >= 6)
                os.set_inheritable(self.w, True)
                os.execve(shell, [shell, "-c", command], env)
            except BaseException as exc:  # noqa: BLE001
                os.write(2, f"orchestrator sandbox: cannot run {shell}: {exc}\n".encode())
            os._exit(126)
        if after_fork is not None:
            after_fork()

        def forward(signum: int, _frame: object) -> None:
            try:
                os.kill(pid, signum)
            except OSError:
                pass

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, forward)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(status)
        code = 128 - code if code < 0 else code
        try:
            report = verify(self.before, self.roots, self.git)
        except Exception as exc:  # noqa: BLE001 — reported, and the guardian verifies again after us
            report = [f"COULD NOT verify the git dir ({exc})"]
        os.close(self.w)
        if report:
            sys.stderr.write("orchestrator sandbox: the command changed what git runs or trusts later "
                             "(.git config, hooks, info); " + "; ".join(report) + "\n")
            if any("COULD NOT" in line for line in report):
                return 126
            # like a write the kernel refused: the command did not do what it set out to, and must not look as if
            return code or 1
        return code
