"""Load and validate ``active_intents.yaml``; render the ``<intent_context>`` block.

Loading is cached by (mtime, size): the hook evaluates many calls per second and the file changes
rarely. The pipeline uses :class:`IntentSet`, a compiled, pydantic-free view (scope regexes built once).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orchestrator.config import confcache
from orchestrator.core.errors import ConfigError
from orchestrator.core.globs import compile_source, source_many

IN_PROGRESS = "IN_PROGRESS"


class CompiledIntent:
    """An intent as the hot path needs it: plain fields and one scope regex, compiled on first use
    (a cold hook process usually needs only the selected intent's). Plain class: see core/models.py."""

    __slots__ = ("id", "name", "status", "owned_scope", "constraints", "acceptance_criteria", "description",
                 "scope_src", "ignore_case", "extra", "_scope_match")

    def __init__(self, id: str, name: str, status: str, owned_scope: tuple[str, ...], constraints: tuple[str, ...],
                 acceptance_criteria: tuple[str, ...], description: str | None, scope_src: str,
                 ignore_case: bool = False, extra: dict[str, Any] | None = None) -> None:
        self.id = id
        self.name = name
        self.status = status
        self.owned_scope = owned_scope
        self.constraints = constraints
        self.acceptance_criteria = acceptance_criteria
        self.description = description
        self.scope_src = scope_src
        self.ignore_case = ignore_case
        self.extra = extra if extra is not None else {}
        self._scope_match: Any = None

    def __repr__(self) -> str:
        return f"CompiledIntent(id={self.id!r}, status={self.status!r}, owned_scope={self.owned_scope!r})"

    @property
    def scope_re(self) -> re.Pattern[str]:
        return compile_source(self.scope_src, self.ignore_case)

    def owns(self, path: str) -> bool:
        """True if the workspace-relative ``path`` is inside this intent's scope."""
        match = self._scope_match
        if match is None:
            match = self._scope_match = compile_source(self.scope_src, self.ignore_case).fullmatch
        return match(path) is not None


class IntentSet:
    """All intents of one file, by id, in file order."""

    __slots__ = ("by_id",)

    def __init__(self, by_id: dict[str, CompiledIntent]) -> None:
        self.by_id = by_id

    def get(self, intent_id: str) -> CompiledIntent | None:
        return self.by_id.get(intent_id)

    def __iter__(self) -> Iterator[CompiledIntent]:
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)

    def in_progress(self) -> list[CompiledIntent]:
        return [i for i in self.by_id.values() if i.status == IN_PROGRESS]


_EMPTY = IntentSet({})


def load(path: str | os.PathLike[str], *, ignore_case: bool = False, cache_dir: str | None = None) -> IntentSet:
    """Load, validate and compile the intents file; cached by mtime and size (and on disk in
    ``cache_dir``, see :mod:`orchestrator.config.confcache`).

    Raises :class:`ConfigError` naming the file, the line where possible and the offending intent.
    A missing file is an empty set (no intent can be selected, so every mutation is refused).
    """
    return confcache.load(
        os.fspath(path), "intents-ci" if ignore_case else "intents",
        validate=_validate, materialise=_materialise_ci if ignore_case else _materialise,
        missing=lambda: _EMPTY, cache_dir=cache_dir,
    )


def _materialise(data: list[dict[str, Any]], ignore_case: bool = False) -> IntentSet:
    by_id: dict[str, CompiledIntent] = {}
    for d in data:
        by_id[d["id"]] = CompiledIntent(
            id=d["id"], name=d["name"], status=d["status"], owned_scope=tuple(d["owned_scope"]),
            constraints=tuple(d["constraints"]), acceptance_criteria=tuple(d["acceptance_criteria"]),
            description=d.get("description"), scope_src=d["scope_src"], ignore_case=ignore_case,
            extra=d.get("extra") or {},
        )
    return IntentSet(by_id)


def _materialise_ci(data: list[dict[str, Any]]) -> IntentSet:
    return _materialise(data, ignore_case=True)


