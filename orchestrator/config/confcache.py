"""Compiled configuration cache: validate a governance file once, reuse the result everywhere.

Validating ``active_intents.yaml`` needs yaml + pydantic (~75 ms of imports here); a hook process
that starts per tool call cannot pay that every time. So each loader splits in two:

* ``validate(path, text) -> JSON-able data`` — the slow, exact step (yaml, pydantic, pathspec);
* ``materialise(data) -> object`` — cheap, stdlib only.

The validated data is kept in memory (keyed by mtime, size, ctime and inode, and by the bytes' sha256 while the
key is too recent to prove anything: :func:`orchestrator.core.fsutil.racy`) and on disk under
``.orchestration/run/cache/`` (keyed by the file's sha256 and the orchestrator version), so a cold
process materialises from JSON without importing yaml or pydantic. The cache lives under
``.orchestration/``, which agents cannot write (self-guard), so it cannot be poisoned by them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.core.fsutil import racy, stat_key

T = TypeVar("T")

#: bump when the shape of cached data changes
FORMAT = 2  # 2: policy approval.passkey / approval.notify (issue 29)

#: (path, kind) -> (stat key, sha256 of the bytes, materialised object, racy: the key alone proves nothing yet)
_memory: dict[tuple[str, str], tuple[tuple[int, int, int, int], str, Any, bool]] = {}


def load(
    path: str,
    kind: str,
    *,
    validate: Callable[[Path, str], Any],
    materialise: Callable[[Any], T],
    missing: Callable[[], T],
    cache_dir: str | None = None,
) -> T:
    """The materialised config of ``path`` (``missing()`` if the file does not exist)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return missing()
    key = stat_key(st)
    hit = _memory.get((path, kind))
    if hit is not None and hit[0] == key and not hit[3]:
        return hit[2]  # type: ignore[no-any-return]
    with open(path, "rb") as fh:
        raw = fh.read()
    recent = racy(st)
    digest = hashlib.sha256(raw).hexdigest()
    if hit is not None and hit[1] == digest:
        # the same bytes (a racy entry checked again, or a touch): the same object, so identity-keyed memos hold
        _memory[(path, kind)] = (key, digest, hit[2], recent)
        return hit[2]  # type: ignore[no-any-return]
    data = _read_disk(cache_dir, kind, digest) if cache_dir else None
    if data is None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            from orchestrator.core.errors import ConfigError

            raise ConfigError(f"not UTF-8 text ({exc.reason})", file=path) from None
        data = validate(Path(path), text)
        if cache_dir:
            _write_disk(cache_dir, kind, digest, data)
    obj = materialise(data)
    _memory[(path, kind)] = (key, digest, obj, recent)
    return obj


def _cache_file(cache_dir: str, kind: str) -> str:
    return os.path.join(cache_dir, f"{kind}.json")


def _version() -> str:
    from orchestrator._version import __version__

    return __version__


def _read_disk(cache_dir: str, kind: str, digest: str) -> Any:
    try:
        with open(_cache_file(cache_dir, kind), "rb") as fh:
            entry = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("sha256") == digest
            and entry.get("version") == _version()):
        return entry.get("data")
    return None


def _write_disk(cache_dir: str, kind: str, digest: str, data: Any) -> None:
    from orchestrator.core.fsutil import atomic_write

    entry = {"format": FORMAT, "version": _version(), "sha256": digest, "data": data}
    try:
        os.makedirs(cache_dir, exist_ok=True)
        atomic_write(Path(_cache_file(cache_dir, kind)), json.dumps(entry, default=str).encode())
    except OSError:
        pass  # a cache that cannot be written only costs speed


def forget(paths: tuple[str, ...] | list[str]) -> None:
    """Forget the in-memory entries of ``paths``: the next load reads and hashes the file again.

    For callers that must not trust a memo at all (``orch validate``: what a person is told must be the file now).
    """
    # list() copies the keys in one step: other threads (the daemon's) may add entries meanwhile
    for key in [k for k in list(_memory) if k[0] in paths]:
        _memory.pop(key, None)


def clear_memory() -> None:
    """Forget the in-memory cache (tests)."""
    _memory.clear()
