"""``orch mcp``: the ``orchestrator`` MCP server on stdio (select_active_intent, list_intents, record_lesson)."""

from __future__ import annotations

import argparse
import os

from orchestrator.commands import add_workspace_arg


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)


def run(args: argparse.Namespace) -> int:
    from orchestrator.adapters.mcp import serve_stdio
    from orchestrator.core.errors import WorkspaceError
    from orchestrator.config.workspace import find_root

    # Agents start MCP servers in the project directory; CLAUDE_PROJECT_DIR/ORCH_ROOT cover other launchers.
    start = args.workspace or os.environ.get("ORCH_ROOT") or None
    try:
        root = find_root(start)
    except WorkspaceError:
        if start is None and os.environ.get("CLAUDE_PROJECT_DIR"):
            root = find_root(os.environ["CLAUDE_PROJECT_DIR"])
        else:
            raise
    serve_stdio(root)
    return 0
