"""The command's own mount namespace: what it cannot see or change besides what Landlock refuses (the launcher side).

Landlock decides per inode what a command may write and read, but it cannot refuse ``connect()`` to a pathname UNIX
socket (before ABI 9), and it grants a directory's whole tree: a protected path beneath a writable scope root is
writable to it. A mount namespace of the command's own closes both without touching the host's view:

- ``--hide DIR``: an empty read-only tmpfs over ``DIR`` (orchestrator's run directories: the daemon's socket, the
  approval broker, leases, spec files; a server's directory of FIFOs such as screen's). What was there is out of
  reach by any path: ``connect()`` and ``open()`` get ``ENOENT``.
- ``--cover PATH``: ``/dev/null`` bound over one socket (a server outside the sandbox listening on it: docker,
  ssh-agent, gpg-agent, tmux, D-Bus, X11...): ``connect()`` gets ``ECONNREFUSED``, the name stays in the listing.
- ``--ro PATH``: ``PATH`` bound over itself and remounted read-only (a protected path beneath a writable root:
  writes get ``EROFS``; removing or renaming it gets ``EBUSY``).

The engine decides the lists (:mod:`orchestrator.sandbox.hidden`, :mod:`orchestrator.sandbox.protected`); the
launcher makes the namespace before anything else (:func:`enter`: a new mount namespace, a user namespace too when
not root, ``/`` made private so nothing propagates back to the host), applies the lists (:func:`apply`), and only
then restricts itself with Landlock, which forbids every later mount, umount or remount to the command. The PID
namespace (:mod:`pidns`) is made inside this one when the policy wants it; this one is made whatever
``sandbox.pid_namespace`` says.

Where the kernel refuses the namespace (nested in another sandbox, user namespaces restricted) or one mount, the
command runs as before without it (``orch doctor`` probes what holds: ``sandbox-mounts``). ``launcher.c`` does the
same in C. Imported by the launcher under ``-I -S``: stdlib only (``os``, ``ctypes``).
"""

from __future__ import annotations

import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 1 << 14, 1 << 18, 1 << 21
#: statvfs ``f_flag`` bits -> the mount flags a remount must keep (in a user namespace the kernel refuses a remount
#: that would drop a flag the host set: nosuid, nodev, noexec and the atime flags are locked)
KEEP_FLAGS = ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME), (2048, MS_NODIRATIME),
              (4096, MS_RELATIME))
#: the launcher's options this module handles (each takes a path)
OPTIONS = ("--hide", "--cover", "--ro")


def _libc():  # -> ctypes.CDLL
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter() -> bool:
    """A new mount namespace (and a user namespace when not root, mapping this uid and gid to themselves), with
    ``/`` made private: True, or False when the kernel refused (the command then runs as before)."""
    try:
        lib = _libc()
        uid, gid = os.geteuid(), os.getegid()
        if lib.unshare(CLONE_NEWNS | (CLONE_NEWUSER if uid else 0)) != 0:
            return False
        if uid:  # the command keeps its uid, files keep their owners
            _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
            try:
                _write("/proc/self/setgroups", "deny")
            except OSError:
                pass
            _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
        # private first: a mount made on a shared / would propagate to the host's mount namespace
        return bool(lib.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0)
    except (OSError, AttributeError):
        return False


def _flags(path: str) -> int:
    """The locked flags of the mount ``path`` is on (kept by a remount)."""
    try:
        f_flag = os.statvfs(path).f_flag
    except OSError:
        return 0
    out = 0
    for st_bit, ms_bit in KEEP_FLAGS:
        if f_flag & st_bit:
            out |= ms_bit
    return out


def _is_link(path: str) -> bool:
    try:
        return os.path.islink(path)
    except (OSError, ValueError):
        return True


def apply(opts: dict[str, list[str]]) -> list[str]:
    """Apply ``--hide``, ``--cover`` and ``--ro`` (in that order) in the current mount namespace; the paths the kernel
    refused (a path that does not exist any more is not a refusal). Then the working directory is looked up again,
    so that it is the one the new mounts show (a shell's relative writes would otherwise go through the old one)."""
    lib = _libc()
    refused: list[str] = []

    def mount(src: bytes | None, dst: str, fstype: bytes | None, flags: int, data: bytes | None) -> bool:
        if lib.mount(src, dst.encode("utf-8", "surrogateescape"), fstype, flags, data) == 0:
            return True
        import ctypes

        if ctypes.get_errno() != 2:  # ENOENT: gone since the engine looked
            refused.append(dst)
        return False

    for path in opts.get("--hide", ()):
        mount(b"tmpfs", path, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,nr_inodes=1,mode=755")
    for path in opts.get("--cover", ()):
        if not _is_link(path):  # a link's target is not what the engine saw
            mount(b"/dev/null", path, None, MS_BIND, None)
    for path in opts.get("--ro", ()):
        if _is_link(path):
            continue
        b = path.encode("utf-8", "surrogateescape")
        if mount(b, path, None, MS_BIND | MS_REC, None):
            mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(path), None)
    if any(opts.get(o) for o in OPTIONS):
        rechdir()
    return refused


def rechdir() -> None:
    """``chdir`` to the working directory's path again: the old one still shows what lies beneath a new mount (a
    protected directory writable through it, a hidden one readable). Raises OSError when the working directory is
    hidden now (it lay beneath a hidden directory): the launcher refuses to run the command there."""
    try:
        cwd = os.getcwd()
    except OSError:
        return  # deleted: nothing is beneath it
    try:
        os.chdir(cwd)
    except OSError as exc:
        raise OSError(exc.errno, f"the working directory {cwd} is hidden in the sandbox") from None
