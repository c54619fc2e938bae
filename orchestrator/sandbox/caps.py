"""No capability for a sandboxed command: the Python launcher's copy of launcher.c's ``drop_caps``.

Landlock restricts paths, not privileges. The launchers make a user namespace only for a user other than root, so a
command an agent ran as root kept every capability of the init namespace (``CapEff 000001fffeffffff``): it could
``mknod`` the block device of the workspace's disk inside its scope and read the disk whole (the hidden run dir, the
machine key's directory), ``umount`` the tmpfs that hides the run dir, set the clock the freshness rules and approval
expiries read (redteam3). :func:`drop` runs in the command's process just before its ``exec``.

Loaded by the launcher (``landlock.py``, run with ``python -I -S``) as a top-level module: standard library only.
"""

from __future__ import annotations

import os

PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_VERSION_3 = 0x20080522
EPERM = 1
EINVAL = 22


def drop() -> None:
    """No capability left in any set. The bounding set first (EPERM: no ``CAP_SETPCAP``, so none to lose, and
    no_new_privs keeps an exec from gaining any: the kernel caps what an exec grants at the old permitted set), then
    ambient (EINVAL: a kernel before 4.3 has none), then effective/permitted/inheritable; ``capget`` checks the
    result. Raises OSError."""
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str, *tolerated: int) -> None:
        if result < 0 and ctypes.get_errno() not in tolerated:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    for cap in range(64):
        if lib.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0:
            break  # EINVAL: past the kernel's last capability
        check(lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"prctl(PR_CAPBSET_DROP, {cap})", EPERM)
    check(lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", EINVAL)
    head = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    check(lib.capset(head, data), "capset")
    check(lib.capget(head, data), "capget")
    if any(data):
        raise OSError(EPERM, "capabilities left after capset")
