"""The neutral provider interface (see the package docstring): what the loop and every implementation share.

A module of its own so that the implementations import the interface without importing the package that
selects among them (:func:`orchestrator.agent.providers.from_env`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class ProviderError(Exception):
    """The model could not be asked (HTTP error, malformed reply, script mismatch)."""


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model asked for."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One model turn: text and/or tool calls. No tool calls means the model has answered."""

    text: str = ""
    tool_calls: tuple[ToolUse, ...] = ()
    model: str | None = None
    stop_reason: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and a JSON schema of its input."""

    name: str
    description: str
    parameters: dict[str, Any]


class Provider(Protocol):
    """Anything that can produce the next model turn."""

    model: str

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> Reply:
        """The model's reply to ``messages`` (neutral format) with ``tools`` available."""
        ...


__all__ = ["Provider", "ProviderError", "Reply", "ToolSpec", "ToolUse"]
