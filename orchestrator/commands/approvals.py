"""``orch approvals [--json] [--all]``: the approval requests waiting for a person.

Headless twin of ``orch tui``; ``--json`` prints a list of objects, each with its ``id``. Corrupt
request files are listed with an ``error`` instead of failing the whole listing. In a git repository the
requests of every worktree are listed (the broker lives in the main worktree's run dir), each naming the
worktree and branch that asked; ``orch approve`` / ``orch reject`` decide them from any worktree.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import json_out, out, shown


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--all", action="store_true", help="include decided requests not yet picked up")


def broker(args: argparse.Namespace) -> Any:
    """The workspace's broker, configured from its policy; also returns the forbidden grant classes."""
    from orchestrator.config import policy as _policy
    from orchestrator.approvals import Broker

    ws = workspace_of(args)
    pol = _policy.load(ws.policy_file).approval
    return Broker(ws.shared_run_dir, grant_ttl=pol.grant_ttl_seconds), list(pol.forbid_remember)


def as_dict(item: Any) -> dict[str, Any]:
    from orchestrator.approvals import BrokenRequest

    if isinstance(item, BrokenRequest):
        return {"id": item.id, "error": item.error, "path": item.path}
    return item.to_dict()


def run(args: argparse.Namespace) -> int:
    b, _forbidden = broker(args)
    b.sweep()
    items = b.pending(include_decided=args.all)
    if args.json:
        json_out([as_dict(i) for i in items])
        return 0
    if not items:
        out("no pending approvals")
        return 0
    now = time.time()
    for item in items:
        d = as_dict(item)
        if "error" in d:
            out(f"{d['id']}  CORRUPT  {d['error']}")
            continue
        left = max(0, int(d["expires"] - now))
        out(f"{d['id']}  {d['risk']:<17} worktree={item.where()} session={d['session_id']} "
            f"intent={d.get('intent_id') or '-'} ({left}s left)  {shown(d['summary'])}")
        for reason in d.get("reasons", []):
            out(f"    - {shown(str(reason))}")
        fields = d.get("proposal")
        if isinstance(fields, dict):
            # what accepting grants (the TUI shows it as a diff): a person deciding here must see it too
            for key in ("owned_scope", "constraints", "acceptance_criteria"):
                if fields.get(key):
                    label = "scope" if key == "owned_scope" else key.replace("_", " ")
                    out(f"    {label}: {shown(', '.join(map(str, fields[key])))}")
    return 0
