"""``orch approve ID [--session|--intent]``: approve a pending request, once or remembered.

``--session`` / ``--intent`` also remember a grant (expiring after policy
``approval.grant_ttl_seconds``) so the same kind of call is not asked again in that session or
intent; refused for the risk classes in ``approval.forbid_remember``.
"""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg
from orchestrator.commands.approvals import broker
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("id", help="request id (see `orch approvals`)")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--session", dest="scope", action="store_const", const="session",
                       help="also approve this kind of call for the rest of the session")
    scope.add_argument("--intent", dest="scope", action="store_const", const="intent",
                       help="also approve this kind of call for every session working on the intent")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")


def run(args: argparse.Namespace) -> int:
    b, forbidden = broker(args)
    data = b.decide(args.id, "approve", scope=args.scope or "once", by="cli", forbid_remember=forbidden)
    if args.json:
        json_out(data)
    else:
        out(f"approved {data['id']} ({data['scope']})" + (f", grant {data['grant']}" if data.get("grant") else ""))
    return 0
