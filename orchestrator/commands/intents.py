"""``orch intents [list|show ID] [--json]``: the intents and their status (validates the file)."""

from __future__ import annotations

import argparse

from orchestrator.config import intents as _intents
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    parser.add_argument("intent_id", nargs="?", help="intent id (for show)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def as_dict(i: _intents.CompiledIntent) -> dict[str, object]:
    return {"id": i.id, "name": i.name, "status": i.status, "owned_scope": list(i.owned_scope),
            "constraints": list(i.constraints), "acceptance_criteria": list(i.acceptance_criteria),
            "description": i.description}


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    loaded = _intents.load(ws.intents_file)
    if args.action == "show":
        if not args.intent_id:
            raise UsageError("`orch intents show` needs an intent id")
        intent = loaded.get(args.intent_id)
        if intent is None:
            raise UsageError(f"no intent {args.intent_id!r}", hint="`orch intents` lists them")
        if args.json:
            json_out(as_dict(intent))
        else:
            out(_intents.render_context(intent))
        return 0
    items = list(loaded)
    if args.json:
        json_out([as_dict(i) for i in items])
        return 0
    if not items:
        out(f"no intents in {ws.intents_file}")
        return 0
    width = max(len(i.id) for i in items)
    for i in items:
        out(f"{i.id:<{width}}  {i.status:<11}  {i.name}  [{', '.join(i.owned_scope)}]")
    return 0
