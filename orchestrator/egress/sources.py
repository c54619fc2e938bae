"""The hosts a person's own configuration names: package registries and the repository's git remotes.

:func:`configured` gives them as allow entries ``(host, source)`` for an egress plan, so that ``pip install``,
``npm install`` and ``git fetch``/``git push`` to the person's own registries and remotes work through the proxy
with nothing named in orchestrator's policy. Registries: :mod:`orchestrator.egress.registries`. Git: every
``remote.*.url``/``pushurl`` after ``url.*.insteadOf``/``pushInsteadOf`` rewriting, as ``git config --list
--show-origin`` reports them (includes and the ``GIT_CONFIG_*`` variables of the hook's environment included).

Trust: only configuration no sandboxed command can change counts. A file inside the workspace is left out (a
project ``.npmrc``, an include of a tracked file: agents can write them), except the repository's own git config
(``.git/``, a governance path); what was left out is listed in :attr:`Configured.ignored` for ``orch doctor`` and
``orch explain``. The plan is computed when the hook decides (:mod:`orchestrator.egress.plans`), so a change a
command makes while it runs does not reach its own plan.

Cost: the result is memoised, in memory and under ``.orchestration/run/cache/``, keyed by the environment it read
and the stat key of every file it read or looked for (a file that appears is noticed); an entry computed from a
file changed within the racy window (:func:`orchestrator.core.fsutil.racy`) is recomputed next time. A hit costs a
``stat`` per file (a dozen); a miss reads them and runs ``git config`` once.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from orchestrator.egress import registries

FORMAT = 1
RACY_NS = 2_000_000_000
#: environment variables whose values the result depends on (besides those of registries' own prefixes)
_ENV_PREFIXES = ("NPM_CONFIG_", "YARN_", "PIP_", "UV_", "CARGO_", "GO", "GIT_CONFIG", "BUNDLE_")
_ENV_NAMES = ("HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "VIRTUAL_ENV", "GIT_DIR")


class Configured(NamedTuple):
    """The allow entries of the person's configuration, and what was left out (source -> why)."""

    entries: list[tuple[str, str]]
    ignored: list[tuple[str, str]]


class Reader:
    """Reads configuration files and remembers each one's stat key (None: missing) for the cache key."""

    def __init__(self) -> None:
        self.files: dict[str, list[int] | None] = {}
        self.racy = False

    def stat(self, path: str) -> os.stat_result | None:
        try:
            st = os.stat(path)
        except OSError:
            self.files[path] = None
            return None
        self.files[path] = [st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino]
        self.racy = self.racy or time.time_ns() - st.st_ctime_ns < RACY_NS
        return st

    def read(self, path: str) -> str | None:
        path = os.path.expanduser(path)
        if self.stat(path) is None:
            return None
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read(1 << 20)
        except OSError:
            return None


def host_of(url: str) -> str | None:
    """The host (``host`` or ``host:port``) a registry or remote URL connects to; None for local paths."""
    url = url.strip()
    if "://" not in url:
        if ":" in url.split("/")[0] and not url.startswith("/"):  # scp-like git: user@host:path
            return url.split(":")[0].rpartition("@")[2] or None
        return url.split("/")[0] or None if "." in url.split("/")[0] or url.split("/")[0] == "localhost" else None
    try:
        parts = urlsplit(url.removeprefix("sparse+").removeprefix("git+"))
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host or parts.scheme in ("file", ""):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port else shown


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _git_remotes(root: str, env: Mapping[str, str], reader: Reader) -> list[tuple[str, str]]:
    """(url, source) of every remote URL after insteadOf rewriting (the files that contributed are stat'ed)."""
    import subprocess

    try:
        proc = subprocess.run(["git", "-C", root, "-c", "core.fsmonitor=false", "config", "--list", "--show-origin",
                               "--null"], capture_output=True, timeout=10, check=False, env=dict(env))
    except (OSError, subprocess.SubprocessError):
        return []
    items = proc.stdout.split(b"\0")
    entries: list[tuple[str, str, str]] = []  # (origin, key, value)
    for raw_origin, pair in zip(items[::2], items[1::2]):
        key, _, value = pair.decode("utf-8", "replace").partition("\n")
        entries.append((raw_origin.decode("utf-8", "replace"), key, value))
    files = sorted({o[len("file:"):] for o, _, _ in entries if o.startswith("file:")})
    for path in files:
        reader.stat(path if os.path.isabs(path) else os.path.join(root, path))
    rewrites: dict[str, list[tuple[str, str]]] = {"insteadof": [], "pushinsteadof": []}
    remotes: list[tuple[str, str, str]] = []
    for origin, key, value in entries:
        lowered = key.lower()
        if lowered.startswith("url.") and lowered.rpartition(".")[2] in rewrites:
            rewrites[lowered.rpartition(".")[2]].append((value, key[4:].rpartition(".")[0]))
        elif lowered.startswith("remote.") and lowered.rpartition(".")[2] in ("url", "pushurl"):
            remotes.append((origin, key, value))
    out = []
    for origin, key, value in remotes:
        kinds = ("insteadof",) if key.lower().endswith(".url") else ("pushinsteadof", "insteadof")
        for kind in kinds:
            match = max((r for r in rewrites[kind] if value.startswith(r[0])), key=lambda r: len(r[0]), default=None)
            if match is not None:
                value = match[1] + value[len(match[0]):]
                break
        out.append((value, f"git {key} ({origin.removeprefix('file:')})"))
    return out


