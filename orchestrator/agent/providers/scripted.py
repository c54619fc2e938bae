"""The scripted provider: replays model turns from a YAML script. Offline and deterministic.

A script is a list of turns; each turn is what the "model" says next::

    - say: "Let me read the file first."          # optional text alongside the calls
      tool_calls:
        - name: read_file
          input: {path: src/app.py}
    - expect: "intent-required"                   # optional: the previous tool results must contain this
      expect_not: "Traceback"                     # optional: ... and must not contain this
      tool_calls:
        - name: select_active_intent
          input: {intent_id: INT-001}
    - answer: "Done."                             # a turn without tool calls ends the run

``expect``/``expect_not`` take a string or a list of strings; a failed expectation raises
:class:`ProviderError`, so a script doubles as a test of how the governed tools answered.
"""

from __future__ import annotations

import os
from typing import Any

from orchestrator.agent.providers.base import ProviderError, Reply, ToolSpec, ToolUse


class ScriptedProvider:
    """Replays ``turns`` in order, one per :meth:`complete` call."""

    def __init__(self, turns: list[dict[str, Any]], *, model: str = "scripted") -> None:
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise ProviderError("a script is a list of turns (mappings)")
        self.turns = turns
        self.model = model
        self.position = 0
        self._ids = 0
        # tool-call ids must be unique across runs (the ledger dedupes by call id), like a real API's
        self._prefix = "call_" + os.urandom(4).hex() + "_"

    @classmethod
    def from_yaml(cls, source: str | os.PathLike[str], *, model: str = "scripted") -> ScriptedProvider:
        """Load a script from a YAML file path, or from YAML text when ``source`` is not a file.

        The YAML may be the list of turns itself or a mapping with a ``turns`` key.
        """
        import yaml

        text = source
        if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                               and os.path.isfile(source)):
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        data = yaml.safe_load(str(text))
        if isinstance(data, dict):
            model = str(data.get("model", model))
            data = data.get("turns")
        return cls(data, model=model)

    @property
    def remaining(self) -> int:
        """Turns not yet replayed."""
        return len(self.turns) - self.position

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> Reply:
        if self.position >= len(self.turns):
            raise ProviderError(f"the script has no turn {self.position + 1} (it has {len(self.turns)})")
        turn = self.turns[self.position]
        self.position += 1
        self._check(turn, messages)
        offered = {t.name for t in tools}
        calls: list[ToolUse] = []
        for raw in turn.get("tool_calls") or ():
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise ProviderError(f"turn {self.position}: each tool call needs a 'name'")
            if offered and raw["name"] not in offered:
                raise ProviderError(f"turn {self.position}: tool {raw['name']!r} is not offered to the model")
            self._ids += 1
            args = raw.get("input") or {}
            calls.append(ToolUse(str(raw.get("id") or f"{self._prefix}{self._ids:03d}"), raw["name"], dict(args)))
        text = str(turn.get("answer") if not calls and turn.get("answer") is not None else turn.get("say") or "")
        return Reply(text, tuple(calls), model=self.model, stop_reason="tool_use" if calls else "end_turn")

    def _check(self, turn: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        results: list[str] = []
        for m in reversed(messages):
            if m.get("role") != "tool":
                break
            results.append(str(m.get("content", "")))
        seen = "\n".join(reversed(results))
        for needle in _strings(turn.get("expect")):
            if needle not in seen:
                raise ProviderError(f"script turn {self.position}: expected the previous tool result to contain "
                                    f"{needle!r}; it was: {seen[:500]!r}")
        for needle in _strings(turn.get("expect_not")):
            if needle in seen:
                raise ProviderError(f"script turn {self.position}: expected the previous tool result not to "
                                    f"contain {needle!r}; it was: {seen[:500]!r}")


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]
