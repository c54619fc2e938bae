"""``orch tui``: the approval console (Textual). Run it in a second terminal beside an agent."""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--ledger-lines", type=int, default=50, help="ledger records to keep in view")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    # textual is imported only here: no other command (and never a hook) pays for it
    from orchestrator.tui.app import ApprovalApp

    ApprovalApp(ws, ledger_lines=args.ledger_lines).run()
    return 0
