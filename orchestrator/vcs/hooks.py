"""Where git looks for hooks besides ``.git/hooks``: ``core.hooksPath`` directories inside the workspace.

A hook is a program git runs on commit, checkout, push...: whoever can write one runs code the next time a
person (or CI) uses git. ``.git/hooks/**`` is a governance path (selfguard); a repository that sets
``core.hooksPath`` (husky, pre-commit-style ``.githooks/``) runs its hooks from that directory instead, so selfguard
asks :func:`hook_dirs` for it and refuses writes there too.

Read with the stdlib from the configuration files git itself reads — system (``/etc/gitconfig``,
``$GIT_CONFIG_SYSTEM``), global (``$GIT_CONFIG_GLOBAL``, ``$XDG_CONFIG_HOME/git/config``, ``~/.gitconfig``), the
repository's ``config`` and ``config.worktree`` — following ``include.path`` / ``includeIf.*.path`` (three levels).
Every value found counts, not just the one that wins: which one git uses depends on the scope a command runs with,
and refusing a write to a directory that is not the hooks directory after all costs little. A relative value is
relative to the work tree's top level (where git runs hooks). Cached per process, keyed by the ``stat`` of every file
read: a pre-hook pays a handful of ``stat`` calls.
"""

from __future__ import annotations

import os
from typing import Any

from orchestrator.core.fsutil import SMALL_FILE, read_regular

__all__ = ["HOOK_NAMES", "hook_dirs", "git_dir"]

#: the hooks git (and its bundled tools) run, by file name (githooks(5))
HOOK_NAMES = frozenset("""applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit
prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push pre-receive update
proc-receive post-receive post-update reference-transaction push-to-checkout pre-auto-gc post-rewrite
sendemail-validate fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit
post-index-change""".split())

#: root -> (environment key, (file, stat signature) of every file read, result)
_CACHE: dict[str, tuple[tuple[str | None, ...], tuple[tuple[str, Any], ...], tuple[str, ...]]] = {}


def _sig(path: str) -> Any:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def git_dir(root: str) -> tuple[str, str, str] | None:
    """``(top level, git dir, common dir)`` of the repository holding ``root`` (searching upwards), or None."""
    cur = root
    while True:
        dot = os.path.join(cur, ".git")
        if os.path.isdir(dot):
            return cur, dot, dot
        if os.path.isfile(dot):
            data = read_regular(dot, SMALL_FILE)  # never blocks on a FIFO (fsutil.open_regular)
            if data is None:
                return None
            line = data.decode("utf-8", "replace").partition("\n")[0].strip()
            if not line.startswith("gitdir:"):
                return None
            gdir = os.path.normpath(os.path.join(cur, line[len("gitdir:"):].strip()))
            common = gdir
            try:
                with open(os.path.join(gdir, "commondir"), encoding="utf-8", errors="replace") as fh:
                    common = os.path.normpath(os.path.join(gdir, fh.readline().strip()))
            except OSError:
                pass
            return cur, gdir, common
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _candidates(root: str) -> tuple[str | None, list[str]]:
    found = git_dir(root)
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
             os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
             os.path.join(xdg, "git", "config")]
    top = None
    if found is not None:
        top, gdir, common = found
        files += [os.path.join(common, "config"), os.path.join(gdir, "config.worktree")]
    return top, files


def _unquote(value: str) -> str:
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(value):
        c = value[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(value):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(value[i], value[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def _read(path: str, hooks: list[str], includes: list[str]) -> None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head, _sep, rest = line[1:].partition("]")
            section = head.strip().split(None, 1)[0].split('"', 1)[0].lower() if head.strip() else ""
            line = rest.strip()
            if not line:
                continue
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if not eq:
            continue
        if section == "core" and key == "hookspath":
            hooks.append(os.path.expanduser(_unquote(value)))
        elif section in ("include", "includeif") and key == "path":
            inc = os.path.expanduser(_unquote(value))
            includes.append(inc if os.path.isabs(inc) else os.path.join(os.path.dirname(path), inc))


def _env_key() -> tuple[str | None, ...]:
    env = os.environ
    return (env.get("HOME"), env.get("XDG_CONFIG_HOME"), env.get("GIT_CONFIG_GLOBAL"), env.get("GIT_CONFIG_SYSTEM"))


def hook_dirs(root: str) -> tuple[str, ...]:
    """Workspace-relative POSIX paths of the ``core.hooksPath`` directories that lie inside ``root``."""
    env = _env_key()
    cached = _CACHE.get(root)
    if cached is not None and cached[0] == env and all(_sig(p) == s for p, s in cached[1]):
        return cached[2]
    dotgit = os.path.join(root, ".git")
    # what locates the configuration (the .git entry, a worktree's gitdir file) is part of the cache key too
    read: list[tuple[str, Any]] = [(dotgit, _sig(dotgit))]
    top, files = _candidates(root)
    hooks: list[str] = []
    todo = [(f, 0) for f in files]
    seen: set[str] = set()
    while todo:
        path, depth = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        read.append((path, _sig(path)))
        includes: list[str] = []
        _read(path, hooks, includes)
        if depth < 3:
            todo.extend((inc, depth + 1) for inc in includes)
    out: list[str] = []
    real_root = os.path.realpath(root)
    for h in hooks:
        if not h:
            continue
        full = h if os.path.isabs(h) else os.path.join(top or root, h)
        real = os.path.realpath(full)
        rel = os.path.relpath(real, real_root)
        if rel == "." or not (rel == ".." or rel.startswith(".." + os.sep)):
            out.append("." if rel == "." else rel.replace(os.sep, "/"))
    result = tuple(dict.fromkeys(out))
    _CACHE[root] = (env, tuple(read), result)
    return result
