"""What a sandboxed command's mount namespace hides: orchestrator's run directories and the servers outside it.

No privileged part of orchestrator takes instructions from inside the sandbox (issue 28): the daemon's socket, the
approval broker and the leases live in run directories, and other programs' servers (docker, ssh-agent, gpg-agent,
tmux, D-Bus, X11, a database) listen on pathname UNIX sockets that a command could connect to and have them act
with the person's rights. Landlock cannot refuse ``connect()`` to a pathname socket before ABI 9, so the launcher
hides them in the command's own mount namespace (:mod:`orchestrator.sandbox.mounts`, ``launcher.c``):

- **run directories** (``--hide``, an empty read-only tmpfs over each): this workspace's ``.orchestration/run/``,
  the shared one of its repository (:func:`orchestrator.vcs.worktrees.shared_run_dir`: the broker and the leases) and
  every other worktree's;
- **every bound pathname socket** the kernel lists (``/proc/net/unix``, read on each call: a server started since
  the last call is seen) that exists here and is not beneath a hidden directory (``--cover``: ``/dev/null`` bound
  over it, so ``connect()`` is refused), unless policy ``sandbox.sockets.allow`` names it or a directory above it;
- **servers' directories of FIFOs** (GNU screen's: it takes commands through named pipes, which no socket list
  shows), hidden whole.

Abstract sockets (``@name``) have no path: Landlock ABI >= 6 scopes them (the launcher's ruleset), unless the
allow list names one (``@name``: Landlock cannot open a single name, so abstract sockets are then open). What this
leaves: a socket bound by a relative name (the kernel lists only that name), another path to a socket inode (a hard
link, a bind mount made by the person), a server started between the hook and the command; docs/security.md.
"""

from __future__ import annotations

import os
import stat
from typing import Any

#: where GNU screen keeps its named pipes (``$SCREENDIR`` too)
SCREEN_DIRS = ("/run/screen", "/var/run/screen", "~/.screen")
#: the kernel's list of bound UNIX sockets (this network namespace's)
PROC_NET_UNIX = "/proc/net/unix"


def run_dirs(root: str, run_dir: Any) -> list[str]:
    """The run directories to hide, existing ones only: ``run_dir``, the repository's shared one (the main
    worktree's, or the state directory of a repository without a governed main worktree:
    :func:`orchestrator.vcs.worktrees.shared_run_dir`) and every linked worktree's. Read from git's registry without
    git; a few ``stat`` calls and one read per linked worktree."""
    out = [os.fspath(run_dir)]
    from orchestrator.vcs.worktrees import git_dirs, state_dir

    dirs = git_dirs(root)
    if dirs is not None:
        common = dirs[1]
        main = os.path.dirname(common) if os.path.basename(common) == ".git" else None
        if main is not None and os.path.isdir(os.path.join(main, ".orchestration")):
            out.append(os.path.join(main, ".orchestration", "run"))
        else:  # no governed main worktree: the shared state lives in the user's state directory
            out.append(os.fspath(state_dir(common)))
        registry = os.path.join(common, "worktrees")
        try:
            names = os.listdir(registry)
        except OSError:
            names = []
        for name in names:
            try:
                with open(os.path.join(registry, name, "gitdir"), encoding="utf-8", errors="replace") as fh:
                    pointer = fh.read().strip()
            except OSError:
                continue
            if pointer:
                top = os.path.dirname(os.path.normpath(os.path.join(registry, name, pointer)))
                out.append(os.path.join(top, ".orchestration", "run"))
    return [p for p in dict.fromkeys(out) if os.path.isdir(p)]


def bound_sockets(path: str = PROC_NET_UNIX) -> list[str]:
    """The absolute paths of the pathname UNIX sockets bound in this network namespace (listening or datagram,
    once each), as the kernel lists them: the path at bind time."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    out: dict[str, None] = {}
    for line in data.split(b"\n")[1:]:
        # Num RefCount Protocol Flags Type St Inode Path: a path needs the eighth field, and starts with "/"
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith(b"/"):
            out[os.fsdecode(fields[7])] = None
    return list(out)


def allow_list(root: str, policy: Any, env: Any = None) -> tuple[list[str], bool]:
    """Policy ``sandbox.sockets.allow`` resolved: (real paths of sockets or directories, an abstract name listed).
    ``~`` and ``$VAR`` (the hook's environment: ``$SSH_AUTH_SOCK``) are expanded; a relative entry is the
    workspace's; an entry whose variable is unset opens nothing."""
    sb = getattr(policy, "sandbox", None)
    sockets = getattr(sb, "sockets", None)
    entries = list(getattr(sockets, "allow", ()) or ())
    env = os.environ if env is None else env
    paths: list[str] = []
    abstract = False
    for entry in entries:
        if entry.startswith("@"):
            abstract = True
            continue
        value = _expand(entry, env)
        if not value:
            continue
        value = os.path.expanduser(value)
        paths.append(os.path.realpath(value if os.path.isabs(value) else os.path.join(root, value)))
    return paths, abstract


def _expand(entry: str, env: Any) -> str | None:
    """``$NAME`` / ``${NAME}`` from ``env``; None when one is unset or empty (the entry then opens nothing)."""
    if "$" not in entry:
        return entry
    import re

    missing = False

    def sub(m: Any) -> str:
        nonlocal missing
        value = env.get(m.group(1) or m.group(2)) or ""
        missing = missing or not value
        return str(value)

    out = re.sub(r"\$(?:\{(\w+)\}|(\w+))", sub, entry)
    return None if missing else out


def _beneath(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def options(root: str, policy: Any, run_dir: Any, *, keep: Any = (), env: Any = None,
            sockets: list[str] | None = None) -> list[str]:
    """The launcher's ``--hide`` / ``--cover`` options (and ``--abstract allow`` when the allow list names an
    abstract socket). ``keep``: sockets (or directories of them) that are not covered (a proxy the command must
    reach; one inside a hidden directory stays hidden: reach it through a descriptor opened before the mounts);
    ``sockets``: the bound sockets (default: the kernel's list now)."""
    hide = run_dirs(root, run_dir)
    hide.extend(d for d in _screen_dirs(env) if d not in hide)
    allowed, abstract = allow_list(root, policy, env)
    kept = [os.path.realpath(os.fspath(k)) for k in keep]
    skip = [*hide, *allowed, *kept]
    exact, prefixes = set(skip), tuple(d.rstrip("/") + "/" for d in skip)
    cover: list[str] = []
    seen: set[str] = set()
    real_dirs: dict[str, str] = {}  # sockets share directories: one realpath each
    for sock in bound_sockets() if sockets is None else sockets:
        parent, _, name = sock.rpartition("/")
        real_parent = real_dirs.get(parent)
        if real_parent is None:
            real_parent = real_dirs[parent] = os.path.realpath(parent or "/").rstrip("/")
        real = f"{real_parent}/{name}"
        if real in seen or real in exact or real.startswith(prefixes):
            continue
        seen.add(real)
        if _is_socket(real):  # a link there would be another socket (or none): only what is one now
            cover.append(real)
    opts: list[str] = []
    for d in hide:
        opts += ["--hide", d]
    for s in sorted(cover):
        opts += ["--cover", s]
    if abstract:
        opts += ["--abstract", "allow"]
    return opts


def namespace(root: str, policy: Any, run_dir: Any, grants: list[str], rules: Any, *, keep: Any = ()) -> list[str]:
    """Every mount option of a plan: what :func:`options` hides, and the protected paths beneath the scope's
    ``grants`` made read-only (:func:`orchestrator.sandbox.protected.read_only`; ``rules``: the ``.intentignore``)."""
    from orchestrator.sandbox.protected import read_only

    opts = options(root, policy, run_dir, keep=keep)
    paths, _truncated = read_only(root, grants, rules) if grants else ([], False)
    for path in paths:
        opts += ["--ro", path]
    return opts


def _screen_dirs(env: Any) -> list[str]:
    env = os.environ if env is None else env
    dirs = [*SCREEN_DIRS, *([env["SCREENDIR"]] if env.get("SCREENDIR") else [])]
    found = (os.path.expanduser(d) for d in dirs)
    return [os.path.realpath(d) for d in dict.fromkeys(found) if os.path.isdir(d)]


def validate(value: Any) -> list[str]:
    """``sandbox.sockets.allow``: a list of non-empty strings (paths, ``~/…``, ``$VAR``, ``@abstract``); raises
    ValueError otherwise (the policy schema's validator)."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and "\0" not in v for v in value):
        raise ValueError("sockets.allow must be a list of socket paths (absolute, ~/…, $VAR, workspace-relative, "
                         f"or @name for an abstract socket), got {value!r}")
    return value


__all__ = ["run_dirs", "bound_sockets", "allow_list", "options", "namespace", "validate", "SCREEN_DIRS"]
