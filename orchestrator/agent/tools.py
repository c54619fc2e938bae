"""The reference loop's tools: plain file and shell operations, run only after the pre verdict allows.

Each tool receives the governed :class:`~orchestrator.core.models.ToolCall`, whose ``resolved`` paths the
pipeline has already canonicalised and checked, so a tool writes exactly the file that was checked
(never a re-interpretation of the model's raw string). A tool reports failure by raising
:class:`ToolFailure`; the loop turns it into a tool error for the model.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orchestrator.agent.providers import ToolSpec
from orchestrator.core.errors import OrchestratorError
from orchestrator.core.paths import PathError, canonical

if TYPE_CHECKING:
    from orchestrator.core.models import ToolCall
    from orchestrator.engine.pipeline import Governor

#: results longer than this are cut (the model sees a note); keeps one huge file from flooding context
MAX_RESULT_CHARS = 60_000
#: directories never listed: VCS internals, runtime state, caches
_SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache"})


class ToolFailure(Exception):
    """The tool ran but could not do what was asked (file missing, text not found...)."""


class CommandFailed(ToolFailure):
    """A command that ran and exited non-zero: still traced, reported as an error."""


@dataclass
class ToolContext:
    """What a tool needs: the governor (workspace root), the session and limits."""

    gov: Governor
    session_id: str
    agent: str = "loop"
    command_timeout: float = 60.0

    @property
    def root(self) -> str:
        return self.gov.root


@dataclass(frozen=True)
class LoopTool:
    """A tool of the loop: what the model sees (``spec``) and what runs (``run``)."""

    spec: ToolSpec
    run: Callable[[ToolContext, ToolCall], str]

    @property
    def name(self) -> str:
        return self.spec.name


def _target(ctx: ToolContext, call: ToolCall) -> str:
    if not call.resolved:
        raise ToolFailure("this tool needs a 'path'")
    return os.path.join(ctx.root, call.resolved[0])


def _text_arg(call: ToolCall, key: str, *, allow_empty: bool = True) -> str:
    value = call.input.get(key)
    if not isinstance(value, str) or (not allow_empty and value == ""):
        raise ToolFailure(f"'{key}' must be a {'non-empty ' if not allow_empty else ''}string")
    return value


def _cut(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return text[:MAX_RESULT_CHARS] + f"\n[... {len(text) - MAX_RESULT_CHARS} more characters not shown]"


def read_file(ctx: ToolContext, call: ToolCall) -> str:
    path = _target(ctx, call)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _cut(fh.read())
    except FileNotFoundError:
        raise ToolFailure(f"{call.resolved[0]} does not exist") from None
    except IsADirectoryError:
        raise ToolFailure(f"{call.resolved[0]} is a directory; use list_files") from None


def write_file(ctx: ToolContext, call: ToolCall) -> str:
    path = _target(ctx, call)
    content = _text_arg(call, "content")
    existed = os.path.exists(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(content)
    return f"{'overwrote' if existed else 'created'} {call.resolved[0]} ({len(content.splitlines())} lines)"


def edit_file(ctx: ToolContext, call: ToolCall) -> str:
    path = _target(ctx, call)
    old = _text_arg(call, "old_string", allow_empty=False)
    new = _text_arg(call, "new_string")
    replace_all = bool(call.input.get("replace_all", False))
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ToolFailure(f"{call.resolved[0]} does not exist; use write_file to create it") from None
    count = text.count(old)
    if count == 0:
        raise ToolFailure(f"old_string not found in {call.resolved[0]}; re-read the file and copy the text exactly")
    if count > 1 and not replace_all:
        raise ToolFailure(f"old_string occurs {count} times in {call.resolved[0]}; add context to make it unique "
                          "or set replace_all")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text.replace(old, new) if replace_all else text.replace(old, new, 1))
    return f"edited {call.resolved[0]} ({count if replace_all else 1} replacement{'s' if replace_all and count > 1 else ''})"


def list_files(ctx: ToolContext, call: ToolCall) -> str:
    raw = call.input.get("path") or "."
    if not isinstance(raw, str):
        raise ToolFailure("'path' must be a string")
    try:
        rel = canonical(raw, ctx.root, ctx.root, ignore_case=ctx.gov.ignore_case)
    except PathError as exc:
        raise ToolFailure(exc.message) from None
    base = ctx.root if rel == "." else os.path.join(ctx.root, rel)
    if not os.path.isdir(base):
        raise ToolFailure(f"{rel} is not a directory")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        here = os.path.relpath(dirpath, ctx.root).replace(os.sep, "/")
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and
                             not (here == ".orchestration" and d == "run"))
        for name in sorted(filenames):
            found.append(name if here == "." else f"{here}/{name}")
            if len(found) >= 500:
                return "\n".join(found) + "\n[... more files not listed]"
    return "\n".join(found) or "(no files)"


def run_command(ctx: ToolContext, call: ToolCall) -> str:
    command = call.command or ""
    if not command.strip():
        raise ToolFailure("'command' must be a non-empty string")
    timeout = call.input.get("timeout")
    limit = ctx.command_timeout
    if isinstance(timeout, (int, float)) and 0 < timeout < limit:
        limit = float(timeout)
    try:
        proc = subprocess.run(command, shell=True, cwd=ctx.root, capture_output=True, text=True,  # noqa: S602
                              timeout=limit, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        raise ToolFailure(f"command timed out after {limit:g} s") from None
    output = (proc.stdout or "") + (proc.stderr or "")
    text = f"exit code {proc.returncode}\n{output}".rstrip()
    if proc.returncode != 0:
        # the command ran (it may have changed files), but the model should see it as a failure
        raise CommandFailed(_cut(text))
    return _cut(text)


def select_active_intent(ctx: ToolContext, call: ToolCall) -> str:
    intent_id = call.input.get("intent_id")
    if not isinstance(intent_id, str) or not intent_id:
        raise ToolFailure("'intent_id' must be a non-empty string")
    try:
        return ctx.gov.select_intent(intent_id, ctx.session_id, agent=ctx.agent)
    except OrchestratorError as exc:
        raise ToolFailure(f"[orchestrator:{exc.type}] {exc.message} " + json.dumps(exc.to_dict(), default=str)) \
            from None


def record_lesson(ctx: ToolContext, call: ToolCall) -> str:
    text = call.input.get("text")
    if not isinstance(text, str):
        raise ToolFailure("'text' must be a string")
    try:
        added = ctx.gov.record_lesson(text, session_id=ctx.session_id)
    except OrchestratorError as exc:
        raise ToolFailure(exc.message) from None
    return "lesson recorded in AGENTS.md" if added else "this lesson is already in AGENTS.md"


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_S = {"type": "string"}

DEFAULT_TOOLS: dict[str, LoopTool] = {t.name: t for t in (
    LoopTool(ToolSpec("read_file", "Read a text file of the workspace.",
                      _schema({"path": {**_S, "description": "path relative to the workspace root"}}, ["path"])),
             read_file),
    LoopTool(ToolSpec("write_file", "Create or overwrite a file with the given content.",
                      _schema({"path": _S, "content": _S}, ["path", "content"])), write_file),
    LoopTool(ToolSpec("edit_file", "Replace old_string (which must occur exactly once, unless replace_all) "
                                   "with new_string in a file.",
                      _schema({"path": _S, "old_string": _S, "new_string": _S, "replace_all": {"type": "boolean"}},
                              ["path", "old_string", "new_string"])), edit_file),
    LoopTool(ToolSpec("list_files", "List files below a directory of the workspace (default: the root).",
                      _schema({"path": _S}, [])), list_files),
    LoopTool(ToolSpec("run_command", "Run a shell command in the workspace root (with a timeout). Destructive "
                                     "commands wait for a person's approval.",
                      _schema({"command": _S, "timeout": {"type": "number"}}, ["command"])), run_command),
    LoopTool(ToolSpec("select_active_intent", "Select the intent you work on; required before changing files. "
                                              "Returns its scope, constraints and lessons.",
                      _schema({"intent_id": _S}, ["intent_id"])), select_active_intent),
    LoopTool(ToolSpec("record_lesson", "Record a lesson learned (one sentence) in AGENTS.md for future agents.",
                      _schema({"text": _S}, ["text"])), record_lesson),
)}