def _validate(path: Path, text: str, key: str = "active_intents") -> list[dict[str, Any]]:
    """Parse and validate with yaml + pydantic; return JSON-able intents (the slow path). ``key``: the top-level
    key of the list (``archived_intents`` in the archive, :mod:`orchestrator.config.intentstore`)."""
    from orchestrator.core.yamlio import load_yaml

    data, text = load_yaml(path, text)
    return validate_data(path, text, data, key)


def validate_data(path: Path, text: str, data: Any, key: str = "active_intents") -> list[dict[str, Any]]:
    """:func:`_validate` of data already parsed from ``text`` (the intents writer parses once for both)."""
    from pydantic import ValidationError

    from orchestrator.config.schema import IntentsFile
    from orchestrator.core.yamlio import item_lines

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"top level must be a mapping with key {key!r}, got {type(data).__name__}",
            file=path, line=1, hint=f"start the file with `{key}:` followed by a list of intents",
        )
    if key not in data:
        raise ConfigError(f"missing top-level key {key!r}", file=path, line=1,
                          hint=f"put the intents under `{key}:`")
    raw = data.get(key)

    def line_of(idx: int) -> int | None:
        # a second parse (for the marks): only when an error names an item
        lines = item_lines(text, key)
        return lines[idx] if idx < len(lines) else None

    try:
        model = IntentsFile.model_validate(
            data if key == "active_intents" else {"active_intents": raw, **{k: v for k, v in data.items() if k != key}})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first.get("loc", ())
        intent_name = line = None
        if len(loc) >= 2 and loc[0] == "active_intents" and isinstance(loc[1], int):
            idx = loc[1]
            line = line_of(idx)
            item = raw[idx] if isinstance(raw, list) and idx < len(raw) else None
            intent_name = str(item.get("id")) if isinstance(item, dict) and item.get("id") is not None else f"#{idx + 1}"
        field_path = ".".join(str(x) for x in loc[2:]) or ".".join(str(x) for x in loc)
        msg = first.get("msg", "invalid")
        if first.get("type") == "enum":
            msg = f"unknown status {first.get('input')!r} (expected one of {first.get('ctx', {}).get('expected')})"
        raise ConfigError(f"{field_path}: {msg}", file=path, line=line, intent=intent_name,
                          hint="see docs/configuration.md for the intent format") from None
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for idx, intent in enumerate(model.active_intents):
        if intent.id in seen:
            raise ConfigError(f"duplicate intent id {intent.id!r}", file=path,
                              line=line_of(idx), intent=intent.id,
                              hint="every intent id must be unique")
        seen.add(intent.id)
        out.append({
            "id": intent.id, "name": intent.name, "status": intent.status.value,
            "owned_scope": list(intent.owned_scope), "constraints": list(intent.constraints),
            "acceptance_criteria": list(intent.acceptance_criteria), "description": intent.description,
            "scope_src": source_many(intent.owned_scope),
            # dates and other YAML scalars become text so the cache is JSON
            "extra": json.loads(json.dumps(dict(intent.model_extra or {}), default=str)),
        })
    return out


def render_context(intent: CompiledIntent, lessons: list[str] | None = None) -> str:
    """The ``<intent_context>`` block handed to the agent after a successful selection."""
    from html import escape

    def items(tag: str, values: tuple[str, ...] | list[str]) -> str:
        inner = "".join(f"\n    <item>{escape(str(v))}</item>" for v in values)
        return f"  <{tag}>{inner}\n  </{tag}>" if values else f"  <{tag}/>"

    parts = [
        f'<intent_context id="{escape(intent.id)}" status="{intent.status}">',
        f"  <name>{escape(intent.name)}</name>",
    ]
    if intent.description:
        parts.append(f"  <description>{escape(intent.description)}</description>")
    parts += [
        items("owned_scope", intent.owned_scope),
        items("constraints", intent.constraints),
        items("acceptance_criteria", intent.acceptance_criteria),
        items("lessons", lessons or []),
        "  <rules>Write only inside owned_scope. Governance files are read-only. A denial is structured "
        "data: read its type and hint, then correct course.</rules>",
        "</intent_context>",
    ]
    return "\n".join(parts)
