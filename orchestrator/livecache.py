"""Exact caches for long-lived processes: configuration, session state and verified directories, kept fresh by inotify.

Without it, every ``Governor.pre`` proves freshness with system calls: a ``stat`` each of policy, intents,
``.intentignore`` and the session file, and an ``lstat`` per path component to see a symlink swapped in since
the last call. On this VM a system call costs ≈ 2.4 µs, so that alone was ≈ 20 µs per call.

A long-lived process (``orch serve``, an in-process agent loop, the LangChain middleware…) instead asks the
kernel to queue an event for every change that could make a cached answer wrong, and starts each call with one
``poll(0)`` (≈ 0.6 µs). The kernel queues an inotify event inside the system call that made the change, before
it returns, so a change made before a call starts is always seen by that call: nothing is applied late, unlike a
time-based cache. What is watched, and why it suffices:

* ``.orchestration/`` (entries and contents of ``policy.yaml``, ``active_intents.yaml``, ``.intentignore``, ``run``)
  plus an inode watch on each config file (catches an edit through a hard link);
* ``.orchestration/run/`` and ``run/sessions/`` (a session file rewritten by another process drops that session);
* every directory a verified path went through: a directory is trusted (no symlink, a real directory on the
  workspace's filesystem) only if its parent was already watched when it was ``lstat``-ed, so any later rename,
  deletion or symlink swap of it or of an ancestor queues an event that drops it and everything below it.

Anything this cannot prove falls back to the system calls: config files or ``.orchestration``/``run``/``sessions``
that are symlinks (their targets' directories are not watched), a directory on another device, a workspace on a
filesystem that is not local (NFS, FUSE, 9p: remote changes raise no events), any platform but Linux, an instance
or watch limit reached. A queue overflow, an event on the workspace root itself, or any mount or unmount (a mount
over a trusted directory raises no inotify event; ``/proc/self/mounts`` polls ``POLLPRI``) discards the whole cache.
Writes through a shared ``mmap`` or native AIO raise no inotify event (nobody edits governance YAML that way);
cached config is therefore also re-checked through its stat key once a second (:data:`REVALIDATE_SECONDS`).
"""

from __future__ import annotations

import os
import select
import stat
import sys
import threading
import weakref
from time import monotonic as _monotonic
from typing import Any

from orchestrator.inotify import (
    CONTENT, ENTRY, IN_DONT_FOLLOW, IN_IGNORED, IN_MASK_ADD, IN_ONLYDIR, IN_Q_OVERFLOW, SELF, Inotify, InotifyError,
)

#: filesystems whose changes are all made through this kernel (so all of them raise inotify events)
LOCAL_FILESYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "zfs", "f2fs", "jfs", "reiserfs", "bcachefs",
    "nilfs2", "overlay",
})
#: top-level directories never cached: agents cannot write there anyway (selfguard), and they churn
_UNCACHED_TOP = frozenset({".orchestration", ".git"})
#: bound on trusted directories; beyond it, new directories are walked with lstat every time
MAX_DIRS = 20000
#: how often cached config is re-checked through its stat key, for writes that raise no inotify event
REVALIDATE_SECONDS = 1.0

_DIR_MASK = ENTRY | SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD
_CONTENT_DIR_MASK = _DIR_MASK | CONTENT
_instances: weakref.WeakSet[LiveCache] = weakref.WeakSet()
#: held while a Governor replaces its cache: threads of one daemon share a Governor (see Governor.live_cache)
STARTING = threading.Lock()


class LiveCache:
    """The caches of one workspace. Use :meth:`start`; then :meth:`refresh` at the start of every call.

    ``config`` (kind → loaded object), ``sessions`` (session file name → state) and ``dirs`` (workspace-relative
    directories proven to be real directories) are valid until :meth:`refresh` reports a change. Loaders read
    ``gen`` before loading and store through :meth:`store_config` / :meth:`store_session` / :meth:`trust`, which
    drop the result if anything was invalidated meanwhile (another thread's refresh).
    """

    def __init__(self, root: str, orch_dir: str, run_dir: str, sessions_dir: str, config_paths: tuple[str, ...],
                 ino: Inotify) -> None:
        self.root = root
        self.orch_dir = orch_dir
        self.run_dir = run_dir
        self.sessions_dir = sessions_dir
        self.config_paths = config_paths
        self._config_names = frozenset(os.path.basename(p) for p in config_paths)
        self._ino = ino
        # /proc/self/mounts reports POLLPRI once after any mount or unmount: a directory we trust may have been
        # covered by a mount, which raises no inotify event. One poll() covers both descriptors.
        self._mounts_fd = os.open("/proc/self/mounts", os.O_RDONLY | os.O_CLOEXEC)
        poller = select.poll()
        poller.register(ino.fd, select.POLLIN)
        poller.register(self._mounts_fd, select.POLLPRI)
        self._poll = poller.poll
        self._lock = threading.Lock()
        #: serialises config loads after a miss (see Governor._cached)
        self.config_lock = threading.Lock()
        self.config: dict[str, Any] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        #: "" is the root, watched from the start (an event on it kills the cache)
        self.dirs: set[str] = {""}
        #: (raw path, cwd) -> (parent dir, real path, workspace-relative path): pure string work, valid while the
        #: parent is in ``dirs`` (see paths.resolve)
        self.lexical: dict[tuple[str, str | None], tuple[str, str, str]] = {}
        self.gen = 0
        #: set when the cache can no longer vouch for anything (overflow, root moved, fork): the owner starts anew
        self.dead = False
        self._config_armed = self._sessions_armed = False
        #: set by an event on a config file: the next load must re-read it even if its stat key did not move
        self.config_dirty = True
        self._config_checked = _monotonic()
        #: "config" / "sessions" whose arming failed for a lasting reason (a symlink): not retried until an event
        self._refused: set[str] = set()
        self._wd_dirs: dict[int, set[str]] = {}
        self._wd_config: set[int] = set()
        self._wd_orch = self._wd_run = self._wd_sessions = -1
        self._wd_session_files: dict[int, str] = {}
        self.root_dev = os.stat(root).st_dev
        self._wd_root = ino.add(root, _DIR_MASK)
        self._wd_dirs[self._wd_root] = {""}
        if _casefolded(root):
            raise OSError(f"{root} folds case: names are not exact")
        # every directory above the root: moving one (or replacing it) moves the whole workspace out from under
        # the paths we hold, and raises IN_MOVE_SELF / IN_DELETE_SELF on it
        self._wd_ancestors: set[int] = set()
        parent = os.path.dirname(root)
        while parent and parent != os.path.dirname(parent):
            self._wd_ancestors.add(ino.add(parent, SELF | IN_ONLYDIR | IN_DONT_FOLLOW))
            parent = os.path.dirname(parent)
        _instances.add(self)

    @classmethod
    def start(cls, root: str, orch_dir: str, run_dir: str, sessions_dir: str,
              config_paths: tuple[str, ...]) -> LiveCache | None:
        """A cache for the workspace at ``root`` (already resolved), or None where it cannot be exact."""
        if not sys.platform.startswith("linux") or filesystem_type(root) not in LOCAL_FILESYSTEMS:
            return None
        try:
            ino = Inotify()
        except (InotifyError, OSError):
            return None
        try:
            return cls(root, orch_dir, run_dir, sessions_dir, config_paths, ino)
        except OSError:  # no watch on the root, no /proc/self/mounts: nothing could be vouched for
            ino.close()
            return None

    # ------------------------------------------------------------------ per call
    def refresh(self) -> bool:
        """Apply every change queued since the last call. False if the cache is dead (start a new one)."""
        # Under the lock, always: poll() itself consumes the mount-table notification, so a thread that saw it must
        # finish acting on it before another thread may conclude from an empty poll that nothing changed.
        with self._lock:
            ready = self._poll(0)
            if ready and not self.dead:
                if any(fd == self._mounts_fd for fd, _event in ready):
                    self._kill()  # a mount or unmount: any trusted directory may now be covered
                else:
                    self._apply(self._ino.read())
            now = _monotonic()
            if now - self._config_checked > REVALIDATE_SECONDS and self.config:
                # belt and braces for the writes inotify cannot see (shared mmap, native AIO): once a second the
                # config goes back through the stat-keyed loader, which returns the same objects if nothing moved
                self._config_checked = now
                self.config.clear()
                self.gen += 1
        return not self.dead

    def _apply(self, events: list[tuple[int, int, str]]) -> None:
        if events:
            # whatever the events concern, a load or a directory proof that another thread started before them
            # may rest on what they changed (e.g. a directory watched but not yet trusted): its store is dropped
            self.gen += 1
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                self._kill()  # events were lost: nothing cached can be vouched for
                return
            rels = self._wd_dirs.get(wd)
            if rels is not None:
                for rel in tuple(rels):
                    if mask & SELF:
                        if rel == "":
                            self._kill()  # the workspace root itself moved or vanished
                            return
                        self._drop(rel)
                    elif mask & ENTRY and name:
                        if rel == "" and name == ".orchestration":
                            self._config_changed()
                            self._sessions_changed()
                        self._drop(f"{rel}/{name}" if rel else name)
            if wd == self._wd_orch:
                if mask & SELF:
                    self._config_changed()
                    self._sessions_changed()
                else:
                    if name in self._config_names:
                        self._config_changed()
                    if name == "run" and mask & ENTRY:
                        self._sessions_changed()
            if wd in self._wd_config:
                self._config_changed()
            if wd == self._wd_run and (mask & SELF or name == "sessions"):
                self._sessions_changed()
            if wd == self._wd_sessions:
                if mask & SELF:
                    self._sessions_changed()
                elif name:
                    self.sessions.pop(name, None)
                    self.gen += 1
            if wd in self._wd_ancestors:
                self._kill()  # a directory above the root moved: every path we know may now lead elsewhere
                return
            name_of = self._wd_session_files.get(wd)
            if name_of is not None:
                self.sessions.pop(name_of, None)
            if mask & IN_IGNORED:  # the kernel removed this watch: forget the descriptor
                self._wd_dirs.pop(wd, None)
                self._wd_config.discard(wd)
                self._wd_session_files.pop(wd, None)

    def _drop(self, rel: str) -> None:
        """Forget ``rel`` and every directory below it (ancestors of a trusted directory are always trusted,
        so a name that is not trusted has nothing trusted below it: the common case is one set lookup)."""
        dirs = self.dirs
        if rel not in dirs:
            return
        below = rel + "/"
        self.dirs = {d for d in dirs if d != rel and not d.startswith(below)}
        self.gen += 1

    def _config_changed(self) -> None:
        self.config.clear()
        self._config_armed = False
        self._refused.discard("config")
        self.config_dirty = True
        self.gen += 1

    def _sessions_changed(self) -> None:
        self.sessions.clear()
        self._sessions_armed = False
        self._refused.discard("sessions")
        self.gen += 1

    def _kill(self) -> None:
        self.dead = True
        self.config.clear()
        self.sessions.clear()
        self.dirs = set()
        self.gen += 1

    def take_config_dirty(self) -> bool:
        """Read and clear :attr:`config_dirty` atomically: an event that sets it again while a loader is working
        must stay set for the next loader (a plain read-then-clear from two threads would lose it)."""
        with self._lock:
            dirty, self.config_dirty = self.config_dirty, False
        return dirty

    # ------------------------------------------------------------------ arming (watch first, then read)
    def arm_config(self) -> bool:
        """Watch the config files; True if cached config may be trusted until an event says otherwise."""
        return self._config_armed or self._arm("config", self._watch_config)

    def arm_sessions(self) -> bool:
        """Watch the session files; True if cached session state may be trusted until an event says otherwise."""
        return self._sessions_armed or self._arm("sessions", self._watch_sessions)

    def _arm(self, what: str, watch: Any) -> bool:
        if what in self._refused:
            return False  # a lasting reason (a symlink): retried only after an event says something changed
        with self._lock:
            try:
                watch()
            except (InotifyError, OSError):
                self._refused.add(what)
                return False
            if what == "config":
                self._config_armed = True
            else:
                self._sessions_armed = True
            return True

    def _watch_config(self) -> None:
        self._arm_orch()
        for path in self.config_paths:
            try:
                self._check_plain(path)
            except FileNotFoundError:
                continue  # its creation is an entry event in .orchestration/
            self._wd_config.add(self._ino.add(path, CONTENT | SELF | IN_DONT_FOLLOW | IN_MASK_ADD))

    def _watch_sessions(self) -> None:
        self._arm_orch()
        os.makedirs(self.sessions_dir, exist_ok=True)
        for path in (self.run_dir, self.sessions_dir):
            self._check_plain(path)
        self._wd_run = self._ino.add(self.run_dir, _DIR_MASK)
        self._wd_sessions = self._ino.add(self.sessions_dir, _CONTENT_DIR_MASK)

    def watch_session_file(self, name: str) -> bool:
        """Watch one session file's inode too (an edit through a hard link is not reported to its directory)."""
        path = os.path.join(self.sessions_dir, name)
        try:
            self._check_plain(path)
            wd = self._ino.add(path, CONTENT | SELF | IN_DONT_FOLLOW | IN_MASK_ADD)
        except FileNotFoundError:
            return True  # its creation is an entry event in the watched sessions directory
        except (InotifyError, OSError):
            return False
        with self._lock:
            self._wd_session_files[wd] = name
        return True

    def _check_plain(self, path: str) -> None:
        """Raise unless ``path`` is no symlink and lies on the workspace's device (the events must reach us)."""
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise InotifyError(f"{path} is a symlink: the target's directory is not watched")
        if st.st_dev != self.root_dev:
            raise InotifyError(f"{path} is on another device")

    def _arm_orch(self) -> None:
        self._check_plain(self.orch_dir)
        self._wd_orch = self._ino.add(self.orch_dir, _CONTENT_DIR_MASK)

    def watch_dir(self, rel: str, full: str) -> bool:
        """Watch directory ``rel`` (at ``full``) before anything below it is checked; False: do not trust it."""
        if len(self.dirs) >= MAX_DIRS or rel.split("/", 1)[0].lower() in _UNCACHED_TOP:
            return False
        try:
            wd = self._ino.add(full, _DIR_MASK)
        except InotifyError:
            return False
        # in a case-folding directory (ext4/f2fs/tmpfs `chattr +F`) "B" and "b" name one entry, but an event names
        # only one of them: trust nothing below it (the flag can only be set on an empty directory, so checking
        # when a directory becomes trusted, before any child is looked up through it, is enough)
        if _casefolded(full):
            return False
        with self._lock:
            self._wd_dirs.setdefault(wd, set()).add(rel)
        return True

    # ------------------------------------------------------------------ stores (dropped if invalidated meanwhile)
    def store_config(self, key: str, obj: Any, gen: int) -> None:
        with self._lock:
            if gen == self.gen and self._config_armed:
                self.config[key] = obj

    def store_session(self, name: str, state: dict[str, Any], gen: int) -> None:
        with self._lock:
            if gen == self.gen and self._sessions_armed:
                self.sessions[name] = state

    def trust(self, rels: list[str], gen: int) -> None:
        with self._lock:
            if gen == self.gen and not self.dead:
                self.dirs.update(rels)

    def close(self) -> None:
        """Release the inotify instance and the mount-table descriptor. Idempotent."""
        self.dead = True
        self._ino.close()
        fd, self._mounts_fd = self._mounts_fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_mounts_fd", -1) >= 0:
            self.close()


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem mounted at the longest mount point containing ``path`` (Linux), or None."""
    best, best_type = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            for line in fh:
                left, sep, right = line.partition(" - ")
                fields = left.split()
                if not sep or len(fields) < 5 or not right:
                    continue
                mount = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
                inside = path == mount or path.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, best_type = mount, right.split()[0]
    except OSError:
        return None
    return best_type


def _after_fork_in_child() -> None:
    # a forked child shares the parent's inotify queue: reading it would steal the parent's events
    for live in list(_instances):
        live.close()


os.register_at_fork(after_in_child=_after_fork_in_child)


_FS_IOC_GETFLAGS = 0x80086601
_FS_CASEFOLD_FL = 0x40000000


def _casefolded(path: str) -> bool:
    """True if ``path`` is a case-folding directory, or if that cannot be told (then nothing below is trusted)."""
    import fcntl
    import struct

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        flags = struct.unpack("l", fcntl.ioctl(fd, _FS_IOC_GETFLAGS, b"\0" * 8))[0]
    except OSError as exc:
        # no inode flags at all (ENOTTY & co.) means no per-directory case folding either
        import errno

        return exc.errno not in (errno.ENOTTY, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)
    finally:
        os.close(fd)
    return bool(flags & _FS_CASEFOLD_FL)
