"""``orch install <agent>``: wire orchestrator's hooks (and MCP server) into an agent's project settings."""

from __future__ import annotations

import argparse

from orchestrator.adapters.installer import SPECS, install, notes
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.output import out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("agent", choices=sorted(SPECS))
    parser.add_argument("--python", default=None, help="interpreter for the hook command (default: this one)")
    parser.add_argument("--no-daemon", action="store_true",
                        help="evaluate every call in the hook process (no `orch serve` daemon): ~5x slower")
    parser.add_argument("--no-mcp", action="store_true", help="do not register the MCP server")
    parser.add_argument("--trust", action="store_true",
                        help="codex: also trust this project and its orchestrator hooks in Codex's user config "
                             "($CODEX_HOME/config.toml, default ~/.codex/config.toml)")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    written = install(args.agent, ws.root, python=args.python, fast=not args.no_daemon, mcp=not args.no_mcp)
    for path in written:
        out(f"wrote {path.relative_to(ws.root)}")
    if not written:
        out(f"{args.agent} was already installed exactly so; nothing changed")
    if args.trust:
        if args.agent != "codex":
            out(f"--trust applies to codex only; {args.agent}: see the notes below")
        else:
            from orchestrator.adapters import codex_setup

            out(f"trusted the project and its orchestrator hooks in {codex_setup.write_trust(ws.root)}")
    out(f"orchestrator now governs {args.agent} in {ws.root}; see docs/adapters.md to verify")
    for line in notes(args.agent, ws.root) if not (args.trust and args.agent == "codex") else ():
        out(line)
    return 0