def _compute(root: str, env: Mapping[str, str], git_dir: bool = True) -> tuple[Configured, Reader]:
    """``git_dir``: False while a git-mode command runs (its ``.git/config`` is not the person's then): no git
    remote is read."""
    reader = Reader()
    cache: dict[str, bool] = {}

    def have(tool: str) -> bool:
        if tool not in cache:
            cache[tool] = registries._which(env, tool) is not None
        return cache[tool]

    for directory in (env.get("PATH") or "").split(os.pathsep):
        if directory:
            reader.stat(directory)  # a tool installed later changes its directory: the entry is recomputed
    found: list[tuple[str, str]] = []
    for ecosystem in registries.ECOSYSTEMS:
        found += ecosystem(reader.read, env, have)
    gitdir = os.path.join(root, ".git")
    entries: list[tuple[str, str]] = []
    ignored: list[tuple[str, str]] = []
    for url, source in found + (_git_remotes(root, env, reader) if git_dir else []):
        origin = source.rpartition("(")[2].rstrip(")") if source.endswith(")") else ""
        # a file the value came from ("(/home/u/.npmrc)", "(.git/config)"), not a label ("(PyPI)")
        origin = os.path.join(root, os.path.expanduser(origin)) if origin.startswith(("/", "~", ".")) else ""
        if origin and _inside(origin, root) and not _inside(origin, gitdir):
            ignored.append((source, "a file inside the workspace, which agents can write"))
            continue
        host = host_of(url)
        if host and (host, source) not in entries:
            entries.append((host, source))
    for name in (".npmrc", ".yarnrc.yml", ".yarnrc", "pip.conf", "uv.toml", ".cargo/config.toml"):
        if reader.stat(os.path.join(root, name)) is not None:
            ignored.append((os.path.join(root, name), "a project file, which agents can write: its registries "
                            "are not allowed unless sandbox.network.allow names them"))
    return Configured(entries, ignored), reader


_memory: dict[str, tuple[dict[str, Any], Configured]] = {}


def _key_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if k in _ENV_NAMES or k.upper().startswith(_ENV_PREFIXES)}


def _valid(entry: dict[str, Any], env: dict[str, str], changing: list[str] | None = None) -> bool:
    """Whether ``entry`` still holds: same format and environment, every file as it was — except the files beneath
    ``changing`` (the git dirs a running git-mode command holds: what it wrote there is not the person's)."""
    if entry.get("format") != FORMAT or entry.get("env") != env or entry.get("racy"):
        return False
    fresh = Reader()
    for path, key in entry.get("files", {}).items():
        if changing and any(_inside(path, d) for d in changing):
            continue
        fresh.stat(path)
        if fresh.files[path] != key:
            return False
    return True


def configured(root: str | os.PathLike[str], env: Mapping[str, str] | None = None,
               cache_dir: str | None = None) -> Configured:
    """The person's registries and remotes as allow entries (memoised: see the module doc).

    The repository's git config is the person's only while no git-mode command runs (it may write ``.git/config``
    until its guardian restores it: a background command added a remote ``http://127.0.0.1:PORT`` and the next
    command's plan allowed that address — redteam3). So it is read under the git-mode lock
    (:mod:`orchestrator.vcs.gitlock`); while a git-mode command holds it, the last result read without one serves
    (whatever the git dir's files are now), else one without the git remotes."""
    from orchestrator.vcs import gitlock

    real = os.path.realpath(root)
    env = os.environ if env is None else env
    with gitlock.exclusive(real, 0) as quiet:
        if quiet:
            return _configured(real, env, cache_dir)
        from orchestrator.vcs.worktrees import git_dirs

        changing = list(git_dirs(real) or ()) or [os.path.join(real, ".git")]
        for entry, result in (_memory.get(real) or (None, Configured([], [])), _stored(real, cache_dir)):
            if entry is not None and _valid(entry, _key_env(env), changing=changing):
                return result
        return _compute(real, env, git_dir=False)[0]


def _stored(real: str, cache_dir: str | None) -> tuple[dict[str, Any] | None, Configured]:
    """The entry stored under ``cache_dir`` for ``real`` (None when there is none or it is unreadable)."""
    path = _cache_path(real, cache_dir)
    try:
        with open(path or "", encoding="utf-8") as fh:
            stored = json.load(fh)
        return stored, Configured([tuple(e) for e in stored["entries"]], [tuple(e) for e in stored["ignored"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None, Configured([], [])


def _cache_path(real: str, cache_dir: str | None) -> str | None:
    return os.path.join(cache_dir, "egress-sources-" + hashlib.sha256(real.encode()).hexdigest()[:16] + ".json") \
        if cache_dir else None


def _configured(real: str, env: Mapping[str, str], cache_dir: str | None) -> Configured:
    key_env = _key_env(env)
    hit = _memory.get(real)
    if hit is not None and _valid(hit[0], key_env):
        return hit[1]
    path = _cache_path(real, cache_dir)
    stored, result = _stored(real, cache_dir)
    if stored is not None and _valid(stored, key_env):
        _memory[real] = (stored, result)
        return result
    result, reader = _compute(real, env)
    entry = {"format": FORMAT, "env": key_env, "files": reader.files, "racy": reader.racy,
             "entries": result.entries, "ignored": result.ignored}
    _memory[real] = (entry, result)
    if path is not None and not reader.racy:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(entry, fh)
            os.replace(tmp, path)
        except OSError:
            pass
    return result
