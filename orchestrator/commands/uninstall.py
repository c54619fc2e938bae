"""``orch uninstall <agent>``: remove exactly what ``orch install`` added."""

from __future__ import annotations

import argparse

from orchestrator.adapters.installer import AGENTS, own_setup, uninstall
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("agent", choices=AGENTS)


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    setup = own_setup(args.agent)
    changed = setup.uninstall(ws.root) if setup is not None else uninstall(args.agent, ws.root)
    for path in changed:
        shown = path.relative_to(ws.root) if path.is_relative_to(ws.root) else path  # Codex's user config
        out(f"updated {shown}" if path.exists() else f"removed {shown}")
    if not changed:
        out("nothing to remove")
    return 0
