"""``orch install <agent>``: wire orchestrator's hooks (and MCP server) into an agent's project settings."""

from __future__ import annotations

import argparse

from orchestrator.adapters.installer import SPECS, install
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.output import out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("agent", choices=sorted(SPECS))
    parser.add_argument("--python", default=None, help="interpreter for the hook command (default: this one)")
    parser.add_argument("--no-daemon", action="store_true",
                        help="evaluate every call in the hook process (no `orch serve` daemon): ~5x slower")
    parser.add_argument("--no-mcp", action="store_true", help="do not register the MCP server")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    written = install(args.agent, ws.root, python=args.python, fast=not args.no_daemon, mcp=not args.no_mcp)
    for path in written:
        out(f"wrote {path.relative_to(ws.root)}")
    if not written:
        out(f"{args.agent} was already installed exactly so; nothing changed")
    out(f"orchestrator now governs {args.agent} in {ws.root}; see docs/adapters.md to verify")
    return 0
