"""Strict reading of a host's payload: every field an adapter relies on, checked, or a refusal naming the agent and
what was missing.

A host that changes its payload between versions (a renamed key, an object turned into a list, an event we never
saw) must not get an "allow" by accident: an adapter reads what it needs through :func:`field` and raises
:class:`Malformed` for anything else. :func:`orchestrator.adapters.base.run_hook` turns it into a structured
refusal (``malformed-call``, with ``agent``, ``event`` and ``missing``) in the host's blocking answer; an adapter
that answers in its own protocol (a plugin's ``{"skip": …}``) uses :func:`verdict`.

Standard library only at import (the hook's hot path); :mod:`orchestrator.core.models` is loaded by :func:`verdict`.
"""
from __future__ import annotations

from typing import Any, Mapping

#: what a refusal for a malformed payload tells the model to do
HINT = ("the agent's hook payload is not in the shape this orchestrator version knows (a new or changed agent "
        "version?): the call was refused to stay safe; a person should run `orch doctor` and update orchestrator "
        "or pin the agent version it supports")

_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number"}


class Malformed(ValueError):
    """A payload an adapter cannot read: ``agent`` (as in ``orch hook <agent>``), the ``event`` it came with and
    the field that is ``missing`` (or of the wrong type)."""

    def __init__(self, agent: str, message: str, *, event: str | None = None, missing: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent
        self.event = event
        self.missing = missing

    def details(self) -> dict[str, Any]:
        """The structured error's fields (``type``/``hook``/``message``/``hint`` come from :func:`error`)."""
        return {k: v for k, v in (("agent", self.agent), ("event", self.event), ("missing", self.missing)) if v}


def field(data: Mapping[str, Any], key: str, kind: type, agent: str, *, event: str | None = None,
          optional: bool = False, nonempty: bool = True) -> Any:
    """``data[key]`` if it is a ``kind`` (a non-empty one, for strings and unless ``nonempty`` is False); None when
    ``optional`` and absent (or null); else :class:`Malformed` naming the agent, the event and the field."""
    value = data.get(key)
    if value is None and optional:
        return None
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)) and \
            not (nonempty and kind is str and not value):
        return value
    what = "missing" if value is None else f"not {_TYPES.get(kind, kind.__name__)} ({type(value).__name__})"
    where = f"{event} event" if event else "event"
    raise Malformed(agent, f"{agent} {where}: field {key!r} is {what}", event=event, missing=key)


def error(agent: str, exc: BaseException) -> dict[str, Any]:
    """The structured error of a malformed payload (the shape of :attr:`orchestrator.core.models.Verdict.error`)."""
    details = exc.details() if isinstance(exc, Malformed) else {"agent": agent}
    message = str(exc) if isinstance(exc, Malformed) else f"{agent}: {exc}"
    return {"type": "malformed-call", "hook": "adapter", "message": message, **details, "hint": HINT}


def verdict(agent: str, exc: BaseException) -> Any:
    """The refusal of a malformed payload as a :class:`~orchestrator.core.models.Verdict` (for a host answered in its own
    protocol)."""
    from orchestrator.core.models import Verdict

    data = error(agent, exc)
    return Verdict("deny", data)


__all__ = ["HINT", "Malformed", "error", "field", "verdict"]
