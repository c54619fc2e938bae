"""YAML reading through libyaml's CSafeLoader when available (10x faster than the pure loader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.core.errors import ConfigError


def load_yaml(path: Path, text: str | None = None) -> tuple[Any, str]:
    """Parse ``path`` (or ``text`` read from it); return (data, text).

    Syntax errors become :class:`ConfigError` with the line.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text ({exc.reason})", file=path) from None
    try:
        return yaml.load(text, Loader=loader), text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"YAML syntax error: {problem}", file=path, line=line,
                          hint="fix the YAML syntax (indentation, quotes, colons)") from None


def item_lines(text: str, key: str) -> list[int]:
    """1-based start lines of the items of the top-level sequence ``key`` (for error messages)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if getattr(k, "value", None) == key and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []
