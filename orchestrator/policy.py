"""Load ``.orchestration/policy.yaml`` (cached by mtime); a missing file means the defaults."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.errors import ConfigError

if TYPE_CHECKING:
    from orchestrator.schema import Policy

_cache: dict[str, tuple[tuple[int, int], Policy]] = {}


def load(path: str | os.PathLike[str]) -> Policy:
    """The validated policy. Raises :class:`ConfigError` naming the file, line and key."""
    key_path = os.fspath(path)
    try:
        st = os.stat(key_path)
        key = (st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        key = (0, -1)
    hit = _cache.get(key_path)
    if hit is not None and hit[0] == key:
        return hit[1]
    policy = _load_uncached(Path(key_path), exists=key[1] != -1)
    _cache[key_path] = (key, policy)
    return policy


def _load_uncached(path: Path, *, exists: bool) -> Policy:
    from pydantic import ValidationError

    from orchestrator.schema import Policy
    from orchestrator.yamlio import load_yaml

    if not exists:
        return Policy()
    data, _text = load_yaml(path)
    if data is None:
        return Policy()
    if not isinstance(data, dict):
        raise ConfigError(f"top level must be a mapping, got {type(data).__name__}", file=path, line=1)
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise ConfigError(f"{where}: {first.get('msg')}", file=path,
                          hint="see docs/configuration.md for the policy keys") from None
