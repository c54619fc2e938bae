"""The tool registry: every agent's tool names mapped to a canonical :class:`ToolCall`.

An adapter hands over (tool name, raw input); :func:`to_call` finds the tool's kind and where its
target paths live in the input. Unknown tools are never silently safe: their kind is ``UNKNOWN``,
which the pipeline treats as a possible mutation (see ``unknown_tools`` in the policy).
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.core.models import Kind, ToolCall

# (kind, path keys in the tool's input). For EXEC tools the first key names the command instead.
ToolSpec = tuple[Kind, tuple[str, ...]]

_FILE = ("file_path", "path", "filePath", "absolute_path", "target_file", "notebook_path")

REGISTRY: dict[str, ToolSpec] = {
    # --- Claude Code -------------------------------------------------------------------------
    "Read": (Kind.READ, ("file_path",)),
    "Write": (Kind.WRITE, ("file_path",)),
    "Edit": (Kind.EDIT, ("file_path",)),
    "MultiEdit": (Kind.EDIT, ("file_path",)),
    "NotebookEdit": (Kind.EDIT, ("notebook_path",)),
    "NotebookRead": (Kind.READ, ("notebook_path",)),
    "Bash": (Kind.EXEC, ("command",)),
    "Glob": (Kind.META, ()),
    "Grep": (Kind.META, ()),
    "LS": (Kind.META, ()),
    "Task": (Kind.META, ()),
    "Agent": (Kind.META, ()),
    "TodoWrite": (Kind.META, ()),
    "WebFetch": (Kind.META, ()),
    "WebSearch": (Kind.META, ()),
    "BashOutput": (Kind.META, ()),
    "KillShell": (Kind.META, ()),
    "ExitPlanMode": (Kind.META, ()),
    # --- Codex CLI -------------------------------------------------------------------------
    "apply_patch": (Kind.EDIT, ("command", "input", "patch", "patchText")),  # opencode: patchText
    "shell": (Kind.EXEC, ("command", "cmd")),
    "exec_command": (Kind.EXEC, ("cmd", "command")),
    # --- Gemini CLI (read_file/write_file shared with the seed loop and Cline) --------------
    "read_file": (Kind.READ, ("file_path", "path", "absolute_path")),
    "write_file": (Kind.WRITE, ("file_path", "path")),
    "replace": (Kind.EDIT, ("file_path", "path")),
    "run_shell_command": (Kind.EXEC, ("command",)),
    "read_many_files": (Kind.META, ()),
    "list_directory": (Kind.META, ()),
    "glob": (Kind.META, ()),
    "search_file_content": (Kind.META, ()),
    "google_web_search": (Kind.META, ()),
    "web_fetch": (Kind.META, ()),
    "save_memory": (Kind.META, ()),
    # --- Cline / Roo Code ---------------------------------------------------------------------
    "write_to_file": (Kind.WRITE, ("path",)),
    "apply_diff": (Kind.EDIT, ("path",)),
    "replace_in_file": (Kind.EDIT, ("path",)),
    "insert_content": (Kind.EDIT, ("path",)),
    "search_and_replace": (Kind.EDIT, ("path",)),
    "execute_command": (Kind.EXEC, ("command",)),
    "list_files": (Kind.META, ()),
    "search_files": (Kind.META, ()),
    "list_code_definition_names": (Kind.META, ()),
    "ask_followup_question": (Kind.META, ()),
    "attempt_completion": (Kind.META, ()),
    # --- the seed loop / orchestrator's reference loop -----------------------------------------
    "edit_file": (Kind.EDIT, ("path", "file_path")),
    "delete_file": (Kind.DELETE, ("path", "file_path")),
    "run_command": (Kind.EXEC, ("command",)),
    "check_logs": (Kind.META, ()),
    "select_active_intent": (Kind.META, ()),
    "record_lesson": (Kind.META, ()),
    "list_intents": (Kind.META, ()),
    # --- GitHub Copilot CLI (1.0.102: the tools its -p sessions offer; payloads in tests/adapters/fixtures/copilot/)
    "bash": (Kind.EXEC, ("command",)),
    "view": (Kind.READ, ("path",)),
    "create": (Kind.WRITE, ("path",)),
    "edit": (Kind.EDIT, ("path", "filePath", "file_path")),  # Copilot path, opencode filePath, Qwen file_path
    "grep": (Kind.META, ()),
    "read_bash": (Kind.META, ()),  # output of a running shell
    "stop_bash": (Kind.META, ()),
    "list_bash": (Kind.META, ()),
    "task": (Kind.META, ()),  # a subagent: its own tool calls come through the hooks
    "read_agent": (Kind.META, ()),
    "list_agents": (Kind.META, ()),
    "write_agent": (Kind.META, ()),  # a message to a subagent, not a file
    "sql": (Kind.META, ()),  # the session's own SQLite (todos), under ~/.copilot, not the workspace
    "session_store_sql": (Kind.META, ()),
    "skill": (Kind.META, ()),
    "fetch_copilot_cli_documentation": (Kind.META, ()),
    # ``write_bash`` (keystrokes into a running shell) is left unknown on purpose: refused unless policy says so
    # --- opencode (1.18.33: the tools it offers a model, and those of other builds and settings) ---------------
    # (``glob`` is Gemini's entry and ``bash``, ``edit``, ``grep``, ``task``, ``skill`` Copilot's above:
    # the same kinds; ``edit`` reads opencode's ``filePath`` too)
    "read": (Kind.READ, ("filePath", "path")),  # pi: path
    "write": (Kind.WRITE, ("filePath", "path")),  # pi: path
    "multiedit": (Kind.EDIT, ("filePath",)),
    "list": (Kind.META, ()),
    "todowrite": (Kind.META, ()),
    "todoread": (Kind.META, ()),
    "webfetch": (Kind.META, ()),
    "websearch": (Kind.META, ()),
    "codesearch": (Kind.META, ()),
    "question": (Kind.META, ()),
    "lsp": (Kind.META, ()),
    "plan_enter": (Kind.META, ()),
    "plan_exit": (Kind.META, ()),
    "invalid": (Kind.META, ()),
    # --- Qwen Code (0.24.4: tests/data/qwen-code/; write_file, read_file, run_shell_command, edit above) ------
    "notebook_edit": (Kind.EDIT, ("notebook_path",)),
    "grep_search": (Kind.META, ()),
    "tool_search": (Kind.META, ()),  # finds deferred (MCP) tools (Qwen Code, pi); a found tool is called by its name
    "agent": (Kind.META, ()),  # a subagent: its own tool calls come through the hooks
    "get_goal": (Kind.META, ()),
    "update_goal": (Kind.META, ()),
    "todo_write": (Kind.META, ()),
    "ask_user_question": (Kind.META, ()),
    "exit_plan_mode": (Kind.META, ()),
    "web_search": (Kind.META, ()),
    # (``tool_call`` -- a deferred tool called by name -- is left unknown: the hooks see the resolved tool instead)
    # --- Cline CLI (3.0.65: tests/data/cline/) ------------------------------------------------------------------
    # ``run_commands {commands: [...]}`` and ``read_files {files: [{path}]}`` are split by the Cline adapter into
    # one call per entry (``run_commands {command}``, ``read_files {path}``); ``apply_patch {input}`` is Codex's
    "editor": (Kind.EDIT, ("path",)),  # creates the file when it is missing: the engine's snapshot tells
    "run_commands": (Kind.EXEC, ("command",)),
    "read_files": (Kind.READ, ("path",)),
    "search_codebase": (Kind.META, ()),
    "fetch_web_content": (Kind.META, ()),
    "ask_question": (Kind.META, ()),
    "spawn_agent": (Kind.META, ()),  # a subagent: its own tool calls go through the plugin (parentAgentId)
    **{f"team_{name}": (Kind.META, ()) for name in (  # teammates: their own tool calls go through the plugin
        "spawn_teammate", "shutdown_teammate", "status", "task", "run_task", "cancel_run", "list_runs",
        "await_runs", "send_message", "broadcast", "read_mailbox", "mission_log", "cleanup", "create_outcome",
        "attach_outcome_fragment", "review_outcome_fragment", "finalize_outcome", "list_outcomes")},
    # --- Kilo CLI (7.7.7: opencode's tools, and its own that touch no file; ``background_process`` is told apart
    # by its ``action`` in orchestrator.adapters.opencode: ``start`` runs its ``command``) ---------------------------
    "background_process": (Kind.EXEC, ("command",)),
    "board_post": (Kind.META, ()),
    "board_read": (Kind.META, ()),
    "schedule_wakeup": (Kind.META, ()),
    "cancel_wakeup": (Kind.META, ()),
    "kilo_local_recall": (Kind.META, ()),
    "list_mcp_resources": (Kind.META, ()),
    "list_mcp_resource_templates": (Kind.META, ()),
    "read_mcp_resource": (Kind.META, ()),
    # --- pi (1.6.0: ``read``/``write``/``edit``/``bash``/``grep`` above, with ``path``) ----------------------------
    "find": (Kind.META, ()),
    "ls": (Kind.META, ()),
    # a QuickJS script with no file system, network or process of its own: it reaches files only through
    # ``tools.<name>(args)``, each a tool call of its own that the extension governs (``parentToolCallId``)
    "codemode": (Kind.META, ()),
    # --- Cursor hook events (mapped by its adapter) -------------------------------------------
    "Shell": (Kind.EXEC, ("command",)),
    "Delete": (Kind.DELETE, ("file_path", "path")),
}

# MCP tools of orchestrator itself are handshakes, not mutations (Claude Code and Codex name them
# ``mcp__orchestrator__<tool>``, Gemini CLI ``mcp_orchestrator_<tool>``, Copilot CLI ``orchestrator-<tool>``,
# opencode ``orchestrator_<tool>``, Cline ``orchestrator__<tool>``; Qwen Code as Claude Code)
_META_MCP = re.compile(r"^(?:mcp__orchestrator__|mcp_orchestrator_|orchestrator-|orchestrator__|orchestrator_)"
                       r"(select_active_intent|list_intents|record_lesson|propose_intent)$")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def lookup(tool: str, overrides: dict[str, str] | None = None) -> ToolSpec | None:
    """The spec of ``tool``, honouring policy overrides; None if unknown."""
    if overrides and tool in overrides:
        kind = Kind(overrides[tool])
        spec = REGISTRY.get(tool)
        return (kind, spec[1] if spec else _FILE)
    spec = REGISTRY.get(tool)
    if spec is not None:
        return spec
    if _META_MCP.match(tool):
        return (Kind.META, ())
    return None


def patch_paths(patch: str) -> list[str]:
    """Target files of a Codex ``apply_patch`` envelope (Add/Update/Delete File, Move to)."""
    return [a or b for a, b in _PATCH_FILE.findall(patch)]


def _command_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        # Codex sends argv, often ["bash", "-lc", "..."]; the shell analyzer wants one line
        if len(value) >= 3 and value[1] in ("-c", "-lc") and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
            return value[2]
        import shlex

        return shlex.join(value)
    return None


def to_call(
    tool: str,
    tool_input: dict[str, Any] | None,
    *,
    overrides: dict[str, str] | None = None,
    **fields: Any,
) -> ToolCall:
    """Build the canonical call. ``fields`` are ToolCall fields (session_id, agent, cwd, ...)."""
    raw = tool_input if isinstance(tool_input, dict) else {}
    spec = lookup(tool, overrides)
    if spec is None:
        # unknown: keep any path-like argument so scope/protection can still be checked
        return ToolCall(tool=tool, kind=Kind.UNKNOWN, paths=[raw[k] for k in _FILE if isinstance(raw.get(k), str)],
                        input=raw, **fields)
    kind, keys = spec
    if kind is Kind.EXEC:
        command = next((c for c in (_command_text(raw.get(k)) for k in keys) if c is not None), None)
        if command is None:
            command = _command_text(raw.get("command")) or ""
        return ToolCall(tool=tool, kind=kind, input=raw, command=command, **fields)
    if tool == "apply_patch":
        patch = next((raw[k] for k in keys if isinstance(raw.get(k), str)), "")
        return ToolCall(tool=tool, kind=kind, paths=patch_paths(patch), input=raw, **fields)
    paths: list[str] = []
    for k in keys:
        v = raw.get(k)
        if isinstance(v, str):
            paths.append(v)
            break
    if kind.mutating and not paths:
        # a file tool without a file: treated as unknown target, refused downstream
        return ToolCall(tool=tool, kind=kind, paths=[], input=raw, **fields)
    return ToolCall(tool=tool, kind=kind, paths=paths, input=raw, **fields)


#: hook for custom registries (e.g. the reference loop registering its own tools)
def register(tool: str, kind: Kind, path_keys: tuple[str, ...] = _FILE) -> None:
    """Register a tool name (e.g. a custom loop's tool) with its kind and path keys."""
    REGISTRY[tool] = (kind, path_keys)

