"""``orch reject ID --reason TEXT``: refuse a pending request; the reason goes back to the agent."""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg
from orchestrator.commands.approvals import broker
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("id", help="request id (see `orch approvals`)")
    parser.add_argument("--reason", required=True, help="why; the agent receives it in the denial")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")


def run(args: argparse.Namespace) -> int:
    b, _forbidden = broker(args)
    data = b.decide(args.id, "reject", reason=args.reason, by="cli")
    if args.json:
        json_out(data)
    else:
        out(f"rejected {data['id']}: {data['reason']}")
    return 0
