"""Load ``.orchestration/policy.yaml``; a missing file means the defaults.

Validated with pydantic (:class:`orchestrator.config.schema.Policy`) when the file changes; what the hot
path gets is a :class:`PolicyView` — read-only attribute access over the validated data, built
from the compiled cache without importing pydantic (see :mod:`orchestrator.config.confcache`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.config import confcache
from orchestrator.core.errors import ConfigError


class PolicyView:
    """Read-only attributes over validated policy data (nested mappings become views too).

    Values live in the instance ``__dict__``, so reading one is a plain attribute lookup (a ``__getattr__``
    fallback costs ≈ 1 µs a read, several per tool call). The schema forbids unknown keys, so no key can
    shadow a method.
    """

    if TYPE_CHECKING:
        # the keys are the schema's (orchestrator.config.schema.Policy), set per instance: typed as Any for mypy
        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update({k: PolicyView(v) if isinstance(v, dict) and k != "tools" else v
                              for k, v in data.items()})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PolicyView is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("PolicyView is read-only")

    def replace(self, path: str, value: Any) -> PolicyView:
        """A copy with the dotted key ``path`` (e.g. ``approval.channel``) set to ``value``."""
        data = self.to_dict()
        node = data
        *parents, leaf = path.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
        return PolicyView(data)

    def to_dict(self) -> dict[str, Any]:
        return {k: v.to_dict() if isinstance(v, PolicyView) else v for k, v in self.__dict__.items()}

    def __repr__(self) -> str:
        return f"PolicyView({self.to_dict()!r})"


_defaults: PolicyView | None = None


def defaults() -> PolicyView:
    """The policy when no file exists."""
    global _defaults
    if _defaults is None:
        from orchestrator.config.schema import Policy

        _defaults = PolicyView(Policy().model_dump(mode="json"))
    return _defaults


def load(path: str | os.PathLike[str], *, cache_dir: str | None = None) -> PolicyView:
    """The validated policy. Raises :class:`ConfigError` naming the file, line and key."""
    return confcache.load(os.fspath(path), "policy", validate=_validate, materialise=PolicyView,
                          missing=defaults, cache_dir=cache_dir)


def _validate(path: Path, text: str) -> dict[str, Any]:
    from pydantic import ValidationError

    from orchestrator.config.schema import Policy
    from orchestrator.core.yamlio import load_yaml

    data, _text = load_yaml(path, text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"top level must be a mapping, got {type(data).__name__}", file=path, line=1)
    try:
        return Policy.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise ConfigError(f"{where}: {first.get('msg')}", file=path,
                          hint="see docs/configuration.md for the policy keys") from None
